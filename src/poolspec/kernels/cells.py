"""Reads at data-dependent cells, and their transpose without a scatter.

``Cells.select(x, idx)`` reads each plane of ``x`` (..., P) at flat cell indices ``idx`` (..., K) that are
data (grid_sample's taps, fractional max pooling's winners); ``idx == P`` marks a read outside the plane,
which gives 0. On torch and NumPy that is one gather of the plane with a zero cell appended (large CPU calls
without a read outside skip the copy); elsewhere a gather at a safe cell and a where, which XLA fuses.

Its transpose, ``Cells.route(g, idx)``, adds every ``g`` into the cell it was read from: in every other
implementation a scatter-add (atomic, order-dependent on GPUs). Here it is sorts, binary searches and
gathers only:

1. sort each row of ``idx`` (stably: torch's sort; on NumPy and JAX a plain sort of value * K + position,
   five times faster than an argsort); one binary search of the sorted keys for the cells 0..P gives where
   each cell's run of reads starts, hence how often it was read (its count); cells nobody read get 0;
2. a cell read at most ``_RANKS`` times adds its reads one by one, in their order in ``idx`` (the order of
   torch's and ``np.add.at``'s sequential sums), starting from +0: the j-th reads of all cells are rank j;
   one gather of ``g`` takes every rank at once (each plane of ``g`` is read by its own row of the result,
   in cache), reads past a cell's count are zeroed, and the ranks are added into the first, in place, one
   slice per rank. The ranks are laid out densely (cells in their own order, ``longest`` slots each: no
   permutation) or, when the counts are uneven, by count (cells sorted by decreasing count, so rank j
   covers only the cells read more than j times and the work is the number of reads, then one gather puts
   the cells back in order), whichever is less work for the call: both give the same bits;
3. a cell read more often sums its reads by a segmented inclusive scan by doubling over the sorted reads (at
   step ``d`` each entry adds the one ``d`` places back when both belong to the same cell: ceil(log2(L))
   steps for the longest run L) and reads the last entry of its run;
4. where a plane has fewer reads than cells (a max pool's winners, a sparse grid), steps 1-3 run over the
   runs of equal keys in the sorted reads instead of over all P cells (no table of the plane's size but
   the result), and each run's sum is then placed at its cell: a write to unique destinations where the
   backend writes in place, a binary search per cell elsewhere. The same sums, so the same bits;
5. planes with at most ``_MATCH`` cells x reads (tiny calls, whose cost is the number of operations) compare
   every read with every cell and sum: three operations.

Without values to branch on (a JAX tracer: the bindings always jit the kernels; a torch meta or fake tensor)
every cell takes the scan, whose steps run in a ``lax.while_loop`` until ``d`` reaches the longest run,
found on the device (on torch's meta device: log2(K) steps).

Which sum a cell gets depends only on its own count and on the plane's shape, so every (plane, cell) result
depends only on that plane's ``idx`` and ``g``: bit-identical run to run on every backend, and a plane
computed alone (Dask's blocks) gives the bits of the whole call. ``idx`` may broadcast against the leading
axes of ``x`` and ``g`` (grid_sample shares one index row between all channels: (N, 1, K)); sorts and index
arithmetic are done once per index row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import buffer, device, is_jax_array, is_symbolic, namespace, on, take, to_host
from . import paths

# Cells read at most this often are summed rank by rank (one in-place add per rank, in torch's order); those
# read more often by the doubling scan (log2 of the run passes over all reads). A constant, so that how a
# cell is summed depends on nothing but its own count.
_RANKS = 64
# Planes this small (cells x reads) take every read's match with every cell at once instead: a comparison,
# a where and a sum, a few operations where the sort and the ranks take dozens (a tiny call's whole cost).
# Chosen by the plane's shape alone, so a plane's bits do not depend on how many planes there are.
_MATCH = 1024
# Where a plane has fewer reads than this many times its cells, the reads are summed per run of equal cells
# and the runs placed in the plane (memory O(reads + cells)) instead of a table per cell (several int64 arrays
# of the plane's size); the same sums in the same order either way.
_RUNS = 1.0
# From this many elements of x on, select first checks (on the host, CPU only) whether any read is outside,
# and if none is, reads x itself rather than a copy with the zero cell appended.
_LARGE = 1 << 16

_TORCH_GATHER = paths.library(
    "cells.torch-gather", "torch", "reads along the last axis by torch.gather, the operands expanded to the "
    "common leading shape (no broadcast copies)")
_NUMPY_TAKE = paths.library(
    "cells.numpy-take", "numpy", "reads along the last axis by np.take: an index row shared by several planes reads "
    "them all at once, a row per plane through flat indices (take_along_axis's index grids: 3x slower)")
_TORCH_SORT = paths.library(
    "cells.torch-sort", "torch", "each row's reads sorted by torch's stable sort of int64 (its fastest), not by a "
    "plain sort of value * K + position")
_TORCH_SEARCH = paths.library(
    "cells.torch-searchsorted", "torch", "every row's binary searches in one batched torch.searchsorted (no offset "
    "keys for a 1-d search over all rows)")
_TORCH_SELECT = paths.library(
    "cells.torch-select", "torch", "select as one torch.gather of the plane with a zero cell appended (or, large on "
    "the CPU with no read outside, of the plane itself), not a gather at a safe cell and two wheres")
_NUMPY_SELECT = paths.library(
    "cells.numpy-select", "numpy", "select as one np.take of the plane with a zero cell appended (or, large with no "
    "read outside, of the plane itself), not a gather at a safe cell and two wheres")
_SYNC_FREE = paths.launches(
    "cells.select-sync-free", "where each operation is a kernel launch: torch's select always appends the zero cell "
    "(no host read of whether any read is outside)", exact="bitwise", within="cells.torch-select")
_SCAN_ALL = paths.launches(
    "cells.scan-all", "where each operation is a kernel launch: every cell's reads summed by the doubling scan "
    "(log2 of the longest run steps of a few operations; ranks and runs take several per rank)")
_SCAN_IN_PLACE = paths.writes(
    "cells.scan-in-place", "each doubling step of the scan added into the sorted reads in place (no concatenation)")
_RANKS_IN_PLACE = paths.writes(
    "cells.ranks-in-place", "the ranks added into the first one in place, one slice each, and reads past a cell's "
    "count zeroed in place (no concatenations)")
_PLACE_WRITTEN = paths.writes(
    "cells.place-written", "each run's sum written to its own cell of a zeroed buffer (unique destinations), where "
    "elsewhere every cell binary-searches its row's runs")


def _torch_gather(a: Any, i: Any, lead: tuple[int, ...]) -> Any:
    """torch.gather of ``a`` at int64 ``i`` along the last axis, both expanded to ``lead``."""
    torch = paths.torch_module()
    if i.dtype != torch.int64:
        i = i.to(torch.int64)
    if tuple(a.shape[:-1]) != lead:  # an expand is an operation of its own, even to the same shape
        a = a.expand(lead + (a.shape[-1],))
    if tuple(i.shape[:-1]) != lead:
        i = i.expand(lead + (i.shape[-1],))
    return torch.gather(a, -1, i)


def _gather(xp: Any, a: Any, i: Any, lead: tuple[int, ...]) -> Any:
    """``a`` (..., A) read along its last axis at ``i`` (..., I), both broadcast to ``lead``."""
    if _TORCH_GATHER(a):
        return _torch_gather(a, i, lead)
    if _NUMPY_TAKE(a) and isinstance(i, np.ndarray):
        return _np_gather(a, i, lead)
    if tuple(a.shape[:-1]) != lead:  # a broadcast is an operation of its own, even to the same shape
        a = xp.broadcast_to(a, lead + (a.shape[-1],))
    if tuple(i.shape[:-1]) != lead:
        i = xp.broadcast_to(i, lead + (i.shape[-1],))
    return xp.take_along_axis(a, i, axis=-1)


def _np_gather(a: np.ndarray, i: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """NumPy's take along the last axis, without take_along_axis's index grids (3x slower here): an index row
    shared by several planes reads them all in one ``np.take``; a row per plane reads through flat indices."""
    A, I = a.shape[-1], i.shape[-1]
    ilead = tuple(i.shape[:-1])
    a = np.broadcast_to(a, lead + (A,))
    if ilead == lead:  # a row per plane
        planes = math.prod(lead)
        flat = np.ascontiguousarray(a).reshape(planes * A) if planes else a.reshape(0)
        offsets = np.arange(planes, dtype=np.int64).reshape(lead + (1,)) * A
        return np.take(flat, i + offsets, mode="clip")
    rows = math.prod(ilead)
    if rows > 256:
        return np.take_along_axis(a, np.broadcast_to(i, lead + (I,)), axis=-1)
    out = np.empty(lead + (I,), dtype=a.dtype)
    for pos in np.ndindex(*ilead):
        at = tuple(p if n != 1 else slice(None) for p, n in zip(pos, ilead))
        np.take(a[at], i[pos], axis=-1, out=out[at], mode="clip")
    return out


def _pad_zero(xp: Any, a: Any) -> Any:
    """``a`` with one 0 appended along its last axis: the cell the sentinel reads."""
    return xp.concat([a, xp.zeros(tuple(a.shape[:-1]) + (1,), dtype=a.dtype, **on(a))], axis=-1)


def _sort_rows(xp: Any, a: Any, lo: int, hi: int) -> tuple[Any, Any]:
    """Each row of ``a`` (R, n), whose values lie in [lo, hi], sorted stably: (sorted values, order)."""
    if _TORCH_SORT(a):  # torch's stable sort of int64 is its fastest
        keys, order = paths.torch_module().sort(a, dim=-1, stable=True)
        return keys, order
    n = a.shape[-1]
    if (hi - lo + 1) * n < np.iinfo(np.dtype(str(a.dtype).rsplit(".", 1)[-1])).max:
        # one key per entry, value then position, all distinct: a plain sort of it is stable (NumPy and
        # XLA sort one array of integers 5 to 6 times faster than they sort an index by a key)
        pos = xp.arange(n, dtype=a.dtype, device=device(a))
        both = xp.sort((a if lo == 0 else a - lo) * n + pos, axis=-1)
        keys = both // n
        return keys if lo == 0 else keys + lo, both % n
    order = xp.argsort(a, axis=-1, stable=True)
    return xp.take_along_axis(a, order, axis=-1), order


def _search_rows(xp: Any, keys: Any, values: Any) -> Any:
    """Per row r, where each of ``values[r]`` (R, Q) goes in the sorted ``keys[r]`` (R, K) (left side)."""
    R, K = keys.shape
    if _TORCH_SEARCH(keys):
        return paths.torch_module().searchsorted(keys, values.expand(R, values.shape[-1]).contiguous())
    # one 1-d search over all rows: row r's keys offset by r * span, with span above every key and value
    lo = xp.minimum(xp.min(keys), xp.min(values))
    span = xp.maximum(xp.max(keys), xp.max(values)) - lo + 1
    offsets = xp.reshape(xp.arange(R, dtype=keys.dtype, device=device(keys)), (R, 1)) * span
    flat = xp.reshape(keys - lo + offsets, (R * K,))
    query = xp.broadcast_to(values - lo + offsets, (R, values.shape[-1]))
    found = xp.searchsorted(flat, xp.reshape(query, (R * values.shape[-1],)), side="left")
    found = xp.reshape(xp.astype(found, keys.dtype), (R, values.shape[-1]))
    return found - xp.reshape(xp.arange(R, dtype=keys.dtype, device=device(keys)) * K, (R, 1))


def _cell_bounds(xp: Any, keys: Any, P: int) -> Any:
    """Per row of the sorted ``keys`` (R, K), all in [0, P]: where the run of each cell 0..P starts, (R, P + 1)."""
    R, K = keys.shape
    itype, dev = keys.dtype, device(keys)
    if _TORCH_SEARCH(keys):
        cells = xp.arange(P + 1, dtype=itype, device=dev)
        return paths.torch_module().searchsorted(keys, cells.expand(R, P + 1).contiguous())
    # one 1-d search over all rows: row r's keys and cells offset by r * (P + 1), so that the queries are a range
    offsets = xp.reshape(xp.arange(0, R * (P + 1), P + 1, dtype=itype, device=dev), (R, 1))
    found = xp.searchsorted(xp.reshape(keys + offsets, (R * K,)), xp.arange(R * (P + 1), dtype=itype, device=dev),
                            side="left")
    found = xp.reshape(found if found.dtype == itype else xp.astype(found, itype), (R, P + 1))
    return found - xp.reshape(xp.arange(0, R * K, K, dtype=itype, device=dev), (R, 1))


def _to(xp: Any, a: np.ndarray, like: Any) -> Any:
    """A small host table on ``like``'s device, in ``like``'s dtype."""
    return xp.asarray(a.astype(np.int64, copy=False), dtype=like.dtype, device=getattr(like, "device", None))


@dataclass(frozen=True)
class Cells:
    """Reads of ``taps`` cells in planes of ``cells`` cells (the ``Routes`` of the autodiff bindings)."""

    cells: int
    taps: int

    @property
    def in_spatial(self) -> tuple[int, ...]:
        return (self.cells,)

    @property
    def selected(self) -> tuple[int, ...]:
        return (self.taps,)

    @property
    def routed(self) -> tuple[int, ...]:
        return (self.cells,)

    def select(self, x: Any, idx: Any) -> Any:
        """``x`` (..., P) read at ``idx`` (..., K): (..., K), 0 where ``idx == P``."""
        lead = _lead(x.shape[:-1], idx.shape[:-1])
        if _TORCH_SELECT(x):
            torch = paths.torch_module()
            if idx.dtype != torch.int64:
                idx = idx.to(torch.int64)
            if self.cells and x.numel() >= _LARGE and x.device.type == "cpu" and not _SYNC_FREE(x) and \
                    not is_symbolic(idx) and not bool((idx >= self.cells).any()):  # no read outside: no zero cell
                return _torch_gather(x, idx, lead)
            x = torch.cat([x, x.new_zeros(tuple(x.shape[:-1]) + (1,))], dim=-1)
            return _torch_gather(x, idx, lead)
        xp = namespace(x)
        if self.taps == 0 or math.prod(lead) == 0:
            return xp.zeros(lead + (self.taps,), dtype=x.dtype, **on(x))
        if _NUMPY_SELECT(x) and isinstance(idx, np.ndarray):
            if self.cells and x.size >= _LARGE and not (idx >= self.cells).any():
                return _np_gather(x, idx, lead)
            return _np_gather(_pad_zero(xp, x), idx, lead)
        # elsewhere (JAX's compiler fuses these): read a safe cell, then zero the reads outside
        inside = idx < self.cells
        safe = xp.where(inside, idx, xp.zeros((), dtype=idx.dtype, **on(idx)))
        out = _gather(xp, x, safe, lead)
        return xp.where(inside, out, xp.zeros((), dtype=out.dtype, **on(out)))

    def sort(self, idx: Any) -> tuple[Any, Any]:
        """The sorted reads of ``idx`` (each row's keys and order), for a caller that routes several ``g`` read
        at the same ``idx`` (``route(..., presorted=)``): one sort for all of them."""
        return _sort_rows(namespace(idx), xp_reshape(idx, self.taps), 0, self.cells)

    def route(self, g: Any, idx: Any, into: Any = None, presorted: tuple[Any, Any] | None = None) -> Any:
        """The transpose of :meth:`select`: (..., K) -> (..., P), each cell the sum of what read it. ``into``
        (NumPy, CuPy or torch outside autograd; the result's shape): each cell's sum is added to it in place
        and it is returned, so a caller routing its reads a chunk at a time touches only the cells a chunk
        reads. ``presorted``: :meth:`sort` of this ``idx``."""
        if into is not None:
            return self._route_into(g, idx, into, presorted)
        xp = namespace(g)
        P, K = self.cells, self.taps
        lead = _lead(g.shape[:-1], idx.shape[:-1])
        rows_shape = tuple(idx.shape[:-1])
        rows = math.prod(rows_shape)
        if K == 0 or P == 0 or math.prod(lead) == 0:
            return xp.zeros(lead + (P,), dtype=g.dtype, **on(g))
        if P * K <= _MATCH:
            cell = xp.reshape(xp.arange(P, dtype=idx.dtype, device=device(idx)), (P, 1))
            hit = idx[..., None, :] == cell  # (..., P, K)
            return xp.sum(xp.where(hit, g[..., None, :], xp.zeros((), dtype=g.dtype, **on(g))), axis=-1)
        keys, order = presorted if presorted is not None else _sort_rows(xp, xp.reshape(idx, (rows, K)), 0, P)
        symbolic = is_symbolic(idx) or is_symbolic(g)
        if symbolic or _SCAN_ALL(g):
            # no values to branch on; or each operation a launch: the doubling scan for every cell (log2 of the
            # longest run steps of a few operations, where ranks and runs take several per rank)
            bounds = _cell_bounds(xp, keys, P)
            end = bounds[:, 1:]
            count = end - bounds[:, :P]
            longest = (None if is_jax_array(g) else K) if symbolic else int(xp.max(count))
            place = None
            if longest is not None and longest > 1 and _SCAN_IN_PLACE(g) is None:  # each read's place in its run
                place = xp.arange(K, dtype=keys.dtype, device=device(keys)) - _gather(xp, bounds, keys, (rows,))
            return _scan(xp, g, keys, order, end, count, longest, lead, rows_shape, place)
        if K < _RUNS * P:  # fewer reads than cells: sums per run of equal keys, then placed (O(reads + cells))
            ukeys, start, count, inside = _runs(xp, keys, P)
            if ukeys.shape[-1] == 0:
                return xp.zeros(lead + (P,), dtype=g.dtype, device=device(g))
            return _place(xp, _sum_runs(xp, g, keys, order, start, count, inside, lead, rows_shape), ukeys, P,
                          lead, rows_shape)
        # start of every cell's run, and of the sentinel's: cell p's run is [start[p], start[p + 1])
        bounds = _cell_bounds(xp, keys, P)
        return _sum_runs(xp, g, keys, order, bounds[:, :P], bounds[:, 1:] - bounds[:, :P], int(xp.max(bounds[:, P])),
                         lead, rows_shape)


    def _route_into(self, g: Any, idx: Any, into: Any, presorted: tuple[Any, Any] | None) -> Any:
        xp = namespace(g)
        P, K = self.cells, self.taps
        lead = _lead(g.shape[:-1], idx.shape[:-1])
        rows_shape = tuple(idx.shape[:-1])
        if K == 0 or P == 0 or math.prod(lead) == 0:
            return into
        if P * K <= _MATCH or K >= _RUNS * P or is_symbolic(idx) or is_symbolic(g):
            into += self.route(g, idx, presorted=presorted)
            return into
        keys, order = presorted if presorted is not None else \
            _sort_rows(xp, xp.reshape(idx, (math.prod(rows_shape), K)), 0, P)
        ukeys, start, count, inside = _runs(xp, keys, P)
        if ukeys.shape[-1]:
            sums = _sum_runs(xp, g, keys, order, start, count, inside, lead, rows_shape)
            at, ok = _flat_cells(xp, ukeys, P, lead, rows_shape)
            flat = xp.reshape(into, (-1,))
            at = at[ok]
            flat[at] = flat[at] + xp.reshape(sums, (-1,))[ok]  # each cell once: a gather, an add, a write
        return into


def xp_reshape(idx: Any, taps: int) -> Any:
    """``idx`` (..., K) as rows (R, K)."""
    return namespace(idx).reshape(idx, (-1, taps))


def _flat_cells(xp: Any, ukeys: Any, P: int, lead: tuple[int, ...], rows_shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The flat index in a (..., P) result of each run's cell ``ukeys`` (rows, U), and which runs are real."""
    U = ukeys.shape[-1]
    cells = xp.broadcast_to(xp.reshape(ukeys, rows_shape + (U,)), lead + (U,))
    base = xp.reshape(xp.arange(math.prod(lead), dtype=ukeys.dtype, device=device(ukeys)) * P, lead + (1,))
    return xp.reshape(cells + base, (-1,)), xp.reshape(cells < P, (-1,))


def _sum_runs(xp: Any, g: Any, keys: Any, order: Any, start: Any, count: Any, inside: int, lead: tuple[int, ...],
              rows_shape: tuple[int, ...]) -> Any:
    """Per run w (a cell, or a run of equal keys), its ``count`` reads from ``start`` in the sorted order summed:
    one by one in their order in ``idx`` when at most ``_RANKS``, by the doubling scan otherwise; (..., W)."""
    W = start.shape[-1]
    longest = int(xp.max(count))
    if longest == 0:
        return xp.zeros(lead + (W,), dtype=g.dtype, device=device(g))
    out = many = None
    if longest > _RANKS:  # cells read often: the scan (only they take its values)
        many = count > _RANKS
        few = _only_many(xp, keys, order, start, count, many)
        if few is None:
            out = _scan(xp, g, keys, order, start + count, count, longest, lead, rows_shape)
        else:
            out = _scan(xp, g, few[0], few[1], few[2], few[3], longest, lead, rows_shape)
        count = xp.where(many, xp.zeros((), dtype=count.dtype, **on(count)), count)
        longest = int(xp.max(count))
        if longest == 0:
            return out
    ranked = _ranks(xp, g, order, start, count, longest, inside, lead, rows_shape)
    if out is None:
        return ranked
    return xp.where(xp.reshape(many, rows_shape + (W,)), out, ranked)


def _only_many(xp: Any, keys: Any, order: Any, start: Any, count: Any, many: Any) -> tuple[Any, Any, Any, Any] | None:
    """The sorted reads of the runs in ``many`` alone, for one row of reads: (keys, order, each run's end among
    them, its count: 0 for the others), so that the scan passes over those reads only; None for several rows,
    or where they are most of the reads (the scan over all of them is then as cheap). A run's reads keep their
    order and their places relative to each other, so the scan gives each the same bits."""
    R, K = keys.shape
    if R != 1:
        return None
    itype, dev = keys.dtype, device(keys)
    kept = xp.where(many, count, xp.zeros((), dtype=count.dtype, **on(count)))
    if 2 * int(xp.sum(kept)) > K:
        return None
    pos = xp.reshape(xp.arange(K, dtype=itype, device=dev), (1, K))
    run = _search_rows(xp, start, pos + 1) - 1  # the last run starting at or before each read
    run = xp.maximum(run, xp.zeros((), dtype=itype, **on(run)))
    member = _gather(xp, xp.astype(many, xp.int8), run, (1,)) == 1
    member = member & (pos < _gather(xp, start + count, run, (1,)))
    (at,) = xp.nonzero(member[0, ...])
    at = xp.reshape(xp.astype(at, itype), (1, -1))
    end = xp.cumulative_sum(kept, axis=-1)
    return _gather(xp, keys, at, (1,)), _gather(xp, order, at, (1,)), end, kept


def _runs(xp: Any, keys: Any, P: int) -> tuple[Any, Any, Any, int]:
    """The runs of equal keys below ``P`` in each row of sorted ``keys`` (R, K), as many per row as the row
    with the most (U): their keys (R, U) (``P`` past a row's runs), first reads (R, U) and lengths (R, U, 0
    past a row's runs), and the most reads below ``P`` of any row. O(K) memory, whatever ``P``."""
    R, K = keys.shape
    itype, dev = keys.dtype, device(keys)
    new = xp.concat([xp.ones((R, 1), dtype=xp.bool, device=dev), keys[:, 1:] != keys[:, :-1]], axis=-1)
    new = new & (keys < P)
    run = xp.cumulative_sum(xp.astype(new, itype), axis=-1)  # run u's reads are numbered u + 1
    U = int(xp.max(run[:, -1]))
    if U == 0:
        empty = xp.zeros((R, 0), dtype=itype, device=dev)
        return empty, empty, empty, 0
    start = _search_rows(xp, run, xp.reshape(xp.arange(1, U + 1, dtype=itype, device=dev), (1, U)))
    inside = _search_rows(xp, keys, xp.full((1, 1), P, dtype=itype, device=dev))  # (R, 1): reads below P
    end = xp.concat([start[:, 1:], xp.full((R, 1), K, dtype=itype, device=dev)], axis=-1)
    count = xp.maximum(xp.minimum(end, inside) - start, xp.zeros((), dtype=itype, device=dev))
    at = _gather(xp, keys, xp.minimum(start, xp.full((), K - 1, dtype=itype, device=dev)), (R,))
    ukeys = xp.where(start < inside, at, xp.full((), P, dtype=itype, device=dev))
    return ukeys, start, count, int(xp.max(inside))


def _place(xp: Any, sums: Any, ukeys: Any, P: int, lead: tuple[int, ...], rows_shape: tuple[int, ...]) -> Any:
    """(..., P) zeros with each run's sum ``sums`` (..., U) at its cell ``ukeys`` (rows, U); a run's cell is
    its own (no two runs of a row share one), so where the backend writes in place this is a write to unique
    destinations, deterministic; elsewhere each cell finds its run by a binary search."""
    U = ukeys.shape[-1]
    rows = math.prod(rows_shape)
    mod = _PLACE_WRITTEN(sums)
    if mod is not None:
        out = buffer(mod, (math.prod(lead) * P,), sums.dtype, sums, zero=True)
        at, ok = _flat_cells(xp, ukeys, P, lead, rows_shape)
        out[at[ok]] = xp.reshape(sums, (-1,))[ok]
        return xp.reshape(out, lead + (P,))
    u2 = xp.reshape(ukeys, (rows, U))
    cell = xp.reshape(xp.arange(P, dtype=ukeys.dtype, device=device(ukeys)), (1, P))
    at = xp.minimum(_search_rows(xp, u2, cell), xp.full((), U - 1, dtype=ukeys.dtype, **on(ukeys)))
    hit = xp.reshape(_gather(xp, u2, at, (rows,)) == cell, rows_shape + (P,))
    vals = _gather(xp, sums, xp.reshape(at, rows_shape + (P,)), lead)
    return xp.where(hit, vals, xp.zeros((), dtype=vals.dtype, **on(vals)))


def _ranks(xp: Any, g: Any, order: Any, start: Any, count: Any, longest: int, inside: int, lead: tuple[int, ...],
           rows_shape: tuple[int, ...]) -> Any:
    """Per cell, its ``count`` (at most ``longest``) reads summed in their order in ``idx``, from +0;
    ``inside``: the most reads inside the plane of any row."""
    rows, P = start.shape
    itype = order.dtype
    dev = device(order)
    if _layout(longest, P, inside) == "dense":  # rank j of cell p at j * P + p: longest * P reads per plane
        j = xp.reshape(xp.arange(longest, dtype=itype, device=dev), (1, longest, 1))
        ok = xp.reshape(j < count[:, None, :], (rows, longest * P))
        pos = xp.reshape(start[:, None, :] + j, (rows, longest * P))
        widths, lows, back = [P] * longest, [0] * longest, None
    else:  # cells by decreasing count: rank j covers the cells read more than j times, a prefix
        neg, corder = _sort_rows(xp, -count, -longest, 0)
        per_row = _search_rows(xp, neg, xp.reshape(-xp.arange(longest, dtype=itype, device=dev), (1, longest)))
        widths = [int(w) for w in to_host(xp.max(per_row, axis=0))]  # the widest prefix of any row
        lows = [int(w) for w in to_host(xp.min(per_row, axis=0))]  # below: every row's cell is read
        rank = np.repeat(np.arange(longest), widths)
        slot = np.arange(rank.size) - np.repeat(np.cumsum(widths) - widths, widths)
        rank_a, slot_a = _to(xp, rank, order), _to(xp, slot, order)
        ok = rank_a < take(xp, -neg, slot_a, 1)
        pos = take(xp, _gather(xp, start, corder, (rows,)), slot_a, 1) + rank_a
        _, back = _sort_rows(xp, corder, 0, P - 1)  # the inverse permutation: cell p's place in corder
        # cells nobody read: zeroed below
        back = xp.where(back < widths[0], back, xp.zeros((), dtype=itype, **on(back)))
    # where in g each rank's reads are (a read past a cell's count reads g's first entry, then zeroed)
    src = _gather(xp, order, xp.where(ok, pos, xp.zeros((), dtype=itype, **on(pos))), (rows,))
    src = xp.reshape(src, rows_shape + (src.shape[-1],))
    ok = xp.reshape(ok, rows_shape + (ok.shape[-1],))
    mod = _RANKS_IN_PLACE(g)
    # one gather of every rank: each plane's reads come from its own plane of g, in cache
    v = _gather(xp, g, src, lead)
    at = 0
    for w, lo in zip(widths, lows):
        if lo < w:  # some row has fewer cells read this often
            v = _zero_outside(xp, mod, v, ok, at + lo, at + w)
        at += w
    first = widths[0]
    acc = v[..., :first]
    if mod is not None:
        acc += 0.0  # +0 first, as torch's sums from a zero (no -0.0 left)
    else:
        acc = acc + xp.zeros((), dtype=acc.dtype, **on(acc))
    at = first
    for w in widths[1:]:
        if mod is not None:
            acc[..., :w] += v[..., at:at + w]
        else:
            acc = xp.concat([acc[..., :w] + v[..., at:at + w], acc[..., w:]], axis=-1)
        at += w
    if back is None:
        return acc
    out = _gather(xp, acc, xp.reshape(back, rows_shape + (P,)), lead)
    return _zero_outside(xp, mod, out, xp.reshape(count > 0, rows_shape + (P,)), 0, P)


def _zero_outside(xp: Any, mod: Any, a: Any, ok: Any, lo: int, hi: int) -> Any:
    """``a`` with 0 where ``ok`` is False, looking only at [lo, hi) along the last axis (in place where the
    backend allows)."""
    if mod is None:
        if lo == 0 and hi == a.shape[-1]:
            return xp.where(ok, a, xp.zeros((), dtype=a.dtype, **on(a)))
        part = xp.where(ok[..., lo:hi], a[..., lo:hi], xp.zeros((), dtype=a.dtype, **on(a)))
        return xp.concat([a[..., :lo], part, a[..., hi:]], axis=-1)
    part, keep = a[..., lo:hi], ok[..., lo:hi]
    if mod.__name__ == "torch":
        part.masked_fill_(~keep, 0)
    else:
        mod.copyto(part, 0, where=~keep)
    return a


def _layout(longest: int, cells: int, inside: int) -> str:
    """Ranks in the cells' own order ("dense": ``longest`` reads per cell, some of them empty) or by count
    ("by_count": only the reads there are, plus a sort of the counts and one gather back); the work of each."""
    return "dense" if longest * cells <= 1.25 * (inside + cells) or longest == 1 else "by_count"


def _scan(xp: Any, g: Any, keys: Any, order: Any, end: Any, count: Any, longest: int | None,
          lead: tuple[int, ...], rows_shape: tuple[int, ...], place: Any = None) -> Any:
    """Per cell, its reads summed by a segmented inclusive scan by doubling over the sorted reads (``longest``:
    the longest run, None inside ``jax.jit``; ``place``: each read's place in its run, if known)."""
    rows, P = end.shape
    K = keys.shape[-1]
    if place is None:
        keys = xp.reshape(keys, rows_shape + (K,))
    s = _gather(xp, g, xp.reshape(order, rows_shape + (K,)), lead)
    zero = xp.zeros((), dtype=s.dtype, **on(s))
    mod = _SCAN_IN_PLACE(s)
    if longest is None:  # inside jax.jit: as many steps as the longest run needs, found on the device
        s = _jax_doubling(s, keys, xp.max(count))
        longest = 0
    pad = None
    if place is not None and longest > 1:
        # (no in-place writes) every entry at once: the entry d back, zeros in front, added where the read is d
        # or more into its run
        place = xp.reshape(place, rows_shape + (K,))
        pad = xp.zeros(lead + (1 << (longest - 1).bit_length() - 1,), dtype=s.dtype, **on(s))
    d = 1
    while d < longest:
        if pad is not None:
            s = s + xp.where(place >= d, xp.concat([pad[..., :d], s[..., :-d]], axis=-1), zero)
            d *= 2
            continue
        same = keys[..., d:] == keys[..., :-d]
        add = xp.where(same, s[..., :-d], zero)  # a new array: then the in-place add reads no written entry
        if mod is not None:
            tail = s[..., d:]
            tail += add  # in place through the view: no write-back
        else:
            s = xp.concat([s[..., :d], s[..., d:] + add], axis=-1)
        d *= 2
    valid = count > 0
    last = xp.clip(end - 1, min=0) if hasattr(xp, "clip") else \
        xp.where(valid, end - 1, xp.zeros((), dtype=end.dtype, **on(end)))
    out = _gather(xp, s, xp.reshape(last, rows_shape + (P,)), lead)
    return xp.where(xp.reshape(valid, rows_shape + (P,)), out, zero)


def _jax_doubling(s: Any, keys: Any, longest: Any) -> Any:
    """The doubling steps of :func:`_scan` in a ``lax.while_loop`` that stops once ``d`` reaches the longest
    run (a traced value): log2 of the longest run steps rather than log2(K). Each step reads ``s`` and the
    keys ``d`` places back through a dynamic slice of a copy with K fill entries in front."""
    import jax
    import jax.numpy as jnp

    K = s.shape[-1]
    s_fill = jnp.zeros(s.shape[:-1] + (K,), s.dtype)
    k_fill = jnp.full(keys.shape[:-1] + (K,), -1, keys.dtype)  # no key: never the same cell

    def step(carry: tuple[Any, Any]) -> tuple[Any, Any]:
        d, s = carry
        back = jax.lax.dynamic_slice_in_dim(jnp.concatenate([s_fill, s], axis=-1), K - d, K, axis=-1)
        same = jax.lax.dynamic_slice_in_dim(jnp.concatenate([k_fill, keys], axis=-1), K - d, K, axis=-1) == keys
        return d * 2, s + jnp.where(same, back, jnp.zeros((), s.dtype))

    d0 = jnp.ones((), longest.dtype)
    return jax.lax.while_loop(lambda carry: carry[0] < longest, step, (d0, s))[1]


def _lead(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two leading shapes of equal rank."""
    return tuple(q if p == 1 else p for p, q in zip(a, b))
