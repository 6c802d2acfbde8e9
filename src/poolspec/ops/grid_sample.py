"""grid_sample and affine_grid, with their explicit backward functions.

Whole definition: the cards are ``spec.card("grid_sample")`` and ``spec.card("affine_grid")``
(spec/sampling.py, whose notes state torch's rules); the coordinate rules and the taps are below; the reads
at data-dependent cells and their scatter-free transpose are ``kernels.cells.Cells``; the autodiff bindings are
``autodiff.max_select`` / ``autodiff.max_backward`` (a gather at integer cells and its transpose, the same pair
as the max family's), and everything else (coordinates, weights) is plain array arithmetic that torch and JAX
differentiate natively. So the input gradient is the segmented sum of ``Cells.route`` on every backend and
under every transform, and derivatives of any order w.r.t. both x and grid exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import Any

import numpy as np

from .._compat import (
    compute_dtype_name,
    device,
    dtype_name,
    dtype_of,
    index_dtype,
    is_dask_array,
    is_jax_array,
    is_torch_array,
    namespace,
    to_namespace,
)
from ..autodiff import anchor, compose, max_backward, max_select
from ..kernels.cells import Cells
from ..spec import card

_A = -0.75  # torch's cubic convolution constant


@dataclass(frozen=True)
class _Plan:
    """Everything static about one call (hashable: it keys the jitted programs on JAX)."""

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]
    mode: str
    padding: str
    align: bool

    @property
    def n(self) -> int:
        return len(self.in_spatial)

    @property
    def points(self) -> int:
        return math.prod(self.out_spatial)

    @property
    def taps(self) -> int:
        return {"nearest": 1, "bilinear": 2 ** self.n, "bicubic": 16}[self.mode]

    @property
    def cells(self) -> Cells:
        return Cells(math.prod(self.in_spatial), self.taps * self.points)


# --- coordinates: torch's rules (spec/sampling.py notes) -------------------------------------------------

def _fmod(xp: Any, a: Any, b: float) -> Any:
    """fmod for a >= 0, exactly (torch's remainder is a - b * floor(a / b), which rounds)."""
    if is_torch_array(a):
        import torch

        return torch.fmod(a, b)
    return xp.remainder(a, b)


def _clip(xp: Any, c: Any, size: int) -> tuple[Any, Any]:
    """c clipped to [0, size - 1], and where its derivative is 1 (strictly inside: torch counts the bounds
    as out of bounds for the gradient)."""
    inside = (c > 0) & (c < size - 1)
    return xp.where(c <= 0, 0.0, xp.where(c >= size - 1, float(size - 1), c)), inside


def _reflect(xp: Any, c: Any, size: int, align: bool, vectorised: bool) -> tuple[Any, Any]:
    """Reflection about [0, L-1] (align) or [-0.5, L-0.5]; the value, and the sign of its derivative."""
    if align and size <= 1:
        return xp.zeros_like(c), None
    lo = 0.0 if align else -0.5
    span = float(size - 1) if align else float(size)
    cm = c - lo if lo else c
    neg = cm < 0
    a = xp.where(neg, -cm, cm)  # not abs: its derivative at 0 is 0, torch's is +1
    if vectorised:  # torch's 2-d CPU kernel: fold by the doubled span, mirror the far half
        twice = 2.0 * span
        extra = a - xp.trunc(a / twice) * twice
        mirrored = twice - extra
        flip = extra > mirrored
        out = xp.where(flip, mirrored, extra)
        flip = flip ^ neg
    else:  # its scalar 3-d kernel: fmod by the span, odd folds mirrored
        extra = _fmod(xp, a, span)
        odd = _fmod(xp, xp.floor(a / span), 2.0) != 0
        out = xp.where(odd, span - extra, extra)
        flip = odd ^ neg
    return (out + lo if lo else out), flip


def _unnormalise(c: Any, size: int, align: bool, vectorised: bool) -> tuple[Any, float]:
    if vectorised:
        scale = (size - 1) / 2 if align else size / 2
        return ((c + 1) * scale if align else (c + 1) * scale - 0.5), scale
    if align:
        return ((c + 1) / 2) * (size - 1), (size - 1) / 2
    return ((c + 1) * size - 1) / 2, size / 2


def _pad(xp: Any, c: Any, size: int, padding: str, align: bool, vectorised: bool) -> tuple[Any, Any]:
    """The padded coordinate and d(padded)/d(c) (None: 1 everywhere)."""
    if padding == "zeros":
        return c, None
    flip = None
    if padding == "reflection":
        c, flip = _reflect(xp, c, size, align, vectorised)
        if flip is None:
            return c, xp.zeros_like(c)
    c, inside = _clip(xp, c, size)
    one = xp.astype(inside, c.dtype)
    if flip is not None:
        one = xp.where(flip, -one, one)
    return c, one


def _cubic(xp: Any, t: Any) -> tuple[list[Any], list[Any]]:
    """torch's cubic convolution weights of taps -1, 0, 1, 2 at fraction t, and their derivatives in t."""
    A = _A

    def near(v: Any) -> Any:
        return ((A + 2) * v - (A + 3)) * v * v + 1

    def far(v: Any) -> Any:
        return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A

    def dnear(v: Any) -> Any:
        return (3 * (A + 2) * v - 2 * (A + 3)) * v

    def dfar(v: Any) -> Any:
        return (3 * A * v - 10 * A) * v + 8 * A

    return ([far(t + 1), near(t), near(1 - t), far(2 - t)],
            [dfar(t + 1), dnear(t), -dnear(1 - t), -dfar(2 - t)])


def _axis(xp: Any, g: Any, size: int, plan: _Plan, grads: bool) -> tuple[list[Any], list[Any], list[Any], Any]:
    """One axis' tap coordinates (integer-valued floats), weights, weight derivatives (w.r.t. the padded
    coordinate) and d(coordinate)/d(grid)."""
    vectorised = plan.n == 2
    c, scale = _unnormalise(g, size, plan.align, vectorised)
    if plan.mode == "bicubic":
        f = xp.floor(c)
        w, dw = _cubic(xp, c - f)
        taps = [_pad(xp, f + (i - 1), size, plan.padding, plan.align, vectorised)[0] for i in range(4)]
        return taps, w, dw, scale
    c, dpad = _pad(xp, c, size, plan.padding, plan.align, vectorised)
    mult = scale if dpad is None else dpad * scale
    if plan.mode == "nearest":
        return [xp.round(c)], [None], [None], mult
    f = xp.floor(c)
    if vectorised:  # 2-d: t = c - floor(c), weights 1 - t and t
        t = c - f
        w = [1 - t, t]
    else:  # 3-d: weights (floor + 1) - c and c - floor
        w = [(f + 1) - c, c - f]
    return [f, f + 1], w, [-1.0, 1.0], mult


def _taps(xp: Any, grid: Any, plan: _Plan, grads: bool) -> tuple[Any, list[Any], list[list[Any]], list[Any]]:
    """The flat tap cells (N, 1, T*M) (P where a tap reads outside the image), the tap weights (N, 1, M)
    each in torch's order, and with ``grads`` d(weight)/d(grid[..., k]) per grid coordinate k."""
    n, M = plan.n, plan.points
    N = grid.shape[0]
    g = xp.reshape(grid, (N, 1, M, n))
    P = math.prod(plan.in_spatial)
    strides = [math.prod(plan.in_spatial[a + 1:]) for a in range(n)]
    itype = index_dtype(xp, grid)
    axes = []
    for a in range(n):  # spatial axis a (D, H, W order) reads grid coordinate n - 1 - a
        size = plan.in_spatial[a]
        taps, w, dw, mult = _axis(xp, g[..., n - 1 - a], size, plan, grads)
        cells = []
        for tc in taps:
            inside = (tc >= 0) & (tc <= size - 1)
            cells.append((xp.astype(xp.where(inside, tc, 0.0), itype) * strides[a], inside))
        axes.append((cells, w, dw, mult))
    idx, weights, dweights = [], [], [[] for _ in range(n)]
    order = range(n) if n == 2 else range(n - 1, -1, -1)  # torch's product order: 2-d (y, x), 3-d (x, y, z)
    for combo in product(*(range(len(axes[a][0])) for a in range(n))):
        flat, inside = axes[0][0][combo[0]]
        for a in range(1, n):
            cell, ok = axes[a][0][combo[a]]
            flat, inside = flat + cell, inside & ok
        idx.append(xp.where(inside, flat, P))
        if plan.mode == "nearest":
            continue
        weight = None
        for a in order:
            wa = axes[a][1][combo[a]]
            weight = wa if weight is None else weight * wa
        weights.append(weight)
        if grads:
            for a in range(n):
                d = axes[a][2][combo[a]]
                for b in order:
                    if b != a:
                        d = d * axes[b][1][combo[b]]
                dweights[a].append(d)
    mults = [axes[a][3] for a in range(n)]
    return xp.concat(idx, axis=-1), weights, dweights, mults


# --- the op, written once: select/route dispatch to the autodiff bindings ------------------------------

def _sample(plan: _Plan, x: Any, grid: Any) -> Any:
    xp = namespace(x)
    N, C = x.shape[0], x.shape[1]
    M, T = plan.points, plan.taps
    idx, weights, _, _ = _taps(xp, grid, plan, False)
    vals = max_select(plan.cells, xp.reshape(x, (N, C, math.prod(plan.in_spatial))), idx)
    if plan.mode == "nearest":
        out = vals
    else:
        out = None
        for t in range(T):  # in torch's order, left to right
            term = vals[..., t * M:(t + 1) * M] * weights[t]
            out = term if out is None else out + term
    return xp.reshape(out, (N, C) + plan.out_spatial)


def _sample_backward(plan: _Plan, g: Any, x: Any, grid: Any) -> tuple[Any, Any]:
    xp = namespace(x)
    N, C = x.shape[0], x.shape[1]
    M, T, n = plan.points, plan.taps, plan.n
    idx, weights, dweights, mults = _taps(xp, grid, plan, True)
    gf = xp.reshape(g, (N, C, M))
    if plan.mode == "nearest":
        spread = gf
    else:
        spread = xp.concat([gf * weights[t] for t in range(T)], axis=-1)
    grad_x = xp.reshape(max_backward(plan.cells, spread, idx, primal=x), tuple(x.shape))
    if plan.mode == "nearest":
        return grad_x, xp.zeros_like(grid)
    vals = max_select(plan.cells, xp.reshape(x, (N, C, math.prod(plan.in_spatial))), idx)
    coords = []
    for a in range(n):
        acc = None
        for t in range(T):
            term = vals[..., t * M:(t + 1) * M] * dweights[a][t]
            acc = term if acc is None else acc + term
        m = mults[a]
        coords.append(xp.sum(acc * gf, axis=1) * (m if isinstance(m, float) else xp.reshape(m, (N, M))))
    grad_grid = xp.stack(coords[::-1], axis=-1)  # grid[..., 0] is the last spatial axis
    return grad_x, xp.reshape(grad_grid, tuple(grid.shape))


# --- dispatch ------------------------------------------------------------------------------------------

def _resolve(x: Any, grid: Any, args: dict[str, Any], op: str = "grid_sample") -> tuple[Any, str, _Plan]:
    xp = namespace(x, grid, names=("x", "grid"), op=op)
    dtype = dtype_name(xp, x.dtype)
    r = card("grid_sample").resolve(tuple(x.shape), dtype, grid=tuple(grid.shape), **args)
    g_dtype = dtype_name(xp, grid.dtype)
    if g_dtype != dtype:
        raise TypeError(f"{op}: grid.dtype={g_dtype!r}: must equal x.dtype {dtype!r}")
    if None not in (device(x), device(grid)) and device(x) != device(grid):
        raise ValueError(f"{op}: grid is on {device(grid)} but x is on {device(x)}")
    p = r.params
    return xp, dtype, _Plan(p["in_spatial"], p["out_spatial"], p["mode"], p["padding_mode"], p["align_corners"])


def _compute(xp: Any, dtype: str, *arrays: Any) -> tuple[Any, ...]:
    ctype = compute_dtype_name(dtype)
    if ctype == dtype:
        return arrays
    return tuple(xp.astype(a, dtype_of(xp, ctype)) for a in arrays)


def _blockwise(fn: Any, plan: _Plan, x: Any, grid: Any, *, grad: Any = None, out: str) -> Any:
    """``fn`` on each batch chunk of Dask arrays (the op reads anywhere in a plane, so planes stay whole)."""
    import dask.array as da

    n = plan.n
    sp, op_ = "hwd"[:n], "ijk"[:n]
    lead = (x.chunks[0],)
    x = x.rechunk(lead + tuple((s,) for s in x.shape[1:]))
    grid = grid.rechunk(lead + tuple((s,) for s in grid.shape[1:]))
    arrays: list[Any] = [x, "bc" + sp, grid, "b" + op_ + "z"]
    if grad is not None:
        arrays = [grad.rechunk(lead + tuple((s,) for s in grad.shape[1:])), "bc" + op_] + arrays
    index = {"output": "bc" + op_, "grad_x": "bc" + sp, "grad_grid": "b" + op_ + "z"}[out]
    return da.blockwise(fn, index, *arrays, dtype=x.dtype, concatenate=True,
                        meta=np.empty((0,) * len(index), dtype=x.dtype))


def grid_sample(x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Any:
    """``x`` (N, C, *S) sampled at ``grid`` (N, *O, n), as ``torch.nn.functional.grid_sample``; the input
    gradient is a sort and segmented sum (deterministic on every backend), not a scatter.

    >>> import numpy as np, poolspec
    >>> x = np.arange(4.0).reshape(1, 1, 2, 2)
    >>> poolspec.grid_sample(x, np.zeros((1, 1, 1, 2)), align_corners=True)
    array([[[[1.5]]]])
    """
    args = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    xp, dtype, plan = _resolve(x, grid, args)
    if is_dask_array(x):
        def block(xb: np.ndarray, gb: np.ndarray) -> np.ndarray:
            return grid_sample(xb, gb, **args)

        return _blockwise(block, plan, x, grid, out="output")
    xc, gc = _compute(xp, dtype, x, grid)
    if is_jax_array(x):
        out = compose(_sample, (plan,), xc, gc)
    else:
        out = _sample(plan, xc, gc)
        if plan.mode == "nearest" and is_torch_array(grid):
            out = anchor(out, gc)  # torch's grid gradient of nearest is zeros, not "unused"
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


def grid_sample_backward(grad_output: Any, x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                         align_corners: bool | None = None) -> tuple[Any, Any]:
    """(grad_x, grad_grid) of :func:`grid_sample` for ``grad_output``; differentiable again on torch and JAX.

    >>> import numpy as np, poolspec
    >>> gx, gg = poolspec.grid_sample_backward(np.ones((1, 1, 1, 1)), np.arange(4.0).reshape(1, 1, 2, 2),
    ...                                        np.zeros((1, 1, 1, 2)), align_corners=True)
    >>> gx.ravel().tolist(), gg.ravel().tolist()
    ([0.25, 0.25, 0.25, 0.25], [0.5, 1.0])
    """
    args = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    op = "grid_sample_backward"
    xp, dtype, plan = _resolve(x, grid, args, op)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    want = (x.shape[0], x.shape[1]) + plan.out_spatial
    if tuple(grad_output.shape) != want:
        raise ValueError(f"{op}: grad_output.shape={tuple(grad_output.shape)}: must equal the output shape {want}")
    if dtype_name(xp, grad_output.dtype) != dtype:
        raise TypeError(f"{op}: grad_output.dtype={dtype_name(xp, grad_output.dtype)!r}: must equal x.dtype "
                        f"{dtype!r}")
    if is_dask_array(x):
        def gx(gb: np.ndarray, xb: np.ndarray, grb: np.ndarray) -> np.ndarray:
            return grid_sample_backward(gb, xb, grb, **args)[0]

        def gg(gb: np.ndarray, xb: np.ndarray, grb: np.ndarray) -> np.ndarray:
            return grid_sample_backward(gb, xb, grb, **args)[1]

        return (_blockwise(gx, plan, x, grid, grad=grad_output, out="grad_x"),
                _blockwise(gg, plan, x, grid, grad=grad_output, out="grad_grid"))
    gc, xc, grc = _compute(xp, dtype, grad_output, x, grid)
    if is_jax_array(x):
        grad_x, grad_grid = compose(_sample_backward, (plan,), gc, xc, grc)
    else:
        grad_x, grad_grid = _sample_backward(plan, gc, xc, grc)
    if grad_x.dtype != x.dtype:
        grad_x, grad_grid = xp.astype(grad_x, x.dtype), xp.astype(grad_grid, x.dtype)
    return grad_x, grad_grid


# --- affine_grid ---------------------------------------------------------------------------------------

def _linspace(L: int, align: bool, dtype: np.dtype) -> np.ndarray:
    """torch's linspace_from_neg_one: linspace(-1, 1, L) by torch's symmetric formula (-1 + i * step for the
    first half, 1 - (L - 1 - i) * step for the rest, step rounded to the dtype, each point rounded once as
    its fused kernel does), times (L - 1) then divided by L without align_corners; one point is 0."""
    if L <= 1:
        return np.zeros(max(L, 1), dtype)
    step = Fraction(float(dtype.type(2) / dtype.type(L - 1)))
    exact = [-1 + i * step if i < L // 2 else 1 - (L - 1 - i) * step for i in range(L)]
    r = np.array([float(v) for v in exact], dtype=np.float64).astype(dtype)
    if not align:
        r = (r * dtype.type(L - 1) / dtype.type(L)).astype(dtype)
    return r


@lru_cache(maxsize=256)
def _base(size: tuple[int, ...], align: bool, dtype: str) -> np.ndarray:
    """(prod(S), n + 1) rows (x, y[, z], 1) in row-major order of S."""
    host = np.dtype(dtype if dtype in ("float32", "float64") else "float32")
    spatial = size[2:]
    axes = [_linspace(L, align, host) for L in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # (D, H, W) order
    cols = [m.reshape(-1) for m in mesh[::-1]] + [np.ones(math.prod(spatial), host)]
    out = np.stack(cols, axis=-1)
    out.flags.writeable = False
    return out


def _affine(xp: Any, theta: Any, size: tuple[int, ...], align: bool, dtype: str) -> Any:
    base = to_namespace(_base(size, align, dtype), xp, theta, theta.dtype)
    n = len(size) - 2
    out = xp.matmul(base, xp.permute_dims(theta, (0, 2, 1)))  # (N, S, n): base rows times theta^T
    return xp.reshape(out, (theta.shape[0],) + tuple(size[2:]) + (n,))


def affine_grid(theta: Any, size: tuple[int, ...], align_corners: bool | None = None) -> Any:
    """The grid of affine maps ``theta`` (N, n, n + 1) for an image of ``size``, as
    ``torch.nn.functional.affine_grid``.

    >>> import numpy as np, poolspec
    >>> poolspec.affine_grid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 1, 2))[0, 0].tolist()
    [[-0.5, 0.0], [0.5, 0.0]]
    """
    xp = namespace(theta, names=("theta",), op="affine_grid")
    dtype = dtype_name(xp, theta.dtype)
    r = card("affine_grid").resolve(tuple(theta.shape), dtype, size=size, align_corners=align_corners)
    return _affine(xp, theta, r.params["size"], r.params["align_corners"], dtype)


def affine_grid_backward(grad_grid: Any, theta: Any, size: tuple[int, ...], align_corners: bool | None = None) -> Any:
    """The gradient of :func:`affine_grid` w.r.t. ``theta``: sum over points of grad_grid (x) base.

    >>> import numpy as np, poolspec
    >>> poolspec.affine_grid_backward(np.ones((1, 1, 2, 2)), np.zeros((1, 2, 3)), (1, 1, 1, 2)).tolist()
    [[[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]]]
    """
    op = "affine_grid_backward"
    xp = namespace(grad_grid, theta, names=("grad_grid", "theta"), op=op)
    dtype = dtype_name(xp, theta.dtype)
    r = card("affine_grid").resolve(tuple(theta.shape), dtype, size=size, align_corners=align_corners)
    size = r.params["size"]
    if tuple(grad_grid.shape) != tuple(r.output_shape):
        raise ValueError(f"{op}: grad_grid.shape={tuple(grad_grid.shape)}: must equal the grid's shape "
                         f"{tuple(r.output_shape)}")
    base = to_namespace(_base(size, r.params["align_corners"], dtype), xp, theta, theta.dtype)
    n = len(size) - 2
    g = xp.reshape(grad_grid, (theta.shape[0], math.prod(size[2:]), n))
    out = xp.matmul(xp.permute_dims(g, (0, 2, 1)), base)  # (N, n, n + 1)
    return anchor(out, theta) if is_torch_array(theta) else out
