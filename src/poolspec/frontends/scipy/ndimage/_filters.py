"""SciPy 1.17's window filters (``uniform_filter(1d)``, ``maximum_filter(1d)``, ``minimum_filter(1d)``) written
once against the array API.

Each axis is extended by SciPy's boundary mode as slices, flips, broadcasts and constants of the input
concatenated around it (no gather), then reduced over ``size`` shifted slices by doubling (windows of 2, 4, 8, ...
cells: about log2(size) passes): a sum divided by ``size`` (the uniform filter) or ``where(b > a, b, a)`` of an
earlier and a later window (the maximum; ``<`` for the minimum), which keeps the first of equal taps as the
tap-by-tap chain does. Native autodiff through these is deterministic on torch and JAX (slices transpose into pads,
``where`` into selects): the uniform filter's gradient is its transpose, and a max/min filter's cotangent goes whole
to the selected tap (never split between ties). On NumPy (float64, lines of two windows and more) the uniform
filter's doubling runs over the flat C-order input in cache blocks, without the extended copy: only the lines'
first and last cells read extended cells, from two thin slabs.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ...._compat import dtype_name, dtype_of, namespace, on, to_host
from ..._common import fail, jax_default_float

# SciPy's filter modes (``_extend_mode_to_code(mode, is_filter=True)``): the grid-* names are aliases here
MODES = {"reflect": "reflect", "grid-mirror": "reflect", "mirror": "mirror", "nearest": "nearest", "wrap": "wrap",
         "grid-wrap": "wrap", "constant": "constant", "grid-constant": "constant"}
_FLOATS = ("float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

# ---------------------------------------------------------------------------------------------- boundary modes


def fold(length: int, before: int, after: int, mode: str) -> np.ndarray:
    """The input cell each cell of the extended line reads (-1: cval), SciPy's ``NI_ExtendLine`` rule; extensions
    longer than the line repeat periodically.

    >>> fold(3, 4, 2, "reflect").tolist(), fold(3, 2, 2, "mirror").tolist()
    ([2, 2, 1, 0, 0, 1, 2, 2, 1], [2, 1, 0, 1, 2, 1, 0])
    """
    p = np.arange(-before, length + after)
    if mode == "reflect":
        q = p % (2 * length)
        return np.where(q >= length, 2 * length - 1 - q, q)
    if mode == "mirror":
        if length == 1:  # SciPy falls back to nearest
            return np.zeros_like(p)
        q = p % (2 * length - 2)
        return np.where(q >= length, 2 * length - 2 - q, q)
    if mode == "wrap":
        return p % length
    if mode == "nearest":
        return np.clip(p, 0, length - 1)
    return np.where((p < 0) | (p >= length), -1, p)


@lru_cache(maxsize=4096)
def runs(length: int, before: int, after: int, mode: str) -> tuple[tuple[int, int, int], ...]:
    """The extended line as pieces ``(start, count, step)``: ``x[start:start+count]`` (step 1), its reverse
    ending at ``start`` (step -1), ``x[start]`` repeated (step 0), or ``count`` cval cells (start -1).

    >>> runs(4, 2, 1, "reflect")
    ((1, 2, -1), (0, 4, 1), (3, 1, 1))
    """
    q = fold(length, before, after, mode).tolist()
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(q)
    while i < n:
        j = i + 1
        if q[i] < 0:
            while j < n and q[j] < 0:
                j += 1
            out.append((-1, j - i, 0))
        else:
            step = q[j] - q[i] if j < n and q[j] >= 0 and abs(q[j] - q[i]) <= 1 else 1
            while j < n and q[j] >= 0 and q[j] - q[j - 1] == step:
                j += 1
            out.append((q[i], j - i, step))
        i = j
    return tuple(out)


def _take(x: Any, axis: int, start: int, stop: int) -> Any:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def extend(xp: Any, x: Any, axis: int, before: int, after: int, mode: str, cval: Any) -> Any:
    """``x`` extended along ``axis`` by ``before`` and ``after`` cells in SciPy's boundary ``mode``."""
    if before == 0 and after == 0:
        return x
    pieces = []
    for start, count, step in runs(int(x.shape[axis]), before, after, mode):
        shape = list(x.shape)
        shape[axis] = count
        if start < 0:
            pieces.append(xp.full(tuple(shape), cval, dtype=x.dtype, **on(x)))
        elif step == 1:
            pieces.append(_take(x, axis, start, start + count))
        elif step == -1:
            pieces.append(xp.flip(_take(x, axis, start - count + 1, start + 1), axis=axis))
        else:
            pieces.append(xp.broadcast_to(_take(x, axis, start, start + 1), tuple(shape)))
    return pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=axis)


