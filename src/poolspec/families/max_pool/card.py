"""The cards of max_pool1d/2d/3d (docs/TORCH_NUMERICS.md section 2)."""

from __future__ import annotations

from typing import Any

from ...spec._card import REQUIRED, Argument, Card, Example, Gradient, Resolved
from ...spec._pools import (
    FLOATS,
    INTS,
    JAX_TRANSFORMS,
    OUT_FORMULA,
    PADDING_TYPE,
    REGULAR_WINDOWS,
    TORCH_DETERMINISTIC,
    TORCH_TRANSFORMS,
    example_shape,
    first_empty_window,
    indices_port,
    input_argument,
    output_port,
    ranks_of,
    stride_of,
    window_argument,
    window_checks,
)
from ...spec._rules import check_bool, check_dtype, fail, int_tuple, split_shape
from .. import Family


def _resolve_max(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = stride_of(op, a["stride"], k, n)
    d = int_tuple(op, "dilation", a["dilation"], n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    ret = check_bool(op, "return_indices", a["return_indices"])
    out, p, high = window_checks(op, n, spatial, k, s, a["padding"], d, ceil_mode)
    for i in range(n):
        empty = first_empty_window(spatial[i], out[i], k[i], s[i], p[i], d[i])
        if empty is not None:
            fail(op, "dilation", d, f"leaves window {empty} of axis {i} without a single input cell "
                                    f"(taps {empty * s[i] - p[i]} + t*{d[i]} for t < {k[i]} all fall in the "
                                    f"padding of an input of length {spatial[i]}); torch returns -inf there")
    params = dict(kernel_size=k, stride=s, padding=p, padding_high=high, dilation=d, ceil_mode=ceil_mode,
                  return_indices=ret)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _max_card(n: int) -> Card:
    name = f"max_pool{n}d"
    args = (
        input_argument(n),
        window_argument("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0", "None or () means kernel_size"),
                 "the window step s"),
        Argument("padding", PADDING_TYPE.format(n=n), 0,
                 ("int p: 0 <= p <= k // 2 (torch's)", "(low, high) pairs: 0 <= low, high <= (k - 1) * d",
                  "'same': TensorFlow's, ceil(L / s) outputs, the odd cell at the end; 'valid': none"),
                 "implicit -inf padding: p on both sides, or per axis (low, high) as lax.reduce_window and ONNX "
                 "pads, or 'valid' / 'same' as TensorFlow and Keras"),
        window_argument("dilation", n, 1, "the spacing d between taps", "every entry > 0"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
        Argument("return_indices", "bool", False, (), "also return int64 flat indices into the input plane"),
    )
    return Card(
        name=name, version=1, category="pooling", summary=f"{n}-d max pooling over regular windows.",
        spatial_dims=(n,), input_ranks=ranks_of(n), dtypes=FLOATS + INTS, arguments=args,
        shape_relation=f"per spatial axis: {OUT_FORMULA}; {REGULAR_WINDOWS}",
        determinism="ties go to the first maximum in row-major order, a NaN wins (the last NaN's index); "
                    "backward: small windows add each tap's winners through strided views, large ones sort "
                    "each plane's winners and sum every cell's share in output order (placed with a write "
                    "to unique destinations): no scatter-add, bit-identical across runs, memory O(input + "
                    "output) whatever the window",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "routes the cotangent to the winners by gathering"),
        torch_reference=f"torch.nn.functional.max_pool{n}d",
        notes=("a window that dilation and padding leave without an input cell raises ValueError "
               "(torch returns -inf and an out-of-range index)",),
        _resolve=_resolve_max,
        outputs=(output_port(n), indices_port(n, "the unpadded input plane")),
        examples=(Example(example_shape(n, 32), dict(kernel_size=3, stride=2, padding=1)),
                  Example(example_shape(n, 11), dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True,
                                              return_indices=True)),
                  Example(example_shape(n, 10), dict(kernel_size=3, stride=1, padding=((2, 0),) * n))),
        torch_determinism=TORCH_DETERMINISTIC if n < 3 else
        "deterministic in torch 2.13; older releases raised max_pool3d_with_indices_backward_cuda",
        channels_last=(4,) if n == 2 else (5,) if n == 3 else (),
    )


FAMILY = Family('max_pool', 'routed', 3, lambda: [_max_card(n) for n in (1, 2, 3)])
