"""SciPy 1.17.1's geometric transforms (``zoom``, ``shift``, ``affine_transform``, ``rotate``) on the spline
machinery of ``_splines``.

- ``zoom``, ``shift`` and the 1-D (diagonal) matrix of ``affine_transform`` map each axis on its own, so the taps and
  weights of each output row are built on the host in float64 from SciPy's per-axis coordinate arithmetic
  (``k * zf``, ``(k + 0.5) * zf - 0.5``, ``k + (-s)``, ``(k + off / m) * m``) and applied as one tap table per axis
  (``resample``: transposed tables for the gradient, every order, torch and JAX, chunk-local on Dask). The cval
  terms are added afterwards: a whole point is cval when an axis is out (``constant``), out-of-range taps read cval
  (``grid-constant``). The tables drop zero-weight taps, which SciPy still reads (NaN or inf there gives NaN): a
  second pass over a non-finite indicator of the coefficients restores that. As in ``map_coordinates``, a
  non-finite input spreads over
  the prefilter's band (2w + 1 cells) on long axes, where SciPy's recursion spreads it over the whole line.
- a 2-D matrix and ``rotate``: the coordinate grid is computed with SciPy's arithmetic (left-to-right sums; cephes'
  ``cosdg``/``sindg``) and sampled by ``map_coordinates`` on the prefiltered coefficients, in slabs of output
  points (rotate: per plane, the prefilter on the plane's axes only, as SciPy's per-plane loop).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ...._compat import dtype_name, dtype_of, is_jax_array, is_torch_array, on, readable, take, to_host
from ....autodiff import linear
from ....plans.windows import GatherPlan
from ..._common import _separable, fail, resample, tap_table
from . import _filters
from ._filters import _as_array, _cval, _input, _output, _store, _work
from ._splines import (
    _MAP,
    KIND,
    _axis_taps,
    _mode,
    _order,
    _prefilter_axes,
    _round_to,
    map_coordinates,
    map_coordinates_backward,
    prefilter_plan,
)

_NPAD = 12  # SciPy's _prepad_for_spline_filter pad (nearest and grid-constant, prefilter and order > 1)
_SLAB = 1 << 21  # output points x taps per map_coordinates call (bounds the gather's memory)
_BATCHED = 1 << 22  # rotate's host tap table of one plane, at most (points x taps)

# ------------------------------------------------------------------------------ cephes cosdg / sindg (xsf)
_SIN = (1.58962301572218447952E-10, -2.50507477628503540135E-8, 2.75573136213856773549E-6,
        -1.98412698295895384658E-4, 8.33333333332211858862E-3, -1.66666666666666307295E-1)
_COS = (1.13678171382044553091E-11, -2.08758833757683644217E-9, 2.75573155429816611547E-7,
        -2.48015872936186303776E-5, 1.38888888888806666760E-3, -4.16666666666666348141E-2,
        4.99999999999999999798E-1)
_PI180 = 1.74532925199432957692E-2


def _polevl(x: float, c: tuple[float, ...]) -> float:
    a = c[0]
    for v in c[1:]:
        a = a * x + v
    return a


def _octant(x: float) -> tuple[int, float]:
    y = float(math.floor(x / 45.0))
    j = int(y - math.ldexp(math.floor(math.ldexp(y, -4)), 4))
    if j & 1:
        j, y = j + 1, y + 1.0
    return j & 7, y


def sindg(x: float) -> float:
    """Sine of ``x`` degrees, cephes' ``sindg`` (exact at multiples of 90, as ``scipy.special.sindg``).

    >>> sindg(90.0), cosdg(90.0)
    (1.0, -0.0)
    """
    x = float(x)
    sign = 1
    if x < 0:
        x, sign = -x, -1
    if x > 1e14:  # cephes' loss-of-precision bound
        return 0.0
    j, y = _octant(x)
    if j > 3:
        sign, j = -sign, j - 4
    z = (x - y * 45.0) * _PI180
    zz = z * z
    r = 1.0 - zz * _polevl(zz, _COS) if j in (1, 2) else z + z * (zz * _polevl(zz, _SIN))
    return -r if sign < 0 else r


def cosdg(x: float) -> float:
    """Cosine of ``x`` degrees, cephes' ``cosdg``."""
    x = abs(float(x))
    if x > 1e14:
        return 0.0
    j, y = _octant(x)
    sign = 1
    if j > 3:
        j, sign = j - 4, -1
    if j > 1:
        sign = -sign
    z = (x - y * 45.0) * _PI180
    zz = z * z
    r = z + z * (zz * _polevl(zz, _SIN)) if j in (1, 2) else 1.0 - zz * _polevl(zz, _COS)
    return -r if sign < 0 else r


# ------------------------------------------------------------------------------------------- arguments