# ------------------------------------------------------------------------------------------------- the kernels


def _window_sum(xp: Any, e: Any, axis: int, size: int, count: int) -> Any:
    """``sum_{t < size} e[t:t + count]`` along ``axis`` by doubling: sums of 2, 4, 8, ... cells (one slice-add
    each), then the binary pieces of ``size``: about ``2 log2(size)`` passes instead of ``size``. A fixed order of
    exact window sums (pairwise, so no worse than SciPy's running sum), not a running difference."""
    block, width, acc, at = e, 1, None, 0
    rest = size
    while True:
        if rest & 1:  # a piece of `width` cells, starting where the previous pieces end
            piece = _take(block, axis, at, at + count)
            acc = piece if acc is None else acc + piece
            at += width
        rest >>= 1
        if not rest:
            return acc
        n = int(block.shape[axis]) - width
        block = _take(block, axis, 0, n) + _take(block, axis, width, width + n)
        width *= 2


@lru_cache(maxsize=256)
def _pieces(size: int) -> tuple[tuple[int, int, int], ...]:
    """A window of ``size`` cells as signed power-of-two windows ``(sign, log2 width, offset)``, the fewest of
    the binary split (the largest power, then the rest) and the overlap (two windows of the largest power, their
    overlap taken out once): 31 = 16 + 16 - 1 (two adds after four doublings, not four).

    >>> _pieces(31), _pieces(3)
    (((1, 4, 0), (1, 4, 15), (-1, 0, 15)), ((1, 1, 0), (1, 0, 2)))
    """
    if size & (size - 1) == 0:
        return ((1, size.bit_length() - 1, 0),)
    k = size.bit_length() - 1
    w = 1 << k
    binary = ((1, k, 0),) + tuple((g, j, o + w) for g, j, o in _pieces(size - w))
    overlap = ((1, k, 0), (1, k, size - w)) + tuple((-g, j, o + size - w) for g, j, o in _pieces(2 * w - size))
    return min(binary, overlap, key=len)


def _flat_window(y: np.ndarray, unit: int, size: int, out: np.ndarray, scale: float, bufs: np.ndarray) -> None:
    """``out[j] = scale * sum_{t < size} y[j + t * unit]`` over 1-d contiguous arrays (``out`` as long as ``y``
    less ``(size - 1) * unit``) by doubling into the two rows of ``bufs``: every pass one contiguous add (an
    axis's taps ``unit`` cells apart in the flat C-order array)."""
    plan = _pieces(size)
    top, m = max(j for _, j, _ in plan), out.shape[0]
    block, first = y, True
    for level in range(top + 1):
        for g, j, o in plan:
            if j != level:
                continue
            src = block[o * unit: o * unit + m]
            if first:
                np.positive(src, out=out) if g > 0 else np.negative(src, out=out)
                first = False
            elif g > 0:
                np.add(out, src, out=out)
            else:
                np.subtract(out, src, out=out)
        if level < top:
            n = block.shape[0] - (unit << level)
            nxt = bufs[level % 2, :n]
            np.add(block[:n], block[unit << level: (unit << level) + n], out=nxt)
            block = nxt
    out *= scale


# flat cells per cache block of the NumPy window sums (256 KiB of float64 in each of three buffers)
_BLOCK = 1 << 15


def _window_sum_numpy(e: np.ndarray, axis: int, size: int, count: int, scale: float) -> np.ndarray:
    """``_window_sum(...) * scale`` of a NumPy float64 array: the doubling over the flat C-order array in cache
    blocks (a window that runs past its line gives a value only in cells beyond ``count``, cut off here)."""
    e = np.ascontiguousarray(e)
    inner = math.prod(e.shape[axis + 1:])
    span = (size - 1) * inner
    z = e.reshape(-1)
    res = np.empty(e.shape)
    _flat_windows(z, inner, size, res.reshape(-1)[: z.shape[0] - span], scale)
    return res[(slice(None),) * axis + (slice(0, count),)]


