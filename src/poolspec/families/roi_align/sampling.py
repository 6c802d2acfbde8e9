"""roi_align's sampling, written once against the array API: the plan of a call (rois grouped by their sample
grid, which is read from the boxes on the host when sampling_ratio <= 0), torchvision's coordinate and tap rules
(the card's notes) as array arithmetic on the device, and chunks of samples bounded by memory.

The image is read as planes (C, N * H * W): one flat cell index per tap (batch, row, column), shared by every
channel; an index N * H * W reads outside (0). The reads are ``kernels.cells.Cells`` through
``autodiff.max_select`` and the input gradient its transpose ``autodiff.max_backward`` (a sort and a segmented sum,
no scatter): the op is linear in x, so torch and JAX differentiate it natively through those two bindings, to any
order and without a scatter. On JAX roi_align reads the image as rows of channels instead (``jax_taps``: one
contiguous read per tap, its transpose a sort by cell and a sum per cell rank after rank).

ps_roi_align (``_Plan.ps``) takes the same taps: x is read as planes (C / (PH * PW), PH * PW * N * H * W) ordered
(bin, batch, row, column), so a tap of bin (ph, pw) reads cell (ph * PW + pw) * N * H * W + its cell of the image,
and output channel c of that bin reads input channel (c * PH + ph) * PW + pw (torchvision's channel mapping).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._compat import device, index_dtype, is_jax_array, namespace, to_host
from ...autodiff import anchor, max_backward, max_select, unrecorded, untracked
from ...kernels import paths
from ...kernels.cells import Cells
from ...spec._rules import fail

# On the CPU (NumPy, torch outside autograd) a roi's bins are two small matrix products over the window of the
# image its samples touch: the taps' weights are separable (a row weight times a column weight, the validity of
# a sample a row test times a column test), so out_k = Ay_k @ x[b_k, :, rows, cols] @ Ax_k^T / count and its
# transpose adds Ay_k^T @ g_k @ Ax_k / count into that window, roi after roi (no scatter).
_WINDOWS = paths.writes("roi_align.windows", "rois read through their windows by two matrix products each (the "
                        "separable taps), roi after roi", exact="tolerance", cpu=True)

# Bytes a chunk of taps may take (indices, weights, the reads and their products per channel): samples are read a
# chunk at a time, so the memory stays O(input + output + one chunk) whatever the boxes.
_CHUNK_BYTES = 1 << 24
_TAP_BYTES, _TAP_CHANNEL_BYTES = 48, 24
# The most samples one call may take (torchvision would loop over them all; a box of 1e9 pixels is a mistake)
_MOST_SAMPLES = 1 << 36


@dataclass(frozen=True)
class _Group:
    """Rois sharing one sample grid (gh, gw): their positions in the boxes (None: all of them, in order)."""

    gh: int
    gw: int
    rois: tuple[int, ...] | None
    # ps_roi_align's bins without samples: 0 / (grid_h * grid_w) unclamped, 0: +0, 1: -0 (a negative product),
    # 2: NaN (0 / 0)
    fill: int = 0


@dataclass(frozen=True)
class _Plan:
    """Everything static about one call (hashable: it keys the jitted programs on JAX)."""

    N: int
    C: int
    H: int
    W: int
    K: int
    pooled: tuple[int, int]
    scale: float
    aligned: bool
    groups: tuple[_Group, ...]
    # the roi order of the groups' concatenated outputs back to the boxes' order (None: already in order)
    order: tuple[int, ...] | None
    # position-sensitive (ps_roi_align): C counts the output channels, the planes hold one image per bin
    ps: bool = False

    @property
    def image_cells(self) -> int:
        return self.N * self.H * self.W

    @property
    def cells(self) -> int:
        return self.image_cells * (self.pooled[0] * self.pooled[1] if self.ps else 1)


def _np_dtype(name: str) -> Any:
    return np.float32 if name in ("float16", "bfloat16", "float32") else np.float64


def host_grids(op: str, host: np.ndarray, pooled: tuple[int, int], scale: float, aligned: bool,
               ratio: int, N: int, ps: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Checks of the boxes' values (finite, batch index in [0, N), torchvision's refusal) and, for
    sampling_ratio <= 0, each roi's sample grid (gh, gw) in torchvision's arithmetic (``host``'s dtype).
    ``ps``: ps_roi_align's, which sizes no vector by the grid and so refuses no negative one."""
    dt = host.dtype.type
    if host.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not np.isfinite(host).all():
        fail(op, "boxes", "...", "must be finite (a NaN or infinite coordinate is outside the card)")
    batch = np.trunc(host[:, 0])
    if batch.min() < 0 or batch.max() >= N:
        fail(op, "boxes", f"batch indices in [{batch.min():g}, {batch.max():g}]",
             f"the batch index (column 0, truncated) must lie in [0, {N})")
    if ratio > 0:
        g = np.full(host.shape[0], ratio, np.int64)
        return g, g
    off, sc = dt(0.5 if aligned else 0.0), dt(scale)
    start, end = host[:, 1:3] * sc - off, host[:, 3:5] * sc - off  # (x, y)
    size = end - start
    if not aligned:
        size = np.maximum(size, dt(1))
    per_bin = size[:, ::-1] / np.array(pooled, dtype=dt)  # (h, w)
    grids = np.ceil(per_bin)
    if np.abs(grids).max() * (1 + max(pooled)) ** 2 > _MOST_SAMPLES:
        fail(op, "boxes", "...", f"ask for more than {_MOST_SAMPLES} samples (a box far larger than the image)")
    gh, gw = grids[:, 0].astype(np.int64), grids[:, 1].astype(np.int64)
    if not ps and ((gh * gw) * (pooled[0] * pooled[1]) < 0).any():
        k = int(np.argmax((gh * gw) * (pooled[0] * pooled[1]) < 0))
        fail(op, "boxes", host[k].tolist(), f"roi {k}: its sample grid is negative on exactly one axis "
             f"({gh[k]}, {gw[k]}): an aligned roi negative by a bin or more, which torchvision refuses")
    return gh, gw


