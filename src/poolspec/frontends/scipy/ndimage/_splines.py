"""SciPy 1.17.1's B-spline machinery (``spline_filter1d``, ``spline_filter``, ``map_coordinates``) written once
against the array API.

The prefilter is linear and applied per axis by matmuls (BLAS on the host, one kernel on a GPU), whose native
gradients on torch and JAX are the transposed matmuls (deterministic, every order):

- axes up to ``max(2w + 1, 160)`` cells (w = 20, 27, 35, 43 for orders 2-5), and every reflect-kind axis up to 16
  cells while ``REFLECT_ALIASING`` holds: the dense matrix of SciPy's own recursion replayed on the identity, so
  SciPy 1.17.1's aliasing bug in ``_init_causal_reflect`` (fixed upstream after 1.17.1) is reproduced bit for bit;
- longer axes: the infinite inverse kernel cut to ``2w + 1`` taps on the line folded by the boundary rule (whole-
  sample mirror, half-sample reflect or periodic: slices and flips), applied as a block-banded matrix (blocks of
  B >= 2w cells, each output block two input blocks times a (2B, B) Toeplitz piece); the dropped tail is below
  1e-16 of the line's size. ``prefilter_plan`` gives the same operator as a tap table (for composed plans).

``map_coordinates`` computes SciPy's per-point boundary mapping and weights on the device (the coordinates are
data); each axis's taps are one lookup in a host table of SciPy's tap mapping, and the ``(order + 1) ** ndim``
taps are gathered with one ``take`` (points last, so every step runs along them), a block of points at a time.
Its gradient w.r.t. the input is the taps' transpose routed by sorting (``kernels.cells.Cells.route``, no
scatter-add) and then the transposed prefilter, bound as a torch Function pair and a JAX ``custom_vjp`` pair
(every order); w.r.t. the coordinates, the weights' derivative with the gathered coefficients held constant (first
order).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ...._compat import (
    dtype_name,
    dtype_of,
    index_dtype,
    is_dask_array,
    is_jax_array,
    is_torch_array,
    is_traced,
    matmul,
    namespace,
    on,
    take,
    to_host,
    to_namespace,
    writable_module,
)
from ....autodiff import compose
from ..._common import dense_table, fail, tap_table
from . import _filters
from ._filters import _INTS, _as_array, _axis, _cval, _input, _int, _output, _store, _work

# ni_splines.c's poles (C literals)
POLES = {2: (-0.171572875253809902396622551580603843,), 3: (-0.267949192431122706472553658494127633,),
         4: (-0.361341225900220177092212841325675255, -0.013725429297339121360331226939128204),
         5: (-0.430575347099973791851434783493520110, -0.043096288203264653822712376822550182)}
# half-widths of the banded prefilter: the dropped tail of SciPy's matrix is at rounding level (research note 1.3)
WIDTH = {2: 20, 3: 27, 4: 35, 5: 43}
# SciPy 1.17.1 accumulates _init_causal_reflect's sum in c[0] itself (fixed upstream in d2a1c1ce1f, after 1.17.1):
# the front-end mirrors 1.17.1, so the reflect-kind prefilter of axes up to 16 cells copies that aliasing
REFLECT_ALIASING = True
# below this length the aliased reflect matrix differs from the exact inverse by more than 1e-13 (order 5: 16)
_ALIASED_UP_TO = 16

MODES = ("reflect", "grid-mirror", "mirror", "nearest", "wrap", "grid-wrap", "constant", "grid-constant")
# the prefilter's boundary kind per mode (ni_splines.c:284-313)
KIND = {"mirror": "mirror", "constant": "mirror", "grid-constant": "mirror", "wrap": "mirror",
        "reflect": "reflect", "grid-mirror": "reflect", "nearest": "reflect", "grid-wrap": "wrap"}
# the interpolation's boundary rule per mode (grid-mirror is reflect there)
_MAP = {"grid-mirror": "reflect"}
_NPAD = 12  # _prepad_for_spline_filter's pad for nearest and grid-constant

# ------------------------------------------------------------------------------------------- host plans


def recursion_matrix(length: int, order: int, kind: str, aliasing: bool = REFLECT_ALIASING) -> np.ndarray:
    """SciPy's prefilter recursion (ni_splines.c) run on the identity: ``y = R @ x`` along the line.

    >>> np.round(recursion_matrix(3, 3, "mirror") @ np.ones(3), 12).tolist()
    [1.0, 1.0, 1.0]
    """
    c = np.eye(length)
    if length <= 1 or order < 2:
        return c
    zs = POLES[order]
    gain = 1.0
    for z in zs:
        gain *= (1.0 - z) * (1.0 - 1.0 / z)
    c = c * gain
    n = length
    for z in zs:
        if kind == "mirror":
            zn1 = z ** (n - 1)
            s = c[0] + zn1 * c[n - 1]
            zi = z
            for i in range(1, n - 1):
                s = s + zi * (c[i] + zn1 * c[n - 1 - i])
                zi *= z
            c[0] = s / (1 - zn1 * zn1)
        elif kind == "wrap":
            zi = z
            s = c[0].copy()
            for i in range(1, n):
                s = s + zi * c[n - i]
                zi *= z
            c[0] = s / (1 - zi)
        elif aliasing:  # 1.17.1: at i = n-1 the term c[n-1-i] = c[0] is the partial sum
            zn = z ** n
            c0 = c[0].copy()
            c[0] = c[0] + zn * c[n - 1]
            zi = z
            for i in range(1, n):
                c[0] = c[0] + zi * (c[i] + zn * c[n - 1 - i])
                zi *= z
            c[0] = c[0] * (z / (1 - zn * zn))
            c[0] = c[0] + c0
        else:
            zn = z ** n
            s = c[0] + zn * c[n - 1]
            zi = z
            for i in range(1, n):
                s = s + zi * (c[i] + zn * c[n - 1 - i])
                zi *= z
            c[0] = c[0] + s * z / (1 - zn * zn)
        for i in range(1, n):
            c[i] = c[i] + z * c[i - 1]
        if kind == "mirror":
            c[n - 1] = (z * c[n - 2] + c[n - 1]) * z / (z * z - 1)
        elif kind == "wrap":
            zi = z
            s = c[n - 1].copy()
            for i in range(0, n - 1):
                s = s + zi * c[i]
                zi *= z
            c[n - 1] = s * (z / (zi - 1))
        else:
            c[n - 1] = c[n - 1] * (z / (z - 1))
        for i in range(n - 2, -1, -1):
            c[i] = z * (c[i + 1] - c[i])
    return c


@lru_cache(maxsize=8)
def inverse_kernel(order: int) -> np.ndarray:
    """``h[k]``, k = -w..w: the interior of the prefilter, ``gain * conv_i(-z_i z_i^|k| / (1 - z_i^2))``."""
    w = WIDTH[order]
    k = np.arange(-2 * w, 2 * w + 1)
    h = np.array([1.0])
    gain = 1.0
    for z in POLES[order]:
        gain *= (1.0 - z) * (1.0 - 1.0 / z)
        h = np.convolve(h, -z * z ** np.abs(k) / (1.0 - z * z))
    mid = len(h) // 2
    out = gain * h[mid - w:mid + w + 1]
    out.setflags(write=False)
    return out


@lru_cache(maxsize=1024)
def prefilter_plan(length: int, order: int, kind: str, aliasing: bool = REFLECT_ALIASING) -> Any:
    """The prefilter of one axis as a tap table (None: the identity, for lines of one cell and orders 0, 1)."""
    if length <= 1 or order < 2:
        return None
    w = WIDTH[order]
    if length <= 2 * w + 1 or (kind == "reflect" and aliasing and length <= _ALIASED_UP_TO):
        return dense_table(np.ascontiguousarray(recursion_matrix(length, order, kind, aliasing).T))
    folded = {"mirror": "mirror", "reflect": "reflect", "wrap": "wrap"}[kind]
    cells = _filters.fold(length, w, w, folded)
    index = np.stack([cells[t:t + length] for t in range(2 * w + 1)])
    weight = np.repeat(inverse_kernel(order)[:, None], length, axis=1)
    return tap_table(index, weight, length)


# -------------------------------------------------------------------------------------------- arguments


def _order(function: str, order: Any, low: int) -> int:
    o = _int(function, "order", order)
    if not low <= o <= 5:
        fail(function, "order", order, f"spline order not supported: must be in [{low}, 5]")
    return o


def _mode(function: str, mode: Any) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        fail(function, "mode", mode, f"boundary mode not supported; one of {', '.join(MODES)}")
    return str(mode)


# axes up to this length take the dense matrix (one matmul: as fast as the blocked band there, and exact SciPy)
_DENSE_UP_TO = 160


def _dense(length: int, order: int, kind: str) -> bool:
    w = WIDTH[order]
    return length <= max(2 * w + 1, _DENSE_UP_TO) or (kind == "reflect" and REFLECT_ALIASING
                                                     and length <= _ALIASED_UP_TO)


@lru_cache(maxsize=256)
def _dense_rows(length: int, order: int, kind: str, transpose: bool) -> np.ndarray:
    # the prefilter in row form, y_line = x_line @ M: M = R.T (forward) or R (its transpose)
    r = recursion_matrix(length, order, kind)
    m = np.ascontiguousarray(r if transpose else r.T)
    m.setflags(write=False)
    return m


def _block(order: int) -> int:
    # the band's block: at least 2w; 64 cells measured fastest for orders 2 and 3 (NumPy, one thread)
    return max(64, -(-2 * WIDTH[order] // 8) * 8)


@lru_cache(maxsize=16)
def _band_rows(order: int, reverse: bool) -> np.ndarray:
    # (B, 2B) = [A | C]: output block j of y[i] = sum_t h[t] e[i + t] is E[j] @ A + E[j + 1] @ C (B >= 2w)
    h = inverse_kernel(order)[::-1] if reverse else inverse_kernel(order)
    b, n = _block(order), len(h)
    k = np.zeros((2 * b, b))
    for i in range(b):
        k[i:i + n, i] = h
    m = np.ascontiguousarray(np.concatenate([k[:b], k[b:]], axis=1))
    m.setflags(write=False)
    return m


@lru_cache(maxsize=16)
def _band_cols(order: int, reverse: bool) -> np.ndarray:
    m = np.ascontiguousarray(_band_rows(order, reverse).T)
    m.setflags(write=False)
    return m


def _left(xp: Any, mt: Any, v3: Any) -> Any:
    # mt (n_out, n_in) contiguous times each (n_in, post) of v3 (pre, n_in, post); one plain matmul when pre is 1
    # (torch's broadcast batched matmul of small matrices is far slower, and slower still on a transposed view)
    if int(v3.shape[0]) == 1:
        return matmul(xp, mt, v3[0, ...])[None, ...]
    return matmul(xp, mt, v3)


def _rows(xp: Any, v: Any, axis: int, m: np.ndarray, mt: np.ndarray) -> Any:
    """``v``'s lines along ``axis`` times ``m`` (n_in, n_out) by one matmul, without moving the axis (``mt``:
    ``m.T`` contiguous, for a left product)."""
    shape = tuple(int(n) for n in v.shape)
    if axis == v.ndim - 1:
        return matmul(xp, v, xp.asarray(to_namespace(m, xp, v, v.dtype)))
    pre, post = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    y = _left(xp, xp.asarray(to_namespace(mt, xp, v, v.dtype)), xp.reshape(v, (pre, shape[axis], post)))
    return xp.reshape(y, shape[:axis] + (int(m.shape[1]),) + shape[axis + 1:])


def _fir(xp: Any, e: Any, axis: int, order: int, count: int, reverse: bool) -> Any:
    """``y[i] = sum_t h[t] e[i + t]``, i < count, along ``axis`` (e: count + 2w cells): blocks of B cells, each
    output block two blocks of ``e`` times a (2B, B) Toeplitz piece, all blocks in one matmul."""
    k = _band_rows(order, reverse)
    b = _block(order)
    nb = -(-count // b)
    n = int(e.shape[axis])
    e = _filters._zero_pad(xp, e, axis, 0, (nb + 1) * b - n)
    shape = tuple(int(s) for s in e.shape)
    pre, post = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    if axis == e.ndim - 1:
        kk = xp.asarray(to_namespace(k, xp, e, e.dtype))
        r = xp.reshape(matmul(xp, xp.reshape(e, (pre * (nb + 1), b)), kk), (pre, nb + 1, 2 * b))
        y = r[:, :-1, :b] + r[:, 1:, b:]
    else:
        kt = xp.asarray(to_namespace(_band_cols(order, reverse), xp, e, e.dtype))
        r = xp.reshape(_left(xp, kt, xp.reshape(e, (pre * (nb + 1), b, post))), (pre, nb + 1, 2 * b, post))
        y = r[:, :-1, :b, :] + r[:, 1:, b:, :]
    y = xp.reshape(y, (pre, nb * b, post))[:, :count, :]
    return xp.reshape(y, shape[:axis] + (count,) + shape[axis + 1:])


def _on_lines(fn: Any, v: Any, axis: int, order: int, kind: str) -> Any:
    # Dask: chunk by chunk with a halo of the band's half-width along the axis (the kind's periodic boundary for
    # grid-wrap; at the array's edges each block folds the line itself), each block filtered by the eager code:
    # an artificial block edge changes outputs within about w cells of it (the band: less than 1e-16 beyond), and
    # the halo is trimmed. An axis of few chunks or short enough for the dense matrix: one chunk.
    if is_dask_array(v):
        n, chunks = int(v.shape[axis]), v.chunks[axis]
        halo = WIDTH.get(order, 0) + 2
        run = lambda blk: fn(namespace(blk), blk, axis, order, kind)  # noqa: E731
        if len(chunks) == 1 or _dense(n, order, kind) or min(chunks) < 2 * halo:
            return v.rechunk({axis: -1}).map_blocks(run, dtype=v.dtype)
        return v.map_overlap(run, depth={axis: halo}, boundary={axis: "periodic" if kind == "wrap" else "none"},
                             dtype=v.dtype, meta=np.empty((0,) * v.ndim, v.dtype))
    return fn(namespace(v), v, axis, order, kind)


def _filter_axis(xp: Any, v: Any, axis: int, order: int, kind: str) -> Any:
    """SciPy's prefilter of ``v`` (work dtype) along ``axis``: the dense matrix, or the band on the folded line."""
    n = int(v.shape[axis])
    if n <= 1 or order < 2:
        return v
    if _dense(n, order, kind):
        return _rows(xp, v, axis, _dense_rows(n, order, kind, False), _dense_rows(n, order, kind, True))
    w = WIDTH[order]
    return _fir(xp, _filters.extend(xp, v, axis, w, w, kind, 0.0), axis, order, n, False)