def _flat_windows(z: np.ndarray, unit: int, size: int, out: np.ndarray, scale: float) -> None:
    # blocks of at least twice the overlap, so that no more than a third of the work is redone
    span = (size - 1) * unit
    step = max(_BLOCK, 2 * span)
    bufs = np.empty((2, min(step, out.shape[0]) + span))
    for c0 in range(0, out.shape[0], step):
        c1 = min(out.shape[0], c0 + step)
        _flat_window(z[c0: c1 + span], unit, size, out[c0:c1], scale, bufs)


def _uniform_numpy(x: np.ndarray, axis: int, size: int, origin: int, mode: str, cval: float) -> np.ndarray:
    """The uniform filter of a NumPy float64 array along ``axis`` (at least ``2 * size`` cells): the cells whose
    window lies inside the line summed over the flat input itself (no extended copy), the ``size // 2 + origin``
    first and ``size - 1 - before`` last cells of each line from a slab of their extended cells."""
    length = int(x.shape[axis])
    before = size // 2 + origin
    after = size - 1 - before
    x = np.ascontiguousarray(x)
    inner = math.prod(x.shape[axis + 1:])
    out = np.empty(x.shape)
    z, flat = x.reshape(-1), out.reshape(-1)
    _flat_windows(z, inner, size, flat[before * inner: z.shape[0] - after * inner], 1.0 / size)
    cells = fold(length, before, after, mode)
    for lo, hi, count in ((0, before + size - 1, before), (length - after, length + size - 1, after)):
        if not count:
            continue
        take = cells[lo:hi]
        slab = np.take(x, np.maximum(take, 0), axis=axis)
        if mode == "constant" and take.min() < 0:
            slab[(slice(None),) * axis + (take < 0,)] = cval
        at = (slice(None),) * axis + (slice(lo, lo + count),)
        out[at] = _window_sum_numpy(slab, axis, size, count, 1.0 / size)
    return out


def _window_select(xp: Any, e: Any, axis: int, size: int, count: int, minimum: bool) -> Any:
    """``_select`` over the taps ``e[t:t + count]``, t < size, by doubling (a sparse table): the best of 2, 4, 8,
    ... cells, then two overlapping power-of-two windows. The earlier window wins ties, so the first of equal
    taps is kept. The chain skips NaN taps but the first (a NaN first tap is the result): so the windows combine
    as nan-max (a NaN window gives way), and the first tap's NaN is put back at the end."""
    floats = dtype_name(xp, e.dtype) in _FLOATS

    def pick(a: Any, b: Any) -> Any:
        if isinstance(a, np.ndarray):  # no autodiff to route: NumPy's NaN-skipping extreme is the same value
            return (np.fmin if minimum else np.fmax)(a, b)
        better = b < a if minimum else b > a
        return xp.where(better | xp.isnan(a) if floats else better, b, a)

    block, width = e, 1
    while 2 * width <= size:
        n = int(block.shape[axis]) - width
        block = pick(_take(block, axis, 0, n), _take(block, axis, width, width + n))
        width *= 2
    best = _take(block, axis, 0, count)
    if width < size:
        best = pick(best, _take(block, axis, size - width, size - width + count))
    if floats and size > 1:
        first = _take(e, axis, 0, count)
        best = xp.where(xp.isnan(first), first, best)
    return best


def _uniform_axis(xp: Any, v: Any, axis: int, size: int, origin: int, mode: str, cval: float) -> Any:
    # exact window sums (shifted slices, doubled), not SciPy's running sum: they agree to rounding
    length = int(v.shape[axis])
    # lines of at least two windows: the edge slabs then hold at most 3/4 of the input's cells
    if isinstance(v, np.ndarray) and v.dtype == np.float64 and length >= 2 * size:
        return _uniform_numpy(v, axis, size, origin, mode, cval)
    before = size // 2 + origin
    e = extend(xp, v, axis, before, size - 1 - before, mode, cval)
    return _window_sum(xp, e, axis, size, length) / size


def _extreme_axis(xp: Any, v: Any, axis: int, size: int, origin: int, mode: str, cval: Any, minimum: bool) -> Any:
    length = int(v.shape[axis])
    before = size // 2 + origin
    e = extend(xp, v, axis, before, size - 1 - before, mode, cval)
    return _window_select(xp, e, axis, size, length, minimum)


def _select(xp: Any, taps: Sequence[Any], minimum: bool) -> Any:
    # a tap replaces the best so far only when strictly better: the first of equal taps is kept (and so gets the
    # whole cotangent: where() routes it to the branch it took, where maximum() would split it between ties)
    best = taps[0]
    for t in taps[1:]:
        best = xp.where(t < best if minimum else t > best, t, best)
    return best


