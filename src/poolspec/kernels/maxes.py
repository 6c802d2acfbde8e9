"""Array-API kernels of the max family over regular windows: the separable max with torch's scan rule, the
gradient routed to the winners, and the gather at the winners - all strided slices and selects.

torch scans a window row-major and updates when ``v > m or isnan(v)``, starting from m = -inf at the first
tap inside the input. Reducing the innermost axis first and applying the same rule at every stage gives
the same values and flat indices: ties go to the first maximum, a NaN wins (the last NaN's index).

Where a pass per tap would cost too much, whole windows are reduced at once with the same rule
(``max_routes._reduce_cells``): tiling windows as reshaped blocks, ragged adaptive windows through one
gather of their cells. Gradients then stay O(input) whatever the window: a select over the blocks, a gather
over the windows that cover each cell or a sort of the winners (``max_routes``). No path scatters.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import (
    FUNCTIONAL,
    buffer,
    index_dtype,
    is_dask_array,
    is_jax_array,
    namespace,
    on,
    take,
    to_compute,
    to_namespace,
)
from ..plans import windows
from ..plans.windows import SlicePlan
from . import paths
from .blocks import CACHE_CELLS, SMALL, blocked
from .blocks import kept as _kept
from .chunked import as_table, axis_pass
from .dense import _Dense
from .max_routes import (
    _UNROLL,
    _ZERO,
    _along,
    _fill_where,
    _fresh,
    _lowest,
    _outer_index,
    _reduce_cells,
    _tile_cells,
    embed_sum,
    gathered_route,
    put_winners,
    route_base,
    route_schedule,
    slot_route,
    sorted_route,
    take_winners,
)
from .sums import _at, device_copy, full_like_axis, pad_axis

# the tap passes' work (prod(kernel) x output) past which sorting the winners routes the gradient instead
_SORT_RATIO = 16
# the most covering-window combinations a cell may have for the slot route (its passes hold 4 copies each)
_SLOTS = 8
# covering windows per cell past which JAX routes by sorting the winners rather than looping over them
_JAX_GATHERS = 64  # taps (or covering windows) past which JAX loops or gathers at once instead of unrolling a term each
_NEVER = -(2**62)  # flat-index contribution of a padding tap: no real index can equal the sum

_DENSE = paths.launches("maxes.dense-gather", "where each operation is a kernel launch: every window's cells (not "
                        "tiling ones) in one gather and one reduction", exact="bitwise")
_TILE_ALL = paths.launches("maxes.tile-reduce", "where each operation is a kernel launch: tiling windows reduced "
                           "as reshaped blocks whatever their size", exact="bitwise")
_FOLD_WINNERS = paths.writes("maxes.fold-winners", "per axis the maximum folded into a fresh buffer and the winning "
                             "tap counted as a small integer, no selects; the flat index assembled once")
_FOLD = paths.writes("maxes.fold", "the maxima alone, folded tap by tap into a fresh buffer per axis")
_GPU_ROUTE = paths.launches("maxes.gpu-route", "where each operation is a kernel launch: the gradient by one select "
                            "over tiling blocks, or one gather over every cell's covering windows")
_PUT_WINNERS = paths.writes("maxes.put-winners", "windows that never overlap: each cotangent written at its winner")
_SLOT_ROUTE = paths.writes("maxes.slot-route", "each cell's covering windows consecutive and at most _SLOTS: the "
                           "gradient added slot by slot at the winners (max_routes.slot_route)")
_CLASSES = paths.writes("maxes.route-classes", "each tap tuple's winning outputs added into a contiguous buffer per "
                        "stride residue class, written into the gradient once")
_TAKE_WINNERS = paths.launches("maxes.take-winners", "where each operation is a kernel launch: the double "
                               "backward by one gather at the winners", exact="bitwise")


@dataclass(frozen=True, eq=False)
class MaxWindows(_Dense):
    """Regular max-pool windows over the trailing axes: plans, tap coordinates and plane strides."""

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]

    @functools.cached_property
    def plans(self) -> tuple[SlicePlan, ...]:
        return tuple(windows.regular(L, O, k, s, p, d) for L, O, k, s, p, d in self._axes())

    def _axes(self) -> list[tuple[int, ...]]:
        return list(zip(self.in_spatial, self.out_spatial, self.kernel, self.stride, self.padding,
                        self.dilation))

    @functools.cached_property
    def _plane_strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.in_spatial[i + 1:]) for i in range(len(self.in_spatial)))

    def plane_strides(self) -> tuple[int, ...]:
        return self._plane_strides

    def tap_offsets(self, axis: int, t: int) -> np.ndarray:
        """(O,) contribution of tap t of each output along ``axis`` to the flat index (_NEVER in padding)."""
        L, O, k, s, p, d = self._axes()[axis]
        c = np.arange(O, dtype=np.int64) * s - p + t * d
        return np.where((c >= 0) & (c < L), c * self.plane_strides()[axis], _NEVER)

    # -- forward -------------------------------------------------------------------------------------

    @functools.cached_property
    def _plane_cells(self) -> int:
        return max(math.prod(self.in_spatial), math.prod(self.out_spatial))

    def _dense_tables(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        K = math.prod(self.kernel)
        return _kept(self, "_kept_dense_tables", K * math.prod(self.out_spatial), self._make_dense_tables)

    def _make_dense_tables(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        """For :meth:`_dense`: each output's taps (row-major: torch's scan order) as flat plane cells, one past
        the plane (the dtype's lowest value) for a padding tap; the winners' cells, where a padding tap's is
        its window's first cell inside the input (a padding tap wins only where every cell of the window holds
        the lowest value, and torch's winner is then the first of them); the taps per window K; o * K."""
        K, M, P = math.prod(self.kernel), math.prod(self.out_spatial), math.prod(self.in_spatial)
        read, _ = _outer_index([as_table(p).index.T for p in self.plans], self.in_spatial)
        rows = read.reshape(M, K)
        inside = rows < P
        first_inside = rows[np.arange(M), np.argmax(inside, axis=1)]
        real = np.where(inside, rows, np.where(first_inside < P, first_inside, 0)[:, None]).reshape(-1)
        first = (np.arange(M, dtype=np.int64) * K).reshape(self.out_spatial)
        for table in (real, first):
            table.setflags(write=False)
        return read, real, K, first

    def forward(self, x: Any, with_index: bool = True) -> tuple[Any, Any]:
        n = len(self.in_spatial)
        if 0 not in x.shape and not self._tiling and _DENSE(x) and self._dense_fits(math.prod(self.kernel), x):
            # a GPU: every window's cells in one gather and one reduction (tiling windows: reshaped blocks)
            return self._dense(x, with_index)
        if 0 not in x.shape and (self._tiles(math.prod(x.shape)) or (self._tiling and _TILE_ALL(x))):
            if not with_index:
                return blocked(lambda a: self._tiled(a, False)[0], (x,), n, self._plane_cells, cell_bytes=8), None
            return blocked(lambda a: self._tiled(a, True), (x,), n, self._plane_cells, cell_bytes=8)
        if not with_index:
            return blocked(lambda a: self._values(namespace(a), a), (x,), n, self._plane_cells, cell_bytes=8), None
        return blocked(self._forward, (x,), n, self._plane_cells, cell_bytes=8)

    @functools.cached_property
    def _tiling(self) -> bool:
        """Windows that tile the input without overlap or gaps (stride == kernel, no padding or dilation):
        every input cell is in at most one window."""
        return all(s == k and p == 0 and d == 1 and O * k <= L and O > 0 for L, O, k, s, p, d in self._axes())

    def _tiles(self, cells: float) -> bool:
        """Whether the forward reduces each tiling window at once (:meth:`_tiled`) instead of a pass per tap
        and axis: measured to win from about 16 cells per axis and 32 per window (a global pool's kernel is
        its whole extent), to lose below (the block transpose costs more than a few slices), except on
        small arrays (``cells`` in all), where its few calls beat the passes' many."""
        big = max(self.kernel) >= 16 and math.prod(self.kernel) >= 32
        return self._tiling and (big or cells <= SMALL)

    @functools.cached_property
    def _tile_layout(self) -> tuple[tuple[slice, ...], tuple[int, ...], tuple[int, ...]]:
        """What :meth:`_tiled` does, which depends on the windows alone: the crop to whole windows, the
        split of each axis into (O_i, k_i) and the permutation that gathers a window's cells last."""
        n = len(self.in_spatial)
        crop = tuple(slice(0, O * k) for O, k in zip(self.out_spatial, self.kernel))
        split = tuple(v for O, k in zip(self.out_spatial, self.kernel) for v in (O, k))
        order = tuple(2 * i for i in range(n)) + tuple(2 * i + 1 for i in range(n))
        return crop, split, order

    def _tile_table(self, which: int) -> np.ndarray:
        """The flat plane index of window cell t relative to the window's first cell (``which`` 0: (K,)), or of
        each window's first cell (1: (O_1, ..., O_n))."""
        def make() -> np.ndarray:
            table = np.zeros((), dtype=np.int64)
            for O, k, st in zip(self.out_spatial, self.kernel, self.plane_strides()):
                table = np.add.outer(table, np.arange(k if which == 0 else O, dtype=np.int64) *
                                     (st if which == 0 else k * st))
            table = np.ascontiguousarray(table.reshape(-1) if which == 0 else table)
            table.setflags(write=False)
            return table

        size = math.prod(self.kernel if which == 0 else self.out_spatial)
        return _kept(self, f"_kept_tile_{which}", size, make)

    def _tiled(self, x: Any, with_index: bool) -> tuple[Any, Any]:
        """The pool as a reduction over (..., O_1, ..., O_n, k_1 * ... * k_n) blocks, the window's cells in
        row-major order, which is torch's scan order: the first maximum wins, and where a window holds a NaN
        the value is NaN and the index the last NaN's."""
        xp = namespace(x)
        n = len(self.in_spatial)
        lead = x.ndim - n
        head = tuple(x.shape[:lead])
        crop, split, order = self._tile_layout
        if any(O * k != L for L, O, k in zip(self.in_spatial, self.out_spatial, self.kernel)):
            x = x[(slice(None),) * lead + crop]
        blocks = xp.permute_dims(xp.reshape(x, head + split), tuple(range(lead)) + tuple(lead + o for o in order))
        K = math.prod(self.kernel)
        cells = xp.reshape(blocks, head + self.out_spatial + (K,))
        return _reduce_cells(xp, x, cells, with_index, lambda pos, dtype: self._tile_index(xp, pos, dtype))

    def _tile_index(self, xp: Any, pos: Any, dtype: Any) -> Any:
        """The flat plane index of window cell ``pos`` of each output: first[o] + cell[pos]."""
        if is_dask_array(pos) or math.prod(self.kernel) > CACHE_CELLS:
            # by arithmetic: a flat take would merge Dask's chunks, and a window's table of cells is as large
            # as the window (a global pool's is the plane)
            pos = xp.astype(pos, dtype)
            offset = sum(((pos // math.prod(self.kernel[i + 1:])) % k) * st
                         for i, (k, st) in enumerate(zip(self.kernel, self.plane_strides())))
        else:
            offset = take(xp, device_copy(self, "tile_cell", self._tile_table(0), pos, dtype),
                          xp.reshape(pos, (-1,)), 0)
            offset = xp.reshape(offset, tuple(pos.shape))
        return offset + device_copy(self, "tile_first", self._tile_table(1), pos, dtype)

    def _tiled_route(self, xp: Any, g: Any, idx: Any) -> Any:
        """:meth:`route` for tiling windows: each input cell is in at most one window, so its gradient is its
        window's g where the window's winner is the cell - one select over (..., O_i, k_i, ...) blocks that
        broadcast g and the winners, and zeros past the last window."""
        n = len(self.in_spatial)
        lead = g.ndim - n
        head = tuple(g.shape[:lead])
        work = to_compute(xp, g)
        single = head + tuple(v for O in self.out_spatial for v in (O, 1))
        cells = device_copy(self, "tile_cells", _kept(self, "_kept_tile_cells", math.prod(self.in_spatial),
                                                      lambda: _tile_cells(self.in_spatial, self.out_spatial,
                                                                          self.kernel)), g)
        zero = device_copy(self, "zero", _ZERO, work, work.dtype)
        out = xp.where(xp.reshape(idx, single) == cells, xp.reshape(work, single), zero)
        out = xp.reshape(out, head + tuple(O * k for O, k in zip(self.out_spatial, self.kernel)))
        for i, (L, O, k) in enumerate(zip(self.in_spatial, self.out_spatial, self.kernel)):
            if O * k < L:  # cells past the last window get no gradient
                out = pad_axis(xp, out, lead + i, 0, L - O * k, 0)
        return out if out.dtype == g.dtype else xp.astype(out, g.dtype)

    def _forward(self, x: Any) -> tuple[Any, Any]:
        xp = namespace(x)
        mod = _FOLD_WINNERS(x) if 0 not in x.shape else None
        if mod is not None:
            return self._forward_writable(mod, xp, x)
        lowest = _lowest(xp, x)
        floating = isinstance(lowest, float)
        n = len(self.in_spatial)
        lead = x.ndim - n
        values, flat = x, None
        for i in reversed(range(n)):  # innermost axis first
            axis, plan = lead + i, self.plans[i]
            trailing = x.ndim - axis - 1
            L, O, k, s, p, d = self._axes()[i]
            first = windows.first_taps(L, O, k, s, p, d)
            vp = pad_axis(xp, values, axis, plan.pad_left, plan.pad_right, lowest)
            fp = None if flat is None else pad_axis(xp, flat, axis, plan.pad_left, plan.pad_right, 0)
            span = (plan.out - 1) * plan.stride + 1
            m = idx = None
            for t, off in enumerate(plan.offsets):
                sl = _at(axis, slice(off, off + span, plan.stride))
                v = vp[sl]
                force = to_namespace(_along(first == t, trailing), xp, v)
                if m is None:
                    m = xp.where(force, v, full_like_axis(xp, v, axis, O, lowest))
                    upd = force
                else:
                    upd = (v > m) | force
                    if floating:
                        upd = upd | xp.isnan(v)
                    m = xp.where(upd, v, m)
                f = to_namespace(_along(np.maximum(self.tap_offsets(i, t), 0), trailing), xp, v)
                f = f if fp is None else fp[sl] + f
                if idx is None:
                    idx = xp.zeros(tuple(v.shape), dtype=index_dtype(xp, v), **on(v))
                idx = xp.where(upd, f, idx)
            values, flat = m, idx
        return values, flat

    def _values(self, xp: Any, x: Any) -> Any:
        """The maxima alone: ``maximum`` over the taps, axis by axis. Without indices torch's scan rule
        reduces to the maximum with NaN propagating, which ``maximum`` is in every namespace."""
        lowest = _lowest(xp, x)
        n = len(self.in_spatial)
        lead = x.ndim - n
        values, mod = x, _FOLD(x)
        for i in reversed(range(n)):
            axis, plan = lead + i, self.plans[i]
            if mod is not None:
                values = self._axis_max(mod, values, i, axis, lowest)
                continue
            if is_dask_array(values):
                values = axis_pass(values, axis, plan, "max", lowest)
                continue
            values = self._axis_max_functional(xp, values, i, axis, lowest)
        return values

    def _axis_max_functional(self, xp: Any, values: Any, i: int, axis: int, lowest: float | int) -> Any:
        """:meth:`_axis_max` for immutable arrays: taps that reach into padding are merged into the range of
        outputs they cover, so no padded copy of the input is made (XLA would allocate one per call)."""
        O = self.out_spatial[i]
        full, rest = self._split(i)
        m = None
        for _, _, _, cells in full:
            v = values[_at(axis, cells)]
            m = v if m is None else xp.maximum(m, v)
        if m is None:
            m = full_like_axis(xp, values, axis, O, lowest)
        for _, lo, hi, cells in rest:
            mid = xp.maximum(m[_at(axis, slice(lo, hi))], values[_at(axis, cells)])
            m = xp.concat([m[_at(axis, slice(0, lo))], mid, m[_at(axis, slice(hi, O))]], axis=axis)
        return m

    def _ranges(self, i: int) -> tuple[tuple[int, int, int, slice], ...]:
        return windows.tap_ranges(*self._axes()[i])

    def _split(self, i: int) -> tuple[list[tuple[int, int, int, slice]], list[tuple[int, int, int, slice]]]:
        """Axis i's taps that every output reads inside the input, and those that reach into padding."""
        O = self.out_spatial[i]
        ranges = self._ranges(i)
        return ([r for r in ranges if r[1] == 0 and r[2] == O],
                [r for r in ranges if not (r[1] == 0 and r[2] == O)])

    def _axis_max(self, mod: Any, values: Any, i: int, axis: int, lowest: float | int) -> Any:
        """The maximum over one axis's taps into a fresh buffer: taps that reach into padding update only
        the outputs whose tap is inside, so no padded copy of the input is made."""
        O = self.out_spatial[i]
        full, rest = self._split(i)
        out = _fresh(mod, values, axis, O, values.dtype)
        if len(full) >= 2:  # two taps cover every output: one pass for both
            mod.maximum(values[_at(axis, full[0][3])], values[_at(axis, full[1][3])], out=out)
            rest = full[2:] + rest
        elif full:
            out[...] = values[_at(axis, full[0][3])]
        else:
            out[...] = lowest
        for _, lo, hi, cells in rest:
            view = out[_at(axis, slice(lo, hi))]
            mod.maximum(view, values[_at(axis, cells)], out=view)
        return out

    def _forward_writable(self, mod: Any, xp: Any, x: Any) -> tuple[Any, Any]:
        """Values and torch's indices on NumPy, CuPy and torch: per axis, the maximum, then the winning tap
        (the first tap equal to the maximum; where the maximum is NaN, the last NaN tap) as a small integer;
        inner axes' winning taps are carried to the outer winners, and the flat index is assembled once."""
        lowest = _lowest(xp, x)
        floating = isinstance(lowest, float)
        n = len(self.in_spatial)
        lead = x.ndim - n
        values, choices = x, dict[int, Any]()
        for i in reversed(range(n)):
            axis = lead + i
            k, O = self.kernel[i], self.out_spatial[i]
            small = mod.uint8 if k < 256 else mod.int64
            m = self._axis_max(mod, values, i, axis, lowest)
            ranges = self._ranges(i)
            # The first tap equal to the maximum, counted without selects (which are slow on CPU):
            # choice = sum over t of [no tap up to t equals the maximum].
            notyet = _fresh(mod, m, axis, O, mod.bool)
            notyet[...] = True
            choice = _fresh(mod, m, axis, O, small)
            choice[...] = 0
            by_tap = {r[0]: r for r in ranges}
            for t in range(by_tap and max(by_tap) or 0):  # taps that only read padding count, never win
                if t in by_tap:
                    _, lo, hi, cells = by_tap[t]
                    sel = _at(axis, slice(lo, hi))
                    view = notyet[sel]
                    mod.logical_and(view, values[_at(axis, cells)] != m[sel], out=view)
                mod.add(choice, notyet, out=choice)
            if floating and bool(mod.isnan(m).any()):
                for t, lo, hi, cells in ranges:  # ascending: the last NaN tap wins
                    sel = _at(axis, slice(lo, hi))
                    _fill_where(mod, choice[sel], mod.isnan(values[_at(axis, cells)]), t)
            for j in list(choices):  # an inner axis's winners, read at this axis's winning cells
                picked = _fresh(mod, m, axis, O, choices[j].dtype)
                picked[...] = 0
                for t, lo, hi, cells in ranges:
                    sel = _at(axis, slice(lo, hi))
                    view = picked[sel]
                    mod.add(view, (choice[sel] == t) * choices[j][_at(axis, cells)], out=view)
                choices[j] = picked
            choices[i] = choice
            values = m
        idx = None
        strides = self.plane_strides()
        for i in range(n):
            L, O, k, s, p, d = self._axes()[i]
            base = (np.arange(O, dtype=np.int64) * s - p) * strides[i]
            term = xp.astype(choices[i], xp.int64, copy=False) * (d * strides[i])
            term = term + to_namespace(_along(base, n - i - 1), xp, values)
            idx = term if idx is None else idx + term
        return values, idx

    # -- the gradient, routed to the winners by gathering ---------------------------------------------

    def _targets(self, xp: Any, like: Any, descending: bool = False) -> Iterator[tuple[tuple[int, ...], Any]]:
        """For every tap tuple, the flat input index each output reads there (negative in padding); one at a
        time (there are prod(kernel) of them, each of the output's size). ``descending``: last tap tuple
        first, so that summed into the input every cell receives its outputs in ascending order (torch's,
        and :meth:`_route_writable`'s)."""
        n = len(self.in_spatial)
        parts: dict[tuple[int, int], Any] = {}
        order = itertools.product(*(range(k) for k in self.kernel))
        for taps in (reversed(list(order)) if descending else order):
            target = None
            for i, t in enumerate(taps):
                part = parts.get((i, t))
                if part is None:
                    part = parts[(i, t)] = to_namespace(_along(self.tap_offsets(i, t), n - i - 1), xp, like)
                target = part if target is None else target + part
            yield tuple(t * d for t, d in zip(taps, self.dilation)), target

    def route(self, g: Any, idx: Any) -> Any:
        """grad_x[j] = sum of g[o] over the outputs o whose winner is j."""
        if 0 not in g.shape and 0 not in self.in_spatial:
            if _GPU_ROUTE(g):
                if self._tiling:
                    return self._tiled_route(namespace(g), g, idx)
                routed = self._gpu_route(g, idx, self._cover_counts(), self._covers)
                if routed is not None:
                    return routed
            if self._disjoint() and (mod := _PUT_WINNERS(g)) is not None and mod is _PUT_WINNERS(idx):
                return put_winners(mod, namespace(g), g, idx, self.in_spatial)  # measured 8x the sum route
            if self._slotted() and (mod := _SLOT_ROUTE(g)) is not None and mod is _SLOT_ROUTE(idx):
                covers = self._covers()
                return slot_route(mod, namespace(g), g, idx, [c[0] for c in covers], [c.shape[0] for c in covers],
                                  self.in_spatial, self)
        return blocked(self._route, (g, idx), len(self.in_spatial), self._plane_cells, cell_bytes=8)

    def _slotted(self) -> bool:
        """Whether :func:`slot_route` applies and pays: each cell's covering windows consecutive (the
        dilation divides the stride) and few enough that its slot copies stay small. Measured on torch CPU,
        max_pool2d 3x3/2 pad 1 on 16x32x32x32: backward 3.2 ms by tap tuples, 0.6 ms by slots (torch 0.4)."""
        if not all(s % d == 0 for s, d in zip(self.stride, self.dilation)):
            return False
        return self._cover_counts() <= _SLOTS

    def _disjoint(self) -> bool:
        """Whether no input cell is in two windows (stride at least the dilated extent on every axis), so
        that no two outputs share a winner."""
        return all(s >= (k - 1) * d + 1 for L, O, k, s, p, d in self._axes())

    def _covers(self) -> list[np.ndarray]:
        return [windows.covers(L, O, k, s, p, d) for L, O, k, s, p, d in self._axes()]

    def _cover_counts(self) -> int:
        """prod over axes of the most windows any cell is in: the gathered route's passes."""
        return math.prod(windows.cover_count(L, O, k, s, p, d) for L, O, k, s, p, d in self._axes())

    def _gathers(self) -> bool:
        """Whether routing by gathering over the cells' covering windows beats adding per tap tuple: where
        windows are large against their overlap (global and near-global pools), prod(kernel) tap passes
        over the output cost far more than prod(covers) gathers over the input. Never for tiling windows, whose
        routes by tap tuple or by block (:meth:`_tiled_route`) are O(input) already and several times faster
        than gathers (measured: max_pool3d 2x2x2 on 2x32x16x28x28, 0.9 ms against 9.3 ms)."""
        taps = math.prod(self.kernel)
        return (len(self.kernel) >= 2 and taps >= 8 and not self._tiling
                and taps >= 4 * self._cover_counts())

    def _sorts(self, planes: int) -> bool:
        """Whether routing by sorting the winners (:func:`sorted_route`: O(output log output + input) work and
        memory, whatever the windows) beats adding per tap tuple (prod(kernel) passes over the output): for
        windows large against their overlap (:meth:`_gathers`), and wherever the tap passes would cost many
        times the sort (large stride-1 windows)."""
        if self._tiling:
            return False
        M, P = math.prod(self.out_spatial), math.prod(self.in_spatial)
        return self._gathers() or math.prod(self.kernel) * M > _SORT_RATIO * (M * math.log2(M + 1) + P)

    def _route(self, g: Any, idx: Any) -> Any:
        xp = namespace(g)
        # measured: one select over broadcast blocks wins for tiling windows of 8+ cells in 1-d and 2-d, for
        # near-global ones in 3-d and for small arrays; smaller 3-d windows gather over covering windows, small
        # windows on larger arrays add per tap
        taps = math.prod(self.kernel)
        small = math.prod(g.shape) * taps <= SMALL
        if 0 not in g.shape and self._tiling and (small or taps >= (8 if len(self.kernel) <= 2 else 256)):
            return self._tiled_route(xp, g, idx)
        if 0 not in g.shape and 0 not in self.in_spatial:
            if FUNCTIONAL[0] and self._cover_counts() <= _JAX_GATHERS:
                # decomposed for inductor: one gather per covering window through constant tables, which it
                # fuses into one pass over the input (its own lowering of max_pool2d's backward does the same)
                return gathered_route(g, idx, self._covers(), self.in_spatial, self)
            if is_jax_array(g):
                if self._cover_counts() > _JAX_GATHERS:  # a loop of that many passes over the input
                    return sorted_route(g, idx, self.in_spatial)
                if self._gathers() or taps > _UNROLL:
                    return gathered_route(g, idx, self._covers(), self.in_spatial, self)
            elif self._sorts(math.prod(g.shape[:g.ndim - len(self.kernel)])):
                return sorted_route(g, idx, self.in_spatial)
        work = to_compute(xp, g)  # half precision accumulates in float32, rounded once
        mod = _CLASSES(work) if 0 not in g.shape else None
        if mod is not None and mod is _CLASSES(idx):
            out = self._route_writable(mod, xp, work, idx)
            return out if out.dtype == g.dtype else xp.astype(out, g.dtype)
        terms = ((offs, xp.where(idx == target, work, xp.zeros_like(work)))
                 for offs, target in self._targets(xp, g, descending=True))
        out = embed_sum(xp, terms, self.plans, g.ndim - len(self.plans))
        return out if out.dtype == g.dtype else xp.astype(out, g.dtype)

    def _route_writable(self, mod: Any, xp: Any, g: Any, idx: Any) -> Any:
        """:meth:`route` on NumPy, CuPy and torch: each output's winning tap tuple as one small code, then
        per tap tuple the outputs that chose it added into a strided view of the gradient. Tap tuples run
        in descending order, so every input cell receives its outputs in ascending (row-major) order, as
        torch's CPU backward adds them; the adds are elementwise, never a scatter."""
        n = len(self.in_spatial)
        lead = g.ndim - n
        small, sizes, steps, whole = self._route_schedule
        base_host = _kept(self, "_kept_route_base", math.prod(self.out_spatial), lambda: route_base(self))
        # the flat index of each output's tap (0, ..., 0), which may lie in padding
        base = device_copy(self, "route_base", base_host, g)
        shift = idx - base  # the winner relative to its window: one value per tap tuple, no division
        if small:  # each tap tuple's test below then reads 2 bytes per output instead of 8
            shift = xp.astype(shift, xp.int16, copy=False)
        finite = bool(mod.isfinite(g).all())  # then g * mask is exact and cheaper than a select
        # Cells fall into classes by their residue modulo the stride on each axis; a tap tuple's outputs land
        # on consecutive cells of one class. Each class is summed in its own contiguous buffer (vectorised
        # adds) and written into the gradient once, instead of every tap adding into a strided view.
        head = tuple(g.shape[:lead])
        every = (slice(None),) * lead
        if self._tiling:
            # one tap tuple per class and one output per cell: each term goes straight to its strided view
            grad = buffer(mod, head + self.in_spatial, g.dtype, g,
                          zero=any(O * k < L for L, O, k in zip(self.in_spatial, self.out_spatial, self.kernel)))
            for residue, c, outs, into in steps:
                sel = every + outs
                mask = shift[sel] == c
                view = grad[every + tuple(slice(r + st * i.start, r + st * (i.stop - 1) + 1, st)
                                          for r, st, i in zip(residue, self.stride, into))]
                if finite:
                    mod.multiply(g[sel], mask, out=view)
                else:
                    view[...] = mod.where(mask, g[sel], 0.0)
            return grad
        classes = {residue: buffer(mod, head + size, g.dtype, g, zero=True) for residue, size in sizes.items()}
        for residue, c, outs, into in steps:
            sel = every + outs
            mask = shift[sel] == c
            term = g[sel] * mask if finite else mod.where(mask, g[sel], 0.0)
            view = classes[residue][every + into]
            mod.add(view, term, out=view)
        grad = buffer(mod, head + self.in_spatial, g.dtype, g, zero=not whole)  # every cell in a class: no fill
        for residue, part in classes.items():
            grad[every + tuple(slice(r, None, st) for r, st in zip(residue, self.stride))] = part
        return grad

    @functools.cached_property
    def _route_schedule(self) -> tuple[bool, dict[tuple[int, ...], tuple[int, ...]], list[Any], bool]:
        """What :meth:`_route_writable` does per tap tuple (``max_routes.route_schedule``), computed once."""
        return route_schedule(self)

    def select(self, gg: Any, idx: Any) -> Any:
        """gg at each output's winner: the transpose of :meth:`route` (the double backward)."""
        xp = namespace(gg)
        if 0 not in gg.shape and 0 not in idx.shape and (math.prod(self.kernel) > _UNROLL or _TAKE_WINNERS(gg)):
            taken = take_winners(xp, gg, idx, len(self.in_spatial))
            if taken is not None:
                return taken
        n = len(self.plans)
        lead = gg.ndim - n
        padded = gg
        for i, plan in enumerate(self.plans):
            padded = pad_axis(xp, padded, lead + i, plan.pad_left, plan.pad_right, 0)
        out = None
        for offs, target in self._targets(xp, gg):
            sl = (slice(None),) * lead + tuple(
                slice(off, off + (p.out - 1) * p.stride + 1, p.stride) for off, p in zip(offs, self.plans))
            v = padded[sl]
            term = xp.where(idx == target, v, xp.zeros_like(v))
            out = term if out is None else out + term
        return out
