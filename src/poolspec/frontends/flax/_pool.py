"""The window reductions behind :mod:`poolspec.frontends.flax.linen`: flax's arguments checked, lax's padding
laid down where poolspec's kernels do not take it, and the window axes pooled three at a time.

>>> import numpy as np
>>> pool_windows("f", np.arange(4.0).reshape(1, 4, 1), "max", (2,), (2,), "VALID")[0, :, 0]
array([1., 3.])
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..._compat import dtype_name, dtype_of, is_dask_array, namespace, on, to_namespace
from ...families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ...families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from .._common import (
    FLOATS,
    INTS,
    at_least,
    choice,
    fail,
    ints,
    jax_default_float,
    nonempty,
    over_symbolic_axes,
    symbolic_axes,
)
from .._geometry import same_pads, valid_output

_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
# the dtypes lax's window sum takes (bool is refused)
_NUMBERS = FLOATS + INTS


def _pads(function: str, padding: Any, spatial: tuple[int, ...], window: tuple[int, ...],
          strides: tuple[int, ...]) -> list[tuple[int, int]]:
    """(low, high) per window axis: lax.padtype_to_pads's SAME (odd cell at the end), SAME_LOWER (at the
    start) and VALID, case-insensitive, or the pairs as given."""
    if isinstance(padding, str):
        mode = choice(function, "padding", padding, ("SAME", "SAME_LOWER", "VALID"), "must be 'SAME', "
                      "'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs", any_case=True).upper()
        if mode == "VALID":
            return [(0, 0)] * len(window)
        return [same_pads(L, k, s, lower=mode == "SAME_LOWER") for L, k, s in zip(spatial, window, strides)]
    try:
        pairs = [tuple(p) for p in padding]
    except TypeError:
        fail(function, "padding", padding, "must be 'SAME', 'VALID' or a sequence of (low, high) int pairs",
             TypeError)
    if len(pairs) != len(window) or any(len(p) != 2 for p in pairs):
        fail(function, "padding", padding, f"must give one (low, high) pair per window axis ({len(window)}, as "
             "window_shape)")
    return [ints(function, "padding", p) for p in pairs]  # type: ignore[misc]


def reduction(function: str, reduce_fn: Any) -> str:
    """lax.max / lax.add / lax.min, by identity or by name (a jax function named max, add or min); the names
    "max", "add" and "min" themselves too (an extension: a call that needs no JAX, as the stored cases hold)."""
    if isinstance(reduce_fn, str) and reduce_fn in ("max", "add", "min"):
        return reduce_fn
    if "jax" in sys.modules:
        from jax import lax

        for kind, fn in (("max", lax.max), ("add", lax.add), ("min", lax.min)):
            if reduce_fn is fn:
                return kind
    name = getattr(reduce_fn, "__name__", None)
    module = getattr(reduce_fn, "__module__", None) or ""
    if name in ("max", "add", "min") and module.startswith("jax"):
        return str(name)
    fail(function, "reduce_fn", reduce_fn, "must be jax.lax.max, jax.lax.add or jax.lax.min (the reductions "
         "poolspec has kernels for)", TypeError)
    raise AssertionError


def _identity(kind: str, dtype: str) -> Any:
    """The identity of a reduction in a dtype: the value flax's padding holds."""
    if kind in ("add", "avg"):
        return 0
    if dtype in FLOATS:
        return -math.inf if kind == "max" else math.inf
    if dtype == "bool":
        return kind == "min"
    info = np.iinfo(dtype)
    return int(info.min) if kind == "max" else int(info.max)


def check_init(function: str, kind: str, init: Any, dtype: str) -> None:
    """Refuse an init that is not the reduction's identity: lax.reduce_window then has no fixed meaning."""
    try:
        value = float(init)
    except Exception:
        fail(function, "init", init, "must be a concrete number", TypeError)
    want = _identity(kind, dtype)
    ok = value == float(want) or (kind == "max" and value == -math.inf) or (kind == "min" and value == math.inf)
    if not ok:
        fail(function, "init", init, f"must be the identity of lax.{kind} ({want!r}); reduce_window with another "
             "init has no fixed meaning")