def _footprint_extreme(xp: Any, v: Any, footprint: np.ndarray, origins: Sequence[int], mode: str, cval: Any,
                       minimum: bool) -> Any:
    e = v
    for axis, (f, o) in enumerate(zip(footprint.shape, origins)):
        before = f // 2 + o
        e = extend(xp, e, axis, before, f - 1 - before, mode, cval)
    taps = []
    for tap in np.argwhere(footprint):  # row-major: SciPy's first tap is the first True cell in C order
        taps.append(e[tuple(slice(int(t), int(t) + int(n)) for t, n in zip(tap, v.shape))])
    return _select(xp, taps, minimum)


# -------------------------------------------------------------------------------------------- argument checks


def _as_array(x: Any) -> tuple[Any, Any]:
    try:
        return namespace(x), x
    except TypeError:
        a = np.asarray(x)
        return namespace(a), a


def _input(function: str, x: Any, xp: Any, extreme: bool) -> str:
    name = dtype_name(xp, x.dtype)
    if name.startswith("complex") and extreme:
        fail(function, "input", name, "Complex type not supported (SciPy's TypeError)", TypeError)
    if name not in _FLOATS + _INTS:
        fail(function, "input", name, "the dtype must be float32, float64 or an integer (SciPy refuses float16; "
                                      "bool and complex inputs are not supported here)", TypeError)
    return name


def _output(function: str, xp: Any, output: Any, default: str) -> str:
    if output is None:
        return default
    if hasattr(output, "shape") and hasattr(output, "dtype") and not isinstance(output, type):
        fail(function, "output", type(output).__name__, "must be a dtype (an output array is not supported: the "
                                                        "result is returned)", TypeError)
    try:
        name = np.dtype(output).name
    except TypeError:
        name = dtype_name(xp, output)
    if name not in _FLOATS + _INTS:
        fail(function, "output", output, "must be a float32, float64 or integer dtype", TypeError)
    return name


def _mode(function: str, mode: Any) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        fail(function, "mode", mode, f"boundary mode not supported; one of {', '.join(MODES)}")
    return MODES[mode]


def _int(function: str, name: str, value: Any, shown: Any = None) -> int:
    if isinstance(value, (bool, np.bool_)):
        fail(function, name, value if shown is None else shown, "must be an int", TypeError)
    try:
        return operator.index(value)
    except TypeError:
        fail(function, name, value if shown is None else shown, "must be an int", TypeError)
    raise AssertionError


def _cval(function: str, cval: Any) -> float:
    if isinstance(cval, (bool, np.bool_)) or not isinstance(cval, (int, float, np.integer, np.floating)):
        fail(function, "cval", cval, "must be a real number", TypeError)
    return float(cval)


def _axis(function: str, axis: Any, ndim: int) -> int:
    a = _int(function, "axis", axis)
    if not -ndim <= a < ndim:
        fail(function, "axis", axis, f"out of range for an input of {ndim} dimensions")
    return a % ndim


def _axes(function: str, axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim))
    vals = [axes] if np.ndim(axes) == 0 and not isinstance(axes, (list, tuple)) else list(axes)
    out = tuple(_int(function, "axes", a, axes) for a in vals)
    if any(not -ndim <= a < ndim for a in out):
        fail(function, "axes", axes, f"every axis must be in [-{ndim}, {ndim - 1}]")
    out = tuple(a % ndim for a in out)
    if len(set(out)) != len(out):
        fail(function, "axes", axes, "axes must be unique")
    return out


def _per_axis(function: str, name: str, value: Any, count: int) -> list[Any]:
    # SciPy's _normalize_sequence: a string or a scalar is repeated, a sequence must have one entry per axis
    if isinstance(value, str) or not np.iterable(value):
        return [value] * count
    vals = list(value)
    if len(vals) != count:
        fail(function, name, value, f"must have one entry per filtered axis ({count})")
    return vals


def _origin_ok(function: str, size: int, origin: int, shown: Any) -> None:
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        fail(function, "origin", shown, f"invalid origin: must be in [-(size // 2), (size - 1) // 2] = "
                                        f"[{-(size // 2)}, {(size - 1) // 2}] for size {size}")


def _size1d(function: str, size: Any) -> int:
    s = _int(function, "size", size)
    if s < 1:
        fail(function, "size", size, "incorrect filter size: must be >= 1")
    return s


