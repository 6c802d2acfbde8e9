"""Fractional max pooling's windows: their starts from the samples (every axis at once), and on launch-bound
backends every window's cells gathered in one read and reduced, the gradient routed from each window's
nearby windows.

The windows are data (one sample per plane and axis), so the position tables are built per call on the
device; their constant parts (tap offsets, the last window's start, the neighbour tables) are cached per
plan. Along each axis the starts rise by at least one cell, so a cell is covered by at most
``(k - 1) // rise + 1`` windows of that axis (``rise`` the smallest, read from the starts), and two windows
sharing a winner lie within that many minus one of each other: each window sums the cotangents of those
neighbours with its winner, and the first of them writes the sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .._compat import namespace, on, put_rows, readable
from . import paths
from .cells import Cells, _gather
from .max_routes import _reduce_cells
from .sums import device_copy

# the bytes a launch-bound path's temporaries may take per plane, in multiples of a plane's input and output
_SPREAD = 6

_NEAR = paths.writes(
    "fractional.near-windows", "where the neighbourhood fits: each window sums the cotangents of the nearby windows "
    "that share its winner and the first of them writes the sum to the winner (unique cells: no sort), not "
    "Cells' sorted sums", exact="tolerance", within="fractional_max_pool.dense-windows")


@dataclass(frozen=True)
class Plan:
    """The static part of a call: input and output spatial sizes and the window."""

    spatial: tuple[int, ...]
    out: tuple[int, ...]
    k: tuple[int, ...]

    def starts(self, xp: Any, samples: Any, itype: Any) -> Any:
        """Window starts (N, C, n, max(out)) per axis (entries past an axis's size are not windows) for samples
        (N, C, n) in torch's column order, as torch computes them: with alpha = (S - k) / (O - 1) in the
        samples' dtype, window i starts at int((i + u) * alpha) - int(u * alpha), the last at S - k."""
        n = len(self.spatial)
        u = xp.flip(samples, axis=-1) if n == 2 else samples  # torch: 2-d samples are (W, H), 3-d (T, H, W)
        O = max(self.out)
        i = device_copy(self, "i", np.arange(O, dtype=np.float64), u, u.dtype)
        span = np.array([[s - k] for s, k in zip(self.spatial, self.k)], dtype=np.float64)
        alpha = device_copy(self, "span", span, u, u.dtype) / device_copy(
            self, "gaps", np.array([[max(o - 1, 1)] for o in self.out], dtype=np.float64), u, u.dtype)
        raw = xp.astype(xp.floor((i + u[..., None]) * alpha), itype)  # (N, C, n, O): int before subtracting
        last = np.arange(O)[None, :] == np.array([[o - 1] for o in self.out])
        return xp.where(device_copy(self, "last", last, u),
                        device_copy(self, "span_i", span.astype(np.int64), u, itype), raw - raw[..., :1])

    def dense_fits(self, itemsize: int) -> bool:
        """Whether every window's cells and their int64 positions (and a flag each) fit in ``_SPREAD`` times
        a plane's input and output."""
        P, M = math.prod(self.spatial), math.prod(self.out)
        return 0 < math.prod(self.k) * M * (itemsize + 9) <= _SPREAD * (P + M) * itemsize

    def dense(self, x: Any, starts: Any) -> tuple[Any, Any]:
        """Winners (N, C, M) of every window at once: its cells (N, C, M, K) read in one gather from the plain
        (undifferentiated) ``x`` (N, C, *spatial) and reduced by torch's scan rule (the row-major first
        maximum, the last NaN: ``max_routes._reduce_cells``)."""
        xp = namespace(x)
        n, (N, C) = len(self.spatial), x.shape[:2]
        R, P, M, K = N * C, math.prod(self.spatial), math.prod(self.out), math.prod(self.k)
        pos = None
        for a in range(n):
            stride = math.prod(self.spatial[a + 1:])
            taps = device_copy(self, ("taps", a), np.arange(self.k[a])[None, None, :] * stride, starts, starts.dtype)
            s = xp.reshape(starts[:, :, a, :self.out[a]], (R, self.out[a], 1))
            s = (s * stride if stride != 1 else s) + taps
            s = xp.reshape(s, (R,) + tuple(self.out[a] if b == a else 1 for b in range(n))
                           + tuple(self.k[a] if b == a else 1 for b in range(n)))
            pos = s if pos is None else pos + s
        table = xp.reshape(pos, (R, M, K))
        cells = xp.reshape(_gather(xp, xp.reshape(x, (R, P)), xp.reshape(table, (R, M * K)), (R,)), (R, M, K))

        def index_of(at: Any, dtype: Any) -> Any:
            return xp.reshape(_gather(xp, table, at[..., None], (R, M)), (R, M))

        return xp.reshape(_reduce_cells(xp, x, cells, True, index_of)[1], (N, C, M))


@lru_cache(maxsize=256)
def plan(spatial: tuple[int, ...], out: tuple[int, ...], k: tuple[int, ...]) -> Plan:
    return Plan(spatial, out, k)


@dataclass(frozen=True, eq=False)
class Windows:
    """The windows of one call (its ``starts``: data) as the max family's ``Routes``: ``select`` reads each plane
    at its winners, ``route`` adds each window's cotangent into its winner by one gather over every cell's
    covering windows where that fits, else by :class:`Cells`' sorted sums (the same sums, another order)."""

    plan: Plan
    starts: Any  # (N, C, n, max(out))

    @property
    def _cells(self) -> Cells:
        return Cells(math.prod(self.plan.spatial), math.prod(self.plan.out))

    @property
    def routed(self) -> tuple[int, ...]:
        return (math.prod(self.plan.spatial),)

    @property
    def selected(self) -> tuple[int, ...]:
        return (math.prod(self.plan.out),)

    def select(self, x: Any, idx: Any) -> Any:
        if x.shape[:-1] == idx.shape[:-1]:  # winners lie inside their plane: no cell outside to append
            return _gather(namespace(x), x, idx, tuple(x.shape[:-1]))
        return self._cells.select(x, idx)

    def route(self, g: Any, idx: Any) -> Any:
        """Each window's cotangent into its winner. Where the backend writes in place and the neighbourhood
        fits: every window sums the cotangents of the nearby windows (those that may share a cell with it)
        that have its winner, and the first of them (in window order) writes that sum to the winner - a write
        to unique cells (the others write to a spare cell each), so deterministic without a scatter-add.
        Else :class:`Cells`' sorted sums (the same terms in order)."""
        mod = _NEAR(g)
        near = None if mod is None or mod is not _NEAR(idx) else self._near(mod, g, idx)
        if near is None:
            return self._cells.route(g, idx)
        table, valid, earlier = near
        xp = namespace(g)
        lead, P, M = tuple(g.shape[:-1]), math.prod(self.plan.spatial), math.prod(self.plan.out)
        R, D = math.prod(lead), valid.shape[-1]
        g2, w2 = xp.reshape(g, (R, M)), xp.reshape(idx, (R, M))
        wv = xp.reshape(_gather(xp, w2, table, (R,)), (R, M, D))
        same = (wv == w2[..., None]) & valid
        sums = xp.sum(xp.where(same, xp.reshape(_gather(xp, g2, table, (R,)), (R, M, D)),
                               device_copy(self.plan, "zero", np.zeros(()), g2, g2.dtype)), axis=-1, dtype=g2.dtype)
        first = ~xp.any(same & earlier, axis=-1)
        spare = device_copy(self.plan, "spare", np.arange(P, P + M), w2, w2.dtype)
        out = xp.zeros((R, P + M), dtype=g.dtype, **on(g))
        put_rows(mod, out, xp.where(first, w2, spare), sums)
        return xp.reshape(out[:, :P], lead + (P,))

    def _near(self, mod: Any, g: Any, idx: Any) -> tuple[Any, Any, Any] | None:
        """(table (1, M * D) of each window's nearby windows, which of them are real (M, D), which come before
        it (D,)), where the call is plain (the starts' planes are g's) and the table fits, else None. Windows
        sharing a winner both cover it, so they lie within ``covers - 1`` windows of each other per axis."""
        p = self.plan
        N, C = self.starts.shape[:2]
        P, M = math.prod(p.spatial), math.prod(p.out)
        if tuple(g.shape[:-1]) != (N, C) or tuple(idx.shape) != tuple(g.shape) or M == 0 or N * C == 0 \
                or not (readable(g) and readable(idx)):
            return None
        xp = namespace(g)
        rises = [xp.min(self.starts[:, :, a, 1:o] - self.starts[:, :, a, :o - 1]) for a, o in enumerate(p.out) if o > 1]
        if mod.__name__ == "torch" and rises:
            steps = mod.stack(rises).tolist()  # one read
        else:
            steps = [int(r) for r in rises]
        it = iter(steps)
        # a rise of 0 (two windows sharing a start: only where rounding makes one) leaves every window a cover
        covers = tuple(1 if o <= 1 else _covering(o, k, next(it)) for o, k in zip(p.out, p.k))
        # per nearby window: its winner (int64) and flag, then its cotangent and term
        size = g.dtype.itemsize
        if M * math.prod(2 * c - 1 for c in covers) * (9 + 2 * size) > _SPREAD * (P + M) * size:
            return None
        table, valid, earlier = _neighbours(p.out, covers)
        return (device_copy(p, ("near", covers), table, idx, idx.dtype), device_copy(p, ("real", covers), valid, g),
                device_copy(p, ("earlier", covers), earlier, g))


def _covering(windows: int, k: int, rise: int) -> int:
    return min(windows, (k - 1) // rise + 1) if rise > 0 else windows


@lru_cache(maxsize=64)
def _neighbours(out: tuple[int, ...], covers: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every window of an ``out`` grid, its windows within ``covers - 1`` per axis: flat indices (1, M * D)
    (a window outside the grid: the window itself), whether each is inside (M, D), whether each offset comes
    before the window in row-major order (D,)."""
    offsets = np.stack(np.meshgrid(*[np.arange(1 - c, c) for c in covers], indexing="ij"), -1).reshape(-1, len(out))
    grid = np.stack(np.meshgrid(*[np.arange(o) for o in out], indexing="ij"), -1).reshape(-1, 1, len(out))
    near = grid + offsets[None]  # (M, D, n)
    valid = np.all((near >= 0) & (near < np.array(out)), axis=-1)
    flat = np.ravel_multi_index(tuple(np.clip(near, 0, np.array(out) - 1).transpose(2, 0, 1)), out)
    flat = np.where(valid, flat, np.arange(math.prod(out))[:, None])
    earlier = np.arange(offsets.shape[0]) < offsets.shape[0] // 2  # row-major offsets: the centre is the middle
    return flat.reshape(1, -1), valid, earlier