def _groups(active: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of at most three window axes covering every active axis: poolspec pools 1 to 3
    spatial axes per call and box windows are separable."""
    groups = []
    i = 0
    while i < len(active):
        start = active[i]
        j = i
        while j + 1 < len(active) and active[j + 1] - start < 3:
            j += 1
        groups.append((start, active[j]))
        i = j + 1
    return groups


def _window(function: str, inputs: Any, window_shape: Any, strides: Any) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                                     int]:
    """window_shape and strides checked, and the number of batch axes."""
    window = ints(function, "window_shape", window_shape)
    n = len(window)
    stride = ints(function, "strides", strides) if strides else (1,) * n
    if len(stride) != n:
        fail(function, "strides", strides, f"must have len(window_shape) = {n} entries")
    at_least(function, "window_shape", window_shape, window)
    at_least(function, "strides", strides, stride)
    nb = inputs.ndim - (n + 1)
    if nb < 0:
        fail(function, "inputs", tuple(inputs.shape), f"must have at least len(window_shape) + 1 = {n + 1} "
             "dimensions (batch..., window dims..., features)")
    return window, stride, nb


def pool_windows(function: str, inputs: Any, kind: str, window_shape: Any, strides: Any, padding: Any,
                 count_include_pad: bool = True) -> Any:
    """flax's window reduction ``kind`` ("max", "min", "add", "avg") of ``inputs``, its arguments checked."""
    xp = namespace(inputs, op=function, names=("inputs",))
    window, stride, nb = _window(function, inputs, window_shape, strides)
    n = len(window)
    if symbolic_axes(inputs):  # jax.export's symbolic batch or feature sizes: mapped over
        return over_symbolic_axes(function, lambda a: pool_windows(function, a, kind, window_shape, strides, padding,
                                                                   count_include_pad), inputs, range(nb, nb + n))
    shape = tuple(int(v) for v in inputs.shape)
    spatial = shape[nb:nb + n]
    pads = _pads(function, padding, spatial, window, stride)
    if not isinstance(padding, str) and nb > 1:
        fail(function, "padding", padding, f"explicit (low, high) pairs need at most one batch axis; inputs has {nb} "
             "(flax pads only the first axis and the features, and lax.reduce_window then refuses the rank)")
    outs = tuple(valid_output(L + lo + hi, k, s) for L, k, s, (lo, hi) in zip(spatial, window, stride, pads))
    out_shape = shape[:nb] + outs + shape[-1:]

    dtype = dtype_name(xp, inputs.dtype)
    if kind in ("avg", "add"):
        choice(function, "inputs", dtype, _NUMBERS, "dtype must be a number type (lax's window sum refuses bool)",
               kind=TypeError)
    # flax divides an integer window sum by an int: JAX's true division gives its default float
    result = jax_default_float(inputs) if kind == "avg" and dtype not in FLOATS else dtype
    if 0 in out_shape:
        # an empty result still made from inputs (an empty slice reshaped), so autograd sees it depend on them
        # (Dask's reshape between two empty shapes fails: it has no autograd, so a fresh empty array serves)
        empty = (xp.zeros(out_shape, dtype=inputs.dtype) if is_dask_array(inputs)
                 else xp.reshape(inputs[(slice(0, 0), ...)], out_shape))
        return empty if result == dtype else xp.astype(empty, dtype_of(xp, result))
    nonempty(function, "inputs", shape, range(len(shape)), "an empty window axis can only give an empty output")

    x = inputs
    if kind == "avg" and dtype not in FLOATS:
        x = xp.astype(x, dtype_of(xp, result))
    elif kind == "add" and dtype not in FLOATS:
        x = xp.astype(x, xp.int64)  # the window sum in int64, wrapped back to the input's width below
    elif dtype == "bool":
        x = xp.astype(x, xp.uint8)
    if kind == "min":
        # min = flip(max(flip)): negation for floats, bitwise not for integers (exact, no overflow)
        x = -x if dtype in FLOATS else xp.bitwise_invert(x)
    x, new_pads, host_counts = _lay_padding(xp, x, kind, nb, spatial, window, pads, dtype, count_include_pad)
    x = _reduce(xp, x, kind, nb, window, stride, new_pads, outs, host_counts, count_include_pad)
    if x is inputs:
        x = x + 0 if dtype != "bool" else xp.astype(x, xp.bool)  # a new array, as lax.reduce_window returns

    if host_counts:
        x = _divide_by_counts(xp, x, nb, spatial, window, stride, pads, outs)
    if kind == "min":
        x = -x if dtype in FLOATS else xp.bitwise_invert(x)
    if dtype == "bool" and kind in ("max", "min"):
        return xp.astype(x, xp.bool)
    if kind == "add" and dtype not in FLOATS:
        return xp.astype(x, dtype_of(xp, dtype))
    return x


def _lay_padding(xp: Any, x: Any, kind: str, nb: int, spatial: tuple[int, ...], window: tuple[int, ...],
                 pads: list[tuple[int, int]], dtype: str,
                 count_include_pad: bool) -> tuple[Any, list[tuple[int, int]], bool]:
    """Negative padding cropped, and padding beyond k - 1 (windows wholly in the padding) laid down as cells
    holding the reduction's identity, by concatenation (its gradient is a slice: nothing scatters); returns the
    array, the padding left for the kernels and whether the counts of an average must be taken on the host."""
    work = "max" if kind in ("max", "min") else "sum"
    if work == "sum":
        fill: Any = 0
    else:
        fill = -math.inf if dtype in FLOATS else int(np.iinfo(dtype_name(xp, x.dtype)).min)
    host_counts = False
    new_pads = []
    for a, (L, k, (lo, hi)) in enumerate(zip(spatial, window, pads)):
        axis = nb + a
        if lo < 0 or hi < 0:
            start, stop = max(-lo, 0), L - max(-hi, 0)
            if stop - start < 1:
                # the crop eats the whole axis (and part of the other side's padding, as lax.pad does): every
                # cell left, L + low + high of them, is padding
                x = x[(slice(None),) * axis + (slice(0, 0), ...)]
                lo, hi = L + lo + hi, 0
            else:
                x = x[(slice(None),) * axis + (slice(start, stop), ...)]
                lo, hi = max(lo, 0), max(hi, 0)
        extra_lo, extra_hi = max(lo - (k - 1), 0), max(hi - (k - 1), 0)
        short = k - (int(x.shape[axis]) + extra_lo + extra_hi)
        if work == "sum" and short > 0:
            # poolspec's window sums want the window inside the input (torch's rule): lay down enough of the
            # padding as zero cells, from the high side first
            from_hi = min(hi - extra_hi, short)
            extra_hi += from_hi
            extra_lo += short - from_hi
        if extra_lo or extra_hi:
            host_counts |= kind == "avg" and not count_include_pad
            parts = []
            for extra in (extra_lo, None, extra_hi):
                if extra is None:
                    parts.append(x)
                elif extra:
                    part_shape = tuple(x.shape[:axis]) + (extra,) + tuple(x.shape[axis + 1:])
                    parts.append(xp.full(part_shape, fill, dtype=x.dtype, **on(x)))
            x = xp.concat(parts, axis=axis)
            lo, hi = lo - extra_lo, hi - extra_hi
        new_pads.append((lo, hi))
    return x, new_pads, host_counts


def _reduce(xp: Any, x: Any, kind: str, nb: int, window: tuple[int, ...], stride: tuple[int, ...],
            pads: list[tuple[int, int]], outs: tuple[int, ...], host_counts: bool, count_include_pad: bool) -> Any:
    """The window axes pooled by poolspec's 1-3-d kernels, up to three consecutive axes per call (the others
    folded into the batch and channel axes of a reshaped view)."""
    active = [a for a in range(len(window)) if (window[a], stride[a], pads[a]) != (1, 1, (0, 0))]
    for first, last in _groups(active):
        axes = list(range(first, last + 1))
        cur = tuple(int(v) for v in x.shape)
        lead, tail = cur[:nb + first], cur[nb + last + 1:]
        view = xp.reshape(x, (math.prod(lead),) + cur[nb + first:nb + last + 1] + (math.prod(tail),))
        k_ = tuple(window[a] for a in axes)
        s_ = tuple(stride[a] for a in axes)
        p_ = tuple(pads[a] for a in axes)
        if kind in ("max", "min"):
            y = _MAX[len(axes)](view, k_, s_, p_, layout="channels_last")
        elif kind == "avg" and not host_counts:
            y = _AVG[len(axes)](view, k_, s_, p_, count_include_pad=bool(count_include_pad),
                                layout="channels_last")
        else:
            y = _AVG[len(axes)](view, k_, s_, p_, divisor_override=1, layout="channels_last")
        x = xp.reshape(y, lead + tuple(outs[a] for a in axes) + tail)
    return x


def _divide_by_counts(xp: Any, x: Any, nb: int, spatial: tuple[int, ...], window: tuple[int, ...],
                      stride: tuple[int, ...], pads: list[tuple[int, int]], outs: tuple[int, ...]) -> Any:
    """Window sums over the count of input cells each window holds (flax's pool of ones), NaN where a window
    holds none (flax's 0 / 0); the NaN is put in by a select, so no 1/0 reaches the gradient."""
    counts = np.ones((), dtype=np.float64)
    for L, k, s, (lo, hi), o in zip(spatial, window, stride, pads, outs):
        start = np.arange(o) * s - lo  # in the input's coordinates; a negative pad crops either end
        c = np.clip(np.minimum(start + k, L + min(hi, 0)) - np.maximum(start, 0), 0, None).astype(np.float64)
        counts = np.multiply.outer(counts, c)
    counts = counts.reshape((1,) * nb + counts.shape + (1,))
    empty = counts == 0
    safe = to_namespace(np.where(empty, 1.0, counts), xp, x, dtype=x.dtype)
    y = x / safe
    if empty.any():
        nan = to_namespace(np.where(empty, np.nan, 0.0), xp, x, dtype=x.dtype)
        y = xp.where(to_namespace(empty, xp, x), nan, y)
    return y
