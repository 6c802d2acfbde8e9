"""Array-API kernels that apply a per-axis plan (and its transpose) along one axis.

Only slicing, concatenation, stack/reshape, ``take`` and elementwise arithmetic are used, so one code path
serves every namespace. Work is O(output x taps) per axis: no dense (input x output) matrices and no
k-fold stacked temporaries.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from .._compat import (
    buffer,
    dtype_name,
    eager_library,
    namespace,
    on,
    take,
    to_namespace,
)
from ..plans.windows import GatherPlan, Phases, Run, SlicePlan
from . import paths
from .blocks import CACHE_CELLS, SMALL

_TILE_REDUCE = paths.launches(
    "sums.tile-reduce", "tiling windows (stride = kernel) summed by one reduction over blocks whatever the kernel "
    "where each operation is a kernel launch (the CPU slices blocks of fewer than 8 cells)")
_INNER_SLICES = paths.library(
    "sums.numpy-inner-slices", "numpy", "NumPy's innermost axis, tiling blocks of 8 to 31 cells: slices, where NumPy "
    "reduces short rows one by one", exact="tolerance")
_EINSUM = paths.library(
    "sums.einsum-tiles", "numpy", "a large float32/64 NumPy array, tiling along an axis with runs of 2 to 2048 cells "
    "inside it: einsum over a strided view (-0.0 sums become +0.0, as torch's)", exact="tolerance")
_SMALL_TAKE = paths.writes(
    "sums.small-take", "an eager backend and at most 4096 cells: a periodic plan's taps by one take each (the same "
    "products in the same order as the phases' slices, in fewer operations)")
_PHASES_IN_PLACE = paths.writes(
    "sums.phases-in-place", "every phase of a periodic plan written into its strided place in one output buffer "
    "(no stack, reshape or concatenation)")
_ADD_IN_PLACE = paths.writes("sums.add-in-place", "a take path's taps added into the first tap's fresh array")
_GATHER_LAST = paths.library(
    "sums.torch-gather-last", "torch", "a take along the last axis by torch.gather with a broadcast index "
    "(index_select there is several times slower)")
_SCALE_IN_PLACE = paths.writes(
    "sums.scale-in-place", "the few-operation path's gathered taps scaled in place (one taps-sized array, not two)",
    within="linear.take-all")


def _at(axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index, ...)


def full_like_axis(xp: Any, x: Any, axis: int, size: int, value: float | int) -> Any:
    shape = tuple(x.shape[:axis]) + (size,) + tuple(x.shape[axis + 1:])
    return xp.full(shape, value, dtype=x.dtype, **on(x))


def pad_axis(xp: Any, x: Any, axis: int, left: int, right: int, value: float | int = 0) -> Any:
    if left == 0 and right == 0:
        return x
    parts = []
    if left:
        parts.append(full_like_axis(xp, x, axis, left, value))
    parts.append(x)
    if right:
        parts.append(full_like_axis(xp, x, axis, right, value))
    return xp.concat(parts, axis=axis)


def slice_sum(xp: Any, x: Any, axis: int, plan: SlicePlan) -> Any:
    """y[o] = sum_t xpad[o*stride + offsets[t]], taps added in order."""
    if plan.tiles and plan.stride > 1:
        if _runs_inside(x, axis):
            return _tile_einsum(x, axis, plan.out, plan.stride)
        if not _slices_cheaper(x, axis, plan.stride):
            return tile_sum(xp, x, axis, plan.out, plan.stride)
    x = pad_axis(xp, x, axis, plan.pad_left, plan.pad_right)
    span = (plan.out - 1) * plan.stride + 1
    acc = None
    for off in plan.offsets:
        part = x[_at(axis, slice(off, off + span, plan.stride))]
        acc = part if acc is None else acc + part
    return acc


def tile_sum(xp: Any, x: Any, axis: int, blocks: int, k: int) -> Any:
    """The sum of each block of ``k`` cells along ``axis``: one reshape and one reduction, whatever ``k`` (the
    backend's own summation order, within the conformance tolerances of the taps' sequential sum)."""
    head, tail = tuple(x.shape[:axis]), tuple(x.shape[axis + 1:])
    return xp.sum(xp.reshape(x, head + (blocks, k) + tail), axis=axis + 1, dtype=x.dtype)


# the block sizes from which a CPU backend's reduction beats k strided slices (torch, NumPy's innermost axis)
_TILE_REDUCES, _NUMPY_INNER_REDUCES = 8, 32


def _slices_cheaper(x: Any, axis: int, k: int) -> bool:
    """Whether ``k`` strided slices beat one reduction over blocks of ``k`` cells: where operations are cheap to
    launch (the CPU), for blocks of fewer than 8 cells (8x64x56x56, torch: k = 2 along the rows 0.08 against
    0.70 ms, k = 8 even), and along NumPy's innermost axis for fewer than 32 (it reduces short rows one by one:
    k = 8, 3.5 against 0.7 ms). A GPU backend always reduces: there each slice is a kernel launch. The choice
    reads the array's type, not the path (in place or functional), so both paths add in the same order."""
    if _TILE_REDUCE(x):
        return False
    if _INNER_SLICES(x) and x.strides[axis] == x.itemsize:
        return k < _NUMPY_INNER_REDUCES
    return k < _TILE_REDUCES


