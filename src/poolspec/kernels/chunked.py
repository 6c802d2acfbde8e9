"""Chunk-local evaluation of per-axis plans on Dask arrays: the distributed path.

The array-API kernels run on Dask unchanged, but their slices, ``take`` and stack/reshape steps let Dask
build tasks that read whole rows of chunks. Here every axis is one pass that stays local: the outputs are
split into groups (by the input chunk their first cell lies in, and at most an input chunk's length each);
each group reads only the input range its taps reach (its chunk plus a halo), merged into one block, and
applies the group's slice of the plan with the same NumPy kernels, so the values are those of the NumPy
path bit for bit. A task's input is thus at most one chunk plus the halo along the axis being reduced.

Used for the linear ops (avg, adaptive avg, lp's window sums, every interpolate mode, and their transposes)
and for max pools without indices. What acts on whole planes at data-dependent cells (the max family's
gradient routing, max_unpool) runs per block of whole planes instead (:func:`plane_local`), keeping the
batch and channel chunks; the max pools with indices keep the generic lazy path.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ..plans.windows import GatherPlan, SlicePlan


@lru_cache(maxsize=256)
def as_table(plan: SlicePlan | GatherPlan) -> GatherPlan:
    """Any axis plan as a gather table (index == length reads the padding cell)."""
    if isinstance(plan, GatherPlan):
        return plan
    o = np.arange(plan.out, dtype=np.int64)
    index = o[None, :] * plan.stride + np.asarray(plan.offsets, dtype=np.int64)[:, None] - plan.pad_left
    index = np.where((index >= 0) & (index < plan.length), index, plan.length)
    index.setflags(write=False)
    return GatherPlan(plan.length, plan.out, index)


def groups(table: GatherPlan, chunks: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """(first output, end output, first input cell, end input cell) per output group."""
    L = table.length
    valid = table.index < L
    anchor = np.where(valid, table.index, L).min(axis=0)  # each output's first input cell
    # an output that reads no cell (a transposed table's unread cell) joins its predecessor's group;
    # the running maximum keeps the groups contiguous
    anchor = np.maximum.accumulate(np.where(valid.any(axis=0), anchor, 0))
    bounds = np.cumsum((0,) + chunks)
    chunk_of = np.clip(np.searchsorted(bounds, anchor, side="right") - 1, 0, len(chunks) - 1)
    limit = max(chunks)
    groups = []
    for c in range(len(chunks)):
        outs = np.flatnonzero(chunk_of == c)
        if outs.size == 0:
            continue
        a, b = int(outs[0]), int(outs[-1]) + 1
        parts = -(-(b - a) // limit)
        cuts = [a + (b - a) * i // parts for i in range(parts + 1)]
        for a2, b2 in zip(cuts[:-1], cuts[1:]):
            cells = table.index[:, a2:b2][valid[:, a2:b2]]
            lo, hi = (int(cells.min()), int(cells.max()) + 1) if cells.size else (0, 1)
            groups.append((a2, b2, lo, hi))
    return groups


def local_table(table: GatherPlan, a: int, b: int, lo: int, hi: int) -> GatherPlan:
    index = table.index[:, a:b]
    index = np.where(index < table.length, index - lo, hi - lo)
    index.setflags(write=False)
    weight = None if table.weight is None else table.weight[:, a:b]
    return GatherPlan(hi - lo, b - a, index, weight, table.cycle)  # a slice keeps the whole table's period


def chunk_local(x: Any, tables: tuple[GatherPlan | None, ...], fn: Callable[..., np.ndarray]) -> Any | None:
    """One task per chunk of Dask array ``x``: each chunk gives the outputs in proportion to its place along
    every axis (the input chunk divided by the factor: regular output chunks wherever the input's are and the
    factor divides them), reading its chunk plus, where windows reach past it, a halo from its neighbours (one
    overlap pass). ``tables`` has one gather table per trailing axis (None: the identity); ``fn(block, local
    tables, input ranges, output ranges)`` gives a block's result with NumPy's kernels, so the values are those
    of the NumPy path bit for bit. None where a halo would pass a neighbouring chunk (the axis passes then)."""
    import dask.array as da

    lead = x.ndim - len(tables)
    axes: list[list[tuple[GatherPlan | None, tuple[int, int], tuple[int, int], int]]] = []
    depth: dict[int, int] = {}
    for i, table in enumerate(tables):
        chunks = tuple(x.chunks[lead + i])
        bounds = [int(v) for v in np.cumsum((0,) + chunks)]
        spans = list(zip(bounds[:-1], bounds[1:]))
        if table is None:
            axes.append([(None, span, span, span[0]) for span in spans])
            continue
        if 0 in chunks or table.length != bounds[-1]:
            return None
        valid = table.index < table.length
        cut = [start * table.out // table.length for start in bounds[:-1]] + [table.out]
        reach = []
        for (start, end), a, b in zip(spans, cut[:-1], cut[1:]):
            if a == b:
                return None  # a chunk too small to hold an output of its own
            cells = table.index[:, a:b][valid[:, a:b]]
            lo, hi = (int(cells.min()), int(cells.max()) + 1) if cells.size else (start, end)
            reach.append((min(lo, start), max(hi, end)))
        d = max(max(start - lo, hi - end) for (start, end), (lo, hi) in zip(spans, reach))
        if d > min(chunks):
            return None
        per: list[tuple[GatherPlan | None, tuple[int, int], tuple[int, int], int]] = []
        for c, ((start, end), a, b) in enumerate(zip(spans, cut[:-1], cut[1:])):
            origin = start - (d if c > 0 else 0)  # the block's first cell: the overlap adds d inside the array
            stop = end + (d if c < len(spans) - 1 else 0)
            per.append((local_table(table, a, b, origin, stop), (start, end), (a, b), origin))
        axes.append(per)
        if d:
            depth[lead + i] = d
    out_chunks = tuple(x.chunks[:lead]) + tuple(tuple(o[1] - o[0] for _, _, o, _ in per) for per in axes)
    source = da.overlap.overlap(x, depth=depth, boundary="none") if depth else x

    def block(b: np.ndarray, block_info: Any = None) -> np.ndarray:
        where = block_info[0]["chunk-location"][lead:]
        picked = [axes[i][c] for i, c in enumerate(where)]
        ins = tuple((p[3], p[3] + b.shape[lead + i]) for i, p in enumerate(picked))
        return fn(b, tuple(p[0] for p in picked), ins, tuple(p[2] for p in picked))

    return source.map_blocks(block, chunks=out_chunks, dtype=x.dtype,
                             meta=np.empty((0,) * x.ndim, dtype=x.dtype))


def axis_pass(x: Any, axis: int, plan: SlicePlan | GatherPlan, reduce: str, fill: float | int = 0) -> Any:
    """One axis of a plan applied to Dask array ``x``: ``reduce`` is "sum" (weighted taps, the padding cell
    0) or "max" (NaN-propagating maximum over taps, the padding cell ``fill``)."""
    import dask.array as da

    table = as_table(plan)
    pieces = []
    for a, b, lo, hi in groups(table, tuple(x.chunks[axis])):
        local = local_table(table, a, b, lo, hi)
        block = x[(slice(None),) * axis + (slice(lo, hi),)].rechunk({axis: hi - lo})
        chunks = block.chunks[:axis] + ((b - a),) + block.chunks[axis + 1:]
        pieces.append(block.map_blocks(_apply, local, axis, reduce, fill, chunks=chunks, dtype=x.dtype))
    return pieces[0] if len(pieces) == 1 else da.concatenate(pieces, axis=axis)


def _apply(block: np.ndarray, table: GatherPlan, axis: int, reduce: str, fill: float | int) -> np.ndarray:
    from .._compat import namespace
    from .sums import gather_sum, pad_axis

    xp = namespace(block)
    if reduce == "sum":
        return gather_sum(xp, block, axis, table)
    padded = pad_axis(xp, block, axis, 0, 1, fill) if table.uses_padding_cell else block
    out = np.take(padded, table.index[0], axis=axis)
    for t in range(1, table.taps):
        np.maximum(out, np.take(padded, table.index[t], axis=axis), out=out)
    return out


def plane_local(fn: Any, arrays: tuple[Any, ...], out_spatial: tuple[int, ...]) -> Any:
    """``fn(*blocks)`` for each block of whole (batch, channel) planes of the Dask ``arrays``, which share their
    leading axes: the first array's leading chunks are kept, every spatial axis is one chunk, and ``fn``
    (a NumPy kernel) gives a block with spatial shape ``out_spatial``. Each plane is computed alone, so the
    values are those of one NumPy call on the whole arrays, bit for bit."""
    import dask.array as da

    first = arrays[0]
    lead = first.ndim - len(out_spatial)
    chunks = tuple(first.chunks[:lead])
    blocks = [a.rechunk(chunks + tuple((s,) for s in a.shape[lead:])) for a in arrays]
    return da.map_blocks(fn, *blocks, chunks=chunks + tuple((s,) for s in out_spatial), dtype=first.dtype,
                         meta=np.empty((0,) * first.ndim, dtype=first.dtype))
