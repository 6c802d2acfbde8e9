"""``flax.linen``'s pooling functions on poolspec's kernels: ``max_pool``, ``avg_pool``, ``min_pool`` and
``pool`` with flax 0.12.8's names, signatures, layouts and padding rules, on any array-API array.

Inputs are laid out (batch..., window dims..., features) as flax's (any number of batch axes, or none); the
window axes are pooled by poolspec's ``max_pool{n}d`` / ``avg_pool{n}d`` with ``layout="channels_last"`` and
per-axis (low, high) padding, at most three axes per call (box windows are separable). Padding beyond the
window (a window wholly in the padding, which lax.reduce_window computes) is laid down first by concatenating
the reduction's identity; negative padding crops.

>>> import numpy as np
>>> from poolspec.frontends.flax import linen as nn
>>> nn.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), (2, 2), strides=(2, 2))[0, :, :, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._compat import dtype_name, dtype_of, is_dask_array, is_jax_array, namespace, on, to_namespace
from ..._types import Array
from ...families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ...families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ...spec._card import Argument, Gradient, Port
from ...spec.frontends import FrontendCard
from .._common import fail, mirror, over_symbolic_axes, symbolic_axes

_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8")


def _ints(function: str, name: str, value: Any) -> tuple[int, ...]:
    try:
        vals = tuple(value)
    except TypeError:
        fail(function, name, value, "must be a sequence of ints (a shape tuple)", TypeError)
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fail(function, name, value, "must be a sequence of ints", TypeError)
    return tuple(int(v) for v in vals)


def _pads(function: str, padding: Any, spatial: tuple[int, ...], window: tuple[int, ...],
          strides: tuple[int, ...]) -> list[tuple[int, int]]:
    """(low, high) per window axis: lax.padtype_to_pads's SAME (odd cell at the end), SAME_LOWER (at the
    start) and VALID, case-insensitive, or the pairs as given."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(window)
        if mode not in ("SAME", "SAME_LOWER"):
            fail(function, "padding", padding, "must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) "
                 "pairs")
        pads = []
        for L, k, s in zip(spatial, window, strides):
            total = max((-(-L // s) - 1) * s + k - L, 0)
            pads.append((total // 2, total - total // 2) if mode == "SAME" else (total - total // 2, total // 2))
        return pads
    try:
        pairs = [tuple(p) for p in padding]
    except TypeError:
        fail(function, "padding", padding, "must be 'SAME', 'VALID' or a sequence of (low, high) int pairs",
             TypeError)
    if len(pairs) != len(window):
        fail(function, "padding", padding, f"must give pads for the same number of dims as window_shape "
             f"({len(window)})")
    out = []
    for p in pairs:
        if len(p) != 2:
            fail(function, "padding", padding, "each entry must be a (low, high) pair")
        out.append(tuple(_ints(function, "padding", p)))
    return out  # type: ignore[return-value]


def _reduction(function: str, reduce_fn: Any) -> str:
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
    if dtype in _FLOATS:
        return -math.inf if kind == "max" else math.inf
    if dtype == "bool":
        return kind == "min"
    info = np.iinfo(dtype)
    return int(info.min) if kind == "max" else int(info.max)


def _check_init(function: str, kind: str, init: Any, dtype: str) -> None:
    try:
        value = float(init)
    except Exception:
        fail(function, "init", init, "must be a concrete number", TypeError)
    want = _identity(kind, dtype)
    ok = value == float(want) or (kind == "max" and value == -math.inf) or (kind == "min" and value == math.inf)
    if not ok:
        fail(function, "init", init, f"must be the identity of lax.{kind} ({want!r}); reduce_window with another "
             "init has no fixed meaning")


def _out_size(L: int, k: int, s: int, lo: int, hi: int) -> int:
    padded = L + lo + hi
    return 0 if padded < k else (padded - k) // s + 1


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


def _pool(function: str, inputs: Any, kind: str, window_shape: Any, strides: Any, padding: Any,
          count_include_pad: bool = True) -> Any:
    xp = namespace(inputs, op=function, names=("inputs",))
    window = _ints(function, "window_shape", window_shape)
    n = len(window)
    stride = _ints(function, "strides", strides) if strides else (1,) * n
    if len(stride) != n:
        fail(function, "strides", strides, f"must have len(window_shape) = {n} entries")
    for name, vals, given in (("window_shape", window, window_shape), ("strides", stride, strides)):
        if any(v < 1 for v in vals):
            fail(function, name, given, "every entry must be >= 1")
    nb = inputs.ndim - (n + 1)
    if nb < 0:
        fail(function, "inputs", tuple(inputs.shape), f"must have at least len(window_shape) + 1 = {n + 1} "
             "dimensions (batch..., window dims..., features)")
    if symbolic_axes(inputs):  # jax.export's symbolic batch or feature sizes: mapped over
        return over_symbolic_axes(function, lambda a: _pool(function, a, kind, window_shape, strides, padding,
                                                            count_include_pad), inputs, range(nb, nb + n))
    shape = tuple(int(v) for v in inputs.shape)
    spatial = shape[nb:nb + n]
    pads = _pads(function, padding, spatial, window, stride)
    if not isinstance(padding, str) and nb > 1:
        fail(function, "padding", padding, f"explicit (low, high) pairs need at most one batch axis; inputs has {nb} "
             "(flax pads only the first axis and the features, and lax.reduce_window then refuses the rank)")
    outs = tuple(_out_size(L, k, s, lo, hi) for L, k, s, (lo, hi) in zip(spatial, window, stride, pads))
    out_shape = shape[:nb] + outs + shape[-1:]

    dtype = dtype_name(xp, inputs.dtype)
    if kind in ("avg", "add") and dtype not in _FLOATS + _INTS + ("uint16", "uint32", "uint64"):
        fail(function, "inputs", dtype, "dtype must be a number type (lax's window sum refuses bool)", TypeError)
    if kind == "avg" and dtype not in _FLOATS:
        # flax divides an integer window sum by an int: JAX's true division gives its default float
        wide = not is_jax_array(inputs) or _x64()
        result = "float64" if wide else "float32"
    else:
        result = dtype
    if 0 in out_shape:
        # an empty result still made from inputs (an empty slice reshaped), so autograd sees it depend on them
        # (Dask's reshape between two empty shapes fails: it has no autograd, so a fresh empty array serves)
        empty = (xp.zeros(out_shape, dtype=inputs.dtype) if is_dask_array(inputs)
                 else xp.reshape(inputs[(slice(0, 0), ...)], out_shape))
        return empty if result == dtype else xp.astype(empty, dtype_of(xp, result))
    if 0 in shape:
        fail(function, "inputs", shape, "an empty window axis can only give an empty output")

    x = inputs
    if kind == "avg" and dtype not in _FLOATS:
        x = xp.astype(x, dtype_of(xp, result))
    elif kind == "add" and dtype not in _FLOATS:
        x = xp.astype(x, xp.int64)  # the window sum in int64, wrapped back to the input's width below
    elif dtype == "bool":
        x = xp.astype(x, xp.uint8)
    if kind == "min":
        # min = flip(max(flip)): negation for floats, bitwise not for integers (exact, no overflow)
        x = -x if dtype in _FLOATS else xp.bitwise_invert(x)
    work = "max" if kind in ("max", "min") else "sum"
    fill = -math.inf if (work == "max" and dtype in _FLOATS) else None
    if work == "max" and fill is None:
        fill = int(np.iinfo(dtype_name(xp, x.dtype)).min)
    if work == "sum":
        fill = 0

    # negative padding crops; padding beyond k - 1 (windows wholly in the padding) is laid down as cells
    # holding the reduction's identity, by concatenation (its gradient is a slice: nothing scatters)
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

    active = [a for a in range(n) if (window[a], stride[a], new_pads[a]) != (1, 1, (0, 0))]
    for first, last in _groups(active):
        axes = list(range(first, last + 1))
        cur = tuple(int(v) for v in x.shape)
        lead, tail = cur[:nb + first], cur[nb + last + 1:]
        view = xp.reshape(x, (math.prod(lead),) + cur[nb + first:nb + last + 1] + (math.prod(tail),))
        k_ = tuple(window[a] for a in axes)
        s_ = tuple(stride[a] for a in axes)
        p_ = tuple(new_pads[a] for a in axes)
        if work == "max":
            y = _MAX[len(axes)](view, k_, s_, p_, layout="channels_last")
        elif kind == "avg" and not host_counts:
            y = _AVG[len(axes)](view, k_, s_, p_, count_include_pad=bool(count_include_pad),
                                layout="channels_last")
        else:
            y = _AVG[len(axes)](view, k_, s_, p_, divisor_override=1, layout="channels_last")
        x = xp.reshape(y, lead + tuple(outs[a] for a in axes) + tail)
    if not active and x is inputs:
        x = x + 0 if dtype != "bool" else xp.astype(x, xp.bool)  # a new array, as lax.reduce_window returns

    if host_counts:
        x = _divide_by_counts(xp, x, nb, spatial, window, stride, pads, outs)
    if kind == "min":
        x = -x if dtype in _FLOATS else xp.bitwise_invert(x)
    if dtype == "bool" and kind in ("max", "min"):
        return xp.astype(x, xp.bool)
    if kind == "add" and dtype not in _FLOATS:
        return xp.astype(x, dtype_of(xp, dtype))
    return x


def _x64() -> bool:
    import jax

    return bool(jax.config.read("jax_enable_x64"))


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


def pool(inputs: Array, init: Any, reduce_fn: Callable[..., Any], window_shape: Sequence[int],
         strides: Sequence[int] | None, padding: str | Sequence[tuple[int, int]]) -> Array:
    """Reduce each window with lax.max, lax.add or lax.min, as ``flax.linen.pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features): any number of batch axes (none: unbatched); any array-API
        array (float, int8/16/32/64, uint8 or bool for max/min; float or integer for add).
    init : scalar
        The reduction's identity: -inf (or the dtype's lowest value) for lax.max, 0 for lax.add, inf (or the
        dtype's highest value) for lax.min.
    reduce_fn : callable
        ``jax.lax.max``, ``jax.lax.add`` or ``jax.lax.min`` (recognized by identity, or by name for a jax function
        named max, add or min); also the strings "max", "add" and "min".
    window_shape : sequence of int
        The window per window axis, every entry >= 1; any length (more than three axes are pooled three at a
        time).
    strides : sequence of int or None
        The step per window axis (None or empty: 1), every entry >= 1.
    padding : str or sequence of (int, int)
        ``'SAME'`` (lax's: ceil(L / s) outputs, the odd cell at the end), ``'SAME_LOWER'``, ``'VALID'`` (any case),
        or one (low, high) pair per window axis: any size (windows wholly in the padding give the identity);
        negative crops.

    Returns
    -------
    array
        Shaped (batch..., out dims..., features), out = floor((L + low + high - k) / s) + 1 (0 if L + low + high
        < k); the inputs' dtype (an integer sum wraps at the dtype's width, as lax's).

    Raises
    ------
    ValueError
        If inputs has fewer than len(window_shape) + 1 dimensions, strides or padding has the wrong length, an
        entry of window_shape or strides is below 1, padding is an unknown string or has (low, high) pairs with
        more than one batch axis, or init is not the reduction's identity.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, reduce_fn is not lax.max,
        lax.add or lax.min, or window_shape, strides or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from jax import lax
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.pool(np.arange(6.0).reshape(1, 6, 1), 0.0, lax.add, (3,), (3,), "VALID")[0, :, 0]
    array([ 3., 12.])
    """
    function = "flax.linen.pool"
    namespace(inputs, op=function, names=("inputs",))
    kind = _reduction(function, reduce_fn)
    _check_init(function, kind, init, dtype_name(namespace(inputs), inputs.dtype))
    return _pool(function, inputs, kind, window_shape, strides, padding)


def avg_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID", count_include_pad: bool = True) -> Array:
    """Average each window, as ``flax.linen.avg_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float or integer dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size; negative
        crops).
    count_include_pad : bool, default True
        Divide by the window size (padding included) rather than the count of input cells in the window.

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`; a float dtype is kept, integers give float64
        (JAX's default float; float32 on JAX arrays without jax_enable_x64). A window holding no input cell gives
        0 with count_include_pad, NaN without (flax's 0 / 0).

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or is bool or complex, or window_shape, strides or
        padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.avg_pool(np.arange(4.0).reshape(1, 4, 1), (2,), padding="SAME", count_include_pad=False)[0, :, 0]
    array([0.5, 1.5, 2.5, 3. ])
    """
    return _pool("flax.linen.avg_pool", inputs, "avg", window_shape, strides, padding, count_include_pad)


def max_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Array:
    """The maximum of each window, as ``flax.linen.max_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float, int8/16/32/64, uint8 or bool dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size: a window
        wholly in the padding gives -inf, or the dtype's lowest value; negative crops).

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`, in the inputs' dtype.

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, or window_shape, strides
        or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.max_pool(np.array([[[1.0], [3.0], [2.0]]]), (2,), padding="SAME")[0, :, 0]
    array([3., 3., 2.])
    """
    return _pool("flax.linen.max_pool", inputs, "max", window_shape, strides, padding)


def min_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Array:
    """The minimum of each window, as ``flax.linen.pooling.min_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float, int8/16/32/64, uint8 or bool dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size: a window
        wholly in the padding gives inf, or the dtype's highest value; negative crops).

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`, in the inputs' dtype.

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, or window_shape, strides
        or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.min_pool(np.array([[[1.0], [3.0], [2.0]]]), (2,))[0, :, 0]
    array([1., 2.])
    """
    return _pool("flax.linen.pooling.min_pool", inputs, "min", window_shape, strides, padding)


_INPUTS = Argument("inputs", "array", description="(batch..., window dims..., features): any number of batch axes "
                   "(none: unbatched).")
_WINDOW = Argument("window_shape", "tuple[int, ...]", constraints=("entries >= 1",),
                   description="The window per window axis; any number of axes.")
_STRIDES = Argument("strides", "tuple[int, ...] | None", None, constraints=("len == len(window_shape)",
                    "entries >= 1"), description="The step per window axis (None or (): 1).")
_PADDING = Argument("padding", "str | tuple[tuple[int, int], ...]", "VALID", constraints=(
    "'SAME', 'SAME_LOWER', 'VALID' (any case) or one (low, high) pair per window axis",
    "pairs only with at most one batch axis"), description="Padding with the reduction's identity; any size "
    "(negative crops).")
_SHARED = (
    "Layout (batch..., window dims..., features): the number of batch axes is inputs.ndim - len(window_shape) - 1; "
    "none is unbatched (flax adds and removes a batch axis); several are allowed with string padding only (flax "
    "pads ((0, 0),) + pairs + ((0, 0),), one axis short, and lax.reduce_window raises).",
    "padding: lax.padtype_to_pads: 'SAME' pads max((ceil(L / s) - 1) * s + k - L, 0) with the odd cell at the "
    "end, 'SAME_LOWER' at the start, 'VALID' none, case-insensitive. (low, high) pairs are taken as they are: "
    "beyond k - 1 windows lie wholly in the padding (they give the identity: -inf / the dtype's lowest for max, "
    "0 for sums); a negative pad crops.",
    "Output size per window axis floor((L + low + high - k) / s) + 1, or 0 (an empty axis) where L + low + high "
    "< k.",
    "strides None or () means 1 per axis. flax raises TypeError for a list window_shape or strides (it "
    "concatenates tuples); the front-end takes any sequence of ints.",
)
_FLAX_GRADIENT = Gradient(None, torch=("grad", "vjp", "higher-order"), jax=("grad", "vjp", "jvp", "jit"),
                          notes="Gradients w.r.t. inputs through poolspec's max_pool / avg_pool bindings (gathers, "
                                "no scatter-add); padding laid down by concatenation differentiates as a slice. "
                                "Compared with jax.vjp of flax's function.", wrt=("inputs",))
_FLAX_CHECKED = ("conformance/frontend_checks/flax.py against flax 0.12.8 (jax 0.10.2, jax_enable_x64): random "
                 "1-4 window axes, 0-2 batch axes, windows up to one past the input, strides, SAME / SAME_LOWER / "
                 "VALID in any case, (low, high) pairs including negative and beyond-window pads, count_include_pad "
                 "both ways, float64/float32/float16 and integer/bool inputs; outputs on NumPy, JAX and torch and "
                 "gradients against jax.vjp on JAX and torch. conformance/results/frontends/flax.json has the "
                 "counts.")
_MAX_RULES = ("max: lax.reduce_window(max) with init -inf: integer inputs keep their dtype (windows in the padding "
              "give the dtype's lowest value), bool is an any(); the gradient goes to the first maximum of the "
              "window (jax's select_and_scatter_add).",
              "jax's max-pool VJP raises TypeError for negative padding (select_and_scatter_add's slice); "
              "poolspec's has the gradient. XLA aborts the process on a negative pad when every window size is 1 "
              "(its simplifier rewrites the reduce_window to an elementwise max of the wrong shape): not checked "
              "there; the front-end crops.")

CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(
        name="flax.linen.max_pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.max_pool",
        summary="Max pooling over the window axes of a (batch..., window dims..., features) array, flax's padding "
                "rules.",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's maximum."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic", notes=_SHARED + _MAX_RULES,
        refuses=("Dtypes without a poolspec max kernel (uint16/32/64, complex).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.avg_pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.avg_pool",
        summary="Average pooling over the window axes, padding counted or not (count_include_pad).",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING,
                   Argument("count_include_pad", "bool", True, description="Divide by the window size (True) or "
                            "by the count of input cells in the window (False).")),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's mean."),),
        core=("avg_pool1d", "avg_pool2d", "avg_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "count_include_pad=True: the window sum (lax.reduce_window add, init 0) divided by prod(window_shape); "
            "False: divided by the same pool of ones, the count of input cells, so a window wholly in the padding "
            "gives 0 / 0 = NaN (the front-end puts the NaN in by a select: no 1/0 reaches the gradient).",
            "Integer inputs: the window sum in the input's dtype divided by an int, JAX's true division: float64 "
            "under jax_enable_x64 (float32 without). The front-end sums in float64 (float32 on JAX without x64).",
            "More than three window axes: box windows are separable, so the front-end pools three axes at a time "
            "(the divisor is the product of per-axis counts, both ways)."),
        differences=(
            "count_include_pad=False returns JAX's default float dtype (float64 under jax_enable_x64) for "
            "float32/float16 inputs (the pool of jnp.ones() promotes the result): the front-end keeps the input's "
            "float dtype (the check compares flax's result cast back).",
            "Integer window sums wrap at the input's width in flax (int8/int16/uint8 overflow quickly): the "
            "front-end sums exactly (the check keeps the sums in range)."),
        refuses=("bool inputs (flax too: reduce_window_sum needs a number dtype).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.min_pool", version=1, library="flax 0.12.8 (jax 0.10.2)",
        mirrors="flax.linen.pooling.min_pool",
        summary="Min pooling over the window axes (flax.linen.pooling.min_pool; flax.linen does not export it).",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's minimum."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "min: lax.reduce_window(min) with init inf (the dtype's highest value for integers; bool is an all()). "
            "The front-end pools max of the negation (floats) or of the bitwise complement (integers: exact, no "
            "overflow at the dtype's lowest value).",
            "flax 0.12.8 defines min_pool in flax.linen.pooling but does not export it from flax.linen; the front-end "
            "has it in linen (and the check calls flax.linen.pooling.min_pool).") + _MAX_RULES[1:],
        refuses=("Dtypes without a poolspec max kernel (uint16/32/64, complex).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.pool",
        summary="flax's generic window reduction, for reduce_fn lax.max, lax.add or lax.min with their identity "
                "init: max pooling, window sums, min pooling.",
        arguments=(_INPUTS, Argument("init", "scalar", constraints=("the identity of reduce_fn",),
                                     description="-inf (max), 0 (add), inf (min), or the dtype's extremes."),
                   Argument("reduce_fn", "callable",
                            constraints=("jax.lax.max, jax.lax.add or jax.lax.min (or the names 'max', 'add', 'min')",),
                            description="The reduction."),
                   _WINDOW, Argument("strides", "tuple[int, ...] | None", constraints=("entries >= 1",),
                                     description="The step per window axis (None or (): 1); required positionally "
                                                 "as flax's."),
                   Argument("padding", _PADDING.type, constraints=_PADDING.constraints,
                            description=_PADDING.description)),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's reduction."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d"),
        layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "reduce_fn is recognized by identity (jax.lax.max / add / min) or by name (a jax function named max, "
            "add or min). lax.add is a window sum in the input's dtype (avg_pool with divisor_override=1; integers "
            "summed in int64 and wrapped back to their width, as lax's).",
            "With a non-identity init lax.reduce_window takes its generic path (for add the init is added once and "
            "the padding adds nothing; a Python float init then fails for float32 under x64): no fixed meaning, "
            "refused.") + _MAX_RULES,
        refuses=("reduce_fn other than lax.max / lax.add / lax.min (e.g. jnp.maximum, which flax takes for "
                 "float64 inputs): TypeError.", "An init that is not the reduction's identity: ValueError."),
        checked=_FLAX_CHECKED),
)

__all__ = ["max_pool", "avg_pool", "min_pool", "pool"]
# other names are flax.linen's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "flax.linen", __all__)