# cells of the runs inside an axis (the axes of smaller stride) up to which a tiling sum along it takes einsum
_EINSUM_RUNS = 2048


def _runs_inside(x: Any, axis: int) -> bool:
    """Whether a tiling sum along ``axis`` of NumPy array ``x`` is einsum's: a large float32/64 array whose
    axes of smaller stride (channels-last: the channels; channels-first: the rows' cells) hold runs of 2 to
    ``_EINSUM_RUNS`` cells. NumPy's einsum then adds the window's cells one after another into each output
    (0 + x_0 + x_1 + ...: the slices' sum bit for bit, but for -0.0, which it makes +0.0 as torch does), with
    its inner loop over the runs, where the slices' add iterates run by run: 2-4x faster on large arrays
    (2x2/2 on 32x56x56x64 channels-last: 3.3 -> 1.6 ms for the first pass). Not where the axis is the
    innermost one (einsum then sums along it with several accumulators, another order), nor with negative
    strides (its iterator would walk them backwards)."""
    if not _EINSUM(x) or type(x) is not np.ndarray or x.dtype not in (np.float32, np.float64) or x.size <= SMALL:
        return False
    step = x.strides[axis]
    if step <= 0 or any(st < 0 for st in x.strides):
        return False
    runs = math.prod(n for a, (n, st) in enumerate(zip(x.shape, x.strides)) if a != axis and st < step and n > 1)
    return 2 <= runs <= _EINSUM_RUNS


def _tile_einsum(x: np.ndarray, axis: int, blocks: int, k: int, out: np.ndarray | None = None) -> np.ndarray:
    """The sum of each block of ``k`` cells along ``axis`` (``blocks`` blocks), by einsum over a strided view
    that splits the axis in two (no copy); into ``out`` if given."""
    shape = x.shape[:axis] + (blocks, k) + x.shape[axis + 1:]
    strides = x.strides[:axis] + (x.strides[axis] * k, x.strides[axis]) + x.strides[axis + 1:]
    split = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    kept = [a for a in range(split.ndim) if a != axis + 1]
    return np.einsum(split, list(range(split.ndim)), kept, out=out)


