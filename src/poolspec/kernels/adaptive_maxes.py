"""Adaptive max pools over ragged windows [floor(i*L/O), ceil((i+1)*L/O)): the scan axis by axis with torch's
rule, every window's cells in one gather where that table is small, and gradients by gathering over the
transposed tables (regular windows, where every axis divides evenly, are ``maxes.MaxWindows``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import (
    index_dtype,
    is_dask_array,
    is_jax_array,
    namespace,
    on,
    take,
    to_namespace,
)
from ..plans import windows
from . import paths
from .blocks import blocked, fits
from .blocks import kept as _kept
from .chunked import axis_pass
from .dense import _Dense
from .max_routes import (
    _UNROLL,
    _along,
    _lowest,
    _outer_index,
    _reduce_cells,
    _walk,
    gathered_route,
    slot_route,
    sorted_route,
    take_winners,
)
from .maxes import _NEVER, _SLOTS, MaxWindows
from .sums import _at, pad_axis

_DENSE = paths.launches(
    "adaptive_maxes.dense-gather", "where each operation is a kernel launch: every ragged window's cells in one "
    "gather and one reduction, whatever the plane's size (within the GPU paths' bound)", exact="bitwise")
_GPU_ROUTE = paths.launches(
    "adaptive_maxes.gpu-route", "where each operation is a kernel launch: the gradient by one gather over every "
    "cell's covering windows, one select and one sum")
_SLOT_ROUTE = paths.writes(
    "adaptive_maxes.slot-route", "at most _SLOTS covering windows per cell: the gradient added slot by slot at the "
    "winners (max_routes.slot_route)")
_TAKE_WINNERS = paths.launches(
    "adaptive_maxes.take-winners", "where each operation is a kernel launch: the double backward by one gather at "
    "the winners", exact="bitwise")


@dataclass(frozen=True, eq=False)
class AdaptiveMaxWindows(_Dense):
    """Ragged adaptive max windows [floor(i*L/O), ceil((i+1)*L/O)) over the trailing axes, by ``take``.

    Same interface as :class:`MaxWindows`. Tap t of output o reads cell start[o] + t, or an appended
    padding cell (the dtype's lowest value) past the window's end; tap 0 is always inside, so it starts
    the scan as torch's does. The gradient gathers through the transposed tables: every input cell visits
    the outputs whose window holds it (ascending, which is torch's accumulation order) and keeps g where
    that output's winner is the cell.
    """

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]

    @property
    def _empty_output(self) -> bool:
        return 0 in self.out_spatial

    def _plans(self) -> list[Any]:
        return [windows.ragged(L, O) for L, O in zip(self.in_spatial, self.out_spatial)]

    def _strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.in_spatial[i + 1:]) for i in range(len(self.in_spatial)))

    def _offsets(self, i: int) -> np.ndarray:
        plan = self._plans()[i]
        return np.where(plan.index < plan.length, plan.index * self._strides()[i], _NEVER)

    def _empty(self, xp: Any, like: Any, spatial: tuple[int, ...], dtype: Any) -> Any:
        shape = tuple(like.shape[:like.ndim - len(spatial)]) + spatial
        return xp.zeros(shape, dtype=dtype, **on(like))

    def forward(self, x: Any, with_index: bool = True) -> tuple[Any, Any]:
        xp = namespace(x)
        if not with_index and is_dask_array(x) and not self._empty_output and 0 not in x.shape:
            values, lead = x, x.ndim - len(self.in_spatial)
            for i in reversed(range(len(self.in_spatial))):
                values = axis_pass(values, lead + i, self._plans()[i], "max", _lowest(xp, x))
            return values, None
        if self._empty_output:
            return self._empty(xp, x, self.out_spatial, x.dtype), self._empty(xp, x, self.out_spatial, xp.int64)
        cells = math.prod(self.out_spatial) * math.prod(p.taps for p in self._plans())
        planes = math.prod(x.shape[:x.ndim - len(self.in_spatial)])
        if 0 not in x.shape and _DENSE(x) and self._dense_fits(math.prod(p.taps for p in self._plans()), x):
            return self._dense(x, with_index)  # a GPU: one gather and one reduction
        if not is_dask_array(x) and 0 not in x.shape and fits((x,), planes * cells, cells):  # small: one gather
            if not with_index:
                return blocked(lambda a: self._dense(a, False)[0], (x,), len(self.in_spatial), cells,
                               cell_bytes=8, tables=True), None
            return blocked(lambda a: self._dense(a, True), (x,), len(self.in_spatial), cells, cell_bytes=8,
                           tables=True)
        if not is_dask_array(x) and 0 not in x.shape:
            plane = max(math.prod(self.in_spatial), math.prod(self.out_spatial))
            if not with_index:
                return blocked(lambda a: self._separable(a, False)[0], (x,), len(self.in_spatial), plane,
                               cell_bytes=8), None
            return blocked(lambda a: self._separable(a, True), (x,), len(self.in_spatial), plane, cell_bytes=8)
        return self._separable(x, with_index)

    def _separable(self, x: Any, with_index: bool) -> tuple[Any, Any]:
        """The scan axis by axis, innermost first, carrying each winner's flat index: an axis with more
        outputs than taps reads tap by tap (``take``), one with fewer reduces each window's slice at once."""
        xp = namespace(x)
        lowest = _lowest(xp, x)
        floating = isinstance(lowest, float)
        n = len(self.in_spatial)
        lead = x.ndim - n
        values, flat = x, None
        for i in reversed(range(n)):
            axis, plan = lead + i, self._plans()[i]
            if plan.out < plan.taps and not is_dask_array(x):
                values, flat = self._by_window(xp, x, values, flat, i, axis, with_index)
                continue
            trailing = x.ndim - axis - 1
            offsets = self._offsets(i)
            vp = pad_axis(xp, values, axis, 0, 1, lowest)
            fp = None if flat is None else pad_axis(xp, flat, axis, 0, 1, 0)
            m = idx = None
            for t in range(plan.taps):
                where = to_namespace(plan.index[t], xp, x)
                v = take(xp, vp, where, axis)
                if m is None:
                    m, upd = v, None
                else:
                    upd = v > m
                    if floating:
                        upd = upd | xp.isnan(v)
                    m = xp.where(upd, v, m)
                if with_index:
                    f = to_namespace(_along(np.maximum(offsets[t], 0), trailing), xp, v)
                    f = f if fp is None else take(xp, fp, where, axis) + f
                    if idx is None:
                        idx = f + xp.zeros(tuple(v.shape), dtype=index_dtype(xp, v), **on(v))
                    else:
                        idx = xp.where(upd, f, idx)
            values, flat = m, idx
        return values, flat

    def _by_window(self, xp: Any, x: Any, values: Any, flat: Any, i: int, axis: int,
                   with_index: bool) -> tuple[Any, Any]:
        """Axis ``i``'s windows [start, end) each reduced at once (torch's rule: :func:`_reduce_cells`)."""
        start, end = windows.adaptive_bounds(self.in_spatial[i], self.out_spatial[i])
        stride = self._strides()[i]
        maxima, winners = [], []
        for s, e in zip(start.tolist(), end.tolist()):
            cells = xp.moveaxis(values[_at(axis, slice(s, e))], axis, -1)
            m, pos = _reduce_cells(xp, x, cells, with_index, lambda pos, dtype: pos)
            maxima.append(m)
            if with_index:
                f = (xp.astype(pos, index_dtype(xp, m)) + s) * stride
                if flat is not None:
                    inner = xp.moveaxis(flat[_at(axis, slice(s, e))], axis, -1)
                    f = f + xp.take_along_axis(inner, xp.astype(pos, inner.dtype)[..., None], axis=-1)[..., 0]
                winners.append(f)
        return xp.stack(maxima, axis=axis), (xp.stack(winners, axis=axis) if with_index else None)

    def _dense_tables(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        cells = math.prod(self.out_spatial) * math.prod(p.taps for p in self._plans())
        return _kept(self, "_kept_dense_tables", cells, self._make_dense_tables)

    def _make_dense_tables(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        """For :meth:`_dense`: the flat plane cell each output's tap reads, outputs row-major and each
        window's taps row-major (its scan order), or one past the plane (a cell holding the dtype's lowest
        value) where the tap lies past the window's end; the same without that padding (the winners'
        indices); the taps per window K; and o * K, where output o's taps start."""
        plans = self._plans()
        read, flat = _outer_index([p.index.T for p in plans], self.in_spatial)
        K = math.prod(p.taps for p in plans)
        first = (np.arange(math.prod(self.out_spatial), dtype=np.int64) * K).reshape(self.out_spatial)
        real = flat.reshape(-1)
        for table in (real, first):
            table.setflags(write=False)
        return read, real, K, first

    def route(self, g: Any, idx: Any) -> Any:
        """grad_x[j] = sum of g[o] over the outputs o whose winner is j, by gathering."""
        if self._empty_output:
            return self._empty(namespace(g), g, self.in_spatial, g.dtype)
        covers = [p.transpose.index for p in self._plans()]
        if _GPU_ROUTE(g):
            routed = self._gpu_route(g, idx, math.prod(c.shape[0] for c in covers), lambda: covers)
            if routed is not None:
                return routed
        if 0 not in g.shape and math.prod(c.shape[0] for c in covers) <= _SLOTS and \
                (mod := _SLOT_ROUTE(g)) is not None and mod is _SLOT_ROUTE(idx):
            return slot_route(mod, namespace(g), g, idx, [c[0] for c in covers], [c.shape[0] for c in covers],
                              self.in_spatial, self)
        cells = math.prod(self.in_spatial) * math.prod(c.shape[0] for c in covers)
        planes = math.prod(g.shape[:g.ndim - len(self.in_spatial)])
        if not is_jax_array(g) and 0 not in g.shape and not fits((g, idx), planes * cells, cells):
            return blocked(lambda a, b: sorted_route(a, b, self.in_spatial), (g, idx), len(self.in_spatial),
                           max(math.prod(self.in_spatial), math.prod(self.out_spatial)), cell_bytes=8)
        return blocked(lambda a, b: gathered_route(a, b, covers, self.in_spatial, self), (g, idx), len(self.in_spatial),
                       cells, cell_bytes=8, tables=True)

    def select(self, gg: Any, idx: Any) -> Any:
        """gg at each output's winner: the transpose of :meth:`route`."""
        xp = namespace(gg)
        n = len(self.in_spatial)
        lead = gg.ndim - n
        if self._empty_output:
            return self._empty(xp, gg, self.out_spatial, gg.dtype)
        if 0 not in gg.shape and (math.prod(p.taps for p in self._plans()) > _UNROLL or _TAKE_WINNERS(gg)):
            taken = take_winners(xp, gg, idx, n)
            if taken is not None:
                return taken
        padded = gg
        for i in range(n):
            padded = pad_axis(xp, padded, lead + i, 0, 1, 0)
        offsets = [self._offsets(i) for i in range(n)]
        out = None
        for taps, (v,) in _walk(xp, (padded,), [p.index for p in self._plans()], lead):
            target = None
            for i, t in enumerate(taps):
                part = to_namespace(_along(offsets[i][t], n - i - 1), xp, gg)
                target = part if target is None else target + part
            term = xp.where(idx == target, v, xp.zeros_like(v))
            out = term if out is None else out + term
        return out


def adaptive_max_windows(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> Any:
    """Strided-slice windows where every axis divides evenly (L % O == 0), ragged gathers otherwise."""
    if all(O and L % O == 0 for L, O in zip(in_spatial, out_spatial)):
        k = tuple(L // O for L, O in zip(in_spatial, out_spatial))
        n = len(k)
        return MaxWindows(in_spatial, out_spatial, k, k, (0,) * n, (1,) * n)
    return AdaptiveMaxWindows(in_spatial, out_spatial)