def plan(N: int, C: int, H: int, W: int, K: int, pooled: tuple[int, int], scale: float, aligned: bool,
         gh: np.ndarray | None, gw: np.ndarray | None, ratio: int, ps: bool = False) -> _Plan:
    """The groups of a call: one for sampling_ratio > 0 (no box values needed), else one per distinct grid (and,
    for ps_roi_align's bins without samples, per value they take). ``ps``: C is the output channels."""
    if gh is None or gw is None:
        return _Plan(N, C, H, W, K, pooled, scale, aligned, (_Group(ratio, ratio, None),), None, ps)
    raw = np.stack([gh, gw], 1)
    grids = np.maximum(raw, 0)
    empty = (grids == 0).any(1)
    grids[empty] = 0  # no samples on either axis: the bin is 0 (ps_roi_align: 0 / count, below)
    fills = np.zeros(K, np.int64)
    if ps:  # torchvision divides the empty sum by grid_h * grid_w, not clamped to 1
        prod = raw[:, 0] * raw[:, 1]
        fills = np.where(empty, np.where(prod == 0, 2, np.where(prod < 0, 1, 0)), 0)
    keys = sorted({(int(a), int(b), int(f)) for (a, b), f in zip(grids, fills)})
    if len(keys) <= 1:
        a, b, f = keys[0] if keys else (0, 0, 0)
        return _Plan(N, C, H, W, K, pooled, scale, aligned, (_Group(a, b, None, f),), None, ps)
    groups, position = [], []
    for a, b, f in keys:
        members = np.flatnonzero((grids[:, 0] == a) & (grids[:, 1] == b) & (fills == f))
        groups.append(_Group(a, b, tuple(int(v) for v in members), f))
        position += members.tolist()
    order = np.empty(K, np.int64)
    order[np.array(position, dtype=np.int64)] = np.arange(K)
    return _Plan(N, C, H, W, K, pooled, scale, aligned, tuple(groups), tuple(int(v) for v in order), ps)


def boxes_on_host(rois: Any) -> np.ndarray | None:
    """The boxes' values on the host, or None where a trace has none."""
    from ..._compat import is_dask_array, readable

    if is_dask_array(rois):
        return np.asarray(rois.compute())
    return to_host(rois) if readable(rois) else None


# --- torchvision's rules as array arithmetic (the card's notes) --------------------------------------------

def _product(a: Any) -> Any:
    """A product kept apart from the sum that follows it: XLA's CPU compiler fuses a * b + c into one fused
    multiply-add (one rounding, not two), which moves samples that land exactly on a pixel or on the image's edge
    (y = 3.0 computed as 3.0000000000000004) to the other side of floor() or of the edge test; torchvision rounds
    the product first. An optimization barrier does not stop it (XLA removes barriers before fusing), a select
    does: ``where(a == a, a, nan)`` is ``a`` for every value, NaN included, and the multiply no longer feeds the add."""
    if is_jax_array(a):
        import jax.numpy as jnp

        return jnp.where(a == a, a, jnp.nan)
    return a


def _divide(xp: Any, a: Any, d: float) -> Any:
    """``a / d`` rounded as a division: XLA turns a division by a broadcast scalar into a product with its
    reciprocal, even a 0-d divisor behind a barrier (h / 3 then differs from torchvision's by an ulp, in a third
    of random quotients, and a sample on a cell's edge moves to the next cell), so on JAX the divisor is a full
    array behind the barrier (measured exact on 10,000 random quotients, jax 0.10)."""
    if is_jax_array(a):
        import jax

        return a / jax.lax.optimization_barrier(xp.full_like(a, d))
    return a / d


def _axis(xp: Any, start: Any, size: Any, grid: int, p: Any, i: Any, L: int) -> tuple[Any, Any, Any, Any, Any, Any]:
    """One axis of samples (k, P, G): low and high taps (float), their weights, whether the sample is read, and
    whether it moves with the roi (read, and held by neither clamp: y <= 0 and y >= H - 1 pin it)."""
    c = (start + _product(p * size)) + _divide(xp, _product(i * size), float(grid))
    valid = (c >= -1.0) & (c <= float(L))  # y < -1 or y > H reads 0
    free = valid & (c > 0)
    c = xp.where(c <= 0, xp.zeros_like(c), c)
    low = xp.floor(c)
    top = low >= L - 1
    low = xp.where(top, xp.full_like(low, L - 1), low)
    c = xp.where(top, low, c)
    high = xp.where(top, low, low + 1)
    lw = c - low
    return low, high, 1 - lw, lw, valid, free & ~top