def slice_sum_t(xp: Any, g: Any, axis: int, plan: SlicePlan) -> Any:
    """The transpose of :func:`slice_sum`, by gathering.

    Padded cell P = q*stride + r is read by output o through offset off iff off = r + (q - o)*stride, so
    each residue r is a stride-1 window sum over g with taps m = (off - r) / stride; the residues are then
    interleaved. Cost: taps x output per axis, as the forward.
    """
    # tiling windows: each output broadcast over its block of cells, no arithmetic (a new array: k > 1)
    if plan.tiles and plan.out and plan.stride > 1:
        k = plan.stride
        head, tail = tuple(g.shape[:axis]), tuple(g.shape[axis + 1:])
        y = xp.broadcast_to(xp.reshape(g, head + (plan.out, 1) + tail), head + (plan.out, k) + tail)
        return xp.reshape(y, head + (plan.length,) + tail)
    s = plan.stride
    reach = plan.pad_left + plan.length
    q_len = -(-reach // s)
    shifts = [[(off - r) // s for off in plan.offsets if off % s == r] for r in range(s)]
    m_max = max(m for ms in shifts for m in ms)
    gp = pad_axis(xp, g, axis, m_max, max(0, q_len - plan.out))
    phases = []
    for ms in shifts:
        acc = None
        for m in ms:
            part = gp[_at(axis, slice(m_max - m, m_max - m + q_len))]
            acc = part if acc is None else acc + part
        phases.append(acc)
    if s == 1:
        y = phases[0]
    else:
        template = next(p for p in phases if p is not None)
        phases = [full_like_axis(xp, template, axis, q_len, 0) if p is None else p for p in phases]
        y = xp.stack(phases, axis=axis + 1)
        shape = tuple(y.shape[:axis]) + (q_len * s,) + tuple(y.shape[axis + 2:])
        y = xp.reshape(y, shape)
    return y[_at(axis, slice(plan.pad_left, plan.pad_left + plan.length))]


def gather_sum(xp: Any, x: Any, axis: int, plan: GatherPlan) -> Any:
    """y[o] = sum_t w[t, o] * x[index[t, o]]; index == length reads an appended zero."""
    # an eager call on a small array costs its op count, and the phases' strided runs take several ops per tap
    # where the gather takes one (same products, same order); compiled (JAX) and lazy backends keep the
    # slices, which XLA compiles faster than gathers
    # integer weights (uint8 resampling's fixed point) stay on the take path, whose products stay in x's dtype
    if plan.phases is not None and (plan.weight is None or plan.weight.dtype.kind == "f") and (
            math.prod(x.shape) > SMALL or _SMALL_TAKE(x) is None):
        return phase_sum(xp, x, axis, plan.phases)
    return take_sum(xp, x, axis, plan)


def phase_sum(xp: Any, x: Any, axis: int, ph: Phases) -> Any:
    """:func:`gather_sum` over a plan cut into periodic runs: in a run each phase is a sum of strided slices
    times weights (the same products, added in the same order, as the take path), the phases are
    interleaved, and the gaps between runs gather. NumPy, CuPy and torch write every phase straight into
    its strided place in one output buffer; the other backends stack, reshape and concatenate."""
    mod = _PHASES_IN_PLACE(x)
    if mod is None:
        pieces = [_run_functional(xp, x, axis, p) if isinstance(p, Run) else take_sum(xp, x, axis, p[1])
                  for p in ph.pieces]
        return pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=axis)
    shape = tuple(x.shape[:axis]) + (ph.out,) + tuple(x.shape[axis + 1:])
    out = buffer(mod, shape, x.dtype, x)
    padded = pad_axis(xp, x, axis, 0, 1) if ph.uses_padding_cell else x  # once for every gathered piece
    for piece in ph.pieces:
        if isinstance(piece, Run):
            _run_into(mod, xp, x, padded, axis, piece, out)
        else:
            start, plan = piece
            out[_at(axis, slice(start, start + plan.out))] = take_sum(xp, padded, axis, plan, padded=True)
    return out


def _run_taps(xp: Any, x: Any, axis: int, run: Run, r: int) -> Any:
    """(slice of x, weight) for each sliced tap of phase r; weights in x's dtype, as the take path's."""
    host = np.dtype(dtype_name(xp, x.dtype)) if run.weights is not None else None
    span = run.step * (run.count - 1) + 1
    for t, s in enumerate(run.first[r]):
        part = x[_at(axis, slice(s, s + span, run.step))]
        w = None if run.weights is None or host is None else float(host.type(run.weights[r][t]))  # rounded as take's
        yield part, w


def _run_functional(xp: Any, x: Any, axis: int, run: Run) -> Any:
    columns = []
    for r in range(run.period):
        acc = None
        for part, w in _run_taps(xp, x, axis, run, r):
            part = part if w is None else part * w
            acc = part if acc is None else acc + part
        columns.append(acc)
    inner = columns[0]
    if run.period > 1:
        inner = xp.stack(columns, axis=axis + 1)
        shape = tuple(inner.shape[:axis]) + (run.count * run.period,) + tuple(inner.shape[axis + 2:])
        inner = xp.reshape(inner, shape)
    for tap in run.tail:
        inner = inner + take_sum(xp, x, axis, tap)
    return inner


def _run_into(mod: Any, xp: Any, x: Any, padded: Any, axis: int, run: Run, out: Any) -> None:
    if run.tiles and _runs_inside(x, axis):
        begin = run.first[0][0]
        block = x[_at(axis, slice(begin, begin + run.count * run.step))]
        _tile_einsum(block, axis, run.count, run.step, out=out[_at(axis, slice(run.start, run.stop))])
        return
    tmp = None
    for r in range(run.period):
        view = out[_at(axis, slice(run.start + r, run.stop, run.period))]
        for t, (part, w) in enumerate(_run_taps(xp, x, axis, run, r)):
            if t == 0:
                if w is None:
                    view[...] = part
                else:
                    mod.multiply(part, w, out=view)
                continue
            if w is not None:
                if tmp is None:
                    tmp = buffer(mod, tuple(part.shape), x.dtype, x)
                mod.multiply(part, w, out=tmp)
                part = tmp
            mod.add(view, part, out=view)
    if run.tail:
        view = out[_at(axis, slice(run.start, run.stop))]
        for tap in run.tail:
            mod.add(view, take_sum(xp, padded, axis, tap, padded=True), out=view)


_DEVICE_COPIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_copy(owner: Any, key: Any, host: np.ndarray, like: Any, dtype: Any = None) -> Any:
    """``host`` (a constant table of ``owner``, a cached plan) in ``like``'s namespace and device, kept per
    (owner, key, namespace, device) up to ``CACHE_CELLS`` entries: for NumPy, CuPy and torch (under autograd
    too), array-api-strict and any other eager array library; a JAX trace, a Dask graph, a torch.func wrapper,
    a meta or fake tensor gets a fresh constant."""
    kind = eager_library(like)
    if kind is None or host.size > CACHE_CELLS:  # large tables are not kept (blocks.CACHE_CELLS)
        return to_namespace(host, namespace(like), like, dtype=dtype)
    copies = _DEVICE_COPIES.get(owner)
    if copies is None:
        copies = _DEVICE_COPIES.setdefault(owner, {})
    # a cheap key: this lookup runs once per tap of every call
    dev = like.device if kind == "torch" else None if kind == "numpy" else str(getattr(like, "device", None))
    full = (key, host.shape, kind, dtype, dev)
    got = copies.get(full)
    if got is None:
        got = copies[full] = to_namespace(host, namespace(like), like, dtype=dtype)
    return got


def _taps(plan: GatherPlan, x: Any, trailing: int, kind: str | None) -> list[tuple[Any, Any]]:
    """(index, weight or None) of every tap in x's namespace, device and dtype (weights shaped to broadcast
    along ``trailing`` axes): one cache lookup per call on eager backends (``kind``: ``eager_library(x)``), fresh
    constants elsewhere."""
    key, copies = None, None
    if kind is not None:
        copies = _DEVICE_COPIES.get(plan)
        if copies is None:
            copies = _DEVICE_COPIES.setdefault(plan, {})
        dev = x.device if kind == "torch" else None if kind == "numpy" else str(getattr(x, "device", None))
        key = ("taps", trailing, kind, x.dtype, dev)
        got = copies.get(key)
        if got is not None:
            return got
    xp = namespace(x)
    taps = [(to_namespace(plan.index[t], xp, x),
             None if plan.weight is None else
             to_namespace(plan.weight[t].reshape((-1,) + (1,) * trailing), xp, x, dtype=x.dtype))
            for t in range(plan.taps)]
    if copies is not None:
        copies[key] = taps
    return taps


def take_sum(xp: Any, x: Any, axis: int, plan: GatherPlan, padded: bool = False) -> Any:
    if plan.uses_padding_cell and not padded:  # padded: x already ends in the zero cell
        x = pad_axis(xp, x, axis, 0, 1)
    trailing = x.ndim - axis - 1
    mod = _ADD_IN_PLACE(x)
    last = trailing == 0 and x.ndim > 1 and _GATHER_LAST(x)
    acc = None
    for index, w in _taps(plan, x, trailing, mod.__name__ if mod is not None else eager_library(x)):
        if last:
            part = paths.torch_module().gather(x, axis, index.expand(tuple(x.shape[:-1]) + (plan.out,)))
        else:
            part = take(xp, x, index, axis)
        if w is not None:
            part = part * w
        if acc is None:
            acc = part
        elif mod is not None:  # acc is a fresh result of take: add in place, one temporary fewer
            mod.add(acc, part, out=acc)
        else:
            acc = acc + part
    return acc


# a gather of every tap at once holds taps x outputs cells along the axis: up to this many times the larger of the
# axis' input and output; beyond it the taps go in groups (a loop only past that size)
TAPS_SPREAD = 4


def take_all(xp: Any, x: Any, axis: int, plan: GatherPlan, widen: int = 1) -> Any:
    """:func:`gather_sum` in a few operations whatever the taps: one gather of every tap's cells (a taps axis
    before ``axis``), one product with the weight table, one sum over the taps axis. The paths of backends that
    pay per operation (a GPU); the sum's order is the backend's, within the conformance tolerances. ``widen``: how
    many times wider x's items are than the call's input's (half precision computed in float32)."""
    if plan.uses_padding_cell:
        x = pad_axis(xp, x, axis, 0, 1)
    head, tail = tuple(x.shape[:axis]), tuple(x.shape[axis + 1:])
    group = max(1, TAPS_SPREAD * max(plan.length, plan.out) // (max(plan.out, 1) * widen))
    mod = _SCALE_IN_PLACE(x)
    acc = None
    for t0 in range(0, plan.taps, group):
        t1 = min(plan.taps, t0 + group)
        index = device_copy(plan, ("all", t0, t1), plan.index[t0:t1].reshape(-1), x)
        part = xp.reshape(take(xp, x, index, axis), head + (t1 - t0, plan.out) + tail)
        if plan.weight is not None:
            w = plan.weight[t0:t1].reshape((t1 - t0, plan.out) + (1,) * len(tail))
            w = device_copy(plan, ("all-w", t0, t1, len(tail)), w, x, dtype=x.dtype)
            # in place where the backend writes (the gather is a fresh array): a second taps-sized array
            # would double the group's memory
            part = mod.multiply(part, w, out=part) if mod is not None else part * w
        part = xp.sum(part, axis=axis, dtype=x.dtype)
        acc = part if acc is None else acc + part
    return acc
