"""Cards of the pooling ops: avg, max, lp, adaptive avg/max, max_unpool, each for 1, 2 and 3 spatial dims.

Each card's resolver is that op's argument validation and shape inference (docs/TORCH_NUMERICS.md sections 1-4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._card import REQUIRED, Argument, Card, Example, Gradient, Port, Resolved
from ._rules import (
    as_int,
    check_bool,
    check_dtype,
    fail,
    int_tuple,
    is_int,
    pool_output_size,
    split_shape,
)

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8")

# every op on torch: tested against the native op under each (tests/test_torch_func.py)
TORCH_TRANSFORMS = ("autograd (any order)", "forward-mode (forward_ad)", "torch.func.vmap", "torch.func.grad",
                    "torch.func.jacrev", "torch.func.jacfwd", "torch.func.jvp", "torch.func.hessian",
                    "gradcheck", "gradgradcheck", "use_deterministic_algorithms(True)",
                    # inside a capture the op is one torch.library node (autodiff/torch_graph.py)
                    "torch.compile(fullgraph=True, dynamic=True)", "torch.export", "torch.func.vmap in torch.compile")
# every op on JAX: slice-only ops by native autodiff, gathering ones through poolspec's primitives
JAX_TRANSFORMS = ("jit", "grad", "grad-of-grad", "vmap", "jvp", "jacfwd", "jacrev", "hessian", "linearize")


def _stride(op: str, value: Any, kernel: tuple[int, ...], n: int) -> tuple[int, ...]:
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0):
        return kernel
    return int_tuple(op, "stride", value, n)


def _padding(op: str, value: Any, n: int) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """(low, high, form) of a padding argument: torch's symmetric ints (``"symmetric"``), per-axis ``(low, high)``
    pairs as ``lax.reduce_window`` and ONNX's ``pads`` take them (``"pairs"``), or ``"valid"`` / ``"same"``
    (TensorFlow's rule, resolved by :func:`_window_checks`)."""
    if isinstance(value, str):
        if value not in ("valid", "same"):
            fail(op, "padding", value, "must be an int, a tuple of ints, a tuple of (low, high) pairs, 'valid' or "
                                       "'same'")
        return (0,) * n, (0,) * n, value
    if isinstance(value, (tuple, list)) and value and any(isinstance(v, (tuple, list)) for v in value):
        if len(value) != n or not all(isinstance(v, (tuple, list)) and len(v) == 2 for v in value):
            fail(op, "padding", value, f"as (low, high) pairs must be {n} pairs of ints, one per spatial axis")
        lo = tuple(as_int(op, "padding", v[0], value) for v in value)
        hi = tuple(as_int(op, "padding", v[1], value) for v in value)
        return lo, hi, "pairs"
    p = int_tuple(op, "padding", value, n)
    return p, p, "symmetric"


def _window_checks(op: str, n: int, spatial: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...],
                   padding: Any, d: tuple[int, ...], ceil_mode: bool) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                            tuple[int, ...]]:
    """torch's shared pooling checks, in its order, then the output size (which must be >= 1); returns
    (output size, low padding, high padding). Asymmetric and 'same' padding may reach a window's last cell but
    one on either side (every window still reads the input); torch's symmetric padding at most half a window."""
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", k, "every entry must be > 0")
    if any(v <= 0 for v in s):
        fail(op, "stride", s, "every entry must be > 0 (torch: stride should not be zero)")
    if any(v <= 0 for v in d):
        fail(op, "dilation", d, "every entry must be > 0")
    lo, hi, form = _padding(op, padding, n)
    if form == "same":  # TensorFlow's: ceil(L / s) outputs, the odd padding cell at the end
        total = tuple(max((-(-spatial[i] // s[i]) - 1) * s[i] + (k[i] - 1) * d[i] + 1 - spatial[i], 0)
                      for i in range(n))
        lo, hi = tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    if any(v < 0 for v in lo + hi):
        fail(op, "padding", padding, "every entry must be >= 0")
    for i in range(n):
        if form == "symmetric" and lo[i] > k[i] // 2:
            fail(op, "padding", padding, f"must be at most half the kernel size (padding <= kernel_size // 2); "
                                         f"axis {i} has padding {lo[i]} with kernel_size {k[i]}")
        if form == "pairs" and max(lo[i], hi[i]) > (k[i] - 1) * d[i]:
            fail(op, "padding", padding, f"(low, high) entries must be at most (kernel_size - 1) * dilation, so "
                                         f"that every window reads the input; axis {i} has {(lo[i], hi[i])} with "
                                         f"kernel_size {k[i]} and dilation {d[i]}")
    out = tuple(pool_output_size(spatial[i], k[i], s[i], lo[i], d[i], ceil_mode, hi[i]) for i in range(n))
    if any(o < 1 for o in out):
        shown = padding if form != "symmetric" else lo
        fail(op, "kernel_size", k, f"with stride={s}, padding={shown}, dilation={d} the output size {out} for "
                                   f"input size {spatial} is too small (every entry must be >= 1)")
    return out, lo, hi


def _resolve_avg(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = _stride(op, a["stride"], k, n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    cip = check_bool(op, "count_include_pad", a["count_include_pad"])
    div = a["divisor_override"]
    if div is not None:
        div = as_int(op, "divisor_override", div)
        if div == 0:
            fail(op, "divisor_override", div, "must not be zero (None means the window's cell count)")
    out, p, high = _window_checks(op, n, spatial, k, s, a["padding"], (1,) * n, ceil_mode)
    if n == 3 and any(spatial[i] < k[i] for i in range(n)):
        fail(op, "kernel_size", k, f"is larger than the input {spatial} along some axis; avg_pool3d requires "
                                   "every input extent >= kernel_size, padding notwithstanding (as torch)")
    params = dict(kernel_size=k, stride=s, padding=p, padding_high=high, ceil_mode=ceil_mode,
                  count_include_pad=cip, divisor_override=div)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _resolve_max(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = _stride(op, a["stride"], k, n)
    d = int_tuple(op, "dilation", a["dilation"], n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    ret = check_bool(op, "return_indices", a["return_indices"])
    out, p, high = _window_checks(op, n, spatial, k, s, a["padding"], d, ceil_mode)
    for i in range(n):
        empty = _first_empty_window(spatial[i], out[i], k[i], s[i], p[i], d[i])
        if empty is not None:
            fail(op, "dilation", d, f"leaves window {empty} of axis {i} without a single input cell "
                                    f"(taps {empty * s[i] - p[i]} + t*{d[i]} for t < {k[i]} all fall in the "
                                    f"padding of an input of length {spatial[i]}); torch returns -inf there")
    params = dict(kernel_size=k, stride=s, padding=p, padding_high=high, dilation=d, ceil_mode=ceil_mode,
                  return_indices=ret)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _first_empty_window(L: int, O: int, k: int, s: int, p: int, d: int) -> int | None:
    if d == 1:
        return None  # contiguous windows always reach the input (padding <= k // 2, ceil start rule)
    start = np.arange(O, dtype=np.int64) * s - p
    taps = start[:, None] + np.arange(k, dtype=np.int64)[None, :] * d
    hit = ((taps >= 0) & (taps < L)).any(axis=1)
    bad = np.flatnonzero(~hit)
    return int(bad[0]) if bad.size else None


def _adaptive_output_size(op: str, value: Any, spatial: tuple[int, ...], n: int) -> tuple[int, ...]:
    if value is None:
        return spatial
    if is_int(value):
        items: tuple[Any, ...] = (value,) * n
    elif isinstance(value, (tuple, list)):
        items = tuple(value)
        if len(items) != n:
            fail(op, "output_size", value, f"must be an int or a tuple of exactly {n} entries, got {len(items)}")
    else:
        fail(op, "output_size", value, f"must be an int, None or a tuple of {n} ints/None, "
                                       f"not {type(value).__name__}", TypeError)
    out = []
    for i, v in enumerate(items):
        if v is None:
            out.append(spatial[i])
            continue
        v = as_int(op, "output_size", v, value)
        if v < 0:
            fail(op, "output_size", value, "every entry must be >= 0 (0 gives an empty output)")
        out.append(v)
    return tuple(out)


def _resolve_adaptive(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=True)
    check_dtype(op, dtype, card.dtypes)
    out = _adaptive_output_size(op, a["output_size"], spatial, n)
    params: dict[str, Any] = dict(output_size=out)
    if "return_indices" in a:
        params["return_indices"] = check_bool(op, "return_indices", a["return_indices"])
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _resolve_unpool(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = _stride(op, a["stride"], k, n)
    p = int_tuple(op, "padding", a["padding"], n)
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", k, "every entry must be > 0")
    if any(v <= 0 for v in s):
        fail(op, "stride", s, "every entry must be > 0")
    if any(v < 0 for v in p):
        fail(op, "padding", p, "every entry must be >= 0")
    default = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    size = a["output_size"]
    if size is None:
        out = default
        if any(o < 0 for o in out):
            fail(op, "kernel_size", k, f"with stride={s}, padding={p} the default output size {out} is negative")
    else:
        if not isinstance(size, (tuple, list)):
            fail(op, "output_size", size, "must be None or a tuple of ints", TypeError)
        items = tuple(as_int(op, "output_size", v, size) for v in size)
        if len(items) not in (n, n + 2):
            fail(op, "output_size", size, f"must have {n} entries (or {n + 2}, whose first two are ignored, "
                                          f"as torch), got {len(items)}")
        out = items[-n:]
        if any(o < 0 for o in out):
            fail(op, "output_size", size, "spatial entries must be >= 0")
        for i in range(n):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < out[i] < hi:
                fail(op, "output_size", size, f"entry {i} must lie strictly between {lo} and {hi} "
                                              f"(default {default[i]} +- stride {s[i]})")
    params = dict(kernel_size=k, stride=s, padding=p, output_size=out)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _resolve_lp(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    norm = a["norm_type"]
    if isinstance(norm, (bool, np.bool_)) or not isinstance(norm, (int, float, np.integer, np.floating)):
        fail(op, "norm_type", norm, "must be a real number", TypeError)
    norm = float(norm)
    if norm == 0 or math.isnan(norm):
        fail(op, "norm_type", norm, "must be non-zero and not NaN (torch raises ZeroDivisionError for 0)")
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = _stride(op, a["stride"], k, n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    out, _, _ = _window_checks(op, n, spatial, k, s, (0,) * n, (1,) * n, ceil_mode)
    if n == 3 and math.isfinite(norm) and any(spatial[i] < k[i] for i in range(n)):
        fail(op, "kernel_size", k, f"is larger than the input {spatial} along some axis (lp_pool3d inherits "
                                   "avg_pool3d's rule for finite norm_type: every input extent >= kernel_size)")
    params = dict(norm_type=norm, kernel_size=k, stride=s, ceil_mode=ceil_mode)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _output(n: int, what: str = "the pooled array, x's dtype") -> Port:
    dims = {1: "O", 2: "OH, OW", 3: "OD, OH, OW"}[n]
    return Port("output", "array", f"(N, C, {dims}) or (C, {dims})", what)


def _indices(n: int, where: str) -> Port:
    dims = {1: "O", 2: "OH, OW", 3: "OD, OH, OW"}[n]
    return Port("indices", "int64 array", f"(N, C, {dims}) or (C, {dims})",
                f"with return_indices=True: the flat index of each winner in {where}")


def _shape(n: int, side: int, lead: tuple[Any, ...] = ("N", 3)) -> tuple[Any, ...]:
    return lead + (side,) * n


_TORCH_OK = "torch's CPU and CUDA kernels are deterministic for this op (gather-style backward)"


def _ranks(n: int) -> tuple[int, ...]:
    return (n + 1, n + 2)


_PADDING_TYPE = "int | tuple[int x {n}] | tuple[(int, int) x {n}] | 'valid' | 'same'"


def _size_arg(name: str, n: int, default: Any, what: str, constraint: str) -> Argument:
    return Argument(name, f"int | tuple[int x {n}]" + (" | None" if default is None else ""), default,
                    (constraint,), what)


def _input_arg(n: int) -> Argument:
    dims = {1: "L", 2: "H, W", 3: "D, H, W"}[n]
    return Argument("x", "array", constraints=(f"shape (N, C, {dims}) or (C, {dims})",
                                               "non-batch dimensions non-empty"),
                    description="the input array (any supported namespace)")


_REG = "regular windows a = o*s - p, taps a + t*d for t < k; windows that start in the right padding " \
       "are dropped in ceil_mode"
_OUT_FORMULA = "O = floor((L + p_lo + p_hi - d(k-1) - 1 + (s-1 if ceil_mode)) / s) + 1, minus 1 if ceil_mode and " \
               "(O-1)*s >= L + p_lo (p_lo = p_hi = p for torch's int padding; 'same': O = ceil(L / s))"


def _avg_card(n: int) -> Card:
    name = f"avg_pool{n}d"
    args = (
        _input_arg(n),
        _size_arg("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0", "None or () means kernel_size"),
                 "the window step s"),
        Argument("padding", _PADDING_TYPE.format(n=n), 0,
                 ("int p: 0 <= p <= k // 2 (torch's)", "(low, high) pairs: 0 <= low, high <= k - 1",
                  "'same': TensorFlow's, ceil(L / s) outputs, the odd cell at the end; 'valid': none"),
                 "implicit zero padding: p on both sides, or per axis (low, high) as lax.reduce_window and ONNX "
                 "pads, or 'valid' / 'same' as TensorFlow and Keras"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
        Argument("count_include_pad", "bool", True, (),
                 "count padding cells (not the ceil_mode overhang) in the divisor"),
        Argument("divisor_override", "int | None", None, ("!= 0 (negative allowed)",),
                 "divide every window sum by this instead of the cell count"),
    )
    notes = ["int64 sums in int64 and divides with truncation toward zero, as torch",
             "float16/bfloat16 sum and divide in float32 and round once"]
    if n == 1:
        notes.append("divisor_override is accepted on 1d too (torch's avg_pool1d lacks it)")
    if n == 3:
        notes.append("every input extent must be >= kernel_size even with padding, as torch")
        notes.append("float16/bfloat16 are accepted (torch's CPU avg_pool3d refuses them)")
    return Card(
        name=name, version=1, category="pooling",
        summary=f"{n}-d average pooling over regular windows.",
        spatial_dims=(n,), input_ranks=_ranks(n), dtypes=FLOATS + ("int64",),
        arguments=args,
        shape_relation=f"per spatial axis: {_OUT_FORMULA}; "
                       "y = sum(window ∩ input) / D, D = divisor_override, else prod(min(a+k, L+p_hi) - a) if "
                       "count_include_pad, else the number of input cells in the window",
        determinism="forward and backward are sums of strided slices in a fixed order: bit-identical "
                    "across runs on every backend; backward gathers (no scatter, no atomics)",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "linear: the backward is the transposed window sum, its own backward the forward"),
        torch_reference=f"torch.nn.functional.avg_pool{n}d" if n > 1 else
        "torch.nn.functional.avg_pool1d (divisor_override via avg_pool2d)",
        notes=tuple(notes), _resolve=_resolve_avg,
        outputs=(_output(n),),
        examples=(Example(_shape(n, 32), dict(kernel_size=3, stride=2, padding=1)),
                  Example(_shape(n, 7), dict(kernel_size=2, ceil_mode=True, count_include_pad=False)),
                  Example((3,) + (9,) * n, dict(kernel_size=4, stride=3, padding=2, divisor_override=9)),
                  Example(_shape(n, 7), dict(kernel_size=2, stride=2, padding="same", count_include_pad=False))),
        torch_determinism="avg_pool3d's CUDA backward uses atomicAdd (avg_pool3d_backward_cuda raises under "
                          "use_deterministic_algorithms)" if n == 3 else _TORCH_OK,
        channels_last=(4,) if n == 2 else (),
    )


def _adaptive_card(kind: str, n: int) -> Card:
    name = f"adaptive_{kind}_pool{n}d"
    args: tuple[Argument, ...] = (
        Argument("x", "array", constraints=(f"shape (N, C, *S) or (C, *S) with {n} spatial dims",
                                            "spatial dimensions non-empty (N and C may be 0)"),
                 description="the input array"),
        Argument("output_size", f"int | None | tuple[int | None x {n}]", REQUIRED,
                 ("entries >= 0 (0 gives an empty output)", "None keeps the input size"),
                 "the output spatial size O"),
    )
    if kind == "max":
        args += (Argument("return_indices", "bool", False, (), "also return int64 flat indices"),)
        gradient = Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                            "routes the cotangent to the selected cells by gathering")
        determinism = "ties go to the first maximum in row-major order, a NaN wins (the last NaN's index); " \
                      "backward gathers over the windows covering each cell, or, where that table would be " \
                      "large, sorts each plane's winners and sums every cell's share in output order: no " \
                      "scatter-add, bit-identical across runs (torch's CUDA backward scatters atomically)"
    else:
        gradient = Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                            "linear; on JAX a primitive whose transpose is the transposed gather (a "
                            "gather must not transpose into a scatter-add)")
        determinism = "forward and backward gather over a fixed tap order: bit-identical across runs on " \
                      "every backend (torch's CUDA backward uses atomicAdd and raises under " \
                      "use_deterministic_algorithms)"
    return Card(
        name=name, version=1, category="adaptive_pooling",
        summary=f"{n}-d adaptive {kind} pooling to a given output size.",
        spatial_dims=(n,), input_ranks=_ranks(n), dtypes=FLOATS, arguments=args,
        shape_relation="per spatial axis: window i = [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap "
                       "and O > L is allowed",
        determinism=determinism, gradient=gradient,
        torch_reference=f"torch.nn.functional.adaptive_{kind}_pool{n}d",
        _resolve=_resolve_adaptive,
        outputs=(_output(n),) + ((_indices(n, "the input plane"),) if kind == "max" else ()),
        examples=(Example(_shape(n, 13, ("N", 64)), dict(output_size=7)),
                  Example(_shape(n, 5, ("N", 64)), dict(output_size=(8,) + (None,) * (n - 1) if n > 1 else 8))),
        torch_determinism=("torch's CUDA backward uses atomicAdd (adaptive_avg_pool2d/3d backward and "
                           "adaptive_max_pool2d backward raise under use_deterministic_algorithms)"
                           if (kind, n) != ("max", 3) else
                           "torch's CUDA backward scatters the cotangent to the winners (no deterministic "
                           "alert is listed for this op)"),
        channels_last=(4,) if n == 2 else (),
    )


def _max_card(n: int) -> Card:
    name = f"max_pool{n}d"
    args = (
        _input_arg(n),
        _size_arg("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0", "None or () means kernel_size"),
                 "the window step s"),
        Argument("padding", _PADDING_TYPE.format(n=n), 0,
                 ("int p: 0 <= p <= k // 2 (torch's)", "(low, high) pairs: 0 <= low, high <= (k - 1) * d",
                  "'same': TensorFlow's, ceil(L / s) outputs, the odd cell at the end; 'valid': none"),
                 "implicit -inf padding: p on both sides, or per axis (low, high) as lax.reduce_window and ONNX "
                 "pads, or 'valid' / 'same' as TensorFlow and Keras"),
        _size_arg("dilation", n, 1, "the spacing d between taps", "every entry > 0"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
        Argument("return_indices", "bool", False, (), "also return int64 flat indices into the input plane"),
    )
    return Card(
        name=name, version=1, category="pooling", summary=f"{n}-d max pooling over regular windows.",
        spatial_dims=(n,), input_ranks=_ranks(n), dtypes=FLOATS + INTS, arguments=args,
        shape_relation=f"per spatial axis: {_OUT_FORMULA}; {_REG}",
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
        outputs=(_output(n), _indices(n, "the unpadded input plane")),
        examples=(Example(_shape(n, 32), dict(kernel_size=3, stride=2, padding=1)),
                  Example(_shape(n, 11), dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True,
                                              return_indices=True)),
                  Example(_shape(n, 10), dict(kernel_size=3, stride=1, padding=((2, 0),) * n))),
        torch_determinism=_TORCH_OK if n < 3 else
        "deterministic in torch 2.13; older releases raised max_pool3d_with_indices_backward_cuda",
        channels_last=(4,) if n == 2 else (5,) if n == 3 else (),
    )


def _unpool_card(n: int) -> Card:
    name = f"max_unpool{n}d"
    args = (
        _input_arg(n),
        Argument("indices", "int64 array", constraints=("same shape as x", "values in [0, prod(output_size))"),
                 description="flat indices as returned by max_pool with return_indices=True"),
        _size_arg("kernel_size", n, REQUIRED, "the pooling window size", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0",), "the pooling step"),
        _size_arg("padding", n, 0, "the pooling padding", ">= 0"),
        Argument("output_size", f"tuple[int x {n}] | None", None,
                 ("default - stride < entry < default + stride",), "the output spatial size"),
    )
    return Card(
        name=name, version=1, category="unpooling", summary=f"{n}-d partial inverse of max_pool{n}d.",
        spatial_dims=(n,), input_ranks=_ranks(n), dtypes=FLOATS + INTS, arguments=args,
        shape_relation="per spatial axis: default O = (L - 1)*s - 2p + k",
        determinism="duplicate indices resolve to one documented winner; computed by gathering, "
                    "so it is deterministic (torch raises under use_deterministic_algorithms)",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "linear in x: the backward is a gather at the indices (winners only), its "
                          "backward the unpool again"),
        torch_reference=f"torch.nn.functional.max_unpool{n}d", _resolve=_resolve_unpool,
        outputs=(_output(n, "zeros, with x at the indices"),),
        examples=(Example(_shape(n, 16), dict(kernel_size=2)),
                  Example(_shape(n, 8), dict(kernel_size=3, stride=2, padding=1, output_size=(16,) * n))),
        torch_determinism="torch's max_unpool forward scatters, and raises under use_deterministic_algorithms "
                          "even on CPU (max_unpooling2d/3d_forward_out); the winner of duplicates is unspecified",
        channels_last=(4,) if n == 2 else (),
    )


def _lp_card(n: int) -> Card:
    name = f"lp_pool{n}d"
    args = (
        _input_arg(n),
        Argument("norm_type", "float", REQUIRED, ("!= 0", "inf and -inf allowed"), "the power p"),
        _size_arg("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0",), "the window step s"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
    )
    return Card(
        name=name, version=1, category="pooling", summary=f"{n}-d power-average pooling.",
        spatial_dims=(n,), input_ranks=_ranks(n), dtypes=FLOATS, arguments=args,
        shape_relation=f"per spatial axis: {_OUT_FORMULA} with p = 0, d = 1; y = S^(1/p), "
                       "S = avg_pool(x^p) * prod(k) (partial ceil windows scaled by K/n as torch)",
        determinism="deterministic; gradient 0 where the window sum is 0",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "native autodiff over torch's formula (the window sum is the avg family's linear "
                          "op; p = +-inf routes through max_pool); jvp works for finite norm_type"),
        torch_reference=f"torch.nn.functional.lp_pool{n}d", _resolve=_resolve_lp,
        notes=(f"norm_type = +-inf is max_pool{n}d of |x| (sign-flipped for -inf), as torch, and takes "
               f"max_pool{n}d's memory-format rule",),
        outputs=(_output(n),),
        examples=(Example(_shape(n, 32), dict(norm_type=2.0, kernel_size=3, stride=2)),
                  Example(_shape(n, 7), dict(norm_type=float("inf"), kernel_size=2, ceil_mode=True))),
        torch_determinism="torch composes avg_pool (and max_pool for p = inf): "
                          + ("avg_pool3d's CUDA backward is atomic" if n == 3 else "deterministic"),
        channels_last=(4,) if n == 2 else (),
    )


def pooling_cards() -> list[Card]:
    cards: list[Card] = []
    for n in (1, 2, 3):
        cards += [_avg_card(n), _adaptive_card("avg", n), _max_card(n), _adaptive_card("max", n),
                  _unpool_card(n), _lp_card(n)]
    return cards