def _filter_axis_t(xp: Any, g: Any, axis: int, order: int, kind: str) -> Any:
    """The transpose of :func:`_filter_axis`: the transposed matrix, or the reversed band then the fold summed
    back."""
    n = int(g.shape[axis])
    if n <= 1 or order < 2:
        return g
    if _dense(n, order, kind):
        return _rows(xp, g, axis, _dense_rows(n, order, kind, True), _dense_rows(n, order, kind, False))
    w = WIDTH[order]
    e = _fir(xp, _filters._zero_pad(xp, g, axis, 2 * w, 2 * w), axis, order, n + 2 * w, True)
    return _filters.fold_back(xp, e, axis, n, w, w, kind)


def _prefilter_axes(xp: Any, v: Any, axes: list[int], order: int, kind: str, out: str | None) -> Any:
    # out: the dtype each pass is stored in (SciPy's C cast per axis), None to stay in the work dtype
    for a in axes:
        v = xp.astype(v, _work(xp, v))
        v = _on_lines(_filter_axis, v, a, order, kind)
        if out is not None:
            v = _store(xp, v, out)
    return v


def _prefilter_axes_t(xp: Any, g: Any, axes: list[int], order: int, kind: str) -> Any:
    for a in reversed(axes):
        g = _on_lines(_filter_axis_t, g, a, order, kind)
    return g