def _sizes(function: str, size: Any, count: int) -> list[int]:
    out = []
    for s in _per_axis(function, "size", size, count):
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)):
            fail(function, "size", size, "must be a number or a sequence of numbers", TypeError)
        out.append(int(s) if s > 1 else 1)  # SciPy skips an axis of size <= 1 and truncates the others
    return out


# ---------------------------------------------------------------------------------------------------- dtypes


def _work(xp: Any, x: Any) -> Any:
    # SciPy computes the uniform filter in double (float32 where JAX has no float64 enabled)
    return dtype_of(xp, jax_default_float(x))


def _cast(xp: Any, v: Any, name: Any) -> Any:
    """``v`` in dtype ``name`` (a name or a dtype), not copied when it has it (for arrays made here, never the
    caller's input: a result must not alias it)."""
    dt = dtype_of(xp, name) if isinstance(name, str) else name
    return v if v.dtype == dt else xp.astype(v, dt)


def _fresh(xp: Any, v: Any, name: str) -> Any:
    # _store for an array made here: no copy when it already has the output dtype
    return v if dtype_name(xp, v.dtype) == name else _store(xp, v, name)


def _store(xp: Any, v: Any, name: str) -> Any:
    # SciPy stores each axis pass into the output dtype with a C cast: float rounding, integer truncation
    if name in _INTS and dtype_name(xp, v.dtype) in _FLOATS:
        v = xp.trunc(v)
    return xp.astype(v, dtype_of(xp, name))


def _int_cval(function: str, cval: float, name: str) -> int:
    info = np.iinfo(name)
    if not np.isfinite(cval) or not info.min <= int(cval) <= info.max:
        fail(function, "cval", cval, f"must lie in the range of the {name} input (SciPy's C cast of it is undefined)")
    return int(cval)  # truncation toward zero, SciPy's cast of cval to the input type


# ---------------------------------------------------------------------------------------------------- filters


def uniform1d(function: str, x: Any, size: Any, axis: Any, output: Any, mode: Any, cval: Any, origin: Any) -> Any:
    xp, x = _as_array(x)
    name = _input(function, x, xp, False)
    out = _output(function, xp, output, name)
    a = _axis(function, axis, x.ndim)
    s = _size1d(function, size)
    o = _int(function, "origin", origin)
    _origin_ok(function, s, o, origin)
    m, c = _mode(function, mode), _cval(function, cval)
    if 0 in x.shape:
        return _store(xp, x, out)
    return _fresh(xp, _uniform_axis(xp, _cast(xp, x, _work(xp, x)), a, s, o, m, c), out)


def uniform(function: str, x: Any, size: Any, output: Any, mode: Any, cval: Any, origin: Any, axes: Any) -> Any:
    xp, x = _as_array(x)
    name = _input(function, x, xp, False)
    out = _output(function, xp, output, name)
    ax = _axes(function, axes, x.ndim)
    sizes = _sizes(function, size, len(ax))
    origins = [_int(function, "origin", o, origin) for o in _per_axis(function, "origin", origin, len(ax))]
    modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, len(ax))]
    c = _cval(function, cval)
    todo = [(a, s, o, m) for a, s, o, m in zip(ax, sizes, origins, modes) if s > 1]
    for _, s, o, _ in todo:  # SciPy checks an axis's origin only where it filters it
        _origin_ok(function, s, o, origin)
    if 0 in x.shape:
        return _store(xp, x, out)
    v = x
    for a, s, o, m in todo:
        v = _fresh(xp, _uniform_axis(xp, _cast(xp, v, _work(xp, v)), a, s, o, m, c), out)
    return v if todo else _store(xp, v, out)


def _extreme_setup(function: str, x: Any, output: Any, cval: Any) -> tuple[Any, Any, str, str, Any]:
    xp, x = _as_array(x)
    name = _input(function, x, xp, True)
    out = _output(function, xp, output, name)
    c = _cval(function, cval)
    # the extremes are taken in the input's dtype, with cval cast to it (as SciPy's footprint path casts it):
    # rounding and truncation are monotone, so this equals SciPy's double line stored to the output per axis
    cv: Any = _int_cval(function, c, name) if name in _INTS else c
    return xp, x, name, out, cv