def _real(function: str, name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        if hasattr(value, "shape") and tuple(value.shape) == () and not isinstance(value, type):
            return _real(function, name, np.asarray(to_host(value)).item())
        fail(function, name, value, "must be a real number or a sequence of them", TypeError)
    return float(value)


def _sequence(function: str, name: str, value: Any, ndim: int) -> list[float]:
    # SciPy's _normalize_sequence: a scalar repeats, a sequence has one value per axis
    if hasattr(value, "shape") and not isinstance(value, type):
        value = np.asarray(to_host(value))
        value = value.item() if value.ndim == 0 else value.tolist()
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        return [_real(function, name, value)] * ndim
    vals = [_real(function, name, v) for v in value]
    if len(vals) != ndim:
        fail(function, name, tuple(vals), f"sequence argument must have length equal to input rank ({ndim})")
    return vals


def _common_args(function: str, input: Any, output: Any, order: Any, mode: Any, cval: Any,
                 prefilter: Any) -> tuple[Any, Any, str, str, int, str, float, bool]:
    xp, x = _as_array(input)
    name = _input(function, x, xp, True)
    out = _output(function, xp, output, name)
    o = _order(function, order, 0)
    m = _mode(function, mode)
    c = _cval(function, cval)
    if not isinstance(prefilter, (bool, np.bool_, int)):
        fail(function, "prefilter", prefilter, "must be a bool", TypeError)
    if x.ndim == 0:
        fail(function, "input", 0, "input and output rank must be > 0")
    if 0 in x.shape:
        fail(function, "input", tuple(x.shape), "must have no empty axis")
    return xp, x, name, out, o, m, c, bool(prefilter)


# ------------------------------------------------------------------------------------- coefficients


def _npad(order: int, mode: str, prefilter: bool) -> int:
    return _NPAD if prefilter and order > 1 and mode in ("nearest", "grid-constant") else 0


def _coef(xp: Any, x: Any, axes: list[int], order: int, mode: str, cval: float, prefilter: bool) -> Any:
    """SciPy's ``filtered``: the npad pad then the prefilter, along ``axes``, in the work dtype."""
    work = _work(xp, x)
    v = x if x.dtype == work else xp.astype(x, work)  # nothing writes into v: no copy needed
    if prefilter and order > 1:
        pad = _npad(order, mode, prefilter)
        for a in axes:
            v = _filters.extend(xp, v, a, pad, pad, "nearest" if mode == "nearest" else "constant", cval)
        v = _prefilter_axes(xp, v, axes, order, KIND[mode], None)
    return v


def _transpose_table(g: Any, axis: int, plan: Any) -> Any:
    """The transpose of ``resample(v, [axis], [plan])``: the transposed table."""
    from ...._compat import namespace

    xp = namespace(g)
    order = [a for a in range(g.ndim) if a != axis] + [axis]
    view = xp.permute_dims(g, tuple(order)) if axis != g.ndim - 1 else g
    y = linear(_separable((plan.length,), (plan.out,), (plan,)), view, transpose=True)
    return xp.permute_dims(y, tuple(int(i) for i in np.argsort(order))) if axis != g.ndim - 1 else y


def _coef_t(xp: Any, g: Any, shape: tuple[int, ...], axes: list[int], order: int, mode: str,
            prefilter: bool) -> Any:
    """The transpose of :func:`_coef` (``shape``: the input's)."""
    if prefilter and order > 1:
        for a in reversed(axes):
            plan = prefilter_plan(int(g.shape[a]), order, KIND[mode])
            if plan is not None:
                g = _transpose_table(g, a, plan)
        pad = _npad(order, mode, prefilter)
        for a in reversed(axes):
            g = _filters.fold_back(xp, g, a, shape[a], pad, pad, "nearest" if mode == "nearest" else "constant")
    return g


# ---------------------------------------------------------------------------------- separable transforms


class _Axis:
    """One axis of a separable transform on the host: its tap table, the taps SciPy reads with weight 0, the
    rows that are cval whole, the rows that are NaN, and the summed weights (all, and of the taps read)."""

    def __init__(self, cc: np.ndarray, length: int, order: int, mode: str, npad: int) -> None:
        padded = length + 2 * npad
        taps, cvals, w, whole = _axis_taps(np, np.asarray(cc, dtype=np.float64), padded, order, _MAP.get(mode, mode),
                                           npad)
        index = np.ascontiguousarray(np.asarray(taps).T)
        weight = np.stack([np.broadcast_to(np.asarray(v, dtype=np.float64), cc.shape) for v in w])
        read = np.ones(weight.shape, dtype=bool) if cvals is None else ~np.asarray(cvals).T
        self.whole = None if whole is None else np.asarray(whole)
        if self.whole is not None:
            read &= ~self.whole[None, :]
        self.nan = ~np.isfinite(cc) if mode in ("nearest", "grid-constant") and order > 0 else None
        if self.nan is not None and not self.nan.any():
            self.nan = None
        self.total = weight.sum(axis=0)
        used = np.where(read, weight, 0.0)
        self.index, self.used = index, used
        self.inside = used.sum(axis=0)
        self.plan = tap_table(index, used, padded)
        self.reads = tap_table(index, read.astype(np.float64), padded)
        zero = read & (weight == 0)
        self.zeros = tap_table(index, zero.astype(np.float64), padded) if zero.any() else None
        # the same sums with every tap kept on a cell of the line (no "reads nothing" cell, so no padded copy of
        # the input per axis): zero-weight taps read their cell as SciPy does (0 * inf or NaN is NaN: no second
        # pass), whole-cval points read the cells of coordinate 0 (overwritten afterwards), and grid-constant's
        # cval taps read the clipped edge cell with weight 0 (exact while the faces are finite)
        fast = weight if cvals is None else np.where(np.asarray(cvals).T, 0.0, weight)
        unit = order == 0 and cvals is None  # every weight 1: a plain gather
        self.fast = GatherPlan(padded, int(index.shape[1]), _frozen(index.astype(np.int64)),
                               None if unit else _frozen(fast.astype(np.float64)))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@lru_cache(maxsize=256)
def _axes_plan(key: tuple[Any, ...]) -> tuple[_Axis, ...]:
    shape, coords, order, mode, npad = key
    return tuple(_Axis(np.asarray(c), n, order, mode, npad) for c, n in zip(coords, shape))


def _axis_coords(kind: str, n_out: int, a: float, b: float) -> tuple[float, ...]:
    k = np.arange(n_out, dtype=np.float64)
    if kind == "zoom":
        cc = k * a
    elif kind == "grid":
        cc = ((k + 0.5) * a) - 0.5
    elif kind == "shift":
        cc = k + b
    else:  # the 1-D matrix: zoom_shift with shift = off / m, then zoom m
        cc = (k + b) * a
    return tuple(cc.tolist())


def _broadcast(xp: Any, v: np.ndarray, d: int, nd: int, like: Any) -> Any:
    shape = tuple(-1 if e == d else 1 for e in range(nd))
    return xp.reshape(xp.asarray(v, **on(like)), shape)


def _faces_finite(xp: Any, v: Any) -> bool:
    # grid-constant's cval taps read the first or last cell of their axis with weight 0 in the fast tables;
    # finite there (the faces), the sums along every axis stay finite on those cells
    for a in range(v.ndim):
        n = int(v.shape[a])
        for i in {0, n - 1}:
            face = v[tuple(i if e == a else slice(None) for e in range(v.ndim))]
            if not bool(xp.all(xp.isfinite(face))):
                return False
    return True


def _numpy_passes(v: np.ndarray, plans: list[GatherPlan]) -> np.ndarray:
    """The fast tables' passes on a NumPy array, innermost axis first as ``resample``'s (the same products added
    in the same order), each tap gathered into one reused buffer and scaled and added in place: fresh
    temporaries of a large array cost page faults that took as long as the arithmetic."""
    for axis in reversed(range(v.ndim)):
        plan = plans[axis]
        if plan.phases is not None:  # periodic taps (shift, integer zooms): the kernels' strided slices
            v = resample(v, [axis], [plan])
            continue
        shape = tuple(-1 if e == axis else 1 for e in range(v.ndim))
        out = np.take(v, plan.index[0], axis=axis)
        if plan.weight is not None:
            w = plan.weight.astype(v.dtype, copy=False)
            np.multiply(out, w[0].reshape(shape), out=out)
            tmp = np.empty_like(out)
            for t in range(1, plan.taps):
                np.take(v, plan.index[t], axis=axis, out=tmp)
                np.multiply(tmp, w[t].reshape(shape), out=tmp)
                np.add(out, tmp, out=out)
        v = out
    return v


def _separable_forward(xp: Any, x: Any, key: tuple[Any, ...], order: int, mode: str, cval: float,
                       prefilter: bool, out: str, check_finite: bool) -> Any:
    nd = x.ndim
    axes_ = _axes_plan(key)
    # the prefilter over the whole input, then the per-axis taps (composing the prefilter into the taps read
    # fewer cells but took 2 to 7 times longer than these matmuls and short tables, measured on zoom and shift)
    coef = _coef(xp, x, list(range(nd)), order, mode, cval, prefilter)
    fast = mode != "grid-constant" or (check_finite and _faces_finite(xp, coef))
    if fast and type(coef) is np.ndarray:
        y = _numpy_passes(coef, [ax.fast for ax in axes_])
    else:
        y = resample(coef, list(range(nd)), [ax.fast if fast else ax.plan for ax in axes_])
    work = coef.dtype
    if mode == "grid-constant" and cval != 0.0:
        # the taps outside the line read cval: cval times (all weights' product - the read taps' product)
        tot = _broadcast(xp, axes_[0].total, 0, nd, y)
        ins = _broadcast(xp, axes_[0].inside, 0, nd, y)
        for d in range(1, nd):
            tot = tot * _broadcast(xp, axes_[d].total, d, nd, y)
            ins = ins * _broadcast(xp, axes_[d].inside, d, nd, y)
        y = y + xp.astype(cval * (tot - ins), work)
    nan_any = [ax.zeros is not None and not fast for ax in axes_]
    if any(nan_any) and (not check_finite or not bool(xp.all(xp.isfinite(coef)))):
        # zero-weight taps SciPy reads: a non-finite coefficient there makes the point NaN
        flag = xp.astype(~xp.isfinite(coef), work)
        hit = None
        for d in range(nd):
            if nan_any[d]:
                plans = [axes_[e].zeros if e == d else axes_[e].reads for e in range(nd)]
                h = resample(flag, list(range(nd)), plans) > 0
                hit = h if hit is None else hit | h
        assert hit is not None
        y = xp.where(hit, xp.asarray(float("nan"), dtype=work, **on(y)), y)
    for d, ax in enumerate(axes_):
        if ax.whole is not None and ax.whole.any():
            y = xp.where(_broadcast(xp, ax.whole, d, nd, y), xp.asarray(cval, dtype=work, **on(y)), y)
    for d, ax in enumerate(axes_):
        if ax.nan is not None:
            y = xp.where(_broadcast(xp, ax.nan, d, nd, y), xp.asarray(float("nan"), dtype=work, **on(y)), y)
    return _round_to(xp, y, out)


def _separable_backward(xp: Any, g: Any, x: Any, key: tuple[Any, ...], order: int, mode: str,
                        prefilter: bool) -> Any:
    nd = x.ndim
    axes_ = _axes_plan(key)
    shape = tuple(int(n) for n in x.shape)
    g = xp.astype(g, _work(xp, x))
    for d, ax in enumerate(axes_):
        for flags in (ax.whole, ax.nan):
            if flags is not None and flags.any():
                g = xp.where(_broadcast(xp, flags, d, nd, g), xp.zeros_like(g), g)
    for d in reversed(range(nd)):
        g = _transpose_table(g, d, axes_[d].plan)
    return xp.astype(_coef_t(xp, g, shape, list(range(nd)), order, mode, prefilter), x.dtype)


def _grad_output(function: str, xp: Any, g: Any, x: Any, out: str, shape: tuple[int, ...]) -> Any:
    if dtype_name(xp, x.dtype) not in ("float32", "float64") or out not in ("float32", "float64"):
        fail(function, "input", dtype_name(xp, x.dtype), "the backward needs a float input and output dtype",
             TypeError)
    if not hasattr(g, "shape"):
        g = xp.asarray(g)
    if tuple(int(n) for n in g.shape) != shape:
        fail(function, "grad_output", tuple(g.shape), f"must have the output's shape {shape}")
    return g


def _eager(x: Any) -> bool:
    # a host check of finiteness is possible (not on JAX, not in a lazy Dask graph, not under a torch.func
    # transform, whose batched tensors refuse a data-dependent bool)
    return not is_jax_array(x) and readable(x)


# ------------------------------------------------------------------------- differentiable parameters
# A shift, matrix or offset given as a torch tensor that requires grad, or as a traced JAX value, gets its
# gradient through map_coordinates' coordinate gradient: the coordinates are built on the device with SciPy's
# arithmetic (same float64 operations, so the same values) and the whole output grid is sampled in slabs.


def _live(v: Any) -> bool:
    if is_torch_array(v):
        return bool(v.requires_grad)
    if is_jax_array(v):
        import jax

        return isinstance(v, jax.core.Tracer)
    return False


def _placeholder(v: Any) -> Any:
    # a host stand-in with v's shape for the argument checks (a traced value has no values to read)
    if is_torch_array(v):
        return to_host(v)
    a = np.ones(tuple(int(n) for n in v.shape))
    if a.ndim == 2 and a.shape[0] == a.shape[1]:
        a[-1] = np.eye(1, a.shape[1], a.shape[1] - 1)[0]  # passes the homogeneous bottom-row check
    return a


def _param(xp: Any, v: Any, like: Any, work: Any) -> Any:
    if hasattr(v, "shape") and not isinstance(v, type):
        return xp.astype(v, work)
    return xp.asarray(np.asarray(v, dtype=np.float64), dtype=work, **on(like))


def _grid(xp: Any, shape: tuple[int, ...], d: int, work: Any, like: Any) -> Any:
    k = xp.arange(shape[d], dtype=work, **on(like))
    return xp.reshape(k, tuple(-1 if e == d else 1 for e in range(len(shape))))


def _sample_grid(xp: Any, x: Any, rows: list[Any], oshape: tuple[int, ...], o: int, m: str, c: float, pf: bool,
                 out: str) -> Any:
    coef = _coef(xp, x, list(range(x.ndim)), o, m, c, pf)
    pad = float(_npad(o, m, pf))
    coords = xp.stack([xp.broadcast_to(r, oshape) + pad for r in rows])
    return _round_to(xp, map_coordinates(coef, coords, None, o, m, c, False), out)


# ------------------------------------------------------------------------------------------------ zoom


def _zoom_parse(function: str, input: Any, zoom: Any, output: Any, order: Any, mode: Any, cval: Any, prefilter: Any,
                grid_mode: Any) -> tuple[Any, Any, str, int, str, float, bool, tuple[int, ...], Any]:
    xp, x, _, out, o, m, c, pf = _common_args(function, input, output, order, mode, cval, prefilter)
    if not isinstance(grid_mode, (bool, np.bool_)):
        fail(function, "grid_mode", grid_mode, "must be a bool", TypeError)
    zs = _sequence(function, "zoom", zoom, x.ndim)
    for z in zs:
        if not math.isfinite(z) or z < 0:
            fail(function, "zoom", tuple(zs), "negative dimensions are not allowed (every zoom finite and >= 0)")
    shape = tuple(int(n) for n in x.shape)
    oshape = tuple(int(round(n * z)) for n, z in zip(shape, zs))
    if all(z == 1 for z in zs) and pf:
        return xp, x, out, o, m, c, pf, oshape, None  # SciPy's early exit: a copy
    coords = []
    for n, no in zip(shape, oshape):
        num, den = (n, no) if grid_mode else (n - 1, no - 1)
        zf = float(np.float64(num) / np.float64(den)) if den != 0 else 1.0
        coords.append(_axis_coords("grid" if grid_mode else "zoom", no, zf, 0.0))
    return xp, x, out, o, m, c, pf, oshape, tuple(coords)


def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
         prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    """``input`` zoomed by spline interpolation, as ``scipy.ndimage.zoom``.

    >>> zoom(np.array([0.0, 1.0, 2.0]), 5 / 3, order=1).tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0]
    """
    xp, x, out, o, m, c, pf, oshape, coords = _zoom_parse("zoom", input, zoom, output, order, mode, cval, prefilter,
                                                          grid_mode)
    if coords is None:
        return _store(xp, x, out)
    if grid_mode and m in ("constant", "wrap"):
        import warnings

        suggest = "grid-constant" if m == "constant" else "grid-wrap"
        warnings.warn(f"It is recommended to use mode = {suggest} instead of {m} when grid_mode is True.",
                      stacklevel=2)
    return _separable_call(xp, x, coords, o, m, c, pf, out, oshape)


def _separable_call(xp: Any, x: Any, coords: tuple[tuple[float, ...], ...], o: int, m: str, c: float, pf: bool,
                    out: str, oshape: tuple[int, ...]) -> Any:
    if 0 in oshape:
        return xp.zeros(oshape, dtype=dtype_of(xp, out), **on(x))
    key = (tuple(int(n) for n in x.shape), coords, o, m, _npad(o, m, pf))
    return _separable_forward(xp, x, key, o, m, c, pf, out, _eager(x))


def zoom_backward(grad_output: Any, input: Any, zoom: Any, output: Any = None, order: int = 3,
                  mode: str = "constant", cval: float = 0.0, prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    """The gradient of ``zoom`` w.r.t. ``input``: the transposed tap tables, then the transposed prefilter.

    >>> zoom_backward(np.ones(5), np.zeros(3), 5 / 3, order=1).tolist()
    [1.5, 2.0, 1.5]
    """
    function = "zoom_backward"
    xp, x, out, o, m, c, pf, oshape, coords = _zoom_parse(function, input, zoom, output, order, mode, cval, prefilter,
                                                          grid_mode)
    g = _grad_output(function, xp, grad_output, x, out, oshape)
    if coords is None:
        return xp.astype(g, x.dtype)
    return _separable_grad(xp, g, x, coords, o, m, pf, oshape)


def _separable_grad(xp: Any, g: Any, x: Any, coords: tuple[tuple[float, ...], ...], o: int, m: str, pf: bool,
                    oshape: tuple[int, ...]) -> Any:
    if 0 in oshape:
        return xp.zeros(tuple(x.shape), dtype=x.dtype, **on(x))
    key = (tuple(int(n) for n in x.shape), coords, o, m, _npad(o, m, pf))
    return _separable_backward(xp, g, x, key, o, m, pf)


# ------------------------------------------------------------------------------------------------ shift


def _shift_parse(function: str, input: Any, shift: Any, output: Any, order: Any, mode: Any, cval: Any,
                 prefilter: Any) -> tuple[Any, Any, str, int, str, float, bool, Any]:
    xp, x, _, out, o, m, c, pf = _common_args(function, input, output, order, mode, cval, prefilter)
    ss = _sequence(function, "shift", shift, x.ndim)
    for s in ss:
        if not math.isfinite(s):
            fail(function, "shift", tuple(ss), "must be finite (SciPy's result for a non-finite shift is undefined)")
    coords = tuple(_axis_coords("shift", int(n), 0.0, -s) for n, s in zip(x.shape, ss))
    return xp, x, out, o, m, c, pf, coords


def shift(input: Any, shift: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
          prefilter: bool = True) -> Any:
    """``input`` shifted by spline interpolation, as ``scipy.ndimage.shift``.

    >>> shift(np.array([0.0, 1.0, 2.0, 3.0]), 1.5, order=1).tolist()
    [0.0, 0.0, 0.5, 1.5]
    """
    live = _live(shift)
    xp, x, out, o, m, c, pf, coords = _shift_parse("shift", input, _placeholder(shift) if live else shift, output,
                                                   order, mode, cval, prefilter)
    if live:
        shape = tuple(int(n) for n in x.shape)
        work = _work(xp, x)
        s = xp.reshape(_param(xp, shift, x, work), (-1,))
        rows = [_grid(xp, shape, d, work, x) + (-s[d if int(s.shape[0]) > 1 else 0]) for d in range(x.ndim)]
        return _sample_grid(xp, x, rows, shape, o, m, c, pf, out)
    return _separable_call(xp, x, coords, o, m, c, pf, out, tuple(int(n) for n in x.shape))


def shift_backward(grad_output: Any, input: Any, shift: Any, output: Any = None, order: int = 3,
                   mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    """The gradient of ``shift`` w.r.t. ``input``.

    >>> shift_backward(np.ones(4), np.zeros(4), 1.5, order=1).tolist()
    [0.5, 1.0, 0.5, 0.0]
    """
    function = "shift_backward"
    xp, x, out, o, m, c, pf, coords = _shift_parse(function, input, shift, output, order, mode, cval, prefilter)
    shape = tuple(int(n) for n in x.shape)
    g = _grad_output(function, xp, grad_output, x, out, shape)
    return _separable_grad(xp, g, x, coords, o, m, pf, shape)


# -------------------------------------------------------------------------------------- affine_transform


def _host_matrix(function: str, name: str, value: Any) -> np.ndarray:
    if hasattr(value, "shape") and not isinstance(value, type):
        value = to_host(value)
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001 - ragged sequences and the like
        fail(function, name, type(value).__name__, "must be an array of real numbers", TypeError)
    if a.dtype.kind not in "biuf":
        fail(function, name, a.dtype.name, "must hold real numbers", TypeError)
    return np.asarray(a, dtype=np.float64)


def _affine_parse(function: str, input: Any, matrix: Any, offset: Any, output_shape: Any, output: Any, order: Any,
                  mode: Any, cval: Any, prefilter: Any) -> tuple[Any, ...]:
    xp, x, _, out, o, m, c, pf = _common_args(function, input, output, order, mode, cval, prefilter)
    nd = x.ndim
    if output_shape is None:
        oshape = tuple(int(n) for n in x.shape)
    else:
        if isinstance(output_shape, (int, np.integer)) or not hasattr(output_shape, "__len__"):
            fail(function, "output_shape", output_shape, "must be a sequence of ints", TypeError)
        oshape = tuple(_filters._int(function, "output_shape", n, output_shape) for n in output_shape)
        if len(oshape) < 1:
            fail(function, "output_shape", oshape, "input and output rank must be > 0")
        if any(n < 0 for n in oshape):
            fail(function, "output_shape", oshape, "negative dimensions are not allowed")
    mat = _host_matrix(function, "matrix", matrix)
    if mat.ndim not in (1, 2) or mat.shape[0] < 1:
        fail(function, "matrix", mat.shape, "no proper affine matrix provided (1-D or 2-D)")
    off_given = None
    if mat.ndim == 2 and mat.shape[1] == nd + 1 and mat.shape[0] in (nd, nd + 1):
        if mat.shape[0] == nd + 1:
            want = [0.0] * nd + [1.0]
            if not np.all(mat[nd] == want):
                fail(function, "matrix", mat.shape, f"Expected homogeneous transformation matrix with shape "
                                                    f"{mat.shape} for image shape {tuple(x.shape)}, but bottom row "
                                                    f"was not equal to {[0] * nd + [1]}")
        off_given = mat[:nd, nd].copy()
        mat = mat[:nd, :nd]
    if mat.shape[0] != nd:
        fail(function, "matrix", mat.shape, f"affine matrix has wrong number of rows (the input's rank {nd})")
    if mat.ndim == 2 and mat.shape[1] != len(oshape):
        fail(function, "matrix", mat.shape, f"affine matrix has wrong number of columns (the output's rank "
                                            f"{len(oshape)})")
    if mat.ndim == 1 and len(oshape) != nd:
        fail(function, "output_shape", oshape, f"a 1-D matrix needs an output of the input's rank {nd}")
    if off_given is not None:
        off = off_given
    else:
        off = np.asarray(_sequence(function, "offset", offset, nd), dtype=np.float64)
    if not (np.all(np.isfinite(mat)) and np.all(np.isfinite(off))):
        fail(function, "matrix", mat.shape, "matrix and offset must be finite (SciPy's result is undefined)")
    return xp, x, out, o, m, c, pf, oshape, mat, off


def _diagonal_coords(oshape: tuple[int, ...], mat: np.ndarray, off: np.ndarray) -> tuple[Any, ...]:
    with np.errstate(divide="ignore", invalid="ignore"):
        shifts = off / mat  # SciPy passes offset / matrix as zoom_shift's shift: inf or NaN when m = 0
        return tuple(_axis_coords("diag", no, float(mv), float(sv)) for no, mv, sv in zip(oshape, mat, shifts))


def _full_coords(mat: np.ndarray, off: np.ndarray, oshape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
    """SciPy's coordinates ``((off_h + o_0 m_h0) + o_1 m_h1) + ...`` of the output rows lo..hi (first axis)."""
    nd_out = len(oshape)
    grids = []
    for j, n in enumerate(oshape):
        r = np.arange(lo, hi, dtype=np.float64) if j == 0 else np.arange(n, dtype=np.float64)
        grids.append(r.reshape(tuple(-1 if e == j else 1 for e in range(nd_out))))
    sub = (hi - lo,) + oshape[1:]
    rows = []
    for h in range(mat.shape[0]):
        acc = np.full(sub, off[h])
        for j in range(nd_out):
            acc = acc + grids[j] * mat[h, j]
        rows.append(acc)
    return np.stack(rows)


def _slabs(first: int, rest: int, taps: int) -> list[tuple[int, int]]:
    step = max(1, _SLAB // max(1, rest * taps))
    return [(lo, min(first, lo + step)) for lo in range(0, first, step)]


def _gather_forward(xp: Any, coef: Any, mat: np.ndarray, off: np.ndarray, oshape: tuple[int, ...], o: int,
                    m: str, c: float, npad: int) -> Any:
    nd = coef.ndim
    rest = int(np.prod(oshape[1:]))
    parts = []
    for lo, hi in _slabs(oshape[0], rest, (o + 1) ** nd):
        cc = _full_coords(mat, off, oshape, lo, hi) + float(npad)
        parts.append(map_coordinates(coef, xp.asarray(cc, **on(coef)), None, o, m, c, False))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def _gather_backward(xp: Any, g: Any, coef_shape: tuple[int, ...], like: Any, mat: np.ndarray, off: np.ndarray,
                     oshape: tuple[int, ...], o: int, m: str, npad: int) -> Any:
    nd = len(coef_shape)
    rest = int(np.prod(oshape[1:]))
    zero = xp.zeros(coef_shape, dtype=g.dtype, **on(g))
    acc = None
    for lo, hi in _slabs(oshape[0], rest, (o + 1) ** nd):
        cc = _full_coords(mat, off, oshape, lo, hi) + float(npad)
        part = map_coordinates_backward(g[lo:hi, ...], zero, xp.asarray(cc, **on(like)), None, o, m, 0.0, False)
        acc = part if acc is None else acc + part
    return acc


def affine_transform(input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None, output: Any = None,
                     order: int = 3, mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    """``input`` sampled at ``matrix @ o + offset`` for each output index ``o``, as
    ``scipy.ndimage.affine_transform`` (a 1-D matrix: SciPy's diagonal path, ``(o + offset / m) * m``).

    >>> affine_transform(np.arange(4.0), [0.5], 1.0, order=1).tolist()
    [1.0, 1.5, 2.0, 2.5]
    """
    function = "affine_transform"
    live = _live(matrix) or _live(offset)
    xp, x, out, o, m, c, pf, oshape, mat, off = _affine_parse(
        function, input, _placeholder(matrix) if _live(matrix) else matrix,
        _placeholder(offset) if _live(offset) else offset, output_shape, output, order, mode, cval, prefilter)
    if live and 0 not in oshape:
        return _sample_grid(xp, x, _live_affine_rows(xp, x, matrix, offset, oshape), oshape, o, m, c, pf, out)
    if mat.ndim == 1:
        return _separable_call(xp, x, _diagonal_coords(oshape, mat, off), o, m, c, pf, out, oshape)
    if 0 in oshape:
        return xp.zeros(oshape, dtype=dtype_of(xp, out), **on(x))
    if is_jax_array(x):
        return _jax_affine(mat.tobytes(), mat.shape, off.tobytes(), oshape, o, m, c, pf, out)(x)
    return _affine_full(xp, x, mat, off, oshape, o, m, c, pf, out)


def _live_affine_rows(xp: Any, x: Any, matrix: Any, offset: Any, oshape: tuple[int, ...]) -> list[Any]:
    nd, work = x.ndim, _work(xp, x)
    mat = _param(xp, matrix, x, work)
    if mat.ndim == 2 and int(mat.shape[1]) == nd + 1 and int(mat.shape[0]) in (nd, nd + 1):
        off = mat[:nd, nd]
        mat = mat[:nd, :nd]
    else:
        off = _param(xp, offset, x, work)
        off = xp.broadcast_to(xp.reshape(off, (-1,)), (nd,))
    grids = [_grid(xp, oshape, j, work, x) for j in range(len(oshape))]
    if mat.ndim == 1:  # SciPy's diagonal path: (k + off / m) * m
        return [(grids[h] + off[h] / mat[h]) * mat[h] for h in range(nd)]
    rows = []
    for h in range(nd):
        acc = off[h]
        for j in range(len(oshape)):
            acc = acc + grids[j] * mat[h, j]
        rows.append(acc)
    return rows


def _affine_full(xp: Any, x: Any, mat: np.ndarray, off: np.ndarray, oshape: tuple[int, ...], o: int, m: str,
                 c: float, pf: bool, out: str) -> Any:
    coef = _coef(xp, x, list(range(x.ndim)), o, m, c, pf)
    y = _gather_forward(xp, coef, mat, off, oshape, o, m, c, _npad(o, m, pf))
    return _round_to(xp, y, out)


@lru_cache(maxsize=64)
def _jax_affine(mat: bytes, mshape: tuple[int, ...], off: bytes, oshape: tuple[int, ...], o: int, m: str, c: float,
                pf: bool, out: str) -> Any:
    import jax

    from ...._compat import namespace

    matrix = np.frombuffer(mat, dtype=np.float64).reshape(mshape)
    offset = np.frombuffer(off, dtype=np.float64)
    return jax.jit(lambda x: _affine_full(namespace(x), x, matrix, offset, oshape, o, m, c, pf, out))


def affine_transform_backward(grad_output: Any, input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None,
                              output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
                              prefilter: bool = True) -> Any:
    """The gradient of ``affine_transform`` w.r.t. ``input`` (routed by sorting, no scatter-add).

    >>> affine_transform_backward(np.ones(4), np.zeros(4), [0.5], 1.0, order=1).tolist()
    [0.0, 1.5, 2.0, 0.5]
    """
    function = "affine_transform_backward"
    xp, x, out, o, m, c, pf, oshape, mat, off = _affine_parse(function, input, matrix, offset, output_shape, output,
                                                              order, mode, cval, prefilter)
    g = _grad_output(function, xp, grad_output, x, out, oshape)
    if mat.ndim == 1:
        return _separable_grad(xp, g, x, _diagonal_coords(oshape, mat, off), o, m, pf, oshape)
    if 0 in oshape:
        return xp.zeros(tuple(x.shape), dtype=x.dtype, **on(x))
    g = xp.astype(g, _work(xp, x))
    pad = _npad(o, m, pf)
    shape = tuple(int(n) for n in x.shape)
    gc = _gather_backward(xp, g, tuple(n + 2 * pad for n in shape), x, mat, off, oshape, o, m, pad)
    return xp.astype(_coef_t(xp, gc, shape, list(range(x.ndim)), o, m, pf), x.dtype)


# ----------------------------------------------------------------------------------------------- rotate


def _rotate_parse(function: str, input: Any, angle: Any, axes: Any, reshape: Any, output: Any, order: Any, mode: Any,
                  cval: Any, prefilter: Any) -> tuple[Any, ...]:
    xp, x, _, out, o, m, c, pf = _common_args(function, input, output, order, mode, cval, prefilter)
    nd = x.ndim
    if nd < 2:
        fail(function, "input", nd, "input array should be at least 2D")
    a = _real(function, "angle", angle)
    if not math.isfinite(a):
        fail(function, "angle", a, "must be finite")
    if not isinstance(reshape, (bool, np.bool_, int)):
        fail(function, "reshape", reshape, "must be a bool", TypeError)
    try:
        ax = list(axes)
    except TypeError:
        fail(function, "axes", axes, "axes should contain exactly two values", TypeError)
    if len(ax) != 2:
        fail(function, "axes", tuple(ax), "axes should contain exactly two values")
    pair = [_filters._int(function, "axes", v, tuple(ax)) for v in ax]
    pair = [v + nd if v < 0 else v for v in pair]
    if not all(0 <= v < nd for v in pair):
        fail(function, "axes", tuple(ax), "invalid rotation plane specified")
    if pair[0] == pair[1]:
        fail(function, "axes", tuple(ax), "the two axes must differ (SciPy accepts equal axes with a meaningless "
                                          "result)")
    pair.sort()
    cs, sn = cosdg(a), sindg(a)
    rot = np.array([[cs, sn], [-sn, cs]])
    shape = np.asarray([int(n) for n in x.shape])
    in_plane = shape[pair]
    if reshape:
        iy, ix = in_plane
        bounds = rot @ np.array([[0, 0, iy, iy], [0, ix, 0, ix]])
        out_plane = (np.ptp(bounds, axis=1) + 0.5).astype(int)
    else:
        out_plane = in_plane
    offset = (in_plane - 1) / 2 - rot @ ((out_plane - 1) / 2)
    oshape = shape.copy()
    oshape[pair] = out_plane
    return xp, x, out, o, m, c, pf, tuple(pair), rot, offset, tuple(int(n) for n in oshape), \
        tuple(int(n) for n in out_plane)


def _planes(xp: Any, v: Any, pair: tuple[int, int]) -> tuple[Any, list[int]]:
    order = [a for a in range(v.ndim) if a not in pair] + list(pair)
    moved = xp.permute_dims(v, tuple(order)) if order != list(range(v.ndim)) else v
    return xp.reshape(moved, (-1,) + tuple(int(n) for n in moved.shape[-2:])), order


def _unplanes(xp: Any, y: Any, shape: tuple[int, ...], order: list[int]) -> Any:
    y = xp.reshape(y, tuple(shape[a] for a in order))
    return xp.permute_dims(y, tuple(int(i) for i in np.argsort(order))) if order != list(range(len(order))) else y


def rotate(input: Any, angle: float, axes: Any = (1, 0), reshape: bool = True, output: Any = None, order: int = 3,
           mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    """``input`` rotated by ``angle`` degrees in the plane of ``axes``, as ``scipy.ndimage.rotate`` (each plane on
    its own, the prefilter along the plane's axes only).

    >>> rotate(np.arange(6.0).reshape(2, 3), 90, order=1).tolist()
    [[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]]
    """
    xp, x, out, o, m, c, pf, pair, rot, offset, oshape, out_plane = _rotate_parse(
        "rotate", input, angle, axes, reshape, output, order, mode, cval, prefilter)
    if 0 in oshape:
        return xp.zeros(oshape, dtype=dtype_of(xp, out), **on(x))
    if is_jax_array(x):
        return _jax_rotate(rot.tobytes(), offset.tobytes(), pair, oshape, out_plane, o, m, c, pf, out)(x)
    return _rotate_run(xp, x, rot, offset, pair, oshape, out_plane, o, m, c, pf, out)


@lru_cache(maxsize=16)
def _plane_table(rot: bytes, off: bytes, out_plane: tuple[int, ...], in_plane: tuple[int, ...], o: int, m: str,
                 npad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Every output point of one plane, on the host: the flat cells of its (order + 1)^2 taps (P, K) (taps that
    read cval, and whole-cval points, point at an extra zero cell past the plane), the weights' products, and the
    cval term per point, and the points that are cval whole."""
    r = np.frombuffer(rot, dtype=np.float64).reshape(2, 2)
    f = np.frombuffer(off, dtype=np.float64)
    coords = _full_coords(r, f, out_plane, 0, out_plane[0]).reshape(2, -1)
    lengths = [n + 2 * npad for n in in_plane]
    imode = _MAP.get(m, m)
    (t0, c0, w0, h0), (t1, c1, w1, h1) = (_axis_taps(np, coords[d], lengths[d], o, imode, npad) for d in (0, 1))
    k, points, cells = o + 1, coords.shape[1], lengths[0] * lengths[1]
    lin = np.asarray(t0)[:, :, None] * lengths[1] + np.asarray(t1)[:, None, :]
    weight = np.stack(w0, axis=1)[:, :, None] * np.stack(w1, axis=1)[:, None, :] if o > 0 else np.ones((points, 1, 1))
    whole = None if h0 is None else np.asarray(h0) | np.asarray(h1)
    off_line = np.zeros((points, k, k), dtype=bool)
    if c0 is not None:
        off_line = np.asarray(c0)[:, :, None] | np.asarray(c1)[:, None, :]
    dead = off_line | (whole[:, None, None] if whole is not None else False)
    lin = np.where(dead, cells, lin).reshape(points, k * k)
    cval_weight = np.where(off_line, weight, 0.0).reshape(points, k * k).sum(axis=1)
    return lin, np.where(dead, 0.0, weight).reshape(points, k * k), cval_weight, whole


def _rotate_batched(xp: Any, planes: Any, rot: np.ndarray, offset: np.ndarray, out_plane: tuple[int, ...], o: int,
                    m: str, c: float, npad: int) -> Any:
    # SciPy's per-point sum over the taps, every plane of a slab at once (the taps are the same in every plane);
    # taps of weight 0 are still read, as SciPy's
    b_all, h, w = (int(n) for n in planes.shape)
    lin, weight, cval_weight, whole = _plane_table(rot.tobytes(), offset.tobytes(), out_plane, (h - 2 * npad,
                                                   w - 2 * npad), o, m, npad)
    work = planes.dtype
    points, taps = lin.shape
    lin_d = xp.asarray(lin.reshape(-1), **on(planes))
    weight_d = xp.asarray(weight, dtype=work, **on(planes))
    extra = xp.asarray(c * cval_weight, dtype=work, **on(planes)) if c != 0.0 else None
    step = max(1, _SLAB // max(1, points * taps))
    flat = xp.reshape(planes, (b_all, h * w))
    parts = []
    for lo in range(0, b_all, step):
        hi = min(b_all, lo + step)
        ext = xp.concat([flat[lo:hi, ...], xp.zeros((hi - lo, 1), dtype=work, **on(planes))], axis=1)
        vals = xp.reshape(take(xp, ext, lin_d, 1), (hi - lo, points, taps))
        y = xp.sum(vals * weight_d, axis=2)
        if extra is not None:
            y = y + extra
        if whole is not None:
            y = xp.where(xp.asarray(whole, **on(planes)), xp.asarray(c, dtype=work, **on(planes)), y)
        parts.append(y)
    y = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    return xp.reshape(y, (b_all,) + tuple(out_plane))


def _rotate_batched_t(xp: Any, gp: Any, rot: np.ndarray, offset: np.ndarray, out_plane: tuple[int, ...],
                      in_plane: tuple[int, ...], o: int, m: str, npad: int) -> Any:
    """The transpose of :func:`_rotate_batched` (its linear part): each point's cotangent times its tap weights,
    routed into the cells by one sort shared by every plane (no scatter-add)."""
    from ....kernels.cells import Cells

    lin, weight, _, _ = _plane_table(rot.tobytes(), offset.tobytes(), out_plane, in_plane, o, m, npad)
    h, w = (n + 2 * npad for n in in_plane)
    b_all, work = int(gp.shape[0]), gp.dtype
    points, taps = lin.shape
    router = Cells(h * w, points * taps)
    idx = xp.asarray(lin.reshape(1, -1), **on(gp))
    presorted = router.sort(idx)
    weight_d = xp.asarray(weight, dtype=work, **on(gp))
    flat = xp.reshape(gp, (b_all, points))
    step = max(1, _SLAB // max(1, points * taps))
    parts = []
    for lo in range(0, b_all, step):
        hi = min(b_all, lo + step)
        reads = xp.reshape(flat[lo:hi, :, None] * weight_d, (hi - lo, points * taps))
        # a copy: the routed sums are a view of a buffer as long as the reads, which would stay alive per slab
        parts.append(xp.asarray(router.route(reads, idx, presorted=presorted), copy=True))
    return xp.reshape(parts[0] if len(parts) == 1 else xp.concat(parts, axis=0), (b_all, h, w))


def _rotate_run(xp: Any, x: Any, rot: np.ndarray, offset: np.ndarray, pair: tuple[int, int], oshape: tuple[int, ...],
                out_plane: tuple[int, ...], o: int, m: str, c: float, pf: bool, out: str) -> Any:
    coef = _coef(xp, x, list(pair), o, m, c, pf)
    planes, order = _planes(xp, coef, pair)
    pad = _npad(o, m, pf)
    if is_jax_array(x):
        import jax

        ys = jax.vmap(lambda p: _gather_forward(xp, p, rot, offset, out_plane, o, m, c, pad))(planes)
    elif (_eager(x) and not (is_torch_array(x) and x.requires_grad)
          and int(np.prod(out_plane)) * (o + 1) ** 2 <= _BATCHED):
        ys = _rotate_batched(xp, planes, rot, offset, out_plane, o, m, c, pad)
    else:
        ys = xp.stack([_gather_forward(xp, planes[b, ...], rot, offset, out_plane, o, m, c, pad)
                       for b in range(int(planes.shape[0]))])
    return _round_to(xp, _unplanes(xp, ys, oshape, order), out)


@lru_cache(maxsize=64)
def _jax_rotate(rot: bytes, off: bytes, pair: tuple[int, int], oshape: tuple[int, ...], out_plane: tuple[int, ...],
                o: int, m: str, c: float, pf: bool, out: str) -> Any:
    import jax

    from ...._compat import namespace

    r = np.frombuffer(rot, dtype=np.float64).reshape(2, 2)
    f = np.frombuffer(off, dtype=np.float64)
    return jax.jit(lambda x: _rotate_run(namespace(x), x, r, f, pair, oshape, out_plane, o, m, c, pf, out))


def rotate_backward(grad_output: Any, input: Any, angle: float, axes: Any = (1, 0), reshape: bool = True,
                    output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
                    prefilter: bool = True) -> Any:
    """The gradient of ``rotate`` w.r.t. ``input``, plane by plane.

    >>> rotate_backward(np.ones((3, 2)), np.zeros((2, 3)), 90, order=1).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    function = "rotate_backward"
    xp, x, out, o, m, c, pf, pair, rot, offset, oshape, out_plane = _rotate_parse(
        function, input, angle, axes, reshape, output, order, mode, cval, prefilter)
    g = _grad_output(function, xp, grad_output, x, out, oshape)
    if 0 in oshape:
        return xp.zeros(tuple(x.shape), dtype=x.dtype, **on(x))
    g = xp.astype(g, _work(xp, x))
    pad = _npad(o, m, pf)
    shape = tuple(int(n) for n in x.shape)
    gp, order_g = _planes(xp, g, pair)
    in_plane = tuple(shape[a] for a in pair)
    coef_plane = tuple(n + 2 * pad for n in in_plane)
    if _eager(x) and int(np.prod(out_plane)) * (o + 1) ** 2 <= _BATCHED:
        stacked = _rotate_batched_t(xp, gp, rot, offset, out_plane, in_plane, o, m, pad)
    else:
        stacked = xp.stack([_gather_backward(xp, gp[b, ...], coef_plane, x, rot, offset, out_plane, o, m, pad)
                            for b in range(int(gp.shape[0]))])
    cshape = list(shape)
    for a in pair:
        cshape[a] += 2 * pad
    gc = _unplanes(xp, stacked, tuple(cshape), order_g)
    return xp.astype(_coef_t(xp, gc, shape, list(pair), o, m, pf), x.dtype)


__all__ = ["affine_transform", "affine_transform_backward", "rotate", "rotate_backward", "shift", "shift_backward",
           "zoom", "zoom_backward"]