# ------------------------------------------------------------------------------------------- prefilter


def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                    mode: str = "mirror") -> Any:
    """The B-spline prefilter along ``axis``, as ``scipy.ndimage.spline_filter1d`` (orders 0 and 1: a copy).

    >>> spline_filter1d(np.array([0.0, 1.0, 0.0, 0.0]), 2).round(6).tolist()
    [-0.485714, 1.457143, -0.257143, 0.085714]
    """
    function = "spline_filter1d"
    xp, x = _as_array(input)
    _input(function, x, xp, True)
    out = _output(function, xp, output, "float64")
    o = _order(function, order, 0)
    if x.ndim == 0:
        fail(function, "input", 0, "must have at least one axis")
    a = _axis(function, axis, x.ndim)
    m = _mode(function, mode)
    if o < 2 or 0 in x.shape:
        return _store(xp, x, out)
    return _prefilter_axes(xp, x, [a], o, KIND[m], out)


def spline_filter(input: Any, order: int = 3, output: Any = np.float64, mode: str = "mirror") -> Any:
    """``spline_filter1d`` along every axis in turn, each pass stored in ``output``'s dtype, as
    ``scipy.ndimage.spline_filter``.

    >>> spline_filter(np.eye(3), 3).round(6).tolist()[0]
    [4.125, -3.0, 1.875]
    """
    function = "spline_filter"
    xp, x = _as_array(input)
    _input(function, x, xp, True)
    out = _output(function, xp, output, "float64")
    o = _order(function, order, 2)
    m = _mode(function, mode)
    if x.ndim == 0 or 0 in x.shape:
        return _store(xp, x, out)
    return _prefilter_axes(xp, x, list(range(x.ndim)), o, KIND[m], out)


# --------------------------------------------------------------------------------------- interpolation


def _quotient(xp: Any, a: Any, p: float) -> Any:
    """``floor(a / p)`` for ``a >= 0``: SciPy's quotient. XLA divides by a reciprocal, not correctly rounded, so on
    JAX the quotient can be one below at an exact multiple, where reflect's fold then gives -1 (cval at
    ``2 * n * k``) and wrap's the last cell instead of the first; the exact remainder puts it back. (mirror's and
    grid-wrap's folds land within rounding of SciPy's coordinate either way.)"""
    q = xp.floor(a / p)
    if is_jax_array(a):
        r = a - p * q
        q = xp.where(r >= p, q + 1.0, xp.where(r < 0, q - 1.0, q))
    return q


def _map_coordinate(xp: Any, x: Any, length: int, mode: str) -> Any:
    # ni_interpolation.c map_coordinate, elementwise; the C (npy_intp) casts are float truncations here (equal for
    # finite values below 2**53)
    lo, hi = x < 0, x > length - 1
    if mode in ("mirror", "reflect", "wrap", "grid-wrap") and length <= 1:
        return xp.where(lo | hi, xp.zeros_like(x), x)
    n = float(length)
    # each branch's C truncation is a floor there (the quotient is >= 0 where its branch is taken, and grid-wrap's
    # left quotient > -1: floor of its positive part), and the two branches share one quotient: the same values,
    # one division and one rounding per coordinate instead of two of each
    if mode == "mirror":
        p = 2 * n - 2
        q = p * xp.floor(xp.abs(x) / p)
        v = q + x
        v = xp.where(v <= 1 - n, v + p, -v)
        u = x - q
        u = xp.where(u >= n, p - u, u)
        return xp.where(lo, v, xp.where(hi, u, x))
    if mode == "reflect":
        p = 2 * n
        q = p * _quotient(xp, xp.abs(x), p)
        v = xp.where(x < -p, q + x, x)
        v = xp.where(v < -n, v + p, xp.where(v > -1e-15, xp.full_like(v, 1e-15), -v) - 1)
        u = x - q
        u = xp.where(u >= n, p - u - 1, u)
        return xp.where(lo, v, xp.where(hi, u, x))
    if mode == "wrap":
        s = n - 1
        q = _quotient(xp, xp.abs(x), s)
        return xp.where(lo, x + s * (q + 1), xp.where(hi, x - s * q, x))
    if mode == "grid-wrap":
        q = xp.floor(xp.clip(xp.where(lo, -1 - x, x) / n, 0.0, None))
        return xp.where(lo, x + n * (q + 1), xp.where(hi, x - n * q, x))
    if mode == "nearest":
        return xp.clip(x, 0.0, n - 1)
    if mode == "constant":
        return xp.where(lo | hi, xp.full_like(x, -1.0), x)
    raise AssertionError(mode)