def extreme1d(function: str, x: Any, size: Any, axis: Any, output: Any, mode: Any, cval: Any, origin: Any,
              minimum: bool) -> Any:
    xp, x, _, out, cv = _extreme_setup(function, x, output, cval)
    a = _axis(function, axis, x.ndim)
    s = _size1d(function, size)
    o = _int(function, "origin", origin)
    _origin_ok(function, s, o, origin)
    m = _mode(function, mode)
    if 0 in x.shape:
        return _store(xp, x, out)
    # size 1 selects the input itself: stored (copied), never returned as a view of it
    return (_fresh if s > 1 else _store)(xp, _extreme_axis(xp, x, a, s, o, m, cv, minimum), out)


def _footprint(function: str, footprint: Any) -> np.ndarray:
    try:
        f = np.asarray(to_host(footprint) if hasattr(footprint, "shape") else footprint)
    except Exception:
        fail(function, "footprint", type(footprint).__name__, "must be an array of booleans", TypeError)
    if f.dtype.kind not in "biuf":
        fail(function, "footprint", f.dtype, "must be an array of booleans (or numbers: nonzero is True)", TypeError)
    f = f.astype(bool)
    if not f.any():
        fail(function, "footprint", f.shape, "All-zero footprint is not supported.")
    return f


class _Plan:
    """The parsed arguments of an n-d max/min filter: the 1-d passes (axis, size, origin, mode), or a footprint
    over every input axis with its origins and mode."""

    def __init__(self, xp: Any, x: Any, out: str, cval: Any, passes: list[tuple[int, int, int, str]] | None,
                 footprint: np.ndarray | None = None, origins: Sequence[int] = (), mode: str = "") -> None:
        self.xp, self.x, self.out, self.cval, self.passes = xp, x, out, cval, passes
        self.footprint, self.origins, self.mode = footprint, list(origins), mode


def _extreme_plan(function: str, x: Any, size: Any, footprint: Any, output: Any, mode: Any, cval: Any, origin: Any,
                  axes: Any) -> _Plan:
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=4)
    f = None
    if footprint is None:
        if size is None:
            fail(function, "size", None, "no footprint provided: give size or footprint")
    else:
        f = _footprint(function, footprint)
        if f.all():  # SciPy's separable path: size = footprint.shape
            size, f = f.shape, None
    xp, x, _, out, cv = _extreme_setup(function, x, output, cval)
    ax = _axes(function, axes, x.ndim)
    if f is None:
        sizes = _sizes(function, size, len(ax))
        origins = [_int(function, "origin", o, origin) for o in _per_axis(function, "origin", origin, len(ax))]
        modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, len(ax))]
        todo = [(a, s, o, m) for a, s, o, m in zip(ax, sizes, origins, modes) if s > 1]
        for _, s, o, _ in todo:
            _origin_ok(function, s, o, origin)
        return _Plan(xp, x, out, cv, todo)
    if f.ndim != len(ax):
        fail(function, "footprint", f.shape, f"footprint.ndim ({f.ndim}) must match len(axes) ({len(ax)})")
    if not isinstance(mode, str):
        fail(function, "mode", mode, "a sequence of modes is not supported for non-separable footprints")
    m = _mode(function, mode)
    given = [_int(function, "origin", o, origin) for o in _per_axis(function, "origin", origin, len(ax))]
    # SciPy's _expand_footprint / _expand_origin: the footprint's axes are the filtered axes in increasing order;
    # the origins follow `axes` where it names fewer axes than the input has, else the input's axes in order
    full = np.expand_dims(f, tuple(a for a in range(x.ndim) if a not in ax))
    expanded = [0] * x.ndim
    if len(ax) < x.ndim:
        for o, a in zip(given, ax):
            expanded[a] = o
    else:
        expanded = given
    for o, n in zip(expanded, full.shape):
        _origin_ok(function, n, o, origin)
    return _Plan(xp, x, out, cv, None, full, expanded, m)


def extreme(function: str, x: Any, size: Any, footprint: Any, output: Any, mode: Any, cval: Any, origin: Any,
            axes: Any, minimum: bool) -> Any:
    p = _extreme_plan(function, x, size, footprint, output, mode, cval, origin, axes)
    xp, v = p.xp, p.x
    if 0 in v.shape:
        return _store(xp, v, p.out)
    if p.passes is None:
        assert p.footprint is not None
        return _store(xp, _footprint_extreme(xp, v, p.footprint, p.origins, p.mode, p.cval, minimum), p.out)
    for a, s, o, m in p.passes:
        v = _extreme_axis(xp, v, a, s, o, m, p.cval, minimum)
    return _fresh(xp, v, p.out) if p.passes else _store(xp, v, p.out)


