"""SciPy 1.17's window filters (``uniform_filter(1d)``, ``maximum_filter(1d)``, ``minimum_filter(1d)``) written
once against the array API.

Each axis is extended by SciPy's boundary mode as slices, flips, broadcasts and constants of the input
concatenated around it (no gather), then reduced over ``size`` shifted slices: a sum divided by ``size`` (the
uniform filter) or a chain of ``where(tap > best, tap, best)`` (the maximum; ``<`` for the minimum), which keeps the
first of equal taps. Native autodiff through these is deterministic on torch and JAX (slices transpose into pads,
``where`` into selects): the uniform filter's gradient is its transpose, and a max/min filter's cotangent goes whole
to the selected tap (never split between ties).
"""

from __future__ import annotations

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


def _uniform_axis(xp: Any, v: Any, axis: int, size: int, origin: int, mode: str, cval: float) -> Any:
    # the exact window sum (shifted slices added in tap order), not SciPy's running sum: they agree to rounding
    length = int(v.shape[axis])
    before = size // 2 + origin
    e = extend(xp, v, axis, before, size - 1 - before, mode, cval)
    acc = _take(e, axis, 0, length)
    for t in range(1, size):
        acc = acc + _take(e, axis, t, t + length)
    return acc / size


def _extreme_axis(xp: Any, v: Any, axis: int, size: int, origin: int, mode: str, cval: Any, minimum: bool) -> Any:
    length = int(v.shape[axis])
    before = size // 2 + origin
    e = extend(xp, v, axis, before, size - 1 - before, mode, cval)
    return _select(xp, [_take(e, axis, t, t + length) for t in range(size)], minimum)


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
    return _store(xp, _uniform_axis(xp, xp.astype(x, _work(xp, x)), a, s, o, m, c), out)


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
        v = _store(xp, _uniform_axis(xp, xp.astype(v, _work(xp, v)), a, s, o, m, c), out)
    return _store(xp, v, out)


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
    return _store(xp, _extreme_axis(xp, x, a, s, o, m, cv, minimum), out)


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


def extreme(function: str, x: Any, size: Any, footprint: Any, output: Any, mode: Any, cval: Any, origin: Any,
            axes: Any, minimum: bool) -> Any:
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=3)
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
        if 0 in x.shape:
            return _store(xp, x, out)
        v = x
        for a, s, o, m in todo:
            v = _extreme_axis(xp, v, a, s, o, m, cv, minimum)
        return _store(xp, v, out)
    if f.ndim != len(ax):
        fail(function, "footprint", f.shape, f"footprint.ndim ({f.ndim}) must match len(axes) ({len(ax)})")
    if not isinstance(mode, str):
        fail(function, "mode", mode, "a sequence of modes is not supported for non-separable footprints")
    m = _mode(function, mode)
    given = [_int(function, "origin", o, origin) for o in _per_axis(function, "origin", origin, len(ax))]
    # SciPy's _expand_footprint / _expand_origin: the footprint's axes are the filtered axes in increasing order;
    # the origins follow `axes` where it names fewer axes than the input has, else the input's axes in order
    full = np.expand_dims(f, tuple(a for a in range(x.ndim) if a not in ax))
    origins = [0] * x.ndim
    if len(ax) < x.ndim:
        for o, a in zip(given, ax):
            origins[a] = o
    else:
        origins = given
    for o, n in zip(origins, full.shape):
        _origin_ok(function, n, o, origin)
    if 0 in x.shape:
        return _store(xp, x, out)
    return _store(xp, _footprint_extreme(xp, x, full, origins, m, cv, minimum), out)