def _moves(xp: Any, free: Any, p: Any, i: Any, grid: int, pooled: int, scale: float, clamped: Any) -> tuple[Any, Any]:
    """How far a sample moves per unit of the roi's start and end coordinate (k, P, G): its place is start +
    (p + i / grid) * size / pooled with size = end - start, unless the size is clamped to 1 (then it moves with
    the start alone), and 0 where a clamp holds it."""
    t = (p + i / float(grid)) / float(pooled)
    zero = xp.zeros_like(t)
    d_end = xp.where(clamped, zero, t * scale)
    d_start = xp.where(clamped, zero + scale, (1 - t) * scale)
    return xp.where(free, d_start, zero), xp.where(free, d_end, zero)


def _taps(xp: Any, plan: _Plan, rois: Any, group: _Group, ph: tuple[int, int], iy: tuple[int, int],
          derivatives: bool = False) -> Any:
    """The flat cells (1, m) and weights (k, p, PW, s, 4) of rois (k, 5) at bin rows ``ph`` and sample rows ``iy``
    (ranges), taps in torchvision's order: bin row, bin column, sample row, sample column, tap; with
    ``derivatives``, also each weight's derivative w.r.t. x1, y1, x2, y2 (a list of four)."""
    H, W = plan.H, plan.W
    PW, gh, gw = plan.pooled[1], group.gh, group.gw
    dt, dev = rois.dtype, device(rois)
    off = 0.5 if plan.aligned else 0.0
    scale = xp.asarray(plan.scale, dtype=dt, device=dev)  # torchvision's spatial_scale is of x's dtype
    r = [xp.reshape(rois[:, j], (-1, 1, 1)) for j in range(5)]
    sx, sy = _product(r[1] * scale) - off, _product(r[2] * scale) - off
    w, h = (_product(r[3] * scale) - off) - sx, (_product(r[4] * scale) - off) - sy
    raw_w, raw_h = w, h
    if not plan.aligned:
        w, h = xp.maximum(w, xp.ones_like(w)), xp.maximum(h, xp.ones_like(h))
    bh, bw = _divide(xp, h, float(plan.pooled[0])), _divide(xp, w, float(PW))

    def ar(a: int, b: int, shift: float, at: int) -> Any:
        shape = [1, 1, 1]
        shape[at] = b - a
        return xp.reshape(xp.arange(a, b, dtype=dt, device=dev) + shift, tuple(shape))

    py, iy_, px, ix = ar(*ph, 0.0, 1), ar(*iy, 0.5, 2), ar(0, PW, 0.0, 1), ar(0, gw, 0.5, 2)
    yl, yh, hy, ly, vy, fy = _axis(xp, sy, bh, gh, py, iy_, H)
    xl, xh, hx, lx, vx, fx = _axis(xp, sx, bw, gw, px, ix, W)
    k, p, s = yl.shape[0], yl.shape[1], yl.shape[2]

    def Y(a: Any) -> Any:  # (k, p, 1, s, 1, 1)
        return xp.reshape(a, (k, p, 1, s, 1, 1))

    def X(a: Any) -> Any:  # (k, 1, PW, 1, gw, 1)
        return xp.reshape(a, (k, 1, PW, 1, gw, 1))

    itype = index_dtype(xp, rois)
    batch = xp.astype(r[0], itype)  # truncation, as torchvision's int cast
    inside = Y(vy) & X(vx) & xp.reshape((batch >= 0) & (batch < plan.N), (k, 1, 1, 1, 1, 1))
    rows = xp.concat([Y(yl), Y(yl), Y(yh), Y(yh)], axis=-1)  # the taps' rows and columns, torchvision's order
    cols = xp.concat([X(xl), X(xh), X(xl), X(xh)], axis=-1)
    weights = xp.concat([Y(hy) * X(hx), Y(hy) * X(lx), Y(ly) * X(hx), Y(ly) * X(lx)], axis=-1)
    cells = xp.reshape(batch, (k, 1, 1, 1, 1, 1)) * (H * W) + xp.astype(rows, itype) * W + xp.astype(cols, itype)
    if plan.ps:  # bin (ph, pw) reads its own image of the planes
        bin_row = xp.reshape(xp.arange(ph[0], ph[1], dtype=itype, device=dev), (1, p, 1, 1, 1, 1))
        bin_col = xp.reshape(xp.arange(0, PW, dtype=itype, device=dev), (1, 1, PW, 1, 1, 1))
        cells = cells + (bin_row * PW + bin_col) * plan.image_cells
    cells = xp.where(inside, cells, xp.full_like(cells, plan.cells))  # outside: reads 0, routes nowhere
    if not derivatives:
        return xp.reshape(cells, (1, -1)), xp.reshape(weights, (k, p, PW, s * gw * 4))
    # each tap's weight per unit of x1, y1, x2, y2: d(w)/d(y) = -hx, -lx, hx, lx; d(w)/d(x) = -hy, hy, -ly, ly
    if plan.aligned:
        cw = ch = xp.zeros(w.shape, dtype=xp.bool, device=dev)
    else:
        cw, ch = raw_w < 1, raw_h < 1
    y1, y2 = _moves(xp, fy, py, iy_, gh, plan.pooled[0], plan.scale, ch)
    x1, x2 = _moves(xp, fx, px, ix, gw, PW, plan.scale, cw)
    dy = xp.concat([-X(hx), -X(lx), X(hx), X(lx)], axis=-1)
    dx = xp.concat([-Y(hy), Y(hy), -Y(ly), Y(ly)], axis=-1)
    moves = [dx * X(x1), dy * Y(y1), dx * X(x2), dy * Y(y2)]
    moves = [xp.reshape(xp.where(inside, m, xp.zeros_like(m)), (k, p, PW, s * gw * 4)) for m in moves]
    return xp.reshape(cells, (1, -1)), xp.reshape(weights, (k, p, PW, s * gw * 4)), moves