# ------------------------------------------------------------------------------------------ explicit backward
# The VJPs w.r.t. the input for arrays without autodiff (NumPy, CuPy, Dask, array-api-strict): transposes written
# with the same slices, zero pads and selects, summed in a fixed order (no scatter: bit-identical repeats). The
# casts to the output dtype between passes are taken as the identity (float outputs only).


def _zero_pad(xp: Any, z: Any, axis: int, before: int, after: int) -> Any:
    if before == 0 and after == 0:
        return z
    pieces = []
    for n in (before, after):
        shape = list(z.shape)
        shape[axis] = n
        pieces.append(xp.zeros(tuple(shape), dtype=z.dtype, **on(z)) if n else None)
    return xp.concat([p for p in (pieces[0], z, pieces[1]) if p is not None], axis=axis)


def fold_back(xp: Any, z: Any, axis: int, length: int, before: int, after: int, mode: str) -> Any:
    """The transpose of :func:`extend`: each cell of the extended line's cotangent ``z`` added to the input cell it
    copies (cval cells dropped), piece after piece."""
    if before == 0 and after == 0:
        return z
    acc = None
    pos = 0
    for start, count, step in runs(length, before, after, mode):
        piece = _take(z, axis, pos, pos + count)
        pos += count
        if start < 0:
            continue
        lo = start
        if step == -1:
            piece, lo = xp.flip(piece, axis=axis), start - count + 1
        elif step == 0:
            piece, count = xp.sum(piece, axis=axis, keepdims=True), 1
        term = _zero_pad(xp, piece, axis, lo, length - lo - count)
        acc = term if acc is None else acc + term
    if acc is None:
        shape = list(z.shape)
        shape[axis] = length
        return xp.zeros(tuple(shape), dtype=z.dtype, **on(z))
    return acc


def _uniform_axis_t(xp: Any, g: Any, axis: int, size: int, origin: int, mode: str) -> Any:
    length = int(g.shape[axis])
    before = size // 2 + origin
    padded = _zero_pad(xp, g, axis, size - 1, size - 1)
    if isinstance(padded, np.ndarray) and padded.dtype == np.float64:
        acc = _window_sum_numpy(padded, axis, size, length + size - 1, 1.0 / size)
    else:
        acc = _window_sum(xp, padded, axis, size, length + size - 1) / size
    return fold_back(xp, acc, axis, length, before, size - 1 - before, mode)


def _chosen(xp: Any, taps: Sequence[Any], minimum: bool) -> Any:
    # the forward's where-chain, keeping which tap each output selected
    best, idx = taps[0], xp.zeros(taps[0].shape, dtype=xp.int32, **on(taps[0]))
    for k, t in enumerate(taps[1:], 1):
        better = t < best if minimum else t > best
        best, idx = xp.where(better, t, best), xp.where(better, xp.asarray(k, dtype=xp.int32, **on(t)), idx)
    return idx


def _extreme_axis_t(xp: Any, g: Any, v: Any, axis: int, size: int, origin: int, mode: str, cval: Any,
                    minimum: bool) -> Any:
    length = int(v.shape[axis])
    before = size // 2 + origin
    e = extend(xp, v, axis, before, size - 1 - before, mode, cval)
    idx = _chosen(xp, [_take(e, axis, t, t + length) for t in range(size)], minimum)
    zero = xp.zeros_like(g)
    acc = None
    for t in range(size):
        term = _zero_pad(xp, xp.where(idx == t, g, zero), axis, t, size - 1 - t)
        acc = term if acc is None else acc + term
    return fold_back(xp, acc, axis, length, before, size - 1 - before, mode)


def _footprint_t(xp: Any, g: Any, v: Any, footprint: np.ndarray, origins: Sequence[int], mode: str, cval: Any,
                 minimum: bool) -> Any:
    e = v
    pads = []
    for axis, (f, o) in enumerate(zip(footprint.shape, origins)):
        before = f // 2 + o
        pads.append((before, f - 1 - before))
        e = extend(xp, e, axis, before, f - 1 - before, mode, cval)
    offsets = [tuple(int(t) for t in tap) for tap in np.argwhere(footprint)]
    idx = _chosen(xp, [e[tuple(slice(t, t + int(n)) for t, n in zip(off, v.shape))] for off in offsets], minimum)
    zero = xp.zeros_like(g)
    acc = None
    for k, off in enumerate(offsets):
        term = xp.where(idx == k, g, zero)
        for axis, t in enumerate(off):
            term = _zero_pad(xp, term, axis, t, footprint.shape[axis] - 1 - t)
        acc = term if acc is None else acc + term
    for axis in reversed(range(v.ndim)):
        acc = fold_back(xp, acc, axis, int(v.shape[axis]), pads[axis][0], pads[axis][1], mode)
    return acc