def _weights(xp: Any, x: Any, order: int) -> list[Any]:
    # ni_splines.c get_spline_interpolation_weights, same operation order; the last weight is 1 - the others
    x = x - xp.floor(x if order & 1 else x + 0.5)
    if order == 0:
        return [xp.ones_like(x)]
    y, z = x, 1.0 - x
    w: list[Any] = [None] * (order + 1)
    if order == 1:
        w[0] = 1.0 - x
    elif order == 2:
        w[1] = 0.75 - x * x
        y = 0.5 - x
        w[0] = 0.5 * y * y
    elif order == 3:
        w[1] = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0
        w[2] = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0
        w[0] = z * z * z / 6.0
    elif order == 4:
        t = x * x
        w[2] = t * (t * 0.25 - 0.625) + 115.0 / 192.0
        y = 1.0 + x
        w[1] = y * (y * (y * (5.0 - y) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0
        w[3] = z * (z * (z * (5.0 - z) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0
        y = 0.5 - x
        t = y * y
        w[0] = t * t / 24.0
    else:
        t = y * y
        w[2] = t * (t * (0.25 - y / 12.0) - 0.5) + 0.55
        t = z * z
        w[3] = t * (t * (0.25 - z / 12.0) - 0.5) + 0.55
        y = y + 1.0
        w[1] = y * (y * (y * (y * (y / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425
        z = z + 1.0
        w[4] = z * (z * (z * (z * (z / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425
        y = 1.0 - x
        t = y * y
        w[0] = y * t * t / 120.0
    last = xp.ones_like(x)
    for i in range(order):
        last = last - w[i]
    w[order] = last
    return w


def _axis_taps(xp: Any, cc: Any, length: int, order: int, mode: str, npad: int) -> tuple[Any, Any, list[Any], Any]:
    """Per point of one axis: the tap cells (P, order+1) int64, the taps reading cval (grid-constant; else None),
    the weights, and the points that are cval whole (constant's out-of-range and NaN; else None)."""
    cc = cc + float(npad)
    whole = None
    if mode not in ("grid-constant", "nearest"):
        cc = _map_coordinate(xp, cc, length, mode)
        whole = ~(cc > -1.0)
        cc = xp.where(whole, xp.zeros_like(cc), cc)
    else:
        # a non-finite coordinate: C's (npy_intp) cast of it gives INT_MIN on x86, so order 0 reads the first cell
        # (nearest) or cval (grid-constant), as at -2; higher orders get NaN weights (set whole afterwards)
        cc = xp.where(xp.isfinite(cc), cc, xp.full_like(cc, -2.0 if order == 0 else 0.0))
    start = (xp.floor(cc) if order & 1 else xp.floor(cc + 0.5)) - float(order // 2)
    taps = start[:, None] + xp.asarray(np.arange(order + 1, dtype=np.float64), dtype=cc.dtype, **on(cc))
    n = float(length)
    cvals = None
    if mode == "grid-constant":
        cvals = (taps < 0) | (taps >= n)
        taps = xp.clip(taps, 0.0, n - 1)
    else:
        spline_mode = {"constant": "mirror", "wrap": "mirror"}.get(mode, mode)
        edge = (start < 0) | (start + order >= n)
        taps = xp.where(edge[:, None], _map_coordinate(xp, taps, length, spline_mode), taps)
        taps = xp.clip(taps, 0.0, n - 1)  # only undefined inputs (inf) reach outside; SciPy reads out of bounds
    return xp.astype(taps, xp.int64), cvals, _weights(xp, cc, order), whole


def _round_to(xp: Any, t: Any, name: str) -> Any:
    # CASE_INTERP_OUT_UINT / _INT: half up (unsigned, negatives to 0), half away from zero (signed), clipped
    if name not in _INTS:
        return t if dtype_name(xp, t.dtype) == name else xp.astype(t, dtype_of(xp, name))
    info = np.iinfo(name)
    if name.startswith("u"):
        r = xp.where(t > 0, xp.trunc(t + 0.5), xp.zeros_like(t))
    else:
        r = xp.trunc(xp.where(t > 0, t + 0.5, t - 0.5))
    r = xp.clip(xp.where(xp.isnan(r), xp.zeros_like(r), r), float(info.min), float(info.max))
    return xp.astype(r, dtype_of(xp, name))


def _coordinates(function: str, xp: Any, x: Any, coordinates: Any) -> Any:
    try:
        same = namespace(coordinates) is xp
    except TypeError:
        same = False
    if same:
        c, name = coordinates, dtype_name(xp, coordinates.dtype)
    else:
        host = np.asarray(to_host(coordinates) if hasattr(coordinates, "shape") else coordinates)
        name = host.dtype.name
        c = host
    if name.startswith("complex"):
        fail(function, "coordinates", name, "Complex type not supported (SciPy's TypeError)", TypeError)
    if not (name == "bool" or name in _INTS or name in ("float32", "float64")):
        fail(function, "coordinates", name, "coordinate array data type not supported: bool, an integer, float32 "
                                             "or float64", TypeError)
    if c.ndim < 1 or int(c.shape[0]) != x.ndim:
        fail(function, "coordinates", tuple(c.shape), f"invalid shape for coordinate array: the first axis must be "
                                                      f"the input's rank ({x.ndim})")
    if not same:
        c = xp.asarray(to_namespace(np.asarray(c, dtype=np.float64), xp, x))
    return xp.astype(c, _work(xp, x))


@dataclass(frozen=True)
class _Spec:
    """map_coordinates' parsed call (hashable: the static part of one jitted JAX program)."""

    order: int
    mode: str
    cval: float
    out: str
    in_shape: tuple[int, ...]
    shape: tuple[int, ...]  # the coordinates' shape less the first axis: the output's
    filtered: bool
    npad: int

    @property
    def points(self) -> int:
        return int(np.prod(self.shape))

    @property
    def lengths(self) -> list[int]:
        return [n + 2 * self.npad for n in self.in_shape]


def _parse(function: str, input: Any, coordinates: Any, output: Any, order: Any, mode: Any, cval: Any,
           prefilter: Any) -> tuple[Any, Any, Any, _Spec]:
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
    coords = _coordinates(function, xp, x, coordinates)
    if 0 in x.shape:
        fail(function, "input", tuple(x.shape), "must have no empty axis")
    filtered = bool(prefilter) and o > 1
    npad = _NPAD if filtered and m in ("nearest", "grid-constant") else 0
    spec = _Spec(o, m, c, out, tuple(int(n) for n in x.shape), tuple(int(n) for n in coords.shape[1:]), filtered,
                 npad)
    return xp, x, coords, spec


def _border(spec: _Spec) -> int:
    # grid-constant reads cval outside the line: the coefficients get one cval cell around every axis
    return 1 if spec.mode == "grid-constant" else 0


def _grid(spec: _Spec) -> list[int]:
    """The lengths of the coefficient array the taps read (the npad pad, and grid-constant's cval border)."""
    return [n + 2 * _border(spec) for n in spec.lengths]


@lru_cache(maxsize=1024)
def _table(length: int, order: int, mode: str, border: int, stride: int) -> tuple[np.ndarray, int]:
    """The cell (times ``stride``) that each tap position ``t`` in ``[lo, length + order + 2)`` reads, and ``-lo``:
    SciPy's edge mapping of integer taps (ni_interpolation.c) evaluated once on the host, so a point's taps are one
    lookup instead of the mapping per tap. ``border``: cells outside read the cval border."""
    lo = -(order + 3)
    t = np.arange(lo, length + order + 3, dtype=np.float64)
    if border:
        cell = np.clip(t + 1, 0, length + 1)
    elif mode == "nearest":
        cell = np.clip(t, 0, length - 1)
    else:
        cell = np.clip(_map_coordinate(np, t, length, {"constant": "mirror", "wrap": "mirror"}.get(mode, mode)),
                       0, length - 1)  # only undefined inputs (inf) reach outside; SciPy reads out of bounds
    out = cell.astype(np.int64) * stride
    out.setflags(write=False)
    return out, -lo


def _either(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a | b


def _axis_coordinate(xp: Any, cc: Any, spec: _Spec, n: int) -> tuple[Any, Any, Any]:
    """One axis's coordinates mapped by the mode (ni_interpolation.c), the points that are cval whole (or None)
    and those that are NaN (or None)."""
    o, imode = spec.order, _MAP.get(spec.mode, spec.mode)
    cc = cc + float(spec.npad) if spec.npad else cc
    if imode not in ("grid-constant", "nearest"):
        cc = _map_coordinate(xp, cc, n, imode)
        wh = ~(cc > -1.0)
        return xp.where(wh, xp.zeros_like(cc), cc), wh, None
    # a non-finite coordinate: C's (npy_intp) cast of it gives INT_MIN on x86, so order 0 reads the first cell
    # (nearest) or cval (grid-constant), as at -2; higher orders get NaN (set afterwards)
    finite = xp.isfinite(cc)
    return xp.where(finite, cc, xp.full_like(cc, -2.0 if o == 0 else 0.0)), None, ~finite if o > 0 else None


def _index(xp: Any, cell: Any, idt: Any) -> Any:
    # through int32 where the index is unsigned: x86 has a vector float -> int32 conversion, none to uint32
    return xp.astype(xp.astype(cell, xp.int32), idt) if idt == xp.uint32 else xp.astype(cell, idt)


def _tap_cells(xp: Any, tap: Any, spec: _Spec, n: int, stride: int, idt: Any) -> Any:
    """The cell (times ``stride``) that tap position ``tap`` reads: ``_table``'s rule by arithmetic, on int32 taps
    (clipped into int32's range) where one fold is the whole mapping, else on float taps."""
    imode = _MAP.get(spec.mode, spec.mode)
    spline_mode = {"constant": "mirror", "wrap": "mirror"}.get(imode, imode)
    if _border(spec):
        cell = xp.clip(tap + 1, 0, n + 1)
    elif imode == "nearest":
        cell = xp.clip(tap, 0, n - 1)
    elif xp.isdtype(tap.dtype, "integral"):  # int taps come only where _one_fold holds
        if spline_mode == "mirror":
            a = xp.abs(tap)
            cell = xp.minimum(a, 2 * (n - 1) - a)
        elif spline_mode == "reflect":
            a = xp.where(tap < 0, -1 - tap, tap)
            cell = xp.minimum(a, 2 * n - 1 - a)
        elif n & (n - 1) == 0:  # grid-wrap with a power-of-two period: the low bits (always in the line)
            return _index(xp, tap & (n - 1), idt) * stride
        else:  # grid-wrap
            cell = xp.where(tap < 0, tap + n, xp.where(tap >= n, tap - n, tap))
        cell = xp.clip(cell, 0, n - 1)
    else:
        cell = xp.clip(_map_coordinate(xp, tap, n, spline_mode), 0.0, float(n - 1))
    return _index(xp, cell, idt) * stride


# the most taps per point that JAX takes one at a time (fused by XLA into one loop; beyond, one stacked gather)
_JAX_TAPS = 64


def _tap_at_a_time(spec: _Spec, coords: Any) -> bool:
    """Whether the points are sampled by ``_sample_taps``: one fused XLA loop, all points at once."""
    return is_jax_array(coords) and (spec.order + 1) ** len(spec.in_shape) <= _JAX_TAPS


def _one_fold(spec: _Spec, n: int) -> bool:
    """Whether one fold (or one period) is a mapped coordinate's whole tap mapping on a line of ``n`` cells: the
    mapped coordinates lie in (-1, n], so the taps overhang the line by at most order + 2 cells."""
    return n >= 2 * spec.order + 6


def _grid_wrap_reduced(xp: Any, x: Any, n: float) -> Any:
    """grid-wrap's mapped coordinate up to a whole number of periods, which is all the taps' one fold needs (JAX):
    its cell modulo ``n`` and its fraction are SciPy's bit for bit where ``|x| < 2**52``. ``x - n * q`` is exact for
    any whole ``q`` whose result is no larger than ``x`` (an off-by-one ``q`` from the multiplication only moves
    it by ``n``), and on ``(-n, 0)``, the one place where it is larger, it is SciPy's own ``x + n``."""
    return x - n * xp.floor(x * (1.0 / n))


def _sample_taps(spec: _Spec, coef: Any, coords: Any) -> Any:
    """``_sample_block`` as XLA fuses it best: each tap's cells by arithmetic and its own gather of the points,
    weighted and summed (one loop over the points instead of stacked intermediates). Every operation counts in
    that loop (XLA runs it scalar for the gathers): one float-to-int conversion per axis, the taps' folds in int32,
    grid-wrap's mapping as one multiply-floor, and no NaN masks where NaN weights already give SciPy's NaN."""

    xp = namespace(coords)
    o, nd, k = spec.order, len(spec.in_shape), spec.order + 1
    lengths, grid = spec.lengths, _grid(spec)
    strides = [int(np.prod(grid[d + 1:])) for d in range(nd)]
    # unsigned: JAX's indexing then adds no wrap of negative indices (three ops per gather)
    idt = xp.uint32 if int(np.prod(grid)) < 2**32 else index_dtype(xp, coords)
    whole = nan = None
    cells: list[list[Any]] = []
    weights: list[list[Any]] = []
    for d in range(nd):
        n = lengths[d]
        nan_weights = o > 0 and spec.mode in ("nearest", "grid-constant")
        if nan_weights:
            # a non-finite coordinate gets NaN weights, so the point is NaN as in SciPy with no mask; its taps
            # read from 0 (any cell would do)
            cc = coords[d, ...] + float(spec.npad) if spec.npad else coords[d, ...]
            wh = isn = None
        elif spec.mode == "grid-wrap" and _one_fold(spec, n):
            cc, isn = _grid_wrap_reduced(xp, coords[d, ...], float(n)), None
            wh = ~(cc > -1.0)  # NaN: an infinite coordinate
            cc = xp.where(wh, xp.zeros_like(cc), cc)
        else:
            cc, wh, isn = _axis_coordinate(xp, coords[d, ...], spec, n)
        whole, nan = _either(whole, wh), _either(nan, isn)
        start = xp.floor(cc) if o & 1 else xp.floor(cc + 0.5)
        if nan_weights:
            start = xp.where(xp.isfinite(start), start, xp.zeros_like(start))
        if o > 1:
            start = start - float(o // 2)
        if _border(spec) or spec.mode == "nearest" or _one_fold(spec, n):
            # int32 taps: one conversion per axis, integer adds and clips per tap (the clip to +-(order + 3)
            # beyond the line changes no cell: every tap past it reads the edge, the cval border or is folded)
            first = xp.astype(xp.clip(start, -float(o + 3), float(n + o + 3)), xp.int32)
            cells.append([_tap_cells(xp, first + j, spec, n, strides[d], idt) for j in range(k)])
        else:
            cells.append([_tap_cells(xp, start + float(j), spec, n, strides[d], idt) for j in range(k)])
        weights.append(_weights(xp, cc, o) if o > 0 else [])
    t = None
    for combo in itertools.product(range(k), repeat=nd):
        idx = cells[0][combo[0]]
        for d in range(1, nd):
            idx = idx + cells[d][combo[d]]
        # the cells are clipped into the grid: a gather without bounds handling (jnp.take fills by default)
        v = coef.at[idx].get(mode="promise_in_bounds")
        if o > 0:
            for d in range(nd):
                v = v * weights[d][combo[d]]
        t = v if t is None else t + v
    work = coords.dtype
    if whole is not None:
        t = xp.where(whole, xp.asarray(spec.cval, dtype=work, **on(coef)), t)
    if nan is not None:
        t = xp.where(nan, xp.asarray(float("nan"), dtype=work, **on(coef)), t)
    return t


def _points(xp: Any, coords: Any, spec: _Spec) -> tuple[Any, list[Any], Any, Any]:
    """Per point: the flat cells of its (order + 1) ** ndim taps (K, P) in the ``_grid`` array, the per-axis
    weights (k, P), the points that are cval whole and those that are NaN. The points are the last axis: every
    elementwise step runs along them (contiguous), not along the few taps."""
    o, m, nd, k = spec.order, spec.mode, len(spec.in_shape), spec.order + 1
    lengths, grid = spec.lengths, _grid(spec)
    p = int(np.prod(coords.shape[1:]))
    flat = xp.reshape(coords, (nd, p))
    imode = _MAP.get(m, m)
    strides = [int(np.prod(grid[d + 1:])) for d in range(nd)]
    idt = index_dtype(xp, coords)
    offsets = xp.asarray(np.arange(k), dtype=idt, **on(coords))
    lin = whole = nan = None
    weights = []
    for d in range(nd):
        n = lengths[d]
        cc, wh, isn = _axis_coordinate(xp, flat[d, ...], spec, n)
        whole = _either(whole, wh)
        nan = _either(nan, isn)
        table, shift = _table(n, o, imode, _border(spec), strides[d])
        start = (xp.floor(cc) if o & 1 else xp.floor(cc + 0.5)) - float(o // 2 - shift)
        start = xp.astype(xp.clip(start, 0.0, float(table.shape[0] - k)), idt)
        cells = take(xp, xp.asarray(to_namespace(table, xp, coords, idt)),
                     xp.reshape(offsets[:, None] + start[None, :], (-1,)), 0)
        expand = tuple(slice(None) if e == d else None for e in range(nd)) + (slice(None),)
        term = xp.reshape(cells, (k, p))[expand]
        lin = term if lin is None else lin + term
        if o > 0:
            weights.append(xp.stack(_weights(xp, cc, o), axis=0))
    assert lin is not None
    return xp.reshape(lin, (k ** nd, p)), weights, whole, nan


def _coefficients(xp: Any, x: Any, spec: _Spec) -> Any:
    v = xp.astype(x, _work(xp, x))
    if spec.filtered:
        pad = "nearest" if spec.mode == "nearest" else "constant"
        for a in range(v.ndim):
            v = _filters.extend(xp, v, a, spec.npad, spec.npad, pad, spec.cval)
        v = _prefilter_axes(xp, v, list(range(v.ndim)), spec.order, KIND[spec.mode], None)
    return v


def _coefficients_t(xp: Any, g: Any, spec: _Spec) -> Any:
    # the transpose of _coefficients: the prefilter's transposed tables in reverse, then the pad folded back
    if spec.filtered:
        g = _prefilter_axes_t(xp, g, list(range(g.ndim)), spec.order, KIND[spec.mode])
        pad = "nearest" if spec.mode == "nearest" else "constant"
        for a in reversed(range(g.ndim)):
            g = _filters.fold_back(xp, g, a, spec.in_shape[a], spec.npad, spec.npad, pad)
    return g


def _resample_t(g: Any, axis: int, plan: Any) -> Any:
    """The transpose of ``resample(g, [axis], [plan])`` (a square plan): the transposed table, gathered."""
    from ...._compat import namespace as _ns
    from ....autodiff import linear
    from ..._common import _separable

    xp = _ns(g)
    order = [a for a in range(g.ndim) if a != axis] + [axis]
    view = xp.permute_dims(g, tuple(order)) if axis != g.ndim - 1 else g
    y = linear(_separable((plan.length,), (plan.out,), (plan,)), view, transpose=True)
    return xp.permute_dims(y, tuple(int(i) for i in np.argsort(order))) if axis != g.ndim - 1 else y


# points per block of the gather: about 2**18 taps (measured fastest on NumPy: the temporaries stay in cache)
_TAPS_PER_BLOCK = 1 << 18


def _flat(xp: Any, coef: Any, spec: _Spec) -> Any:
    """The coefficients as the taps read them: flat, with grid-constant's cval border."""
    if _border(spec):
        for a in range(coef.ndim):
            coef = _filters.extend(xp, coef, a, 1, 1, "constant", spec.cval)
    return xp.reshape(coef, (-1,))


def _sample_block(spec: _Spec, coef: Any, coords: Any) -> Any:
    xp = namespace(coords)
    nd, k = len(spec.in_shape), spec.order + 1
    if _tap_at_a_time(spec, coords):
        return _sample_taps(spec, coef, coords)
    work = coords.dtype
    lin, weights, whole, nan = _points(xp, coords, spec)
    p = int(lin.shape[1])
    t = xp.reshape(take(xp, coef, xp.reshape(lin, (-1,)), 0), (k,) * nd + (p,))
    for w in weights:  # the leading tap axis at a time, as k contiguous slices (SciPy: per tap; rounding only)
        acc = t[0, ...] * w[0, ...]
        for i in range(1, k):
            acc = acc + t[i, ...] * w[i, ...]
        t = acc
    t = xp.reshape(t, (p,))
    if whole is not None:
        t = xp.where(whole, xp.asarray(spec.cval, dtype=work, **on(coef)), t)
    if nan is not None:
        t = xp.where(nan, xp.asarray(float("nan"), dtype=work, **on(coef)), t)
    return t


def _sample(spec: _Spec, coef: Any, coords: Any) -> Any:
    """The interpolant of the flat coefficients ``coef`` (``_flat``) at ``coords``, in the work dtype (P,): gathers
    at cells that depend on the coordinates only piecewise, so natively differentiable w.r.t. the coordinates
    through the weights (no scatter: the gather's source is held constant). Points go in blocks (peak memory)."""
    xp = namespace(coords)
    nd = len(spec.in_shape)
    flat = xp.reshape(coords, (nd, spec.points))
    step = max(1, _TAPS_PER_BLOCK // (spec.order + 1) ** nd)
    # JAX's tap-at-a-time program is one fused loop with no per-tap intermediates: blocks would only add a
    # concatenation (a copy of the output) and a loop per block
    if spec.points <= step or _tap_at_a_time(spec, coords):
        return _sample_block(spec, coef, flat)
    return xp.concat([_sample_block(spec, coef, flat[:, i:min(i + step, spec.points)])
                      for i in range(0, spec.points, step)])


def _forward(spec: _Spec, x: Any, coords: Any) -> Any:
    xp = namespace(x)
    t = _sample(spec, _flat(xp, _coefficients(xp, x, spec), spec), coords)
    return xp.reshape(_round_to(xp, t, spec.out), spec.shape)


def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3, mode: str = "constant",
                    cval: float = 0.0, prefilter: bool = True) -> Any:
    """``input``'s spline interpolant at ``coordinates`` (one row per input axis), as
    ``scipy.ndimage.map_coordinates``.

    >>> map_coordinates(np.arange(12.0).reshape(4, 3), np.array([[0.5, 2.0], [0.5, 1.0]]), order=1).tolist()
    [2.0, 7.0]
    """
    xp, x, coords, spec = _parse("map_coordinates", input, coordinates, output, order, mode, cval, prefilter)
    if spec.points == 0:
        return xp.zeros(spec.shape, dtype=dtype_of(xp, spec.out), **on(x))
    if is_torch_array(x) and (x.requires_grad or coords.requires_grad):
        return _torch_functions()[0].apply(x, coords, spec)
    if is_jax_array(x):
        return _jax_function(spec)(x, coords)  # one jitted program (eager ops would compile one by one)
    return _forward(spec, x, coords)


# ------------------------------------------------------------------------------------------ explicit backward
# The VJPs w.r.t. the input, for every backend: the prefilter's transposed tap tables (gathers), and the taps'
# transpose routed by sorting (kernels.cells.Cells.route: no scatter-add, bit-identical repeats). The casts to the
# output dtype are taken as the identity (float outputs only); the coordinates get no gradient.


def _grad(function: str, xp: Any, g: Any, x: Any, out: str, shape: tuple[int, ...]) -> Any:
    if dtype_name(xp, x.dtype) not in ("float32", "float64") or out not in ("float32", "float64"):
        fail(function, "input", dtype_name(xp, x.dtype), "the backward needs a float input and output dtype",
             TypeError)
    if tuple(g.shape) != shape:
        fail(function, "grad_output", tuple(g.shape), f"must have the output's shape {shape}")
    return xp.astype(g, _work(xp, x))


def spline_filter1d_backward(grad_output: Any, input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                             mode: str = "mirror") -> Any:
    """The gradient of ``spline_filter1d`` w.r.t. ``input``: the transposed prefilter along ``axis``.

    >>> spline_filter1d_backward(np.array([1.0, 0.0, 0.0]), np.zeros(3), 3).round(6).tolist()
    [1.75, -1.0, 0.25]
    """
    function = "spline_filter1d_backward"
    xp, x = _as_array(input)
    _input(function, x, xp, True)
    out = _output(function, xp, output, "float64")
    o = _order(function, order, 0)
    if x.ndim == 0:
        fail(function, "input", 0, "must have at least one axis")
    a = _axis(function, axis, x.ndim)
    m = _mode(function, mode)
    g = _grad(function, xp, xp.asarray(grad_output) if not hasattr(grad_output, "shape") else grad_output, x, out,
              tuple(x.shape))
    if 0 not in x.shape:
        g = _prefilter_axes_t(xp, g, [a], o, KIND[m])
    return xp.astype(g, x.dtype)


def spline_filter_backward(grad_output: Any, input: Any, order: int = 3, output: Any = np.float64,
                           mode: str = "mirror") -> Any:
    """The gradient of ``spline_filter`` w.r.t. ``input``: the transposed prefilters, last axis first.

    >>> spline_filter_backward(np.ones((2, 2)), np.zeros((2, 2)), 2).round(6).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    function = "spline_filter_backward"
    xp, x = _as_array(input)
    _input(function, x, xp, True)
    out = _output(function, xp, output, "float64")
    o = _order(function, order, 2)
    m = _mode(function, mode)
    g = _grad(function, xp, grad_output, x, out, tuple(x.shape))
    if x.ndim and 0 not in x.shape:
        g = _prefilter_axes_t(xp, g, list(range(x.ndim)), o, KIND[m])
    return xp.astype(g, x.dtype)


def _reads(xp: Any, spec: _Spec, g: Any, coords: Any) -> tuple[Any, Any]:
    """The cotangent each tap reads back (1, K * P) and its flat cell (1, K * P), for the points ``coords``
    (nd, P) and their cotangents ``g`` (P,)."""
    nd, k = len(spec.in_shape), spec.order + 1
    lin, weights, whole, _ = _points(xp, coords, spec)
    p = int(lin.shape[1])
    if whole is not None:
        g = xp.where(whole, xp.zeros_like(g), g)
    w = xp.reshape(g, (1,) * nd + (p,))
    for d, wd in enumerate(weights):
        w = w * xp.reshape(wd, tuple(k if e == d else 1 for e in range(nd)) + (p,))
    w = xp.broadcast_to(w, (k,) * nd + (p,))
    return xp.reshape(w, (1, k ** nd * p)), xp.reshape(lin, (1, k ** nd * p))


def _backward(spec: _Spec, g: Any, x: Any, coords: Any, coords_t: Any = None) -> Any:
    """The input gradient for cotangent ``g``; given ``coords_t``, its derivative along the coordinates instead
    (the taps' weights replaced by their derivative along ``coords_t``: torch's forward mode, eager)."""
    from ....kernels.cells import Cells

    xp = namespace(x)
    nd, taps = x.ndim, (spec.order + 1) ** x.ndim
    grid = _grid(spec)
    cells = int(np.prod(grid))
    flat, gf = xp.reshape(coords, (nd, spec.points)), xp.reshape(g, (spec.points,))
    mod = writable_module(g)
    if is_jax_array(g) and coords_t is None:
        # JAX: roi_align's route primitive (the transpose of select: differentiable, every order, no scatter)
        from ....families.roi_align.jax_taps import route as jax_route

        taps, w, whole, _ = _jax_taps(spec, coords)
        if whole is not None:
            gf = xp.where(whole, xp.zeros_like(gf), gf)
        routed = xp.reshape(jax_route(gf[:, None], taps, w, cells), (1, cells))
    elif coords_t is not None:
        import torch.func

        ct = xp.reshape(coords_t, (nd, spec.points))
        idx = _reads(xp, spec, gf, flat)[1]
        reads = torch.func.jvp(lambda c: _reads(xp, spec, gf, c)[0], (flat,), (ct,))[1]
        routed = Cells(cells, spec.points * taps).route(reads, idx)
    elif mod is not None and not is_traced(g) and spec.points * taps > _TAPS_PER_BLOCK:
        # eager and writable: a block of points at a time, each block's sums added into the cells (peak memory)
        routed = xp.zeros((1, cells), dtype=g.dtype, **on(g))
        step = max(1, _TAPS_PER_BLOCK // taps)
        for i in range(0, spec.points, step):
            j = min(i + step, spec.points)
            reads, idx = _reads(xp, spec, gf[i:j], flat[:, i:j])
            routed = Cells(cells, int(reads.shape[1])).route(reads, idx, into=routed)
    else:
        reads, idx = _reads(xp, spec, gf, flat)
        route = Cells(cells, spec.points * taps).route
        if is_dask_array(reads):  # one plane: routed whole, in one block
            import dask.array as da

            routed = da.map_blocks(route, reads.rechunk(-1), idx.rechunk(-1), chunks=((1,), (cells,)),
                                   dtype=reads.dtype, meta=np.empty((0, 0), dtype=reads.dtype))
        else:
            routed = route(reads, idx)
    routed = xp.reshape(routed, tuple(grid))
    if _border(spec):  # the cval border's cotangent goes to cval
        routed = routed[tuple(slice(1, n + 1) for n in spec.lengths)]
    return xp.astype(_coefficients_t(xp, routed, spec), x.dtype)


def map_coordinates_backward(grad_output: Any, input: Any, coordinates: Any, output: Any = None, order: int = 3,
                             mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    """The gradient of ``map_coordinates`` w.r.t. ``input`` (cval and the coordinates get none): each point's
    cotangent times its tap weights, summed into the coefficients it read (sorted, no scatter-add), then the
    transposed prefilter.

    >>> map_coordinates_backward(np.array([1.0]), np.zeros(3), np.array([[0.25]]), order=1).tolist()
    [0.75, 0.25, 0.0]
    """
    function = "map_coordinates_backward"
    xp, x, coords, spec = _parse(function, input, coordinates, output, order, mode, cval, prefilter)
    g = _grad(function, xp, grad_output, x, spec.out, spec.shape)
    if spec.points == 0:
        return xp.zeros(tuple(x.shape), dtype=x.dtype, **on(x))
    return compose(_backward, (spec,), g, x, coords)


# ------------------------------------------------------------------------------------------ autodiff bindings
# map_coordinates is affine in the input: its VJP is _backward (routed, no scatter-add) and _backward's VJP is the
# forward with cval = 0 (its linear part), so the pair gives every order w.r.t. the input. The coordinates'
# gradient is native autodiff of the weights with the gathered coefficients held constant (first order only).


@lru_cache(maxsize=1)
def _torch_functions() -> tuple[Any, Any]:
    import torch

    def each(info: Any, in_dims: tuple[Any, ...], fn: Any, *tensors: Any) -> tuple[Any, int]:
        # torch.func.vmap: the call on each batch entry (the routing reads values, which a batched tensor refuses)
        pick = [(t if d is None else t.select(d, b)) for b in range(info.batch_size)
                for t, d in zip(tensors, in_dims)]
        n = len(tensors)
        return torch.stack([fn(*pick[b * n:(b + 1) * n]) for b in range(info.batch_size)]), 0

    class MapCoordinates(torch.autograd.Function):
        @staticmethod
        def forward(x: Any, coords: Any, spec: _Spec) -> Any:
            return _forward(spec, x, coords)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            x, coords, ctx.spec = inputs
            ctx.save_for_backward(x, coords)
            ctx.save_for_forward(x, coords)

        @staticmethod
        def backward(ctx: Any, g: Any) -> tuple[Any, Any, None]:
            x, coords = ctx.saved_tensors
            grad_x = grad_c = None
            if ctx.needs_input_grad[0]:
                x0 = g.new_zeros(tuple(x.shape))  # _backward reads only the input's shape and dtype
                grad_x = MapCoordinatesT.apply(g, x0, coords, ctx.spec)
            if ctx.needs_input_grad[1]:
                grad_c = _coordinate_grad_torch(ctx.spec, x, coords, g)
            return grad_x, grad_c, None

        @staticmethod
        def jvp(ctx: Any, x_t: Any, coords_t: Any, _: Any) -> Any:
            # forward mode: the linear part along x_t, and the weights' derivative along coords_t
            x, coords = ctx.saved_tensors
            t = None if x_t is None else MapCoordinates.apply(x_t, coords, _linear_part(ctx.spec))
            if coords_t is not None:
                c = _coordinate_jvp_torch(ctx.spec, x, coords, coords_t)
                t = c if t is None else t + c
            return t

        @staticmethod
        def vmap(info: Any, in_dims: tuple[Any, ...], x: Any, coords: Any, spec: _Spec) -> tuple[Any, int]:
            return each(info, in_dims[:2], lambda a, c: MapCoordinates.apply(a, c, spec), x, coords)

    class MapCoordinatesT(torch.autograd.Function):
        @staticmethod
        def forward(g: Any, x0: Any, coords: Any, spec: _Spec) -> Any:
            return _backward(spec, g, x0, coords)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            g, x0, coords, spec = inputs
            ctx.save_for_backward(coords)
            ctx.save_for_forward(x0, coords)
            ctx.g = g.detach()
            ctx.spec, ctx.forward_spec = _linear_part(spec), spec

        @staticmethod
        def backward(ctx: Any, gg: Any) -> tuple[Any, None, Any, None]:
            # the input gradient is linear in g (its transpose: the forward's linear part) and depends on the
            # coordinates through the weights: <g, d/dc linear forward(gg, c)>, the coordinate gradient
            (coords,) = ctx.saved_tensors
            grad_g = MapCoordinates.apply(gg, coords, ctx.spec) if ctx.needs_input_grad[0] else None
            grad_c = _coordinate_grad_torch(ctx.spec, gg, coords, ctx.g) if ctx.needs_input_grad[2] else None
            return grad_g, None, grad_c, None

        @staticmethod
        def jvp(ctx: Any, g_t: Any, x0_t: Any, coords_t: Any, _: Any) -> Any:
            x0, coords = ctx.saved_tensors
            t = None if g_t is None else MapCoordinatesT.apply(g_t, x0, coords, ctx.forward_spec)
            if coords_t is not None:  # the gradient's derivative along the coordinates (g held)
                c = MapCoordinatesTC.apply(ctx.g, x0, coords, coords_t, ctx.forward_spec)
                t = c if t is None else t + c
            return t

        @staticmethod
        def vmap(info: Any, in_dims: tuple[Any, ...], g: Any, x0: Any, coords: Any, spec: _Spec) -> tuple[Any, int]:
            return each(info, in_dims[:3], lambda a, b, c: MapCoordinatesT.apply(a, b, c, spec), g, x0, coords)

    class MapCoordinatesTC(torch.autograd.Function):
        """The input gradient's derivative along coordinate tangents (forward mode through the backward)."""

        @staticmethod
        def forward(g: Any, x0: Any, coords: Any, coords_t: Any, spec: _Spec) -> Any:
            return _backward(spec, g, x0, coords, coords_t)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            pass

        @staticmethod
        def vmap(info: Any, in_dims: tuple[Any, ...], g: Any, x0: Any, coords: Any, coords_t: Any,
                 spec: _Spec) -> tuple[Any, int]:
            return each(info, in_dims[:4], lambda a, b, c, d: MapCoordinatesTC.apply(a, b, c, d, spec), g, x0,
                        coords, coords_t)

    return MapCoordinates, MapCoordinatesT


def _coordinate_grad_torch(spec: _Spec, x: Any, coords: Any, g: Any) -> Any:
    # the weights' derivative by native autograd, the coefficients held constant (first order only)
    import torch
    import torch.func

    xp = namespace(x)
    # not detached: under create_graph or an outer torch.func transform the gradient stays differentiable
    coef = _flat(xp, _coefficients(xp, x, spec), spec)
    t, pull = torch.func.vjp(lambda c: _sample(spec, coef, c), coords)  # type: ignore[misc]
    (grad,) = pull(xp.reshape(g, t.shape).to(t.dtype))
    return grad.to(coords.dtype)


def _coordinate_jvp_torch(spec: _Spec, x: Any, coords: Any, coords_t: Any) -> Any:
    # the weights' derivative along coords_t by forward-mode autodiff, the coefficients held constant
    import torch.func

    xp = namespace(x)
    coef = _flat(xp, _coefficients(xp, x.detach(), spec), spec)
    _, t = torch.func.jvp(  # type: ignore[misc]
        lambda c: _sample(spec, coef, c), (coords.detach(),), (coords_t.to(coords.dtype),))
    return xp.reshape(t, spec.shape).to(dtype_of(xp, spec.out))


def _linear_part(spec: _Spec) -> _Spec:
    return _Spec(spec.order, spec.mode, 0.0, spec.out, spec.in_shape, spec.shape, spec.filtered, spec.npad)


def _jax_taps(spec: _Spec, coords: Any) -> tuple[Any, Any, Any, Any]:
    """Per point (P) and tap (K): the flat cell read and the tap's weight (the per-axis weights' product, a
    function of the coordinates), the points that are cval whole and those that are NaN (JAX)."""
    import jax.numpy as jnp

    nd, k = len(spec.in_shape), spec.order + 1
    lin, weights, whole, nan = _points(jnp, jnp.reshape(coords, (nd, spec.points)), spec)
    w = jnp.ones((1, spec.points), dtype=coords.dtype)
    for d, wd in enumerate(weights):
        w = w * wd[tuple(slice(None) if e == d else None for e in range(nd)) + (slice(None),)]
    w = jnp.reshape(jnp.broadcast_to(w, (k,) * nd + (spec.points,)), (k ** nd, spec.points))
    return lin.T, w.T, whole, nan


@lru_cache(maxsize=256)
def _jax_function(spec: _Spec) -> Any:
    """map_coordinates on JAX: the primal by ``_forward`` (one tap at a time, which XLA fuses), its JVP through
    roi_align's ``select`` primitive (the taps read with their weights: linear in the coefficients and in the
    weights, its transpose the sorted ``route``), so reverse mode, forward mode, vmap and every order w.r.t. the
    input and the coordinates come from JAX without a scatter."""
    import jax
    import jax.numpy as jnp

    from ....families.roi_align.jax_taps import select

    if spec.out not in ("float32", "float64"):  # integer outputs: no derivative
        return jax.jit(lambda x, coords: _forward(spec, x, coords))

    def coefficients(x: Any) -> Any:
        return _flat(jnp, _coefficients(jnp, x, spec), spec)

    @jax.custom_jvp
    def forward(x: Any, coords: Any) -> Any:
        return _forward(spec, x, coords)

    @forward.defjvp
    def tangent(primals: Any, tangents: Any) -> tuple[Any, Any]:
        x, coords = primals
        xt, ct = tangents
        coef, coef_t = jax.jvp(coefficients, (x,), (xt.astype(x.dtype),))
        def weights(c: Any) -> tuple[Any, tuple[Any, Any, Any]]:
            cells, w, whole, nan = _jax_taps(spec, c)
            return w, (cells, whole, nan)

        # the weights and their derivative along ct; the cells and masks are piecewise constant
        w, w_t, (cells, whole, nan) = jax.jvp(
            weights, (coords,), (ct.astype(coords.dtype),), has_aux=True)
        t = select(coef_t[:, None], cells, w)[:, 0] + select(coef[:, None], cells, w_t)[:, 0]
        if whole is not None:
            t = jnp.where(whole, jnp.zeros((), t.dtype), t)
        if nan is not None:
            t = jnp.where(nan, jnp.full((), jnp.nan, t.dtype), t)
        return forward(x, coords), jnp.reshape(t, spec.shape).astype(spec.out)

    return jax.jit(forward)
