"""Per-axis window plans, computed on the host from static sizes and cached.

Two shapes of plan cover every pooling op:

* :class:`SlicePlan` - regular windows (start o*s - p, taps at fixed offsets). Applied with one strided
  slice per tap; its transpose is again a set of slices (see ``kernels.sums.slice_sum_t``).
* :class:`GatherPlan` - ragged windows (adaptive pools) or weighted taps (interpolation): for each tap t an
  index per output. Its transpose is a GatherPlan too, so backward passes gather and never scatter.
  Where its taps repeat with a period (integer and rational scales: output o + q reads the cells of o
  shifted by p, with the same weights), :class:`Phases` describes that run so the kernel reads it with
  strided slices instead of ``take`` - the same products added in the same order, so bit-identical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np


@dataclass(frozen=True, eq=False)
class SlicePlan:
    """Output o reads padded cells o*stride + off for off in offsets; padded cell P is input P - pad_left."""

    length: int
    out: int
    stride: int
    offsets: tuple[int, ...]
    pad_left: int
    pad_right: int

    @cached_property
    def tiles(self) -> bool:
        """Windows that cut the axis into ``out`` blocks of ``stride`` cells: a reshape, then a reduction."""
        k = len(self.offsets)
        return (self.stride == k and self.offsets == tuple(range(k)) and self.pad_left == 0
                and self.pad_right == 0 and self.length == self.out * k)


@dataclass(frozen=True, eq=False)
class GatherPlan:
    """Output o is the sum over taps t of weight[t, o] * x[index[t, o]]; index == length is an implicit
    padding cell (0 for sums), so ragged windows need no mask."""

    length: int
    out: int
    index: np.ndarray = field(repr=False)
    weight: np.ndarray | None = field(default=None, repr=False)
    # (outputs, cells) per period where a slice of a periodic plan keeps its parent's period; by default
    # the period is read off the sizes (L / O in lowest terms)
    period: tuple[int, int] | None = field(default=None, repr=False)

    @property
    def taps(self) -> int:
        return int(self.index.shape[0])

    @cached_property
    def cycle(self) -> tuple[int, int]:
        """(outputs, cells) per period: the given ``period``, else O / L in lowest terms."""
        g = math.gcd(self.length, self.out)
        return self.period or (self.out // g, self.length // g)

    @cached_property
    def uses_padding_cell(self) -> bool:
        return bool((self.index == self.length).any())

    @cached_property
    def phases(self) -> Phases | None:
        return _find_phases(self)

    @cached_property
    def transpose(self) -> GatherPlan:
        """For each input cell, the outputs that read it (ascending), with the same weights."""
        taps, out = self.index.shape
        valid = self.index < self.length
        if self.weight is not None:
            valid &= self.weight != 0
        cell = self.index[valid]
        reader = np.broadcast_to(np.arange(out, dtype=np.int64), (taps, out))[valid]
        order = np.lexsort((reader, cell))
        cell, reader = cell[order], reader[order]
        counts = np.bincount(cell, minlength=self.length)
        # a cell no output reads still gets one tap, on the padding cell: its gradient is an explicit zero
        width = max(int(counts.max()) if counts.size else 0, 1)
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))
        rank = np.arange(cell.size) - first[cell]
        index = np.full((width, self.length), out, dtype=np.int64)
        index[rank, cell] = reader
        weight = None
        if self.weight is not None:
            w = self.weight[valid][order]
            weight = np.zeros((width, self.length), dtype=self.weight.dtype)
            weight[rank, cell] = w
            weight.setflags(write=False)
        index.setflags(write=False)
        return GatherPlan(self.out, self.length, index, weight)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Run:
    """Outputs ``start + r + period*i`` (phase r, i < count) read cells ``first[r][t] + step*i`` with weights
    ``weights[r][t]``; then the one-tap
    plans ``tail`` (taps that do not repeat, gathered over the run) are added in tap order."""

    start: int
    count: int
    period: int
    step: int
    first: tuple[tuple[int, ...], ...]
    weights: tuple[tuple[float, ...], ...] | None
    tail: tuple[GatherPlan, ...] = ()

    @property
    def stop(self) -> int:
        return self.start + self.count * self.period

    @cached_property
    def tiles(self) -> bool:
        """Unweighted blocks of ``step`` consecutive cells, one per output (nearest's transpose at integer
        scales): as :attr:`SlicePlan.tiles`, a reshape, then a sum."""
        first = self.first[0]
        return (self.period == 1 and self.weights is None and not self.tail and self.step == len(first) > 1
                and first == tuple(range(first[0], first[0] + self.step)))


@dataclass(frozen=True, eq=False)
class Phases:
    """A GatherPlan cut into periodic runs (read by strided slices) and the gaps between them (``(start,
    plan)``, gathered), in output order."""

    out: int
    pieces: tuple[Run | tuple[int, GatherPlan], ...]

    @cached_property
    def uses_padding_cell(self) -> bool:
        plans = [p[1] for p in self.pieces if not isinstance(p, Run)]
        plans += [t for p in self.pieces if isinstance(p, Run) for t in p.tail]
        return any(p.uses_padding_cell for p in plans)


_MAX_PERIOD = 16  # more phases than this: one take per tap is cheaper than q x taps slices
_MIN_COUNT = 3  # a run shorter than this many periods is gathered


def _runs(ok: np.ndarray, out: int, q: int) -> list[tuple[int, int]]:
    """Greedy maximal runs [a, a + count*q) where ok[o] holds for o in [a, a + (count-1)*q)."""
    runs, o = [], 0
    bad = np.flatnonzero(~ok)
    while o < ok.size:
        if not ok[o]:
            o += 1
            continue
        nxt = bad[np.searchsorted(bad, o)] if bad.size and bad[-1] >= o else ok.size
        count = (int(nxt) - o + q) // q
        if count >= _MIN_COUNT:
            runs.append((o, o + count * q))
            o += count * q
        else:
            o = int(nxt)
    return runs


def _find_phases(plan: GatherPlan) -> Phases | None:
    L, O = plan.length, plan.out
    q, p = plan.cycle
    if q > _MAX_PERIOD or O < _MIN_COUNT * q or plan.taps == 0:
        return None
    idx, w = plan.index, plan.weight
    periodic = (idx[:, q:] == idx[:, :-q] + p) & (idx[:, q:] < L)  # [t, o]: o + q reads o's cell, shifted
    # The leading taps that repeat are sliced; trailing taps that do not (antialiasing's window is one cell
    # wider for some outputs) are gathered over the run, each added in tap order.
    for lead in range(plan.taps, 0, -1):
        runs = _runs(periodic[:lead].all(axis=0), O, q)
        if sum(b - a for a, b in runs) >= O // 2:
            break
    else:
        return None

    def part(a: int, b: int, taps: slice = slice(None)) -> GatherPlan:
        return GatherPlan(L, b - a, _frozen(idx[taps, a:b]), None if w is None else _frozen(w[taps, a:b]))

    pieces: list[Run | tuple[int, GatherPlan]] = []
    done = 0
    for a, b in runs:
        if a > done:
            pieces.append((done, part(done, a)))
        count = (b - a) // q
        first = tuple(tuple(int(v) for v in idx[:lead, a + r]) for r in range(q))
        weights = None
        if w is not None:
            run = w[:lead, a:b].reshape(lead, count, q)  # [t, i, r]
            if not (run == run[:, :1, :]).all():
                # antialiasing's weights drift in their last bits: slicing with a weight per output cost
                # more small operations than it saved over one gather per tap (measured on torch and NumPy)
                return None
            weights = tuple(tuple(run[:, 0, r].tolist()) for r in range(q))
        tail = tuple(part(a, b, slice(t, t + 1)) for t in range(lead, plan.taps))
        pieces.append(Run(a, count, q, p, first, weights, tail))
        done = b
    if done < O:
        pieces.append((done, part(done, O)))
    return Phases(O, tuple(pieces))


AxisPlan = SlicePlan | GatherPlan


@lru_cache(maxsize=1024)
def regular(length: int, out: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> SlicePlan:
    offsets = tuple(t * dilation for t in range(kernel))
    needed = offsets[-1] + (out - 1) * stride + 1
    return SlicePlan(length, out, stride, offsets, padding, max(0, needed - padding - length))


def avg_counts(length: int, out: int, kernel: int, stride: int, padding: int,
               count_include_pad: bool, high: int | None = None, dilation: int = 1) -> np.ndarray:
    """Per-output divisor factor along one axis (torch: padding counts, the ceil overhang never does);
    ``high``: a right padding other than ``padding``. With ``dilation`` d the window's taps a + t*d (t < k)
    are counted: those inside the padded axis [-padding, L + high), or inside the input [0, L) without
    count_include_pad (0 where every tap falls in the padding)."""
    a = np.arange(out, dtype=np.int64) * stride - padding
    end = length + (padding if high is None else high) if count_include_pad else length
    if dilation == 1:
        return np.minimum(a + kernel, end) - (a if count_include_pad else np.maximum(a, 0))
    # taps t with a + t*d in [begin, end): t from ceil((begin - a) / d) (at least 0) to before ceil((end - a) / d)
    # (at most k); a window always starts inside the padded axis, so with padding counted begin - a <= 0
    begin = a if count_include_pad else np.maximum(a, 0)
    first = -((a - begin) // dilation)
    stop = np.minimum(-((a - end) // dilation), kernel)
    return np.maximum(stop - first, 0)


def adaptive_bounds(length: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Window i = [floor(i*L/O), ceil((i+1)*L/O)), exactly in integers."""
    i = np.arange(out, dtype=np.int64)
    start = (i * length) // out
    end = -((-(i + 1) * length) // out)
    return start, end


@lru_cache(maxsize=1024)
def adaptive(length: int, out: int) -> AxisPlan:
    if length % out == 0:
        k = length // out
        return regular(length, out, k, k, 0)
    return ragged(length, out)


@lru_cache(maxsize=1024)
def ragged(length: int, out: int) -> GatherPlan:
    """The adaptive windows as a gather table, whether or not L % O == 0."""
    start, end = adaptive_bounds(length, out)
    taps = int((end - start).max())
    t = np.arange(taps, dtype=np.int64)[:, None]
    index = np.where(start[None, :] + t < end[None, :], start[None, :] + t, length)
    index.setflags(write=False)
    return GatherPlan(length, out, index)


def tap_span(length: int, out: int, stride: int, offset: int) -> tuple[int, int]:
    """The outputs [lo, hi) whose tap at ``offset`` past their window start (o * stride - padding + offset)
    lies inside the input; lo >= hi where none does. O(1), whatever the window."""
    lo = max(0, -(offset // stride))
    hi = min(out, (length - 1 - offset) // stride + 1)
    return lo, max(lo, hi)


@lru_cache(maxsize=1024)
def tap_ranges(length: int, out: int, kernel: int, stride: int, padding: int,
               dilation: int) -> tuple[tuple[int, int, int, slice], ...]:
    """Per tap (t, lo, hi, cells): the outputs [lo, hi) whose tap t is inside the input, and the strided
    slice of input cells they read; taps that only ever read padding are left out. O(kernel)."""
    ranges = []
    for t in range(kernel):
        off = t * dilation - padding
        lo, hi = tap_span(length, out, stride, off)
        if lo < hi:
            c0 = lo * stride + off
            ranges.append((t, lo, hi, slice(c0, c0 + (hi - lo - 1) * stride + 1, stride)))
    return tuple(ranges)


@lru_cache(maxsize=1024)
def cover_count(length: int, out: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """The most (output, tap) pairs that read any one input cell (the rows of :func:`covers`), without
    building the table: per tap, its outputs read an arithmetic run of cells of one residue modulo the
    stride, counted in a difference array per residue. O(kernel + length)."""
    width = -(-length // stride) + 1
    diff = np.zeros((stride, width + 1), dtype=np.int64)
    for _, lo, hi, cells in tap_ranges(length, out, kernel, stride, padding, dilation):
        r, a = cells.start % stride, cells.start // stride
        diff[r, a] += 1
        diff[r, a + hi - lo] -= 1
    return max(int(np.cumsum(diff, axis=1).max(initial=0)), 1)


@lru_cache(maxsize=1024)
def covers(length: int, out: int, kernel: int, stride: int, padding: int, dilation: int) -> np.ndarray:
    """(C, L): for each input cell, the outputs whose regular window holds it, ascending, padded with
    ``out`` (an index past the outputs). C (:func:`cover_count`) is the most windows any cell is in: 1 for
    tiling windows however large, which is what makes a gradient gathered through this table O(input)
    whatever the window. Built from the taps' runs: O(C * L)."""
    runs = tap_ranges(length, out, kernel, stride, padding, dilation)
    cells = np.concatenate([np.arange(c.start, c.stop, c.step, dtype=np.int64) for _, _, _, c in runs] or
                           [np.zeros(0, dtype=np.int64)])
    outs = np.concatenate([np.arange(lo, hi, dtype=np.int64) for _, lo, hi, _ in runs] or
                          [np.zeros(0, dtype=np.int64)])
    order = np.lexsort((outs, cells))
    cells, outs = cells[order], outs[order]
    counts = np.bincount(cells, minlength=length)
    rank = np.arange(cells.size) - (np.cumsum(counts) - counts)[cells]
    table = np.full((max(int(counts.max(initial=0)), 1), length), out, dtype=np.int64)
    table[rank, cells] = outs
    table.setflags(write=False)
    return table


@lru_cache(maxsize=1024)
def first_taps(length: int, out: int, kernel: int, stride: int, padding: int, dilation: int) -> np.ndarray:
    """(out,) each output's first tap inside the input (torch's starting index); ``kernel`` where it has
    none. O(out)."""
    start = np.arange(out, dtype=np.int64) * stride - padding
    t = np.maximum(0, -(start // dilation))  # the first tap at or past cell 0
    first = np.where((t < kernel) & (start + t * dilation < length), t, kernel)
    first.setflags(write=False)
    return first