def _grad(function: str, xp: Any, g: Any, x: Any, out: str) -> Any:
    if dtype_name(xp, x.dtype) not in _FLOATS or out not in _FLOATS:
        fail(function, "input", dtype_name(xp, x.dtype), "the backward needs a float input and output dtype",
             TypeError)
    if tuple(g.shape) != tuple(x.shape):
        fail(function, "grad_output", tuple(g.shape), f"must have the input's shape {tuple(x.shape)}")
    return xp.astype(g, x.dtype)


def uniform1d_backward(function: str, g: Any, x: Any, size: Any, axis: Any, output: Any, mode: Any, cval: Any,
                       origin: Any) -> Any:
    xp, x = _as_array(x)
    name = _input(function, x, xp, False)
    g = _grad(function, xp, g, x, _output(function, xp, output, name))
    a, s = _axis(function, axis, x.ndim), _size1d(function, size)
    o = _int(function, "origin", origin)
    _origin_ok(function, s, o, origin)
    m = _mode(function, mode)
    _cval(function, cval)
    if 0 in x.shape:
        return g
    return xp.astype(_uniform_axis_t(xp, xp.astype(g, _work(xp, g)), a, s, o, m), x.dtype)


def uniform_backward(function: str, g: Any, x: Any, size: Any, output: Any, mode: Any, cval: Any, origin: Any,
                     axes: Any) -> Any:
    xp, x = _as_array(x)
    name = _input(function, x, xp, False)
    g = _grad(function, xp, g, x, _output(function, xp, output, name))
    ax = _axes(function, axes, x.ndim)
    sizes = _sizes(function, size, len(ax))
    origins = [_int(function, "origin", o, origin) for o in _per_axis(function, "origin", origin, len(ax))]
    modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, len(ax))]
    _cval(function, cval)
    todo = [(a, s, o, m) for a, s, o, m in zip(ax, sizes, origins, modes) if s > 1]
    for _, s, o, _ in todo:
        _origin_ok(function, s, o, origin)
    if 0 in x.shape:
        return g
    v = xp.astype(g, _work(xp, g))
    for a, s, o, m in reversed(todo):
        v = _uniform_axis_t(xp, v, a, s, o, m)
    return xp.astype(v, x.dtype)


def extreme1d_backward(function: str, g: Any, x: Any, size: Any, axis: Any, output: Any, mode: Any, cval: Any,
                       origin: Any, minimum: bool) -> Any:
    xp, x, _, out, cv = _extreme_setup(function, x, output, cval)
    g = _grad(function, xp, g, x, out)
    a, s = _axis(function, axis, x.ndim), _size1d(function, size)
    o = _int(function, "origin", origin)
    _origin_ok(function, s, o, origin)
    m = _mode(function, mode)
    if 0 in x.shape:
        return g
    return _extreme_axis_t(xp, g, x, a, s, o, m, cv, minimum)


def extreme_backward(function: str, g: Any, x: Any, size: Any, footprint: Any, output: Any, mode: Any, cval: Any,
                     origin: Any, axes: Any, minimum: bool) -> Any:
    p = _extreme_plan(function, x, size, footprint, output, mode, cval, origin, axes)
    xp, x = p.xp, p.x
    g = _grad(function, xp, g, x, p.out)
    if 0 in x.shape:
        return g
    if p.passes is None:
        assert p.footprint is not None
        return _footprint_t(xp, g, x, p.footprint, p.origins, p.mode, p.cval, minimum)
    inputs = [x]  # each pass's input, for its selection
    for a, s, o, m in p.passes[:-1]:
        inputs.append(_extreme_axis(xp, inputs[-1], a, s, o, m, p.cval, minimum))
    for (a, s, o, m), v in zip(reversed(p.passes), reversed(inputs)):
        g = _extreme_axis_t(xp, g, v, a, s, o, m, p.cval, minimum)
    return g
