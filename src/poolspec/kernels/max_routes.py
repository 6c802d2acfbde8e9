"""The max family's whole-window reductions and gradient routes, shared by regular and adaptive windows:
windows reduced at once with torch's scan rule (:func:`_reduce_cells`), the transpose of strided slicing
(:func:`embed_sum`), and the routes that stay O(input) whatever the window - by gathering over each cell's
covering windows (:func:`gathered_route`; on JAX a ``fori_loop``) or by sorting each plane's winners
(:func:`sorted_route`). No path scatters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._compat import (
    buffer,
    dtype_name,
    index_dtype,
    is_dask_array,
    is_jax_array,
    laid_out,
    namespace,
    on,
    permute,
    permuted_buffer,
    put,
    put_rows,
    stride_order,
    take,
    to_compute,
    to_namespace,
)
from ..plans.windows import SlicePlan
from . import paths
from .blocks import fits
from .blocks import kept as _kept
from .cells import Cells
from .sums import _at, device_copy, pad_axis

# taps (or covering windows) past which a JAX program loops instead of holding a term per tap, and a double
# backward gathers at the winners instead of selecting per tap
_UNROLL = 16
_ZERO = np.zeros(())
_ZERO.setflags(write=False)

_NAN_TEST = paths.writes(
    "max_routes.nan-test", "a backend whose max propagates NaN (NumPy, CuPy, torch): no NaN restored after the "
    "reduction, and the NaN winners' pass only where a host test finds a NaN maximum (the reduction's NaN kept)")
_STRIDED_AMIN = paths.writes(
    "max_routes.strided-amin", "torch, the cells strided in memory (a channels-last view): the first position "
    "equal to the maximum by amin, where torch's argmax along a strided axis is several times slower")
_BLOCKED_ARGMAX = paths.writes(
    "max_routes.blocked-argmax", "a long axis (1024+ cells) on the CPU: argmax in two levels, the first block "
    "holding the maximum, then the first maximum inside it (the same position where no NaN)", cpu=True)
_GATHER_LAST = paths.writes(
    "max_routes.torch-gather-last", "torch: a take along the last axis by gather with a broadcast index "
    "(index_select there is several times slower)")
_SUM_COVERS = paths.launches(
    "max_routes.sum-covers", "where each add is a kernel launch: the covering windows' terms summed by one "
    "reduction (the backend's order) instead of one add per covering window")


def _lowest(xp: Any, x: Any) -> float | int:
    name = dtype_name(xp, x.dtype)
    if name.startswith(("float", "bfloat")):
        return -math.inf
    return int(np.iinfo(np.dtype(name)).min)


def _reduce_cells(xp: Any, x: Any, cells: Any, with_index: bool, index_of: Any,
                  branch_free: bool = False) -> tuple[Any, Any]:
    """Max and torch's winner over the last axis of ``cells`` (each window's cells in row-major order, the
    scan order): the first maximum wins; where a window holds a NaN the value is NaN and the winner the last
    NaN. ``index_of(pos, dtype)`` turns winning positions into flat plane indices. ``branch_free``: no
    host-side test of the values (torch.func's vmap forbids data-dependent control flow)."""
    K = cells.shape[-1]
    values = xp.max(cells, axis=-1)
    mod = None if branch_free else _NAN_TEST(x)
    floating = isinstance(_lowest(xp, x), float)
    if floating and mod is None:
        # XLA's CPU max reduction drops NaNs (a vectorised max): a NaN in the window is restored here
        nan = xp.asarray(math.nan, dtype=values.dtype, **on(values))
        values = xp.where(xp.any(xp.isnan(cells), axis=-1), nan, values)
    if not with_index:
        return values, None
    tm = None if branch_free or K <= 1 else _STRIDED_AMIN(x)
    order = stride_order(cells) if tm is not None and tm.__name__ == "torch" else None
    if tm is not None and order is not None and order[-1] != cells.ndim - 1:
        # the cells strided in memory (a channels-last view): torch's argmax there is several times slower than
        # along memory, its amin is not; the first position holding the maximum is the same winner
        small = tm.uint8 if K < 255 else tm.int64
        hit = tm.where(cells == values[..., None], tm.arange(K, dtype=small, device=cells.device),
                       tm.tensor(K, dtype=small, device=cells.device))
        pos = tm.amin(hit, dim=-1).to(tm.int64)
    else:
        pos = first_max(xp, cells)  # the first maximum (the standard's rule for ties)
    if floating and (mod is None or bool(mod.isnan(values).any())):
        last_nan = (K - 1) - xp.argmax(xp.astype(xp.flip(xp.isnan(cells), axis=-1), xp.int8), axis=-1)
        pos = xp.where(xp.isnan(values), last_nan, pos)
    return values, index_of(pos, index_dtype(xp, values))


def _block(k: int) -> int:
    """The largest divisor of ``k`` from 16 to 64 (0 if none): the block of :func:`first_max`."""
    return next((b for b in range(64, 15, -1) if k % b == 0), 0)


def first_max(xp: Any, cells: Any) -> Any:
    """``argmax`` over the last axis (the first maximum), in two levels where the axis is long (global pools):
    each block's maximum (a vectorised max over contiguous blocks), the first block holding the largest, then
    the first maximum inside that block. A backend's argmax over a long axis runs a scalar loop (torch CPU,
    2x16x16x32x32 -> 1: 550 us against amax's 60); this reads the cells once at max's speed. The same position
    as argmax wherever the axis holds no NaN (the callers place NaN winners themselves). 8 operations more:
not on a GPU, whose argmax is a parallel reduction."""
    k = cells.shape[-1]
    # a fast path of the CPU's eager backends (NumPy, torch), the same positions as the reference's argmax; a
    # GPU's argmax is a parallel reduction already
    b = _block(k) if k >= 1024 else 0
    mod = _BLOCKED_ARGMAX(cells) if b else None
    if mod is None:
        return xp.argmax(cells, axis=-1)
    head = tuple(cells.shape[:-1])
    blocks = xp.reshape(cells, head + (k // b, b))
    which = xp.argmax(xp.max(blocks, axis=-1), axis=-1)  # the first block holding the maximum
    at = xp.reshape(which, head + (1, 1))
    if mod.__name__ == "torch":  # array-api-compat's take_along_axis costs torch 2.5x a gather here
        inside = mod.gather(blocks, -2, at.expand(head + (1, b)))
    else:
        inside = xp.take_along_axis(blocks, at, axis=-2)
    return which * b + xp.argmax(xp.reshape(inside, head + (b,)), axis=-1)


def take_last(xp: Any, x: Any, index: Any) -> Any:
    """``take`` along the last axis with a 1-d index; torch's index_select there is several times slower
    than gather with a broadcast index."""
    mod = _GATHER_LAST(x) if x.ndim > 1 else None
    if mod is not None and mod.__name__ == "torch":
        return mod.gather(x, -1, index.expand(tuple(x.shape[:-1]) + (index.shape[0],)))
    return take(xp, x, index, x.ndim - 1)


def embed_sum(xp: Any, terms: Any, plans: tuple[SlicePlan, ...], lead: int) -> Any:
    """sum over (offsets, h) of h embedded at padded positions o*stride + offset along each axis, cropped
    to the input: the transpose of strided slicing, computed with pads, slices, stack and reshape only.

    Terms are grouped by their residue (offset mod stride) per axis; each group lives on the coarse grid of
    one phase, and the phases are interleaved at the end, so the work is taps x output.
    """
    n = len(plans)
    q = [-(-(p.pad_left + p.length) // p.stride) for p in plans]
    phases: dict[tuple[int, ...], Any] = {}
    for offs, h in terms:
        residue = tuple(off % p.stride for off, p in zip(offs, plans))
        for i, (off, p) in enumerate(zip(offs, plans)):
            m = off // p.stride
            h = pad_axis(xp, h, lead + i, m, max(0, q[i] - p.out - m))[_at(lead + i, slice(0, q[i]))]
        phases[residue] = h if residue not in phases else phases[residue] + h
    for i in reversed(range(n)):
        axis, s = lead + i, plans[i].stride
        merged: dict[tuple[int, ...], Any] = {}
        for prefix in sorted({r[:i] for r in phases}):
            parts = [phases.get(prefix + (r,)) for r in range(s)]
            template = next(x for x in parts if x is not None)
            parts = [xp.zeros_like(template) if x is None else x for x in parts]
            if s == 1:
                merged[prefix] = parts[0]
                continue
            y = xp.stack(parts, axis=axis + 1)
            merged[prefix] = xp.reshape(y, tuple(y.shape[:axis]) + (q[i] * s,) + tuple(y.shape[axis + 2:]))
        phases = merged
    out = phases[()]
    for i, p in enumerate(plans):
        out = out[_at(lead + i, slice(p.pad_left, p.pad_left + p.length))]
    return out


def _tile_cells(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...]) -> np.ndarray:
    """The flat plane index of every cell the tiling windows cover, shaped (O_1, k_1, ..., O_n, k_n)."""
    cells = np.arange(math.prod(in_spatial), dtype=np.int64).reshape(in_spatial)
    cells = cells[tuple(slice(0, O * k) for O, k in zip(out_spatial, kernel))]
    cells = np.ascontiguousarray(cells).reshape(tuple(v for O, k in zip(out_spatial, kernel) for v in (O, k)))
    cells.setflags(write=False)
    return cells


def _walk(xp: Any, arrays: tuple[Any, ...], tables: list[np.ndarray], lead: int, axis: int = 0) -> Any:
    """Every combination of one row per axis of ``tables``, taken from each of ``arrays``."""
    if axis == len(tables):
        yield (), arrays
        return
    for t, row in enumerate(tables[axis]):
        where = to_namespace(row, xp, arrays[0])
        taken = tuple(take(xp, a, where, lead + axis) for a in arrays)
        for rest, out in _walk(xp, taken, tables, lead, axis + 1):
            yield (t,) + rest, out


def gathered_route(g: Any, idx: Any, covers: list[np.ndarray], in_spatial: tuple[int, ...], owner: Any) -> Any:
    """grad_x[j] = sum of g[o] over the outputs o whose winner is j: every input cell visits the outputs
    whose window holds it (per axis a (C, L) table, ascending, the output count where a cell has fewer)
    and keeps g where that output's winner is the cell. O(input x prod(C)) work in prod(C) gathers,
    whatever the window's size; outputs arrive in ascending row-major order, torch's accumulation order."""
    xp = namespace(g)
    n = len(in_spatial)
    lead = g.ndim - n
    work, winners = to_compute(xp, g), idx
    C = math.prod(c.shape[0] for c in covers)
    table = C * math.prod(in_spatial)
    if not is_jax_array(g) or (C <= _UNROLL and fits((g, idx), table * math.prod(g.shape[:lead]), table)):
        out = _flat_route(xp, work, winners, covers, in_spatial, owner)
        return out if out.dtype == g.dtype else xp.astype(out, g.dtype)
    for i in range(n):  # the reader index O points at a padding output that never wins
        work = pad_axis(xp, work, lead + i, 0, 1, 0)
        winners = pad_axis(xp, winners, lead + i, 0, 1, -1)
    cell = to_namespace(np.arange(math.prod(in_spatial), dtype=np.int64).reshape(in_spatial), xp, g)
    out = _looped_route(xp, work, winners, cell, covers, lead)
    return out if out.dtype == g.dtype else xp.astype(out, g.dtype)


def sorted_route(g: Any, idx: Any, in_spatial: tuple[int, ...]) -> Any:
    """grad_x[j] = sum of g[o] over the outputs o whose winner is j, by sorting each plane's winners
    (:meth:`Cells.route`): O(output log output + input) work and O(input + output) memory whatever the
    windows, the outputs of a cell added in ascending order (torch's) where it wins at most ``cells._RANKS``
    of them."""
    xp = namespace(g)
    n = len(in_spatial)
    lead = tuple(g.shape[:g.ndim - n])
    M, P = math.prod(g.shape[g.ndim - n:]), math.prod(in_spatial)
    work = to_compute(xp, g)  # half precision accumulates in float32, rounded once
    out = Cells(P, M).route(xp.reshape(work, lead + (M,)), xp.reshape(idx, lead + (M,)))
    out = xp.reshape(out, lead + tuple(in_spatial))
    return out if out.dtype == g.dtype else xp.astype(out, g.dtype)


def _cover_tables(covers: tuple[np.ndarray, ...], out_spatial: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(C * P,): for every combination of covering windows (row-major, so outputs ascend) and every plane
    cell, the flat output index it reads, or one past the outputs (a zero cotangent, a winner of -1); and
    (P,) the cells' own flat indices."""
    read, _ = _outer_index(covers, out_spatial)
    cell = np.arange(math.prod(c.shape[1] for c in covers), dtype=np.int64)
    cell.setflags(write=False)
    return read, cell


def _outer_index(tables: Sequence[np.ndarray], spatial: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per axis i a (A_i, B_i) table of coordinates into ``spatial[i]``, combined over every (a_1, ..., a_n,
    b_1, ..., b_n) into flat indices of the ``spatial`` plane: the flattened table with one past the plane
    wherever some axis's coordinate lies outside it (a padding cell), and, unflattened, the same with those
    coordinates read as 0."""
    n = len(tables)
    shape = tuple(t.shape[0] for t in tables) + tuple(t.shape[1] for t in tables)
    flat, outside = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=bool)
    for i, (t, size) in enumerate(zip(tables, spatial)):
        at = [1] * (2 * n)
        at[i], at[n + i] = t.shape
        a = t.reshape(at)
        flat = flat + np.where(a < size, a, 0) * math.prod(spatial[i + 1:])
        outside = outside | (a >= size)
    read = np.where(outside, math.prod(spatial), flat).reshape(-1)
    read.setflags(write=False)
    return read, flat


def _flat_route(xp: Any, work: Any, winners: Any, covers: list[np.ndarray], in_spatial: tuple[int, ...],
                owner: Any) -> Any:
    """The walk of :func:`gathered_route` as one gather of the cotangent and one of the winners from the
    flattened output plane, for every combination of covering windows at once; the combinations' terms are
    then added in ascending order, as the walk adds them."""
    n = len(in_spatial)
    lead = work.ndim - n
    head = tuple(work.shape[:lead])
    out_spatial = tuple(work.shape[lead:])
    P, Q = math.prod(in_spatial), math.prod(out_spatial)
    read, cell = _kept(owner, "_kept_cover_tables", math.prod(c.shape[0] for c in covers) * math.prod(in_spatial),
                       lambda: _cover_tables(tuple(covers), out_spatial))
    C = read.shape[0] // P
    gf = pad_axis(xp, xp.reshape(work, head + (Q,)), lead, 0, 1, 0)
    wf = pad_axis(xp, xp.reshape(winners, head + (Q,)), lead, 0, 1, -1)
    at = device_copy(owner, "cover_read", read, gf)
    gv = xp.reshape(take_last(xp, gf, at), head + (C, P))
    iv = xp.reshape(take_last(xp, wf, at), head + (C, P))
    zero = device_copy(owner, "zero", _ZERO, gv, gv.dtype)
    terms = xp.where(iv == device_copy(owner, "cover_cell", cell, wf, wf.dtype), gv, zero)
    if _SUM_COVERS(terms):  # one reduction (the backend's order) where each add is a kernel launch
        return xp.reshape(xp.sum(terms, axis=-2, dtype=terms.dtype), head + in_spatial)
    out = terms[..., 0, :]
    for c in range(1, C):
        out = out + terms[..., c, :]
    return xp.reshape(out, head + in_spatial)


def _looped_route(xp: Any, work: Any, winners: Any, cell: Any, covers: list[np.ndarray], lead: int) -> Any:
    """:func:`gathered_route`'s walk as one ``lax.fori_loop`` over the covering-window tuples (JAX): the
    program, and so its compile time, no longer grows with the window, and the terms still add in
    ascending row-major order of the outputs, one at a time, from zero (torch's order)."""
    from jax import lax

    counts = [c.shape[0] for c in covers]
    tables = [to_namespace(np.ascontiguousarray(c), xp, work) for c in covers]
    zero = xp.zeros((), dtype=work.dtype, **on(work))

    def body(u: Any, out: Any) -> Any:
        rows, rest = [], u
        for c in reversed(counts):  # row-major: the last axis's row varies fastest
            rows.append(rest % c)
            rest = rest // c
        gv, iv = work, winners
        for i, t in enumerate(reversed(rows)):
            where = lax.dynamic_index_in_dim(tables[i], t, keepdims=False)
            gv, iv = xp.take(gv, where, axis=lead + i), xp.take(iv, where, axis=lead + i)
        return out + xp.where(iv == cell, gv, zero)

    shape = tuple(work.shape[:lead]) + tuple(cell.shape)
    return lax.fori_loop(0, math.prod(counts), body, xp.zeros(shape, dtype=work.dtype, **on(work)))


def take_winners(xp: Any, gg: Any, idx: Any, n: int) -> Any:
    """``gg`` read at each output's winner (a flat index into the plane) by one ``take_along_axis``: one
    gather whatever the window, where the namespace has it (None otherwise, and for Dask, whose chunks
    need the per-tap form)."""
    if not hasattr(xp, "take_along_axis") or is_dask_array(gg):
        return None
    lead = tuple(gg.shape[:gg.ndim - n])
    flat = xp.reshape(gg, lead + (-1,))
    where = xp.reshape(xp.astype(idx, xp.int64), lead + (-1,))
    return xp.reshape(xp.take_along_axis(flat, where, axis=-1), tuple(idx.shape))


def put_winners(mod: Any, xp: Any, g: Any, idx: Any, in_spatial: tuple[int, ...]) -> Any:
    """The route where no two outputs share a winner (windows that never overlap): each g written at its
    winner (unique destinations: deterministic), +0 elsewhere. ``g + 0`` gives +0.0 for -0.0, as a sum from
    zero does. An index flat in its plane, as ``return_indices`` gives it."""
    n = len(in_spatial)
    lead = tuple(g.shape[:g.ndim - n])
    P, M = math.prod(in_spatial), math.prod(g.shape[g.ndim - n:])
    planes = math.prod(lead)
    itype = index_dtype(xp, idx)
    work = g + 0
    order = lanes(mod, g, n)  # g's: NumPy's sum may drop the strides of size-1 axes
    if order is not None:  # channels-last g: the gradient written in its memory order
        outer, inner = lane_sizes(tuple(g.shape), order, n)
        winners = xp.reshape(permute(xp.astype(idx, itype, copy=False), order), (outer, M, inner))
        values = xp.reshape(permute(work, order), (outer, M, inner))
        if mod.__name__ == "torch":
            # a scatter along the cells of (outer, cells, inner), with no flat keys to compute: 2x faster than
            # the flat scatter (channels-first, whose inner size is 1, the flat one wins)
            out = buffer(mod, (outer, P, inner), g.dtype, g, zero=True)  # 3-d: contiguous
            out.scatter_(1, winners, values)
        else:
            out = buffer(mod, (planes * P,), g.dtype, g, zero=True)
            lane = (np.arange(outer, dtype=np.int64)[:, None, None] * (P * inner)
                    + np.arange(inner, dtype=np.int64)[None, None, :])
            put(mod, out, xp.reshape(winners * inner + to_namespace(lane, xp, idx, itype), (-1,)),
                xp.reshape(values, (-1,)))
        return laid_out(xp, out, lead + tuple(in_spatial), order)
    if mod.__name__ == "torch":  # row by row: no flat keys to compute
        out = buffer(mod, (planes, P), g.dtype, g, zero=True)
        put_rows(mod, out, xp.reshape(xp.astype(idx, itype, copy=False), (planes, M)), xp.reshape(work, (planes, M)))
        return xp.reshape(out, lead + tuple(in_spatial))
    out = buffer(mod, (planes * P,), g.dtype, g, zero=True)
    offsets = xp.arange(0, planes * P, P, dtype=itype, **on(idx))
    keys = xp.reshape(xp.reshape(xp.astype(idx, itype, copy=False), (planes, M)) + offsets[:, None], (-1,))
    put(mod, out, keys, xp.reshape(work, (-1,)))
    return xp.reshape(out, lead + tuple(in_spatial))


_LEAD = 16  # cells before the planes in slot_route's buffer: 64 bytes at float32


def slot_tables(firsts: Sequence[np.ndarray], counts: Sequence[int], out_spatial: tuple[int, ...]
                ) -> tuple[np.ndarray, np.ndarray]:
    """For :func:`slot_route`: (M,) each output's code sum(o_i * R_i) and (P,) each cell's code of its first
    covering output sum(first_i * R_i), with R_i = prod(counts[i + 1:]) (mixed radix, row-major): an
    output's slot at its winner w is code[o] - first[w]."""
    radix = [math.prod(counts[i + 1:]) for i in range(len(counts))]
    outs = np.zeros(out_spatial, dtype=np.int64)
    cells = np.zeros(tuple(f.shape[0] for f in firsts), dtype=np.int64)
    for i, (f, O, r) in enumerate(zip(firsts, out_spatial, radix)):
        shape = [1] * len(counts)
        shape[i] = O
        outs = outs + np.arange(O, dtype=np.int64).reshape(shape) * r
        shape[i] = f.shape[0]
        cells = cells + f.reshape(shape) * r
    outs, cells = outs.reshape(-1), cells.reshape(-1)
    outs.setflags(write=False)
    cells.setflags(write=False)
    return outs, cells


def lanes(mod: Any, a: Any, n: int) -> list[int] | None:
    """The axes of ``a`` in memory order where they are permuted and dense as (outer lead axes, the ``n``
    spatial axes in order, inner lead axes) - a channels-last array or view - so that the planes can be
    walked as (outer, cells, inner) without a copy; None otherwise (including arrays in their own order)."""
    if a.ndim <= n + 1 or 0 in a.shape:
        return None
    if mod.__name__ == "torch":
        strides = list(a.stride())
    else:
        strides = [st // a.itemsize for st in a.strides]
    order = sorted(range(a.ndim), key=lambda ax: (-strides[ax], ax))
    lead = a.ndim - n
    if order == list(range(a.ndim)):
        return None
    at = order.index(lead)
    if order[at:at + n] != list(range(lead, a.ndim)):
        return None
    view = permute(a, order)
    dense = view.is_contiguous() if mod.__name__ == "torch" else view.flags.c_contiguous
    return order if dense else None


def lane_sizes(shape: tuple[int, ...], order: list[int], n: int) -> tuple[int, int]:
    """(outer, inner) for an array of ``shape`` laid out in :func:`lanes` ``order``: the sizes of the lead
    axes before and after its ``n`` spatial axes in memory (batch and channels, for channels-last)."""
    at = order.index(len(shape) - n)
    return math.prod(shape[a] for a in order[:at]), math.prod(shape[a] for a in order[at + n:])


def slot_route(mod: Any, xp: Any, g: Any, idx: Any, firsts: Sequence[np.ndarray], counts: Sequence[int],
               in_spatial: tuple[int, ...], owner: Any) -> Any:
    """grad_x[j] = sum of g[o] over the outputs o whose winner is j, where each cell's covering windows are
    consecutive on every axis (``counts[i]`` at most, the first ``firsts[i][cell]``): an output's slot is
    its rank among its winner's covering windows, and no two outputs of one slot share a winner. So slot by
    slot, in order, each output of the slot adds its g to its winner's cell (a gather, an add and a write
    to distinct cells: deterministic; the other outputs write to a spare cell past the planes, never read):
    each cell's outputs in ascending row-major order from zero, torch's accumulation order, bit for bit.
    O(slots x output + input) work and O(input + output) memory; NumPy, CuPy and torch outside autograd.
    Channels-last g and winners are walked in their memory order, and the gradient is laid out as they are."""
    n = len(in_spatial)
    lead = tuple(g.shape[:g.ndim - n])
    out_spatial = tuple(g.shape[g.ndim - n:])
    P, M = math.prod(in_spatial), math.prod(out_spatial)
    planes = math.prod(lead)
    work = to_compute(xp, g) + 0  # a sum from zero turns -0.0 into +0.0
    out_code, first = _kept(owner, "_kept_slot_tables", M + P, lambda: slot_tables(firsts, counts, out_spatial))
    itype = index_dtype(xp, idx)
    # a channels-last g is walked in its memory order (winners in another order are reordered: output-sized)
    order = lanes(mod, g, n) or list(range(g.ndim))
    outer, inner = lane_sizes(tuple(g.shape), order, n)
    flat = xp.reshape(permute(xp.astype(idx, itype, copy=False), order), (outer, M, inner))
    # the planes at an offset of 64 bytes (the result keeps an aligned start), a spare cell before them and
    # after them: for slot c, (code - c * size) clipped to [_LEAD - 1, size - 1] is the cell for the slot's
    # outputs and a spare cell for the others (one subtraction and one clip per slot); size is a multiple of
    # inner, so that code = ((out_code - first[winner]) * size / inner + winner) * inner + lane
    size = -(-(_LEAD + planes * P + 1) // inner) * inner
    code = buffer(mod, (outer, M, inner), flat.dtype, flat)
    at = device_copy(owner, "slot_first", first, flat, itype)
    if mod.__name__ == "torch":
        mod.index_select(at, 0, xp.reshape(flat, (-1,)), out=xp.reshape(code, (-1,)))
    else:
        mod.take(at, flat, out=code)
    mod.subtract(xp.reshape(device_copy(owner, "slot_out", out_code, flat, itype), (1, M, 1)), code, out=code)
    mod.multiply(code, size // inner, out=code)
    mod.add(code, flat, out=code)
    lane = (np.arange(outer, dtype=np.int64)[:, None, None] * (P * inner)
            + np.arange(inner, dtype=np.int64)[None, None, :] + _LEAD)
    if inner > 1:
        mod.multiply(code, inner, out=code)
    mod.add(code, to_namespace(lane, xp, flat, itype), out=code)
    code = xp.reshape(code, (-1,))
    values = xp.reshape(permute(work, order), (-1,))
    grad = buffer(mod, (size,), work.dtype, work, zero=True)
    # one index buffer and one value buffer for every slot, written in place: fresh megabyte-sized
    # temporaries per slot cost more in page faults than their arithmetic
    dest = buffer(mod, tuple(code.shape), code.dtype, code)
    vals = buffer(mod, tuple(values.shape), values.dtype, values)
    for c in range(math.prod(counts)):
        mod.subtract(code, c * size, out=dest)
        mod.clip(dest, _LEAD - 1, size - 1, out=dest)
        if c == 0:
            put(mod, grad, dest, values)
            continue
        if mod.__name__ == "torch":
            mod.index_select(grad, 0, dest, out=vals)
        else:
            mod.take(grad, dest, out=vals)
        mod.add(vals, values, out=vals)
        put(mod, grad, dest, vals)
    grad = laid_out(xp, grad[_LEAD:_LEAD + planes * P], lead + tuple(in_spatial), order)
    return grad if grad.dtype == g.dtype else xp.astype(grad, g.dtype)


def route_base(w: Any) -> np.ndarray:
    """For ``maxes.MaxWindows._route_writable``: the flat index of each output's tap (0, ..., 0), which may lie
    in padding."""
    n = len(w.in_spatial)
    base = None
    for i in range(n):
        L, O, k, s, p, d = w._axes()[i]
        part = _along((np.arange(O, dtype=np.int64) * s - p) * w.plane_strides()[i], n - i - 1)
        base = part if base is None else base + part
    return np.asarray(base)


def route_schedule(w: Any) -> tuple[bool, dict[tuple[int, ...], tuple[int, ...]], list[Any], bool]:
    """What ``maxes.MaxWindows._route_writable`` does per tap tuple, which depends on the windows ``w`` alone
    (a tiny call's backward otherwise spends most of its time here): whether the reach fits int16, each stride
    residue class's buffer shape, (residue, code, output slices, class slices) per tap tuple in descending order,
    and whether the classes cover every cell."""
    n = len(w.in_spatial)
    strides = w.plane_strides()
    reach = sum((k - 1) * d * st for k, d, st in zip(w.kernel, w.dilation, strides))
    sizes: dict[tuple[int, ...], tuple[int, ...]] = {}
    steps = []
    per_axis = [{r[0]: r for r in w._ranges(i)} for i in range(n)]
    for taps in reversed(list(itertools.product(*(range(k) for k in w.kernel)))):
        if not all(t in per_axis[i] for i, t in enumerate(taps)):
            continue  # a tap tuple in padding along some axis never wins
        c = sum(t * w.dilation[i] * strides[i] for i, t in enumerate(taps))
        outs = tuple(slice(per_axis[i][t][1], per_axis[i][t][2]) for i, t in enumerate(taps))
        first = [per_axis[i][t][3].start for i, t in enumerate(taps)]
        residue = tuple(c0 % st for c0, st in zip(first, w.stride))
        if residue not in sizes:
            sizes[residue] = tuple((L - r + st - 1) // st for L, r, st in zip(w.in_spatial, residue, w.stride))
        into = tuple(slice(c0 // st, c0 // st + o.stop - o.start) for c0, st, o in zip(first, w.stride, outs))
        steps.append((residue, c, outs, into))
    whole = len(sizes) == math.prod(min(st, L) for st, L in zip(w.stride, w.in_spatial))
    return reach < 2**15, sizes, steps, whole


def _fresh(mod: Any, like: Any, axis: int, size: int, dtype: Any) -> Any:
    shape = tuple(like.shape[:axis]) + (size,) + tuple(like.shape[axis + 1:])
    permuted = permuted_buffer(like, shape, dtype)  # a channels-last view's passes write in its memory order
    return permuted if permuted is not None else buffer(mod, shape, dtype, like)


def _fill_where(mod: Any, view: Any, mask: Any, value: int) -> None:
    if mod.__name__ == "torch":
        view.masked_fill_(mask, value)
    else:
        mod.copyto(view, value, where=mask)


def _along(host: np.ndarray, trailing: int) -> np.ndarray:
    return host.reshape((-1,) + (1,) * trailing)