def _budget(plan: _Plan) -> int:
    """Bytes a chunk may take: ``_CHUNK_BYTES``, or the ports' size (x and the output, at 8 bytes a value) where
    that is larger, so that a large call takes few chunks and its peak stays a small multiple of its ports."""
    return max(_CHUNK_BYTES, 8 * plan.C * (plan.cells + plan.K * plan.pooled[0] * plan.pooled[1]))


def _chunks(plan: _Plan, group: _Group, k: int) -> list[tuple[tuple[int, int], tuple[int, int], tuple[int, int]]]:
    """The chunks (rois, bin rows, sample rows) of a group of ``k`` rois, each about a budget of taps: whole
    rois where one fits, else rows of bins, else rows of samples of one bin row (a function of the shapes and
    grids alone, so every call of one plan sums in the same order). The channels are split apart
    (:func:`_channel_ranges`)."""
    PH, PW, gh, gw = plan.pooled[0], plan.pooled[1], group.gh, group.gw
    per_row = max(1, PW * gw * 4 * _TAP_BYTES)  # one sample row of one bin row
    budget = max(1, _budget(plan) // per_row)  # sample rows per chunk
    out = []
    if budget >= PH * gh:
        step = budget // (PH * gh)
        return [((a, min(a + step, k)), (0, PH), (0, gh)) for a in range(0, k, step)]
    for r in range(k):
        if budget >= gh:
            step = budget // gh
            out += [((r, r + 1), (a, min(a + step, PH)), (0, gh)) for a in range(0, PH, step)]
        else:
            out += [((r, r + 1), (p, p + 1), (a, min(a + budget, gh))) for p in range(PH) for a in range(0, gh, budget)]
    return out


def _channel_ranges(plan: _Plan, taps: int) -> list[tuple[int, int]]:
    """The channels of one chunk of ``taps`` taps, in ranges whose reads and products fit the budget (all of
    them at once where they fit: the usual call is one chunk of taps and one range of channels)."""
    step = max(1, _budget(plan) // max(1, taps * _TAP_CHANNEL_BYTES))
    return [(c, min(c + step, plan.C)) for c in range(0, plan.C, step)] or [(0, 0)]


def _concat(xp: Any, parts: list[Any]) -> Any:
    """Channel ranges' results, in order, along the first axis."""
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def _group_rois(xp: Any, rois: Any, group: _Group) -> Any:
    if group.rois is None:
        return rois
    return xp.take(rois, xp.asarray(np.array(group.rois, dtype=np.int64), device=device(rois)), axis=0)


def _planes(xp: Any, x: Any, plan: _Plan | None = None) -> Any:
    """x (N, C, H, W) as planes (C, N * H * W); for ps_roi_align, (C / (PH * PW), PH * PW * N * H * W)."""
    N, C, H, W = x.shape
    if plan is not None and plan.ps:
        bins = plan.pooled[0] * plan.pooled[1]
        v = xp.reshape(x, (N, C // bins, bins, H, W))
        return xp.reshape(xp.permute_dims(v, (1, 2, 0, 3, 4)), (C // bins, bins * N * H * W))
    return xp.reshape(xp.permute_dims(x, (1, 0, 2, 3)), (C, N * H * W))


_FILLS = (0.0, -0.0, float("nan"))


def _reorder(xp: Any, out: Any, plan: _Plan) -> Any:
    """The groups' outputs (C, PH, PW, K in group order) back in the boxes' order: a gather (its transpose, for the
    gradient, is the route of a permutation: a gather too)."""
    if plan.order is None:
        return out
    C, PH, PW, K = out.shape
    idx = xp.asarray(np.array(plan.order, dtype=np.int64), device=device(out))
    idx = xp.astype(idx, index_dtype(xp, out))
    return xp.reshape(max_select(Cells(K, K), xp.reshape(out, (C * PH * PW, K)), xp.reshape(idx, (1, K))),
                      (C, PH, PW, K))


def forward(plan: _Plan, x: Any, rois: Any) -> Any:
    """roi_align's output (K, C, PH, PW) in x's (compute) dtype."""
    if is_jax_array(x) and not plan.ps:
        return _jax_forward(plan, x, rois)
    mod = _WINDOWS(x) if unrecorded(x) else None
    found = windows(mod, plan, rois)
    if found is not None:
        return forward_windows(mod, plan, x, rois, found)
    xp = namespace(x)
    PH, PW = plan.pooled
    C = plan.C
    planes = _planes(xp, x, plan)
    parts = []
    for group in plan.groups:
        gr = _group_rois(xp, rois, group)
        k = gr.shape[0]
        if group.gh * group.gw == 0 or k == 0 or PH * PW == 0:
            parts.append(xp.full((C, k, PH, PW), _FILLS[group.fill], dtype=x.dtype, device=device(x)))
            continue
        count = float(group.gh * group.gw)
        pieces, acc = [], None
        for ks, ps, iys in _chunks(plan, group, k):
            cells, w = _taps(xp, plan, gr[ks[0]:ks[1], :], group, ps, iys)
            reads = Cells(plan.cells, cells.shape[1])
            part = _concat(xp, [xp.sum(xp.reshape(max_select(reads, planes[c0:c1, :], cells), (c1 - c0,)
                                                  + tuple(w.shape)) * w, axis=-1)  # (c, k, p, PW)
                                for c0, c1 in _channel_ranges(plan, cells.shape[1])])
            if iys != (0, group.gh) or acc is not None:  # a bin row's samples in several chunks: their sums added
                acc = part if acc is None else acc + part
                if iys[1] < group.gh:
                    continue
                part, acc = acc, None
            pieces.append(part)
        rows = pieces[0] if len(pieces) == 1 else _join(xp, pieces, plan, group, k)
        parts.append(_divide(xp, rows, count))
    out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)  # (C, K, PH, PW)
    if all(g.gh * g.gw == 0 for g in plan.groups) or PH * PW == 0 or plan.K == 0:
        out = anchor(out, x)  # nothing sampled: zeros, still a function of x for autodiff
    if plan.order is not None:
        out = xp.permute_dims(_reorder(xp, xp.permute_dims(out, (0, 2, 3, 1)), plan), (0, 3, 1, 2))
    return xp.permute_dims(out, (1, 0, 2, 3))


def _join(xp: Any, pieces: list[Any], plan: _Plan, group: _Group, k: int) -> Any:
    """A group's chunk results (C, k', p', PW) in order: whole rois concatenated, or one roi's bin rows."""
    if pieces[0].shape[2] == plan.pooled[0]:  # whole rois
        return xp.concat(pieces, axis=1)
    rois, per = [], []
    for piece in pieces:
        per.append(piece)
        if sum(p.shape[2] for p in per) == plan.pooled[0]:
            rois.append(xp.concat(per, axis=2))
            per = []
    return xp.concat(rois, axis=1)


def backward(plan: _Plan, g: Any, x: Any, rois: Any) -> Any:
    """The input gradient (N, C, H, W) for the cotangent g (K, C, PH, PW): per chunk (g * w) / count routed to the
    cells the taps read (a sort and a segmented sum), the chunks added in order."""
    if is_jax_array(g) and not plan.ps:
        return _jax_backward(plan, g, rois)
    mod = _WINDOWS(g) if unrecorded(g) else None  # (x is not read: only its shape)
    found = windows(mod, plan, rois)
    if found is not None:
        return backward_windows(mod, plan, g, x, rois, found)
    xp = namespace(x)
    N, C, H, W = plan.N, plan.C, plan.H, plan.W
    PH, PW = plan.pooled
    gc = xp.permute_dims(g, (1, 0, 2, 3))  # (C, K, PH, PW)
    into = xp.zeros((C, plan.cells), dtype=g.dtype, device=device(g)) if untracked(g, x) else None
    total = into
    for group in plan.groups:
        if group.gh * group.gw == 0 or PH * PW == 0:
            continue
        gr = _group_rois(xp, rois, group)
        gg = gc if group.rois is None else xp.take(
            gc, xp.asarray(np.array(group.rois, dtype=np.int64), device=device(g)), axis=1)
        count = float(group.gh * group.gw)
        for ks, ps, iys in _chunks(plan, group, gr.shape[0]):
            cells, w = _taps(xp, plan, gr[ks[0]:ks[1], :], group, ps, iys)
            gk = gg[:, ks[0]:ks[1], ps[0]:ps[1], :]
            routes = Cells(plan.cells, cells.shape[1])
            parts, ranges = [], _channel_ranges(plan, cells.shape[1])
            presorted = routes.sort(cells) if into is not None and len(ranges) > 1 else None  # one sort for all
            for c0, c1 in ranges:
                # torchvision's (g * w) / count per tap
                spread = xp.reshape(_divide(xp, xp.expand_dims(gk[c0:c1, ...], axis=-1) * w, count), (c1 - c0, -1))
                if into is not None:
                    routes.route(spread, cells, into=into[c0:c1, :], presorted=presorted)
                else:
                    parts.append(max_backward(routes, spread, cells, primal=x))
            if into is None:
                part = _concat(xp, parts)
                total = part if total is None else total + part
    if total is None:  # nothing sampled: zeros, still a function of g (and x) for autodiff
        total = anchor(anchor(xp.zeros((C, plan.cells), dtype=g.dtype, device=device(g)), g), x)
    if plan.ps:
        bins = PH * PW
        out = xp.reshape(xp.permute_dims(xp.reshape(total, (C, bins, N, H, W)), (2, 0, 1, 3, 4)),
                         (N, C * bins, H, W))
    else:
        out = xp.permute_dims(xp.reshape(total, (C, N, H, W)), (1, 0, 2, 3))
    if hasattr(out, "contiguous"):  # torch: a fresh contiguous gradient, as torch's own
        out = out.contiguous()
    elif isinstance(out, np.ndarray):
        out = np.ascontiguousarray(out)
    return out


# On JAX the image is read as rows of channels (N * H * W, C), one contiguous read per tap, and the gradient is
# ``jax_taps.route`` (a sort by cell and each cell's reads added rank after rank): both are primitives whose
# derivatives are each other, so JAX differentiates the forward natively to any order without a scatter.


def _jax_forward(plan: _Plan, x: Any, rois: Any) -> Any:
    """roi_align's output (K, C, PH, PW) on JAX: per chunk of taps, each bin's weighted reads of rows."""
    from .jax_taps import select

    xp = namespace(x)
    PH, PW = plan.pooled
    C = plan.C
    rows = xp.reshape(xp.permute_dims(x, (0, 2, 3, 1)), (plan.cells, C))
    parts = []
    for group in plan.groups:
        gr = _group_rois(xp, rois, group)
        k = gr.shape[0]
        if group.gh * group.gw == 0 or k == 0 or PH * PW == 0:
            parts.append(xp.full((k, PH, PW, C), _FILLS[group.fill], dtype=x.dtype, device=device(x)))
            continue
        pieces, acc = [], None
        for ks, ps, iys in _chunks(plan, group, k):
            cells, w = _taps(xp, plan, gr[ks[0]:ks[1], :], group, ps, iys)
            T = w.shape[-1]
            part = xp.reshape(select(rows, xp.reshape(cells, (-1, T)), xp.reshape(w, (-1, T))),
                              tuple(w.shape[:3]) + (C,))  # (k, p, PW, C)
            if iys != (0, group.gh) or acc is not None:  # a bin row's samples in several chunks: their sums added
                acc = part if acc is None else acc + part
                if iys[1] < group.gh:
                    continue
                part, acc = acc, None
            pieces.append(part)
        if len(pieces) == 1:
            joined = pieces[0]
        elif pieces[0].shape[1] == PH:  # whole rois
            joined = xp.concat(pieces, axis=0)
        else:  # one roi's rows of bins after another's
            joined = _rows_of_bins(xp, pieces, PH)
        parts.append(_divide(xp, joined, float(group.gh * group.gw)))
    out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)  # (K, PH, PW, C) in group order
    if plan.order is not None:
        out = xp.permute_dims(_reorder(xp, xp.permute_dims(out, (3, 1, 2, 0)), plan), (3, 1, 2, 0))
    return xp.permute_dims(out, (0, 3, 1, 2))


def _rows_of_bins(xp: Any, pieces: list[Any], PH: int) -> Any:
    """One roi's pieces of bin rows (1, p', PW, C) after another's, joined per roi (PH rows each)."""
    rois, per = [], []
    for piece in pieces:
        per.append(piece)
        if sum(p.shape[1] for p in per) == PH:
            rois.append(xp.concat(per, axis=1))
            per = []
    return xp.concat(rois, axis=0)


def _jax_backward(plan: _Plan, g: Any, rois: Any) -> Any:
    """The input gradient (N, C, H, W) on JAX: per chunk, (g * w) / count of every tap routed to its cell
    (``jax_taps.route``), the chunks added in order."""
    from .jax_taps import route

    xp = namespace(g)
    N, C, H, W = plan.N, plan.C, plan.H, plan.W
    gl = xp.permute_dims(g, (0, 2, 3, 1))  # (K, PH, PW, C)
    total = None
    for group in plan.groups:
        if group.gh * group.gw == 0 or plan.pooled[0] * plan.pooled[1] == 0:
            continue
        gr = _group_rois(xp, rois, group)
        gg = gl if group.rois is None else xp.take(
            gl, xp.asarray(np.array(group.rois, dtype=np.int64), device=device(g)), axis=0)
        for ks, ps, iys in _chunks(plan, group, gr.shape[0]):
            cells, w = _taps(xp, plan, gr[ks[0]:ks[1], :], group, ps, iys)
            T = w.shape[-1]
            gk = xp.reshape(gg[ks[0]:ks[1], ps[0]:ps[1], ...], (-1, C))
            part = route(gk, xp.reshape(cells, (-1, T)), xp.reshape(w, (-1, T)), plan.cells,
                         float(group.gh * group.gw))
            total = part if total is None else total + part
    if total is None:
        total = xp.zeros((plan.cells, C), dtype=g.dtype, device=device(g))
    return xp.permute_dims(xp.reshape(total, (N, H, W, C)), (0, 3, 1, 2))


def boxes_backward(plan: _Plan, g: Any, x: Any, rois: Any) -> Any:
    """The gradient w.r.t. the boxes (K, 5) for the cotangent g (K, C, PH, PW): per tap, the cotangent times the
    value read, summed over channels, times the tap weight's derivative w.r.t. each coordinate, over count; the
    batch index gets 0. The sample grids and counts are constants (their steps have no derivative); ps_roi_align's
    plan reads each bin's taps in its own channels (its planes)."""
    xp = namespace(x)
    PH, PW = plan.pooled
    planes = _planes(xp, x, plan)
    gc = xp.permute_dims(g, (1, 0, 2, 3))  # (C, K, PH, PW)
    parts = []
    for group in plan.groups:
        gr = _group_rois(xp, rois, group)
        k = gr.shape[0]
        if group.gh * group.gw == 0 or k == 0 or PH * PW == 0:
            parts.append(xp.zeros((k, 4), dtype=x.dtype, device=device(x)))
            continue
        gg = gc if group.rois is None else xp.take(
            gc, xp.asarray(np.array(group.rois, dtype=np.int64), device=device(g)), axis=1)
        count = float(group.gh * group.gw)
        sums: dict[tuple[int, int], Any] = {}
        for ks, ps, iys in _chunks(plan, group, k):
            cells, w, moves = _taps(xp, plan, gr[ks[0]:ks[1], :], group, ps, iys, derivatives=True)
            reads = Cells(plan.cells, cells.shape[1])
            gk = gg[:, ks[0]:ks[1], ps[0]:ps[1], :]
            pull = None  # per tap, sum over channels of cotangent x value read: (k, p, PW, T)
            for c0, c1 in _channel_ranges(plan, cells.shape[1]):
                v = xp.reshape(untracked_select(reads, planes[c0:c1, :], cells), (c1 - c0,) + tuple(w.shape))
                part = xp.sum(v * xp.expand_dims(gk[c0:c1, ...], axis=-1), axis=0)
                pull = part if pull is None else pull + part
            per = xp.stack([xp.sum(xp.reshape(pull * m, (m.shape[0], -1)), axis=-1) for m in moves], axis=-1)
            sums[ks] = per if ks not in sums else sums[ks] + per
        rows = xp.concat([sums[ks] for ks in sorted(sums)], axis=0) if len(sums) > 1 else next(iter(sums.values()))
        parts.append(_divide(xp, rows, count))
    out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)  # (K, 4) in group order
    if plan.order is not None:
        idx = xp.asarray(np.array(plan.order, dtype=np.int64), device=device(out))
        out = xp.take(out, idx, axis=0)
    return xp.concat([xp.zeros((plan.K, 1), dtype=out.dtype, device=device(out)), out], axis=1)


def untracked_select(reads: Cells, planes: Any, cells: Any) -> Any:
    """The values read (no autodiff binding: the box gradient is a value, not differentiated again)."""
    return reads.select(planes, cells)


def _axis_weights(xp: Any, plan: _Plan, rois: Any, group: _Group, vertical: bool) -> tuple[Any, Any, Any]:
    """Per roi, one axis's weights as a dense (k, bins, window) matrix from the first cell its samples touch, that
    cell (k,) and the window's length (k,) (0: no sample read); torchvision's sample arithmetic (``_axis``)."""
    dt, dev = rois.dtype, device(rois)
    off = 0.5 if plan.aligned else 0.0
    scale = xp.asarray(plan.scale, dtype=dt, device=dev)
    a, b = (2, 4) if vertical else (1, 3)
    bins, grid, L = (plan.pooled[0], group.gh, plan.H) if vertical else (plan.pooled[1], group.gw, plan.W)
    start = _product(xp.reshape(rois[:, a], (-1, 1, 1)) * scale) - off
    size = (_product(xp.reshape(rois[:, b], (-1, 1, 1)) * scale) - off) - start
    if not plan.aligned:
        size = xp.maximum(size, xp.ones_like(size))
    per = _divide(xp, size, float(bins))
    p = xp.reshape(xp.arange(bins, dtype=dt, device=dev), (1, bins, 1))
    i = xp.reshape(xp.arange(grid, dtype=dt, device=dev) + 0.5, (1, 1, grid))
    low, high, hw, lw, valid, _ = _axis(xp, start, per, grid, p, i, L)
    big = xp.full_like(low, float(L))
    first = xp.min(xp.reshape(xp.where(valid, low, big), (low.shape[0], -1)), axis=-1)
    last = xp.max(xp.reshape(xp.where(valid, high, -xp.ones_like(high)), (low.shape[0], -1)), axis=-1)
    length = xp.where(last >= first, last - first + 1, xp.zeros_like(last))
    span = int(to_host(xp.max(length))) if length.shape[0] else 0
    at = xp.reshape(xp.arange(max(span, 1), dtype=dt, device=dev), (1, 1, 1, -1))
    f = xp.reshape(first, (-1, 1, 1, 1))
    zero = xp.zeros((), dtype=dt, device=dev)
    w = (xp.where(xp.expand_dims(low, -1) - f == at, xp.expand_dims(xp.where(valid, hw, zero), -1), zero)
         + xp.where(xp.expand_dims(high, -1) - f == at, xp.expand_dims(xp.where(valid, lw, zero), -1), zero))
    return xp.sum(w, axis=2), first, length


def _windows(xp: Any, plan: _Plan, rois: Any, group: _Group) -> tuple[Any, Any, list[tuple[int, int, int, int, int]]]:
    """The rows' and columns' weights of a group's rois and each roi's (batch, first row, rows, first column,
    columns) on the host."""
    ay, y0, ny = _axis_weights(xp, plan, rois, group, True)
    ax, x0, nx = _axis_weights(xp, plan, rois, group, False)
    at = np.trunc(to_host(rois[:, 0])).astype(np.int64)
    spans = [(int(b), int(r), int(h), int(c), int(w)) for b, r, h, c, w in
             zip(at, to_host(y0), to_host(ny), to_host(x0), to_host(nx))]
    return ay, ax, spans


def windows_fit(plan: _Plan) -> bool:
    """Whether the dense row and column weights of every group stay small (a grid of thousands of samples per bin
    takes the taps instead)."""
    most = max((g.gh * plan.pooled[0] * plan.H + g.gw * plan.pooled[1] * plan.W) * (len(g.rois) if g.rois is not None
               else plan.K) for g in plan.groups)
    return most * 8 <= _budget(plan)


def windows(mod: Any, plan: _Plan, rois: Any) -> list[Any] | None:
    """Each group's window weights and spans (None for a group that samples nothing), or None where the windows
    would cost more than the taps: a roi's two products take about PH * h * w + PH * w * PW multiply-adds per
    channel against its taps' PH * PW * grid * 4 reads, and a product's multiply-add costs a small fraction of a
    gather's read (a detector's boxes: windows 2 to 5 times faster at 13 to 22 times the arithmetic; boxes larger
    than the image with few bins: hundreds of times the arithmetic, the taps win)."""
    if mod is None or plan.ps or not windows_fit(plan):  # (ps: each bin reads its own channels' image)
        return None
    xp = namespace(rois)
    PH, PW = plan.pooled
    found: list[Any] = []
    products = reads = 0
    for group in plan.groups:
        gr = _group_rois(xp, rois, group)
        if group.gh * group.gw == 0 or gr.shape[0] == 0 or PH * PW == 0:
            found.append(None)
            continue
        ay, ax, spans = _windows(xp, plan, gr, group)
        products += sum(PH * h * w + PH * w * PW for _, _, h, _, w in spans)
        reads += len(spans) * PH * PW * group.gh * group.gw * 4
        found.append((ay, ax, spans))
    return found if products <= _WINDOW_ADVANTAGE * reads else None


# how many of a window product's multiply-adds cost what one tap read does (measured on torch CPU: a Mask
# R-CNN call's windows at 22 times the taps' count ran 2.2 times faster)
_WINDOW_ADVANTAGE = 64


def forward_windows(mod: Any, plan: _Plan, x: Any, rois: Any, found: list[Any]) -> Any:
    """roi_align's output (K, C, PH, PW) by the windows (NumPy, torch on the CPU)."""
    xp = namespace(x)
    PH, PW = plan.pooled
    out = xp.zeros((plan.K, plan.C, PH, PW), dtype=x.dtype, device=device(x))
    for group, weights in zip(plan.groups, found):
        if weights is None:
            continue
        ay, ax, spans = weights
        ay, axt = xp.astype(ay, x.dtype), xp.permute_dims(xp.astype(ax, x.dtype), (0, 2, 1))
        count = float(group.gh * group.gw)
        members = range(len(spans)) if group.rois is None else group.rois
        for j, (k, (b, r, h, c, w)) in enumerate(zip(members, spans)):
            if h and w:
                out[k] = _divide(xp, mod.matmul(mod.matmul(ay[j, :, :h], x[b, :, r:r + h, c:c + w]),
                                                axt[j, :w, :]), count)
    return out


def backward_windows(mod: Any, plan: _Plan, g: Any, x: Any, rois: Any, found: list[Any]) -> Any:
    """The input gradient (N, C, H, W) by the windows: each roi's Ay^T @ g_k @ Ax / count added into its window,
    roi after roi in the boxes' order within each group, the groups in order."""
    xp = namespace(x)
    out = xp.zeros((plan.N, plan.C, plan.H, plan.W), dtype=g.dtype, device=device(g))
    for group, weights in zip(plan.groups, found):
        if weights is None:
            continue
        ay, ax, spans = weights
        ayt, ax = xp.permute_dims(xp.astype(ay, g.dtype), (0, 2, 1)), xp.astype(ax, g.dtype)
        count = float(group.gh * group.gw)
        members = range(len(spans)) if group.rois is None else group.rois
        for j, (k, (b, r, h, c, w)) in enumerate(zip(members, spans)):
            if h and w:
                out[b, :, r:r + h, c:c + w] += _divide(xp, mod.matmul(mod.matmul(ayt[j, :h, :], g[k]), ax[j, :, :w]),
                                                       count)
    return out
