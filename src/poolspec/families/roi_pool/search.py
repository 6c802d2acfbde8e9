"""roi_pool's windows and winners, written once against the array API: the plan of a call (the window frame, read
from the boxes on the host where their values are concrete), torchvision's edge rules (the card's notes) as array
arithmetic on the device, the search for each bin's winner a chunk of bins at a time, and the reads at the winners.

The image is read as planes (C, N * H * W): one flat cell index per (channel, bin) winner; the index N * H * W
marks a bin without a winner (it reads 0). The search is not differentiated; the values are
``kernels.cells.Cells`` reads through ``autodiff.max_select`` and the input gradient its transpose
``autodiff.max_backward`` (a sort and a segmented sum, no scatter), so torch and JAX differentiate the op natively
through those two bindings, to any order.

Off JAX, windows of more than ``_TABLE_FRAME`` cells are searched through range-maximum tables instead
(:func:`_table_search`): per cell an int64 key (the value's order high, the cell low) doubled into the best key of
each 2^a x 2^b block, four blocks covering each bin; the work is O(channels x cells x levels + channels x bins)
rather than O(channels x bins x frame), and the winners are the same (the first maximum of overlapping blocks is
the first maximum of one of them). JAX keeps the frame search: its program is one for any boxes of the shapes.

The edge arithmetic is one function, :func:`edges`, run on the device for the search and on the host (NumPy) for
the frame, so the host's bound is exactly the device's largest window.

ps_roi_pool (``_Plan.ps``) averages the same kind of windows (its own size and clamping rules, ``edges``' keywords)
over planes (C / (PH * PW), PH * PW * N * H * W) ordered (bin, batch, row, column): bin (ph, pw) of output channel
c reads input channel (c * PH + ph) * PW + pw. It is linear: the sum of each window's cells (``Cells`` reads) over
its area. torchvision's backward is not the transpose of its forward (the forward clamps the windows to [0, H - 1]
and rounds with round, the backward clamps to [0, H] and rounds with roundf), so under autodiff the forward's value
carries the derivative of the backward's windows: A x + (B x - B x) with the second pair's value held
(``stop_gradient``), the value exactly A x and the derivative B, torchvision's gradient, to any order.

A window is a row interval times a column interval, so the explicit backward (:func:`ps_backward`) is per bin row
one matrix product: the rows' indicator (N * H, rois) by the shares g / area spread over each bin's columns
(rois, PW * W), exact 0 / 1 products summed over the rois, no padded frame, no scatter; an untracked forward off
JAX (:func:`_ps_sums`) is its transpose, the rows' indicator by the planes, then each bin's columns summed. Both
take rois and (channel, bin row) pairs about ``_CHUNK_BYTES`` at a time. A non-finite operand takes four products
(the finite values and counts of +inf, -inf and NaN), since 0 x inf would spread NaN across whole rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._compat import (
    device,
    dtype_name,
    index_dtype,
    is_jax_array,
    library_of,
    namespace,
    readable,
    stop_gradient,
    to_host,
)
from ...autodiff import anchor, max_backward, max_select, untracked
from ...kernels.cells import Cells
from ...spec._rules import fail

# Bytes a chunk of window cells may take (the cell index, its validity, and per channel the value, its mask and
# position): bins are searched a chunk at a time, so the memory stays O(input + output + one chunk).
_CHUNK_BYTES = 1 << 24
_CELL_BYTES, _CELL_CHANNEL_BYTES = 24, 24
# The CPU's route for windows of more than _TABLE_FRAME cells (the frame): range-maximum tables (each cell the
# best of the 2^a x 2^b block at it) built a chunk of channels of about max(_TABLE_BYTES, the planes' bytes) at a
# time (_TABLE_CELL_BYTES per cell and channel: the tables in hand, the next one and the comparison's temporaries)
_TABLE_FRAME = 16
_TABLE_BYTES = 1 << 25
_TABLE_CELL_BYTES = 48
# and the gradient's route (Cells.route) a chunk of channels of about as many bytes, at _ROUTE_BYTES per cell
_ROUTE_BYTES = 64
# torchvision's initial maximum, -FLT_MAX, of x's dtype
FLT_MAX = float(np.finfo(np.float32).max)
# |coordinate * spatial_scale| bound: edges then stay within int32 (torchvision's int overflows beyond 2^31)
_MOST = float(1 << 29)


@dataclass(frozen=True)
class _Plan:
    """Everything static about one call (hashable: it keys the jitted programs on JAX). ``KH``, ``KW``: the window
    frame (the largest bin extent, or H and W when the boxes' values are not known); ``half``: the box arithmetic
    in float16 (x is float16)."""

    N: int
    C: int
    H: int
    W: int
    K: int
    pooled: tuple[int, int]
    scale: float
    KH: int
    KW: int
    half: bool
    # position-sensitive (ps_roi_pool): C counts the output channels, the planes hold one image per bin
    ps: bool = False

    @property
    def image_cells(self) -> int:
        return self.N * self.H * self.W

    @property
    def cells(self) -> int:
        return self.image_cells * (self.pooled[0] * self.pooled[1] if self.ps else 1)

    @property
    def bins(self) -> int:
        return self.K * self.pooled[0] * self.pooled[1]


def _kept(a: Any) -> Any:
    """``a`` rounded as computed: XLA may keep half precision in float32 between operations (excess precision),
    fuse a product into the next operation, or turn a division by a broadcast scalar into a product with its
    reciprocal (measured on the CPU, jax 0.10: 3 / 5 gave 0.6000000000000001 even for a 0-d divisor behind a
    barrier); torchvision rounds every operation in x's dtype. So the divisor is a full array behind the barrier."""
    if is_jax_array(a):
        import jax

        return jax.lax.optimization_barrier(a)
    return a


def _round(xp: Any, v: Any) -> Any:
    """std::round: half away from zero (the array API's round is half to even). v - trunc(v) is exact."""
    t = xp.trunc(v)
    frac = xp.abs(v - t)
    step = xp.where(frac >= 0.5, xp.sign(v), xp.zeros_like(v))
    return t + step


def edges(xp: Any, rois: Any, pooled: tuple[int, int], scale: float, H: int, W: int,
          itype: Any, *, plus: int = 1, single: bool = False) -> tuple[Any, Any, Any, Any, Any]:
    """Per roi: its batch index (K,), its bins' rows [hs, he) (K, PH) and columns [ws, we) (K, PW), clamped to
    [0, H] and [0, W], in torchvision's arithmetic (``rois``' dtype for the products and bin sizes, ``itype`` for
    the rest). The roi size is max(end - start + ``plus``, 1) (roi_pool's 1, ps_roi_pool's 0); ``single``: the
    corners rounded by roundf, a float64 product rounded to float32 first (ps_roi_pool's backward)."""
    dt, dev = rois.dtype, device(rois)
    sc = xp.asarray(scale, dtype=dt, device=dev)
    wide = dtype_name(xp, dt) != "float16"  # float16's largest value, 65504, is within the bounds below
    single = single and dtype_name(xp, dt) == "float64"

    def corner(j: int) -> Any:
        v = _kept(rois[:, j] * sc)
        if single:
            v = xp.astype(_kept(xp.astype(v, xp.float32)), dt)
        if wide:  # the card's bound
            v = xp.minimum(xp.maximum(v, xp.full_like(v, -_MOST)), xp.full_like(v, _MOST))
        return xp.astype(_round(xp, v), itype)

    sw, sh, ew, eh = (corner(j) for j in (1, 2, 3, 4))
    one = xp.ones_like(sw)
    rw, rh = xp.maximum(ew - sw + plus, one), xp.maximum(eh - sh + plus, one)

    def axis(size: Any, start: Any, P: int, L: int) -> tuple[Any, Any]:
        b = xp.astype(size, dt)
        b = _kept(b / _kept(xp.full_like(b, float(P)))) if is_jax_array(b) else b / float(P)
        b = xp.reshape(b, (-1, 1))
        lo = xp.floor(_kept(xp.reshape(xp.arange(0, P, dtype=dt, device=dev), (1, -1)) * b))
        hi = xp.ceil(_kept(xp.reshape(xp.arange(1, P + 1, dtype=dt, device=dev), (1, -1)) * b))
        if wide:  # 2^30: exact, a power of two; the clamp below decides anyway
            cap = xp.asarray(2 * _MOST, dtype=dt, device=dev)
            lo, hi = xp.minimum(lo, cap), xp.minimum(hi, cap)
        lo, hi = xp.astype(lo, itype), xp.astype(hi, itype)
        s = xp.reshape(start, (-1, 1))
        zero, top = xp.zeros_like(lo), xp.full_like(lo, L)
        return xp.minimum(xp.maximum(lo + s, zero), top), xp.minimum(xp.maximum(hi + s, zero), top)

    hs, he = axis(rh, sh, pooled[0], H)
    ws, we = axis(rw, sw, pooled[1], W)
    return xp.astype(rois[:, 0], itype), hs, he, ws, we


def frame(op: str, host: np.ndarray, pooled: tuple[int, int], scale: float, N: int, H: int, W: int,
          ps: bool = False) -> tuple[int, int]:
    """Checks of the boxes' values (finite, within the card's bound, batch index in [0, N)) and the window frame:
    the largest bin extent per axis (1 where no bin has a cell); ``ps``: over ps_roi_pool's forward and backward
    windows."""
    if host.shape[0] == 0 or pooled[0] * pooled[1] == 0:
        return 1, 1
    if not np.isfinite(host).all():
        fail(op, "boxes", "...", "must be finite (a NaN or infinite coordinate is outside the card)")
    batch = np.trunc(host[:, 0])
    if batch.min() < 0 or batch.max() >= N:
        fail(op, "boxes", f"batch indices in [{batch.min():g}, {batch.max():g}]",
             f"the batch index (column 0, truncated) must lie in [0, {N})")
    scaled = np.abs(host[:, 1:].astype(np.float64) * float(host.dtype.type(scale)))
    if scaled.max() >= _MOST:
        fail(op, "boxes", f"|coordinate * spatial_scale| up to {scaled.max():g}", "must stay below 2^29 (torchvision's "
             "int conversion overflows beyond 2^31)")
    with np.errstate(all="ignore"):
        if ps:
            frames = [ps_edges(namespace(host), host, pooled, scale, H, W, np.int64, b) for b in (False, True)]
            return (max(max(int((he - hs).max()) for _, hs, he, _, _ in frames), 1),
                    max(max(int((we - ws).max()) for _, _, _, ws, we in frames), 1))
        _, hs, he, ws, we = edges(namespace(host), host, pooled, scale, H, W, np.int64)
    return max(int((he - hs).max()), 1), max(int((we - ws).max()), 1)


def ps_edges(xp: Any, rois: Any, pooled: tuple[int, int], scale: float, H: int, W: int, itype: Any,
             backward: bool) -> tuple[Any, Any, Any, Any, Any]:
    """ps_roi_pool's windows: roi size max(end - start, 1); the forward's clamped to [0, H - 1] x [0, W - 1]
    (torchvision's forward never reads the last row and column), the backward's to [0, H] x [0, W] with roundf."""
    if backward:
        return edges(xp, rois, pooled, scale, H, W, itype, plus=0, single=True)
    return edges(xp, rois, pooled, scale, H - 1, W - 1, itype, plus=0)


def _chunks(plan: _Plan) -> list[tuple[int, int]]:
    """Ranges of flat bins (roi, bin row, bin column) of about ``_CHUNK_BYTES`` of window cells each (a function of
    the shapes and the frame alone)."""
    per_bin = plan.KH * plan.KW * (_CELL_BYTES + _CELL_CHANNEL_BYTES * max(plan.C, 1))
    step = max(1, _CHUNK_BYTES // max(per_bin, 1))
    return [(a, min(a + step, plan.bins)) for a in range(0, plan.bins, step)]


def _planes(xp: Any, x: Any) -> Any:
    """x (N, C, H, W) as planes (C, N * H * W)."""
    N, C, H, W = x.shape
    return xp.reshape(xp.permute_dims(x, (1, 0, 2, 3)), (C, N * H * W))


def _tabled(plan: _Plan, x: Any, rois: Any) -> bool:
    """Whether the bins are searched through range-maximum tables (:func:`_table_search`): windows of many cells,
    on arrays whose operations are cheap passes (the CPU's), with the boxes' values at hand."""
    return (not plan.ps and plan.KH * plan.KW > _TABLE_FRAME and plan.image_cells < 1 << 32
            and not is_jax_array(x) and readable(x) and readable(rois))


def _keys(xp: Any, p: Any, first: Any, thr: float) -> Any:
    """Each cell's int64 key: its value's order in the high 32 bits (cells <= ``thr`` and NaN as -inf, so they
    never win; -0.0 as 0.0, which torchvision's comparisons do not tell apart), 2^32 - 1 - its flat cell ``first``
    in the low 32: the larger key is the greater value, on a tie the earlier cell. float32 orders by its bits (sign
    and magnitude read as two's complement), other dtypes by their rank among the chunk's values."""
    v = xp.where(p > thr, p, xp.full_like(p, -float("inf"))) + 0.0
    lib = library_of(p)
    if dtype_name(xp, v.dtype) == "float32" and lib in ("numpy", "torch"):
        bits = v.view(np.int32) if lib == "numpy" else v.contiguous().view(xp.int32)
        order = xp.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
    else:
        flat = xp.reshape(v, (-1,))
        order = xp.reshape(xp.searchsorted(xp.sort(flat), flat), v.shape)  # the values below each
    return xp.astype(order, xp.int64) * (1 << 32) + (0xFFFFFFFF - xp.astype(first, xp.int64))


def _table_search(plan: _Plan, x: Any, rois: Any) -> tuple[Any, Any]:
    """:func:`search` by range-maximum tables: T[a, b] holds, per cell, the best key (:func:`_keys`) of the
    2^a x 2^b block at it, built by doubling along columns then rows; a bin of h x w cells is the best of four such
    blocks (a = floor(log2 h), b = floor(log2 w)) at its corners, which cover it, and the first maximum of their
    union is the first maximum of one of them. Only the (a, b) of the call's bins are built, a chunk of channels at
    a time: the work is O(C * cells * levels + C * bins), not O(C * bins * frame)."""
    xp = namespace(x)
    C, H, W = plan.C, plan.H, plan.W
    PH, PW = plan.pooled
    dev, itype = device(x), index_dtype(xp, x)
    batch, hs, he, ws, we = (to_host(a).astype(np.int64) for a in edges(
        xp, stop_gradient(rois), plan.pooled, plan.scale, H, W, itype))
    k = np.repeat(np.arange(plan.K), PH * PW)
    ph, pw = np.tile(np.repeat(np.arange(PH), PW), plan.K), np.tile(np.arange(PW), plan.K * PH)
    r0, r1, c0, c1 = hs[k, ph], he[k, ph], ws[k, pw], we[k, pw]
    live = np.flatnonzero((r1 > r0) & (c1 > c0))
    a = np.frexp((r1 - r0)[live].astype(np.float64))[1] - 1  # floor(log2 h), exactly
    b = np.frexp((c1 - c0)[live].astype(np.float64))[1] - 1
    pairs = sorted({(int(i), int(j)) for i, j in zip(a.tolist(), b.tolist())}, key=lambda t: (t[1], t[0]))
    groups = {p: live[(a == p[0]) & (b == p[1])] for p in pairs}
    order = np.concatenate([groups[p] for p in pairs] + [np.zeros(0, np.int64)])
    # bin n's key is column slot[n] of the searched bins (in pair order), or the last column (an empty bin)
    slot = np.full(plan.bins, order.size, dtype=np.int64)
    slot[order] = np.arange(order.size)
    slot = xp.asarray(slot, dtype=itype, device=dev)
    queries = {}
    for (i, j), bins in groups.items():
        rows, cols = (r0[bins], r1[bins] - (1 << i)), (c0[bins], c1[bins] - (1 << j))
        at = [batch[k[bins]] * (H * W) + r * W + c for r in rows for c in cols]
        queries[(i, j)] = xp.asarray(np.concatenate(at), dtype=itype, device=dev)
    planes = _planes(xp, stop_gradient(x))
    thr = -float("inf") if plan.half else -FLT_MAX
    size = C * plan.image_cells * (8 if dtype_name(xp, planes.dtype) == "float64" else 4)
    per = max(1, max(_TABLE_BYTES, size) // (plan.image_cells * _TABLE_CELL_BYTES))
    first = xp.reshape(xp.arange(plan.image_cells, dtype=itype, device=dev), (1, -1))
    nonempty = np.zeros((1, plan.bins), dtype=bool)
    nonempty[0, live] = True
    nonempty = xp.asarray(nonempty, device=dev)
    winners, filled = [], []
    for lo in range(0, C, per):
        p = planes[lo:min(lo + per, C), :]
        cc = p.shape[0]
        # flat (channel, image, row, column), so that every doubling is one contiguous pass: a cell's block then
        # reaches past its row (or image, or channel) only where the block is not whole, which no bin reads
        cols_table = xp.reshape(_keys(xp, p, first, thr), (-1,))
        offsets = xp.reshape(xp.arange(cc, dtype=itype, device=dev) * plan.image_cells, (cc, 1))
        done_j, found = 0, []
        for j in sorted({j for _, j in pairs}):
            while done_j < j:  # blocks 2^(j+1) wide: two of 2^j side by side
                s = 1 << done_j
                cols_table = xp.maximum(cols_table[:-s], cols_table[s:])
                done_j += 1
            table, done_i = cols_table, 0
            for i in sorted(i for i, jj in pairs if jj == j):
                while done_i < i:
                    s = (1 << done_i) * W
                    table = xp.maximum(table[:-s], table[s:])
                    done_i += 1
                q = queries[(i, j)]
                g = q.shape[0] // 4
                v = xp.reshape(xp.take(table, xp.reshape(offsets + xp.reshape(q, (1, -1)), (-1,))), (cc, 4, g))
                found.append(xp.max(v, axis=1))
        # an empty bin: cell 0's key (read, never a winner)
        found.append(xp.full((cc, 1), 0xFFFFFFFF, dtype=xp.int64, device=dev))
        key = xp.take(xp.concat(found, axis=1), slot, axis=1)  # (cc, bins)
        w = xp.astype(0xFFFFFFFF - (key & 0xFFFFFFFF), itype)
        if library_of(w) == "torch":
            w = w.contiguous()
        # a window of NaN and cells <= T(-FLT_MAX) only has none
        has = (xp.take_along_axis(p, w, axis=1) > thr) & nonempty
        winners.append(xp.where(has, w, xp.full_like(w, plan.cells)))
        filled.append(nonempty & ~has)
    return (winners[0], filled[0]) if len(winners) == 1 else (xp.concat(winners, axis=0), xp.concat(filled, axis=0))


def search(plan: _Plan, x: Any, rois: Any) -> tuple[Any, Any]:
    """Each (channel, bin)'s winner, a flat cell of the planes (C, K * PH * PW) (``plan.cells``: none), and whether
    the bin is filled with T(-FLT_MAX) (a bin with cells but no winner), (C, K * PH * PW). Not differentiated."""
    if _tabled(plan, x, rois):
        return _table_search(plan, x, rois)
    xp = namespace(x)
    H, W, C = plan.H, plan.W, plan.C
    PH, PW = plan.pooled
    KH, KW = plan.KH, plan.KW
    dev, itype = device(x), index_dtype(xp, x)
    planes = _planes(xp, stop_gradient(x))
    er = stop_gradient(rois)
    batch, hs, he, ws, we = edges(xp, er, plan.pooled, plan.scale, H, W, itype)
    hs, he = xp.reshape(hs, (-1,)), xp.reshape(he, (-1,))  # (K * PH)
    ws, we = xp.reshape(ws, (-1,)), xp.reshape(we, (-1,))  # (K * PW)
    thr = -float("inf") if plan.half else -FLT_MAX  # T(-FLT_MAX): -inf in float16
    oy = xp.reshape(xp.arange(KH, dtype=itype, device=dev), (1, KH, 1))
    ox = xp.reshape(xp.arange(KW, dtype=itype, device=dev), (1, 1, KW))
    pos = xp.reshape(xp.arange(KH * KW, dtype=itype, device=dev), (1, 1, KH * KW))

    def chunk(bins: tuple[Any, Any, Any]) -> tuple[Any, Any]:
        """The winners and fills (C, B) of the bins (roi k, bin row ph, bin column pw), each (B,)."""
        k, ph, pw = bins
        B = k.shape[0]

        def at(v: Any, i: Any) -> Any:
            return xp.reshape(xp.take(v, i, axis=0), (-1, 1, 1))

        r0, r1 = at(hs, k * PH + ph), at(he, k * PH + ph)
        c0, c1 = at(ws, k * PW + pw), at(we, k * PW + pw)
        rows, cols = r0 + oy, c0 + ox  # (B, KH, 1), (B, 1, KW)
        inside = (rows < r1) & (cols < c1)  # (B, KH, KW)
        base = at(batch, k) * (H * W)
        cell = base + rows * W + cols
        cell = xp.where(inside, cell, xp.full_like(cell, plan.cells))
        vals = xp.reshape(Cells(plan.cells, B * KH * KW).select(planes, xp.reshape(cell, (1, -1))), (C, B, KH * KW))
        ok = xp.reshape(inside, (1, B, KH * KW)) & ~xp.isnan(vals)
        v = xp.where(ok, vals, xp.full_like(vals, -float("inf")))
        m = xp.max(v, axis=-1)  # (C, B)
        has = m > thr
        first = xp.min(xp.where(ok & (v == xp.expand_dims(m, axis=-1)), pos, xp.full_like(pos, KH * KW)), axis=-1)
        first = xp.where(has, first, xp.zeros_like(first))
        win = xp.reshape(base + r0 * W + c0, (1, B)) + (first // KW) * W + first % KW
        nonempty = xp.reshape((r1 > r0) & (c1 > c0), (1, B))
        return xp.where(has, win, xp.full_like(win, plan.cells)), nonempty & ~has

    def indices(flat: np.ndarray) -> tuple[Any, Any, Any]:
        parts = (flat // (PH * PW), (flat // PW) % PH, flat % PW)
        k, ph, pw = (xp.asarray(a.astype(np.int64), dtype=itype, device=dev) for a in parts)
        return k, ph, pw

    ranges = _chunks(plan)
    if len(ranges) > 1 and is_jax_array(x):  # one loop in the program, not a copy of the body per chunk
        import jax

        step = ranges[0][1] - ranges[0][0]
        n = len(ranges)
        flat = np.arange(n * step, dtype=np.int64) % plan.bins  # the last chunk padded with bins read again
        k, ph, pw = indices(flat)
        w, f = jax.lax.map(chunk, tuple(xp.reshape(a, (n, step)) for a in (k, ph, pw)))  # (n, C, step)
        w, f = (xp.reshape(xp.permute_dims(a, (1, 0, 2)), (C, n * step))[:, :plan.bins] for a in (w, f))
        return w, f
    winners, filled = [], []
    for a, b in ranges:
        w, f = chunk(indices(np.arange(a, b, dtype=np.int64)))
        winners.append(w)
        filled.append(f)
    if len(winners) == 1:
        return winners[0], filled[0]
    return xp.concat(winners, axis=1), xp.concat(filled, axis=1)


def forward(plan: _Plan, x: Any, rois: Any) -> Any:
    """roi_pool's output (K, C, PH, PW) in x's (compute) dtype: x read at the winners, T(-FLT_MAX) where a bin has
    cells but no winner."""
    xp = namespace(x)
    C, (PH, PW) = plan.C, plan.pooled
    if plan.bins == 0:
        return anchor(xp.zeros((plan.K, C, PH, PW), dtype=x.dtype, device=device(x)), x)
    winners, filled = search(plan, x, rois)
    vals = max_select(Cells(plan.cells, plan.bins), _planes(xp, x), winners)
    thr = -float("inf") if plan.half else -FLT_MAX
    vals = xp.where(filled, xp.full_like(vals, thr), vals)
    return xp.permute_dims(xp.reshape(vals, (C, plan.K, PH, PW)), (1, 0, 2, 3))


def select(plan: _Plan, gg: Any, x: Any, rois: Any) -> Any:
    """``gg`` (N, C, H, W) read at the winners of ``x`` (K, C, PH, PW), 0 for a bin without one: the transpose of
    :func:`backward` (its derivative w.r.t. the cotangent)."""
    xp = namespace(x)
    C, (PH, PW) = plan.C, plan.pooled
    if plan.bins == 0:
        return anchor(anchor(xp.zeros((plan.K, C, PH, PW), dtype=gg.dtype, device=device(gg)), gg), x)
    winners, _ = search(plan, x, rois)
    vals = max_select(Cells(plan.cells, plan.bins), _planes(xp, gg), winners, primal=x)
    return xp.permute_dims(xp.reshape(vals, (C, plan.K, PH, PW)), (1, 0, 2, 3))


def backward(plan: _Plan, g: Any, x: Any, rois: Any) -> Any:
    """The input gradient (N, C, H, W) for the cotangent g (K, C, PH, PW): g routed to the winners (a sort and a
    segmented sum per plane, in (roi, bin) order)."""
    xp = namespace(x)
    N, C, H, W = plan.N, plan.C, plan.H, plan.W
    if plan.bins == 0:
        total = anchor(anchor(xp.zeros((C, plan.cells), dtype=g.dtype, device=device(g)), g), x)
    else:
        winners, _ = search(plan, x, rois)
        gc = xp.reshape(xp.permute_dims(g, (1, 0, 2, 3)), (C, plan.bins))
        cells = Cells(plan.cells, plan.bins)
        # the route's temporaries grow with channels x cells: a chunk of channels at a time off JAX (whose program
        # plans its own memory), each chunk's planes their own
        per = C if is_jax_array(x) else max(1, max(_TABLE_BYTES, C * plan.cells * 4) // (plan.cells * _ROUTE_BYTES))
        parts = [max_backward(cells, gc[lo:min(lo + per, C), :], winners[lo:min(lo + per, C), :], primal=x)
                 for lo in range(0, C, per)]
        total = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    out = xp.permute_dims(xp.reshape(total, (C, N, H, W)), (1, 0, 2, 3))
    if hasattr(out, "contiguous"):  # torch: a fresh contiguous gradient, as torch's own
        out = out.contiguous()
    elif isinstance(out, np.ndarray):
        out = np.ascontiguousarray(out)
    return out


# --- ps_roi_pool: window averages over the position-sensitive planes ----------------------------------------------

def _ps_planes(xp: Any, x: Any, plan: _Plan) -> Any:
    """x (N, C, H, W) as planes (C / (PH * PW), PH * PW * N * H * W), ordered (bin, batch, row, column)."""
    N, C, H, W = x.shape
    bins = plan.pooled[0] * plan.pooled[1]
    v = xp.reshape(x, (N, C // bins, bins, H, W))
    return xp.reshape(xp.permute_dims(v, (1, 2, 0, 3, 4)), (C // bins, bins * N * H * W))


def _ps_chunks(plan: _Plan) -> list[tuple[int, int]]:
    """Ranges of rois of about ``_CHUNK_BYTES`` of window cells each (a function of the shapes and the frame)."""
    per_roi = plan.pooled[0] * plan.pooled[1] * plan.KH * plan.KW * (_CELL_BYTES + _CELL_CHANNEL_BYTES * plan.C)
    step = max(1, _CHUNK_BYTES // max(per_roi, 1))
    return [(a, min(a + step, plan.K)) for a in range(0, plan.K, step)]


def _ps_windows(xp: Any, plan: _Plan, rois: Any, backward: bool) -> tuple[Any, Any, Any]:
    """The window cells (1, k * PH * PW * KH * KW) of rois (k, 5) (``plan.cells``: none), whether each is in its
    window (k * PH * PW, KH * KW) and each bin's area (k * PH * PW,), as an integer."""
    H, W = plan.H, plan.W
    PH, PW = plan.pooled
    KH, KW = plan.KH, plan.KW
    dev, itype = device(rois), index_dtype(xp, rois)
    batch, hs, he, ws, we = ps_edges(xp, stop_gradient(rois), plan.pooled, plan.scale, H, W, itype, backward)
    k = hs.shape[0]

    def r(a: Any, shape: tuple[int, ...]) -> Any:
        return xp.reshape(a, shape)

    oy = r(xp.arange(KH, dtype=itype, device=dev), (1, 1, 1, KH, 1))
    ox = r(xp.arange(KW, dtype=itype, device=dev), (1, 1, 1, 1, KW))
    rows, cols = r(hs, (k, PH, 1, 1, 1)) + oy, r(ws, (k, 1, PW, 1, 1)) + ox
    inside = (rows < r(he, (k, PH, 1, 1, 1))) & (cols < r(we, (k, 1, PW, 1, 1)))
    bins = r(xp.arange(PH, dtype=itype, device=dev), (1, PH, 1, 1, 1)) * PW + r(
        xp.arange(PW, dtype=itype, device=dev), (1, 1, PW, 1, 1))
    cell = bins * plan.image_cells + r(batch, (k, 1, 1, 1, 1)) * (H * W) + rows * W + cols
    cell = xp.where(inside, cell, xp.full_like(cell, plan.cells))
    area = r(xp.maximum(he - hs, xp.zeros_like(he)), (k, PH, 1)) * r(xp.maximum(we - ws, xp.zeros_like(we)),
                                                                     (k, 1, PW))
    return r(cell, (1, -1)), r(inside, (k * PH * PW, KH * KW)), r(area, (-1,))


def _ps_means(xp: Any, plan: _Plan, planes: Any, rois: Any, backward: bool) -> Any:
    """Each (output channel, bin)'s window sum over its area (C, K * PH * PW), 0 for an empty window; the
    forward's windows, or (``backward``) those of torchvision's backward."""
    C, n = plan.C, plan.pooled[0] * plan.pooled[1]
    parts = []
    for a, b in _ps_chunks(plan):
        cells, _, area = _ps_windows(xp, plan, rois[a:b, :], backward)
        vals = max_select(Cells(plan.cells, cells.shape[1]), planes, cells)
        sums = xp.sum(xp.reshape(vals, (C, (b - a) * n, plan.KH * plan.KW)), axis=-1) + 0.0  # (+0.0: no -0.0)
        area = xp.astype(xp.maximum(area, xp.ones_like(area)), planes.dtype)  # empty: 0 / 1
        parts.append(sums / _kept(xp.broadcast_to(xp.reshape(area, (1, -1)), sums.shape)))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)


def _ps_sums(xp: Any, plan: _Plan, x: Any, rois: Any, backward: bool) -> Any:
    """:func:`_ps_means` of an untracked x (N, C * PH * PW, H, W), not on JAX, as (K, C, PH, PW), through the
    windows' two factors: per (channel, bin row) one product rows (k, N * H) @ x (N * H, PW * W), then each bin's
    columns summed; a non-finite x (or one not read) as the backward's cotangent (``_codes``), since 0 x inf
    spreads NaN."""
    C, N, H, W, (PH, PW) = plan.C, plan.N, plan.H, plan.W, plan.pooled
    dt, dev = x.dtype, device(x)
    roi_chunks, cstep, hstep = _ps_route_chunks(plan, 8 if dtype_name(xp, dt) == "float64" else 4)
    finite = readable(x) and bool(xp.all(xp.isfinite(x)))
    zero = xp.zeros((), dtype=dt, device=dev)
    v = xp.reshape(x, (N, C, PH, PW, H, W))
    factors = [(a, b) + _ps_indicators(xp, plan, rois[a:b, :], dt, backward) for a, b in roi_chunks]
    parts = []
    for c0 in range(0, C, cstep):
        cc, rowed = min(cstep, C - c0), []
        for h0 in range(0, PH, hstep):
            hh = min(hstep, PH - h0)
            plane = v[:, c0:c0 + cc, h0:h0 + hh, ...] if (cc, hh) != (C, PH) else v
            plane = xp.reshape(xp.permute_dims(plane, (2, 0, 4, 1, 3, 5)), (hh, N * H, cc, PW, W))
            if not finite:
                plane = xp.stack([xp.where(m, p, zero) for m, p in _codes(xp, plane)], axis=2)
            plane = xp.reshape(plane, (hh, N * H, -1))
            per_roi = []
            for a, b, rows, cols, area in factors:
                k = b - a
                rows = rows[h0:h0 + hh, ...] if hh < PH else rows
                area = area[h0:h0 + hh, ...] if hh < PH else area
                t = xp.matmul(rows, plane)  # (hh, k, [4 x] cc * PW * W)
                if finite:
                    t = xp.sum(xp.where(cols, xp.reshape(t, (hh, k, cc, PW, W)), zero), axis=-1)
                else:
                    t = xp.sum(xp.where(xp.expand_dims(cols, axis=2), xp.reshape(t, (hh, k, 4, cc, PW, W)), zero),
                               axis=-1)
                    t = xp.reshape(_decoded(xp, xp.reshape(t, (hh, k, 4, cc * PW))), (hh, k, cc, PW))
                per_roi.append(xp.permute_dims((t + 0.0) / area, (1, 2, 0, 3)))  # (k, cc, hh, PW) (+0.0: no -0.0)
            rowed.append(per_roi[0] if len(per_roi) == 1 else xp.concat(per_roi, axis=0))
        parts.append(rowed[0] if len(rowed) == 1 else xp.concat(rowed, axis=2))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)


def ps_forward(plan: _Plan, x: Any, rois: Any) -> Any:
    """ps_roi_pool's output (K, C / (PH * PW), PH, PW) in x's (compute) dtype; under autodiff its derivative is
    torchvision's backward (the module's docstring)."""
    xp = namespace(x)
    C, (PH, PW) = plan.C, plan.pooled
    if plan.bins == 0:
        return anchor(xp.zeros((plan.K, C, PH, PW), dtype=x.dtype, device=device(x)), x)
    if untracked(x) and not is_jax_array(x):
        return _ps_sums(xp, plan, x, rois, False)
    planes = _ps_planes(xp, x, plan)
    out = _ps_means(xp, plan, planes, rois, False)
    held = _ps_means(xp, plan, stop_gradient(planes), rois, True)
    zero = _ps_means(xp, plan, planes, rois, True) - held  # 0, with the backward windows' derivative
    zero = xp.where(xp.isfinite(held), zero, xp.zeros_like(zero))  # (inf - inf would spread NaN)
    out = stop_gradient(out) + zero
    return xp.permute_dims(xp.reshape(out, (C, plan.K, PH, PW)), (1, 0, 2, 3))


def ps_select(plan: _Plan, gg: Any, rois: Any) -> Any:
    """``gg`` (N, C, H, W) through the transpose of :func:`ps_backward`: the means of the backward's windows
    (K, C / (PH * PW), PH, PW), the backward's derivative w.r.t. its cotangent."""
    xp = namespace(gg)
    C, (PH, PW) = plan.C, plan.pooled
    if plan.bins == 0:
        return anchor(xp.zeros((plan.K, C, PH, PW), dtype=gg.dtype, device=device(gg)), gg)
    out = _ps_means(xp, plan, _ps_planes(xp, gg, plan), rois, True)
    return xp.permute_dims(xp.reshape(out, (C, plan.K, PH, PW)), (1, 0, 2, 3))


def _ps_indicators(xp: Any, plan: _Plan, rois: Any, dtype: Any, backward: bool = True) -> tuple[Any, Any, Any]:
    """The backward's (or the forward's) windows of rois (k, 5) as their two factors, in ``dtype``: per bin row
    whether each row of the roi's image is in it (PH, N * H, k), or (PH, k, N * H) for the forward, per bin column
    whether each column is (1, k, 1, PW, W), and each bin's area, at least 1 (an empty window routes nothing),
    (k, 1, PH, PW), or (PH, k, 1, PW) for the forward."""
    H, W, N = plan.H, plan.W, plan.N
    (PH, PW), dev, itype = plan.pooled, device(rois), index_dtype(xp, rois)
    batch, hs, he, ws, we = ps_edges(xp, stop_gradient(rois), plan.pooled, plan.scale, H, W, itype, backward)
    k = hs.shape[0]
    at, image = ((PH, 1, 1, k), (1, N, 1, 1)) if backward else ((PH, k, 1, 1), (1, 1, N, 1))
    y = xp.reshape(xp.arange(H, dtype=itype, device=dev), (1, 1, H, 1) if backward else (1, 1, 1, H))
    hs, he = (xp.reshape(xp.permute_dims(v, (1, 0)), at) for v in (hs, he))
    rows = (hs <= y) & (y < he) & (xp.reshape(xp.arange(N, dtype=itype, device=dev), image)
                                   == xp.reshape(batch, (1, 1, 1, k) if backward else (1, k, 1, 1)))
    x = xp.arange(W, dtype=itype, device=dev)
    cols = (xp.reshape(ws, (1, k, 1, PW, 1)) <= x) & (x < xp.reshape(we, (1, k, 1, PW, 1)))
    ah = xp.maximum(he - hs, xp.zeros_like(he))  # (PH, 1, 1, k) or (PH, k, 1, 1)
    aw = xp.maximum(we - ws, xp.zeros_like(we))  # (k, PW)
    if backward:
        area = xp.reshape(xp.permute_dims(xp.reshape(ah, (PH, k)), (1, 0)), (k, 1, PH, 1)) * \
            xp.reshape(aw, (k, 1, 1, PW))
    else:
        area = ah * xp.reshape(aw, (1, k, 1, PW))
    return (xp.astype(xp.reshape(rows, (PH, N * H, k) if backward else (PH, k, N * H)), dtype), cols,
            xp.astype(xp.maximum(area, xp.ones_like(area)), dtype))


def _ps_route_chunks(plan: _Plan, itemsize: int) -> tuple[list[tuple[int, int]], int, int]:
    """(roi ranges, channels, bin rows) a step of the backward's products takes, about ``_CHUNK_BYTES`` each: a
    roi chunk's factors and one (channel, bin row)'s spread shares (k, PW * W); then per (channel, bin row) its
    shares and gradient planes, twice (the product and its reordering); bin rows are split only one channel at a
    time."""
    (PH, PW), NH, W = plan.pooled, plan.N * plan.H, plan.W
    per_roi = (PH * NH + 2 * PW * W) * itemsize + PH * PW * 8
    kstep = max(1, min(plan.K, _CHUNK_BYTES // per_roi))
    per_row = PW * W * (kstep + 2 * NH) * itemsize
    units = max(1, _CHUNK_BYTES // per_row)
    cstep, hstep = (min(plan.C, units // PH), PH) if units >= PH else (1, units)
    return [(a, min(a + kstep, plan.K)) for a in range(0, plan.K, kstep)], cstep, hstep


def _codes(xp: Any, share: Any) -> list[tuple[Any, Any]]:
    """(where, value) of the four quantities a non-finite cotangent is routed as: the finite shares, and the
    counts of +inf, -inf and NaN shares (0 / 1 products: exact sums)."""
    one = xp.ones((), dtype=share.dtype, device=device(share))
    return [(xp.isfinite(share), share), (share == float("inf"), one), (share == -float("inf"), one),
            (xp.isnan(share), one)]


def _decoded(xp: Any, total: Any) -> Any:
    """The sums (..., 4, M) of :func:`_codes` as a cell's value: NaN where a NaN, or +inf and -inf, meet; else
    +inf or -inf where one does; else the finite sum."""
    value, pos, neg, nan = (total[..., j, :] for j in range(4))
    inf = xp.full_like(value, float("inf"))
    out = xp.where(pos > 0, inf, xp.where(neg > 0, -inf, value))
    return xp.where((nan > 0) | ((pos > 0) & (neg > 0)), xp.full_like(value, float("nan")), out)


def ps_backward(plan: _Plan, g: Any, x: Any, rois: Any) -> Any:
    """The input gradient (N, C, H, W) for the cotangent g (K, C / (PH * PW), PH, PW), torchvision's: g / area
    added to every cell of the backward's windows. A window is a row interval times a column interval, so each
    (channel, bin) plane's gradient is one product rows (N * H, K) @ (g / area x columns) (K, W): sums over the rois
    of exact 0 / 1 products, no scatter, O(C x K x H x W) dense work in chunks of rois and channels."""
    xp = namespace(x)
    N, C, H, W = plan.N, plan.C, plan.H, plan.W
    PH, PW = plan.pooled
    n = PH * PW
    dt, dev = g.dtype, device(g)
    if plan.bins == 0:
        zeros = xp.zeros((N, C * n, H, W), dtype=dt, device=dev)
        return anchor(anchor(zeros, g), x)
    roi_chunks, cstep, hstep = _ps_route_chunks(plan, 8 if dtype_name(xp, dt) == "float64" else 4)
    # a cotangent read as finite takes one product; otherwise (or unread: traced) four (the module's _codes)
    finite = readable(g) and not is_jax_array(g) and bool(xp.all(xp.isfinite(g)))
    factors = [(a, b) + _ps_indicators(xp, plan, rois[a:b, :], dt) for a, b in roi_chunks]
    zero = xp.zeros((), dtype=dt, device=dev)
    parts = []
    for c0 in range(0, C, cstep):
        cc, rowed = min(cstep, C - c0), []
        for h0 in range(0, PH, hstep):
            hh = min(hstep, PH - h0)
            total: Any = None
            for a, b, rows, cols, area in factors:
                k = b - a
                ga = g[a:b, c0:c0 + cc, h0:h0 + hh, :] if (b - a, cc, hh) != (plan.K, C, PH) else g
                area = area[:, :, h0:h0 + hh, :] if hh < PH else area
                share = ga / _kept(xp.broadcast_to(area, ga.shape) if is_jax_array(ga) else area)
                share = xp.reshape(xp.permute_dims(share, (2, 0, 1, 3)), (hh, k, cc, PW, 1))
                if finite:
                    spread = xp.where(cols, share, zero)
                else:  # 0 x inf would spread NaN over whole rows: the finite values and counts of the others
                    spread = xp.stack([xp.where(cols & m, v, zero) for m, v in _codes(xp, share)], axis=2)
                rows = rows[h0:h0 + hh, ...] if hh < PH else rows
                part = xp.matmul(rows, xp.reshape(spread, (hh, k, -1)))
                total = part if total is None else total + part  # (hh, N * H, [4 x] cc * PW * W)
            if not finite:
                total = _decoded(xp, xp.reshape(total, (hh, N * H, 4, -1)))
            rowed.append(xp.reshape(total + 0.0, (hh, N, H, cc, PW, W)))  # (+0.0: no -0.0)
        total = rowed[0] if len(rowed) == 1 else xp.concat(rowed, axis=0)
        parts.append(xp.reshape(xp.permute_dims(total, (1, 3, 0, 4, 2, 5)), (N, cc * n, H, W)))
    out = anchor(parts[0] if len(parts) == 1 else xp.concat(parts, axis=1), x)
    if hasattr(out, "contiguous"):  # torch: a fresh contiguous gradient, as torch's own
        out = out.contiguous()
    elif isinstance(out, np.ndarray):
        out = np.ascontiguousarray(out)
    return out
