"""grid_sample's sampling, written once: the plan of a call, torch's coordinate rules (unnormalise, pad by
border or reflection, the bicubic taps; the card's notes state them), every tap of a point in one broadcast, and
chunks of points bounded by memory. The reads at data-dependent cells and their scatter-free transpose are
``kernels.cells.Cells`` through ``autodiff.max_select`` / ``autodiff.max_backward`` (a gather at integer cells and
its transpose, the same pair as the max family's); everything else (coordinates, weights) is plain array arithmetic
that torch and JAX differentiate natively, so the input gradient is the segmented sum of ``Cells.route`` on every
backend and under every transform, and derivatives of any order w.r.t. both x and grid exist.
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..._compat import (
    device,
    dtype_name,
    index_dtype,
    is_jax_array,
    is_symbolic,
    is_torch_array,
    namespace,
    on,
    to_namespace,
)
from ...autodiff import max_backward, max_select, untracked
from ...kernels import paths
from ...kernels.cells import Cells

_WIDE = paths.launches(
    "grid_sample.wide-chunks", "where each operation is a kernel launch: points sampled in chunks as large as the "
    "memory bound allows (fewer chunks, fewer operations; the gradient's chunks add in another order)")


@dataclass(frozen=True)
class _Plan:
    """Everything static about one call (hashable: it keys the jitted programs on JAX)."""

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]
    mode: str
    padding: str
    align: bool
    itemsize: int = 8  # bytes per item of the caller's arrays (what the GPU paths' chunks are measured against)

    @property
    def n(self) -> int:
        return len(self.in_spatial)

    @property
    def points(self) -> int:
        return math.prod(self.out_spatial)

    @property
    def per_axis(self) -> int:
        return {"nearest": 1, "bilinear": 2, "bicubic": 4}[self.mode]

    @property
    def taps(self) -> int:
        return self.per_axis ** self.n


# --- coordinates: torch's rules (the card's notes) -----------------------------------------------------------
# All grid points of a call are processed at once, every tap of a point in one broadcast: arrays
# (N, 1, M, R, T, n) of rows R (1; with the grid gradient n + 1: the weights, then at row kk + 1 their factors
# for d/d(coordinate kk)), tap tuples T and grid coordinates k (x, y[, z], reading spatial axis n - 1 - k);
# the per-coordinate and per-tuple constants broadcast along them. Every operation is elementwise as it was
# per tap, so the values are those of a loop over the taps bit for bit.

# torch's cubic convolution weights of taps -1, 0, 1, 2, read at distances t + 1, t, 1 - t, 2 - t (far, near,
# near, far): each ((a * v + b) * v + c) * v + d with the coefficients torch's formulas add in that order (near's c
# is 0: adding it changes no bit, as 1 is added last); their derivatives in t, (a' * v + b') * v (+ c' for far)
# negated for taps 1 and 2 (whose distance falls as t grows), by the same evaluation with a = 0 (0 * v + b' is
# b') and the sign in the coefficients (rounding is symmetric; near's c' is -0.0, which changes no bit)
_A = -0.75
_NEAR, _FAR = (_A + 2, -(_A + 3), 0.0, 1.0), (_A, -5 * _A, 8 * _A, -4 * _A)
_DNEAR, _DFAR = (3 * (_A + 2), -2 * (_A + 3), 0.0), (3 * _A, -10 * _A, 8 * _A)
_CUBIC = np.array([_FAR, _NEAR, _NEAR, _FAR]).T  # (coefficient, tap)
_DCUBIC = np.array([(0.0, s * a, s * b, s * c if c else -0.0)
                    for s, (a, b, c) in zip((1, 1, -1, -1), (_DFAR, _DNEAR, _DNEAR, _DFAR))]).T


@lru_cache(maxsize=512)
def _host_constants(plan: _Plan) -> dict[str, np.ndarray]:
    """Per grid coordinate k: the axis size, torch's unnormalisation and reflection constants, the stride of
    its spatial axis in the flat plane and a value that reads outside (its term >= P); per tap tuple t (the
    order of itertools.product, the last coordinate outermost) and coordinate k (T, n): the tap's step from
    floor(c) and its weight's coefficients; float64 (cast to the compute dtype where used), int64 or bool."""
    n, P = plan.n, math.prod(plan.in_spatial)
    L = np.array(plan.in_spatial[::-1], dtype=np.float64)
    strides = np.array([math.prod(plan.in_spatial[a + 1:]) for a in range(n)][::-1], dtype=np.int64)
    degenerate = (L <= 1) if plan.align else np.zeros(n, bool)  # reflects to 0 with derivative 0
    span = np.where(degenerate, 1.0, (L - 1) if plan.align else L)  # 1: a safe divisor where degenerate
    period = np.where(degenerate, 1.0, 2 * span)  # bicubic's integer taps: min(r, mirror - r), r = tap mod period
    j = np.array(list(itertools.product(range(plan.per_axis), repeat=n)), dtype=np.int64).reshape(-1, n)[:, ::-1]
    rows = np.arange(n + 1)[:, None, None] == np.arange(1, n + 1)  # (R, 1, n): row r differentiates coordinate r - 1
    if plan.mode == "bicubic":  # taps -1 .. 2 at distances t * sign + off
        tables = dict(steps=j - 1.0, sign=np.array([1.0, 1, -1, -1])[j], off=np.array([1.0, 0, 1, 2])[j])
        for i in range(4):
            tables[f"cubic{i}"], tables[f"dcubic{i}"] = _CUBIC[i][j], np.where(rows, _DCUBIC[i][j], _CUBIC[i][j])
    else:  # taps 0, 1 with weights t * sign + off (1 - t and t) and slopes sign
        tables = dict(steps=j + 0.0, sign=np.array([-1.0, 1])[j], off=np.array([1.0, 0])[j], rows=rows)
    out = dict(size=L, hi=L - 1, scale=(L - 1) / 2 if plan.align else L / 2,
               lo=np.full(n, 0.0 if plan.align else -0.5), span=span, twice=2 * span, degenerate=degenerate,
               period=period, mirror=period - (0 if plan.align else 1), stride=strides,
               outside=np.array(P, dtype=np.int64), zero=np.zeros(()),
               # a power of two >= P / stride, exact in every float dtype: its term in a tap's cell is >= P
               poison=np.array([float(1 << (int(P // s) - 1).bit_length()) for s in strides]), **tables)
    for a in out.values():
        a.flags.writeable = False
    return out


_DEVICE_CONSTANTS: dict[Any, dict[str, Any]] = {}


def _constants(xp: Any, plan: _Plan, like: Any) -> dict[str, Any]:
    """The constants on ``like``'s device and dtype, once per (plan, dtype, device) outside a JAX trace."""
    key = (plan, type(like), str(like.dtype), str(device(like)))
    traced = is_jax_array(like) or is_symbolic(like)  # constants of the trace, not to be kept
    hit = None if traced else _DEVICE_CONSTANTS.get(key)
    if hit is not None:
        return hit
    itype = index_dtype(xp, like)
    out = {k: to_namespace(v, xp, like, None if v.dtype == bool else itype if v.dtype.kind == "i" else like.dtype)
           for k, v in _host_constants(plan).items()}
    if not traced and len(_DEVICE_CONSTANTS) < 1024:
        _DEVICE_CONSTANTS[key] = out
    return out


def _fmod(xp: Any, a: Any, b: Any) -> Any:
    """fmod for a >= 0, exactly (torch's remainder is a - b * floor(a / b), which rounds)."""
    if is_torch_array(a):
        import torch

        return torch.fmod(a, b)
    return xp.remainder(a, b)


def _unnormalise(g: Any, k: dict[str, Any], plan: _Plan) -> Any:
    if plan.n == 2:  # torch's vectorised 2-d kernel
        return (g + 1) * k["scale"] if plan.align else (g + 1) * k["scale"] - 0.5
    return ((g + 1) / 2) * k["hi"] if plan.align else ((g + 1) * k["size"] - 1) / 2  # its scalar 3-d kernel


def _bound(xp: Any, c: Any, k: dict[str, Any]) -> Any:
    """c clipped to [0, L - 1], one operation where the library has one (its derivative at the bounds is not
    torch's)."""
    if is_torch_array(c):
        return sys.modules["torch"].clamp(c, k["zero"], k["hi"])
    if hasattr(xp, "clip"):
        return xp.clip(c, k["zero"], k["hi"])
    return xp.where(c <= 0, 0.0, xp.where(c >= k["hi"], k["hi"], c))


def _clip(xp: Any, c: Any, k: dict[str, Any], grads: bool) -> tuple[Any, Any]:
    """c clipped to [0, L - 1], and with ``grads`` where its derivative is 1 (strictly inside: torch counts the
    bounds as out of bounds for the gradient)."""
    inside = (c > 0) & (c < k["hi"]) if grads else None
    if (is_torch_array(c) and untracked(c)) or not (is_jax_array(c) or is_torch_array(c)):  # not differentiated
        return _bound(xp, c, k), inside
    return xp.where(c <= 0, 0.0, xp.where(c >= k["hi"], k["hi"], c)), inside


def _reflect(xp: Any, c: Any, k: dict[str, Any], plan: _Plan, grads: bool) -> tuple[Any, Any]:
    """Reflection about [0, L-1] (align) or [-0.5, L-0.5]; the value, and with ``grads`` where its derivative
    is -1."""
    cm = c - k["lo"]
    neg = cm < 0
    a = xp.where(neg, -cm, cm)  # not abs: its derivative at 0 is 0, torch's is +1
    if plan.n == 2:  # torch's 2-d CPU kernel: fold by the doubled span, mirror the far half
        extra = a - xp.trunc(a / k["twice"]) * k["twice"]
        mirrored = k["twice"] - extra
        flip = extra > mirrored
        out = xp.where(flip, mirrored, extra)
    else:  # its scalar 3-d kernel: fmod by the span, odd folds mirrored
        extra = _fmod(xp, a, k["span"])
        flip = _fmod(xp, xp.floor(a / k["span"]), 2.0) != 0
        out = xp.where(flip, k["span"] - extra, extra)
    out = out + k["lo"]
    if plan.align:
        out = xp.where(k["degenerate"], 0.0, out)
    return out, (flip ^ neg if grads else None)


def _pad(xp: Any, c: Any, k: dict[str, Any], plan: _Plan, grads: bool) -> tuple[Any, Any]:
    """The padded coordinate and, with ``grads``, d(padded)/d(c) (None: 1 everywhere)."""
    if plan.padding == "zeros":
        return c, None
    flip = None
    if plan.padding == "reflection":
        c, flip = _reflect(xp, c, k, plan, grads)
    c, inside = _clip(xp, c, k, grads)
    if not grads:
        return c, None
    one = xp.astype(inside, c.dtype)
    if flip is not None:
        one = xp.where(flip, -one, one)
        if plan.align:
            one = xp.where(k["degenerate"], 0.0, one)
    return c, one


def _taps(xp: Any, grid: Any, plan: _Plan, grads: bool) -> tuple[Any, Any, Any, Any]:
    """For grid points (N, 1, M, 1, 1, n): the flat tap cells (N, 1, M*T) with each point's T taps together (P
    where a tap reads outside the image); their weights (N, 1, M, 1, T), or with ``grads`` (N, 1, M, T) and
    d(weight)/d(grid[..., k]) stacked (N, 1, M, n, T); d(coordinate)/d(grid) ((n,), or per point). Taps are
    ordered as torch's sums: the last grid coordinate (slowest spatial axis) outermost."""
    n = plan.n
    k = _constants(xp, plan, grid)
    c, mult = _unnormalise(grid, k, plan), k["scale"]
    if plan.mode != "bicubic":  # bicubic pads its taps' integer coordinates instead (in _cells)
        c, dpad = _pad(xp, c, k, plan, grads)
        mult = mult if dpad is None else dpad * mult
        if plan.mode == "nearest":
            return _cells(xp, xp.round(c), k, plan), None, None, mult
    f = xp.floor(c)
    idx = _cells(xp, f + k["steps"], k, plan)  # first: its temporaries and the weights' are not alive at once
    if plan.mode == "bicubic":
        u = (c - f) * k["sign"] + k["off"]
        a, b, cc, d = (k[f"{'d' if grads else ''}cubic{i}"] for i in range(4))
        w = ((a * u + b) * u + cc) * u + d
    else:  # 2-d: t = c - floor(c), weights 1 - t and t; 3-d: (floor + 1) - c and c - floor
        w = (c - f) * k["sign"] + k["off"] if n == 2 else c * k["sign"] + (k["off"] - f * k["sign"])
        if grads:
            w = xp.where(k["rows"], k["sign"], w)
    # a tuple's weight: its coordinates' factors multiplied in torch's order, z * y * x (2-d: one product)
    w = xp.prod(w, axis=-1) if n == 2 else (lambda p: p[2] * p[1] * p[0])(_unstack(xp, w))
    if not grads:
        return idx, w, None, mult
    return idx, w[..., 0, :], w[..., 1:, :], mult


def _cells(xp: Any, taps: Any, k: dict[str, Any], plan: _Plan) -> Any:
    """The flat cell (N, 1, M*T) of every tap tuple of the per-coordinate taps (N, 1, M, 1, T, n); P where a tap
    reads outside (or its coordinate is NaN)."""
    stride, padded = k["stride"], plan.mode == "bicubic" and plan.padding != "zeros"
    if padded and plan.padding == "reflection":  # integer taps: r = tap mod period is exact, and min(r, mirror - r)
        # gives the integers torch's float fold does wherever its arithmetic is exact (|tap| < 2**23 in float32)
        r = xp.remainder(taps, k["period"])
        taps = xp.minimum(r, k["mirror"] - r)
    elif padded:
        taps = _bound(xp, taps, k)
    inside = taps == taps if padded else _bound(xp, taps, k) == taps  # in [0, L - 1] (padded: unless NaN)
    # a term reading outside is P or more, so that its tuple's sum is (then capped at P); unless that sum could
    # overflow: then the tuple's inside flags decide
    safe = 2 * plan.n * math.prod(plan.in_spatial) < np.iinfo(dtype_name(xp, stride.dtype)).max
    cells = xp.astype(xp.where(inside, taps, k["poison"] if safe else k["zero"]), stride.dtype) * stride
    total = xp.sum(cells, axis=-1, dtype=stride.dtype)
    total = xp.minimum(total, k["outside"]) if safe else xp.where(xp.all(inside, axis=-1), total, k["outside"])
    return xp.reshape(total, (taps.shape[0], 1, taps.shape[2] * taps.shape[-2]))


def _unstack(xp: Any, a: Any) -> Any:
    """``a``'s slices along its last axis (on torch one operation, unbind, rather than one per slice)."""
    if is_torch_array(a):
        return a.unbind(-1)
    return [a[..., i] for i in range(a.shape[-1])]


# --- the op, written once: select/route dispatch to the autodiff bindings ------------------------------

# Bytes per tap of one point that a chunk holds at once (cells, weights and their derivatives, the route's sort
# and runs), and per tap and channel (reads, cotangents, products), at 8-byte items; and the budget a chunk of
# points may take. Points are sampled a chunk at a time, so a dense grid costs O(grid + input + output) memory.
_TAP_BYTES, _TAP_CHANNEL_BYTES = 96, 24
_CHUNK_BYTES = 1 << 24


# On a GPU (each chunk's operations cost launches) a chunk may hold up to this many times the bytes of the call's
# input, output and grid instead (the memory bound's factor): one chunk unless the taps' reads pass that
_GPU_SPREAD = 8


def _step(plan: _Plan, batch: int, channels: int, wide: bool = False, items: int = 3) -> int:
    """Points sampled at a time: a function of the shapes (and, with ``wide``, of running where operations cost
    launches, and of the dtype) alone, so every call of one shape sums its gradient in the same order on every
    backend of a kind. ``wide``: ``items`` arrays of a tap per channel at once, of the compute dtype (forward 2:
    the reads and their products; backward 3: the route's)."""
    per_tap = _TAP_BYTES + (items * max(plan.itemsize, 4) if wide else _TAP_CHANNEL_BYTES) * channels
    budget = _CHUNK_BYTES
    if wide:
        budget = max(budget, _GPU_SPREAD * plan.itemsize * batch * (
            channels * (math.prod(plan.in_spatial) + plan.points) + plan.points * plan.n))
    return max(1, min(plan.points, budget // max(1, batch * plan.taps * per_tap)))


def _spans(M: int, step: int) -> list[tuple[int, int]]:
    """The chunks [a, b) of M points: the last one stops at M, since the array API leaves a slice's stop past
    the end of an axis unspecified (array-api-strict refuses it)."""
    return [(a, min(a + step, M)) for a in range(0, M, step)]


def _points(xp: Any, grid: Any, plan: _Plan) -> Any:
    """The grid's points (N, 1, M, 1, 1, n), as the coordinates broadcast (rows, tap tuples, coordinates)."""
    return xp.reshape(grid, (grid.shape[0], 1, plan.points, 1, 1, plan.n))


def _chunk_sample(plan: _Plan, flat: Any, pts: Any) -> Any:
    """The output (N, C, m), or (N, C, m, 1), at points (N, 1, m, ...) of the flattened input (N, C, P)."""
    xp = namespace(flat)
    N, C, P = flat.shape
    m, T = pts.shape[2], plan.taps
    idx, weights, _, _ = _taps(xp, pts, plan, False)
    vals = max_select(Cells(P, T * m), flat, idx)
    if plan.mode == "nearest":
        return vals
    # one weighted reduction over each point's taps: per-tap slices would cost their autograd backward a
    # zero-filled (N, C, M, T) buffer each
    return xp.sum(xp.reshape(vals, (N, C, m, 1, T)) * weights, axis=-1)


def _chunk_backward(plan: _Plan, flat: Any, pts: Any, gc: Any, x: Any, into: Any = None,
                    need_x: bool = True) -> tuple[Any, Any]:
    """The input gradient (N, C, P) of the points (N, 1, m, n) for their cotangent (N, C, m), and theirs
    (N, m, n); None for nearest, whose grid gradient is zero. ``into``: where no autodiff follows, the input
    gradient so far, to which this chunk's is added in place (only the cells the chunk reads are touched).
    ``need_x=False``: the input gradient is not wanted (None), and its route is skipped."""
    xp = namespace(flat)
    N, C, P = flat.shape
    m, T, n = pts.shape[2], plan.taps, plan.n
    cells = Cells(P, T * m)
    idx, weights, dweights, mult = _taps(xp, pts, plan, True)
    part, g1 = None, gc if plan.mode == "nearest" else gc[..., None]
    if need_x:  # (its products dropped before the grid's gradient reads: one tap array per channel fewer)
        spread = g1 if plan.mode == "nearest" else xp.reshape(g1 * weights, (N, C, m * T))
        part = max_backward(cells, spread, idx, primal=x) if into is None else cells.route(spread, idx, into=into)
        del spread
    if plan.mode == "nearest":
        return part, None
    vals = xp.reshape(max_select(cells, flat, idx), (N, C, m, 1, T))
    # every coordinate at once (N, C, m, n, T), each sum over the taps then over the channels as one per
    # coordinate was
    coords = xp.sum(xp.sum(vals * dweights, axis=-1) * g1, axis=1)
    # d(coordinate)/d(grid): the scale per coordinate (n,), or with padding per point
    return part, coords * (mult if mult.ndim == 1 else xp.reshape(mult, (-1, m, n)))


def _jax_chunks(a: Any, step: int, axis: int) -> Any:
    """``a`` padded with zeros along ``axis`` to whole chunks of ``step`` and split there: chunks first."""
    import jax.numpy as jnp

    M = a.shape[axis]
    K = -(-M // step)
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, K * step - M)
    a = jnp.pad(a, pad)
    a = jnp.reshape(a, a.shape[:axis] + (K, step) + a.shape[axis + 1:])
    return jnp.moveaxis(a, axis, 0)


def _jax_unchunk(a: Any, axis: int, M: int) -> Any:
    """The inverse of :func:`_jax_chunks` for results stacked chunks first, the points at ``axis``."""
    import jax.numpy as jnp

    a = jnp.moveaxis(a, 0, axis)
    a = jnp.reshape(a, a.shape[:axis] + (a.shape[axis] * a.shape[axis + 1],) + a.shape[axis + 2:])
    return a[(slice(None),) * axis + (slice(0, M),)]


def _sample(plan: _Plan, x: Any, grid: Any) -> Any:
    xp = namespace(x)
    N, C = x.shape[0], x.shape[1]
    M, P = plan.points, math.prod(plan.in_spatial)
    flat, pts = xp.reshape(x, (N, C, P)), _points(xp, grid, plan)
    step = _step(plan, N, C, _WIDE(x), items=2)
    if step >= M:
        out = _chunk_sample(plan, flat, pts)
    elif is_jax_array(x):
        import jax

        # one chunk per step of a loop, recomputed for the gradient (the loop would otherwise save every
        # chunk's reads for it)
        body = jax.checkpoint(lambda p: _chunk_sample(plan, flat, p))
        out = _jax_unchunk(jax.lax.map(body, _jax_chunks(pts, step, 2)), 2, M)
    else:
        out = xp.concat([_chunk_sample(plan, flat, pts[:, :, a:b, ...]) for a, b in _spans(M, step)], axis=2)
    return xp.reshape(out, (N, C) + plan.out_spatial)


def _sample_backward(plan: _Plan, g: Any, x: Any, grid: Any, need_x: bool = True) -> tuple[Any, Any]:
    xp = namespace(x)
    N, C = x.shape[0], x.shape[1]
    M, P = plan.points, math.prod(plan.in_spatial)
    flat, pts = xp.reshape(x, (N, C, P)), _points(xp, grid, plan)
    gf = xp.reshape(g, (N, C, M))
    step = _step(plan, N, C, _WIDE(x))
    if step >= M:
        grad_x, grad_grid = _chunk_backward(plan, flat, pts, gf, x, need_x=need_x)
    elif is_jax_array(x):
        import jax

        def body(acc: Any, chunk: tuple[Any, Any]) -> tuple[Any, Any]:
            part, gg = _chunk_backward(plan, flat, chunk[0], chunk[1], x)
            return acc + part, (xp.zeros((N, 0, plan.n), dtype=x.dtype, **on(x)) if gg is None else gg)

        grad_x, parts = jax.lax.scan(body, xp.zeros((N, C, P), dtype=x.dtype, **on(x)),
                                     (_jax_chunks(pts, step, 2), _jax_chunks(gf, step, 2)))
        grad_grid = None if plan.mode == "nearest" else _jax_unchunk(parts, 1, M)
    else:
        # chunks add in order (a function of the shapes); in place where no autodiff follows
        into = xp.zeros((N, C, P), dtype=x.dtype, device=device(x)) if need_x and untracked(x, grid, g) else None
        grad_x, parts = into, []
        for a, b in _spans(M, step):
            part, gg = _chunk_backward(plan, flat, pts[:, :, a:b, ...], gf[..., a:b], x, into, need_x)
            grad_x = part if grad_x is None or into is not None else grad_x if part is None else grad_x + part
            parts.append(gg)
        grad_grid = None if plan.mode == "nearest" else xp.concat(parts, axis=1)
    grad_x = None if grad_x is None else xp.reshape(grad_x, tuple(x.shape))
    if grad_grid is None:
        return grad_x, xp.zeros_like(grid)
    return grad_x, xp.reshape(grad_grid, tuple(grid.shape))


def _chunk_tangent(plan: _Plan, flat: Any, pts: Any, dots: Any) -> Any:
    """The output's derivative (N, C, m) at points (N, 1, m, ...) in the grid's direction ``dots`` (alike)."""
    xp = namespace(flat)
    N, C, P = flat.shape
    m, T, n = pts.shape[2], plan.taps, plan.n
    idx, _, dweights, mult = _taps(xp, pts, plan, True)
    vals = xp.reshape(max_select(Cells(P, T * m), flat, idx), (N, C, m, T))
    scaled = xp.reshape(dots * mult, (N, 1, m, n))  # d(coordinate k) per point
    out = None
    for kk in range(n):
        term = xp.sum(vals * dweights[..., kk, :], axis=-1) * scaled[..., kk]
        out = term if out is None else out + term
    return out


def _sample_jvp(plan: _Plan, x: Any, grid: Any, x_dot: Any, grid_dot: Any) -> Any:
    """The forward-mode derivative of :func:`_sample`: linear in x, and through the weights in the grid."""
    xp = namespace(x)
    N, C = x.shape[0], x.shape[1]
    M, P = plan.points, math.prod(plan.in_spatial)
    out = None if x_dot is None else _sample(plan, x_dot, grid)
    if grid_dot is None or plan.mode == "nearest":
        return xp.zeros((N, C) + plan.out_spatial, dtype=x.dtype, device=device(x)) if out is None else out
    flat, pts, dots = xp.reshape(x, (N, C, P)), _points(xp, grid, plan), _points(xp, grid_dot, plan)
    step = _step(plan, N, C, _WIDE(x))
    parts = [_chunk_tangent(plan, flat, pts[:, :, a:b, ...], dots[:, :, a:b, ...]) for a, b in _spans(M, step)]
    tangent = xp.reshape(parts[0] if len(parts) == 1 else xp.concat(parts, axis=-1), (N, C) + plan.out_spatial)
    return tangent if out is None else out + tangent


@dataclass(frozen=True)
class _Rules:
    """grid_sample's forward, explicit backward and forward-mode rule for the torch binding (autodiff.sampled)."""

    plan: _Plan

    def forward(self, x: Any, grid: Any) -> Any:
        return _sample(self.plan, x, grid)

    def backward(self, g: Any, x: Any, grid: Any, need_x: bool = True) -> tuple[Any, Any]:
        return _sample_backward(self.plan, g, x, grid, need_x)

    def jvp(self, x: Any, grid: Any, x_dot: Any, grid_dot: Any) -> Any:
        return _sample_jvp(self.plan, x, grid, x_dot, grid_dot)
