"""The cards of avg_pool1d/2d/3d (docs/TORCH_NUMERICS.md section 1)."""

from __future__ import annotations

from typing import Any

from ...spec._card import REQUIRED, Argument, Card, Example, Gradient, Resolved
from ...spec._pools import (
    FLOATS,
    JAX_TRANSFORMS,
    OUT_FORMULA,
    PADDING_TYPE,
    TORCH_DETERMINISTIC,
    TORCH_TRANSFORMS,
    example_shape,
    first_empty_window,
    input_argument,
    output_port,
    ranks_of,
    stride_of,
    window_argument,
    window_checks,
)
from ...spec._rules import as_int, check_bool, check_dtype, fail, int_tuple, split_shape
from .. import Family


def _resolve_avg(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = stride_of(op, a["stride"], k, n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    cip = check_bool(op, "count_include_pad", a["count_include_pad"])
    div = a["divisor_override"]
    if div is not None:
        div = as_int(op, "divisor_override", div)
        if div == 0:
            fail(op, "divisor_override", div, "must not be zero (None means the window's cell count)")
    d = int_tuple(op, "dilation", a["dilation"], n)
    out, p, high = window_checks(op, n, spatial, k, s, a["padding"], d, ceil_mode)
    if n == 3 and any(spatial[i] < k[i] for i in range(n)):
        fail(op, "kernel_size", k, f"is larger than the input {spatial} along some axis; avg_pool3d requires "
                                   "every input extent >= kernel_size, padding notwithstanding (as torch)")
    if dtype == "int64" and not cip and div is None:
        for i in range(n):
            empty = first_empty_window(spatial[i], out[i], k[i], s[i], p[i], d[i])
            if empty is not None:
                fail(op, "dilation", d, f"leaves window {empty} of axis {i} without a single input cell (taps "
                                        f"{empty * s[i] - p[i]} + t*{d[i]} for t < {k[i]} all fall in the padding "
                                        f"of an input of length {spatial[i]}): its divisor is 0 and int64 has no "
                                        "NaN for 0 / 0 (count the padding or give divisor_override)")
    params = dict(kernel_size=k, stride=s, padding=p, padding_high=high, dilation=d, ceil_mode=ceil_mode,
                  count_include_pad=cip, divisor_override=div)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _avg_card(n: int) -> Card:
    name = f"avg_pool{n}d"
    args = (
        input_argument(n),
        window_argument("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0", "None or () means kernel_size"),
                 "the window step s"),
        Argument("padding", PADDING_TYPE.format(n=n), 0,
                 ("int p: 0 <= p <= k // 2 (torch's)", "(low, high) pairs: 0 <= low, high <= (k - 1) * d",
                  "'same': TensorFlow's, ceil(L / s) outputs, the odd cell at the end; 'valid': none"),
                 "implicit zero padding: p on both sides, or per axis (low, high) as lax.reduce_window and ONNX "
                 "pads, or 'valid' / 'same' as TensorFlow and Keras"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
        Argument("count_include_pad", "bool", True, (),
                 "count padding cells (not the ceil_mode overhang) in the divisor"),
        Argument("divisor_override", "int | None", None, ("!= 0 (negative allowed)",),
                 "divide every window sum by this instead of the cell count"),
        window_argument("dilation", n, 1, "the spacing d between a window's taps (keyword-only; a poolspec "
                        "extension, torch's avg_pool has none)", "every entry > 0"),
    )
    notes = ["int64 sums in int64 and divides with truncation toward zero, as torch",
             "float16/bfloat16 sum and divide in float32 and round once",
             f"dilation (keyword-only) is a poolspec extension: the window sums of torch's conv{n}d with a ones kernel "
             "(groups=C, the same dilation and stride) over the zero-padded input, divided by the same conv of a "
             "ones input: the taps in the padded axis if count_include_pad (never the ceil_mode overhang), else "
             "the taps in the input",
             "a window whose taps all fall in the padding (dilation > 1) sums to 0: 0 with count_include_pad "
             "(its padding taps count), NaN (0 / 0, as that conv quotient) without it; int64 refuses such a window "
             "without count_include_pad or divisor_override (ValueError: no NaN)"]
    if n == 1:
        notes.append("divisor_override is accepted on 1d too (torch's avg_pool1d lacks it)")
    if n == 3:
        notes.append("every input extent must be >= kernel_size even with padding, as torch")
        notes.append("float16/bfloat16 are accepted (torch's CPU avg_pool3d refuses them)")
    return Card(
        name=name, version=1, category="pooling",
        summary=f"{n}-d average pooling over regular windows.",
        spatial_dims=(n,), input_ranks=ranks_of(n), dtypes=FLOATS + ("int64",),
        arguments=args,
        shape_relation=f"per spatial axis: {OUT_FORMULA}; "
                       "taps a + t*d for t < k, a = o*s - p_lo; y = sum(taps ∩ input) / D, D = divisor_override, "
                       "else the number of taps in [-p_lo, L + p_hi) if count_include_pad (prod(min(a+k, L+p_hi) - "
                       "a) at d = 1), else the number of taps in the input",
        determinism="forward and backward are sums of strided slices in a fixed order: bit-identical "
                    "across runs on every backend; backward gathers (no scatter, no atomics)",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "linear: the backward is the transposed window sum, its own backward the forward"),
        torch_reference=f"torch.nn.functional.avg_pool{n}d" if n > 1 else
        "torch.nn.functional.avg_pool1d (divisor_override via avg_pool2d)",
        notes=tuple(notes), _resolve=_resolve_avg,
        outputs=(output_port(n),),
        examples=(Example(example_shape(n, 32), dict(kernel_size=3, stride=2, padding=1)),
                  Example(example_shape(n, 7), dict(kernel_size=2, ceil_mode=True, count_include_pad=False)),
                  Example((3,) + (9,) * n, dict(kernel_size=4, stride=3, padding=2, divisor_override=9)),
                  Example(example_shape(n, 7), dict(kernel_size=2, stride=2, padding="same", count_include_pad=False))),
        torch_determinism="avg_pool3d's CUDA backward uses atomicAdd (avg_pool3d_backward_cuda raises under "
                          "use_deterministic_algorithms)" if n == 3 else TORCH_DETERMINISTIC,
        channels_last=(4,) if n == 2 else (),
    )


FAMILY = Family('avg_pool', 'linear', 1, lambda: [_avg_card(n) for n in (1, 2, 3)])
