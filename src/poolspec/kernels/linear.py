"""Separable linear ops: a per-axis sum plan for each spatial axis, then one division by a divisor array.

avg_pool (every flag), adaptive_avg_pool and lp_pool's inner sum are all of this form; the transpose
(the VJP) divides first and applies the transposed plans. Both directions run on any array namespace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from .._compat import (
    LANES,
    copy,
    dense_copy,
    dtype_name,
    is_dask_array,
    laid_out,
    memory_order,
    namespace,
    on,
    permute,
    stride_order,
    to_compute,
)
from ..plans import windows
from ..plans.resample import FixedPoint
from ..plans.windows import AxisPlan, GatherPlan, SlicePlan
from . import paths
from .blocks import Rows, blocked, kept
from .chunked import as_table, axis_pass, chunk_local, groups, local_table
from .sums import device_copy, gather_sum, slice_sum, slice_sum_t, take_all

_TAKE_ALL = paths.launches(
    "linear.take-all", "where each operation is a kernel launch: a plan's taps (other than tiling ones) by one "
    "gather of every tap, one product with the weight table and one sum over a taps axis")


@dataclass(frozen=True, eq=False)
class SeparableLinear:
    """y = (A_1 x ... x A_n) x / D over the trailing n axes. ``divisor`` is None (no division), a number,
    or a :class:`Divisor` of the output's spatial shape (int64 factors; float64 ones with NaN where a dilated
    average window holds no input cell, NaN as 0 / 0 without dividing by zero).

    ``custom_vjp`` asks autodiff systems to use the explicit transpose instead of differentiating the
    kernels; it is required whenever a plan gathers (native autodiff would scatter-add), and an op may set
    it for every shape so that the transforms it supports do not depend on the shape.
    """

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]
    axes: tuple[AxisPlan | None, ...]  # None: the identity along that axis
    divisor: Any = field(default=None, repr=False)
    custom_vjp: bool = False

    def __post_init__(self) -> None:
        if any(isinstance(p, GatherPlan) for p in self.axes) and not self.custom_vjp:
            raise AssertionError("a gathering plan needs custom_vjp: native autodiff would scatter-add")

    @cached_property
    def empty(self) -> bool:
        return 0 in self.out_spatial or 0 in self.in_spatial

    def apply(self, x: Any) -> Any:
        return blocked(self._apply, (x,), len(self.in_spatial), self._cells[0], self._row_plans[0])

    def transpose(self, g: Any) -> Any:
        return blocked(self._transpose, (g,), len(self.in_spatial), self._cells[1], self._row_plans[1])

    @cached_property
    def _cells(self) -> tuple[int, int]:
        """:func:`_plane_cells` forward and transposed (every call asks for them)."""
        return _plane_cells(self.in_spatial, self.out_spatial), _plane_cells(self.out_spatial, self.in_spatial)

    @cached_property
    def _row_plans(self) -> tuple[Rows | None, Rows | None]:
        """:meth:`_row_plan` forward and transposed, made once per op (every call asks for them)."""
        return self._row_plan(False), self._row_plan(True)

    def _row_plan(self, transpose: bool) -> Rows | None:
        """For planes too large for the caches: ``rows(x, out)`` fills ``out`` a group of outermost-axis
        output rows at a time, each group from only the input rows it reads, so no intermediate is more than
        a few rows tall. Only where that is bit-identical to the whole-plane pass: a gather plan outermost
        (its local tables add the same products in the same order) and no divisor (interpolation); not a
        sum's forward, whose passes run outermost first."""
        if len(self.axes) < 2 or not isinstance(self.axes[0], GatherPlan) or self.divisor is not None \
                or (self._sums and not transpose):
            return None
        plan = self.axes[0]
        inner = self.axes[1:]

        def rows(x: Any, out: Any, budget: int) -> bool:
            xp = namespace(x)
            if to_compute(xp, x) is not x:
                return False
            lead = x.ndim - len(self.axes)
            per_row = max(math.prod(x.shape[lead + 1:]), math.prod(out.shape[lead + 1:])) * x.dtype.itemsize
            table = plan.transpose if transpose else plan  # cached on the plan; built only if bands run
            for a, b, lo, hi, local in _row_groups(table, max(1, budget // per_row)):
                work = x[_axis_at(lead, slice(lo, hi))]
                for i in reversed(range(len(inner))):
                    work = _apply_axis(xp, work, lead + 1 + i, inner[i], transpose)
                out[_axis_at(lead, slice(a, b))] = gather_sum(xp, work, lead, local)
            return True

        return rows, (self.in_spatial if transpose else self.out_spatial)

    def _apply(self, x: Any, outer_first: bool | None = None) -> Any:
        if is_dask_array(x) and not self.empty:
            y = chunk_local(x, tuple(None if p is None else table_of(p) for p in self.axes), self._local(False))
            if y is not None:
                return y
        xp = namespace(x)
        name = dtype_name(xp, x.dtype)
        work = to_compute(xp, x)
        if self.empty:
            return _zeros(xp, x, self.out_spatial)
        lead = x.ndim - len(self.axes)
        if self.is_global:  # one window over the whole plane: the backend's own reduction
            work = xp.sum(work, axis=tuple(range(lead, x.ndim)), keepdims=True, dtype=work.dtype)
        if not self.is_global:
            work = self._passes(xp, work, lead, transpose=False, outer_first=outer_first, widen=_widen(x, work))
        work = self._divide(xp, work, name)
        if work is x:  # every axis the identity: still a new array, as torch returns one
            return copy(xp, x)
        return work if work.dtype == x.dtype else xp.astype(work, x.dtype)

    def _transpose(self, g: Any) -> Any:
        if is_dask_array(g) and not self.empty and not self.is_global:
            tables = tuple(None if p is None else table_of(p).transpose for p in self.axes)
            y = chunk_local(g, tables, self._local(True))
            if y is not None:
                return y
        xp = namespace(g)
        name = dtype_name(xp, g.dtype)
        if self.empty:
            return _zeros(xp, g, self.in_spatial)
        work = self._divide(xp, to_compute(xp, g), name)
        lead = g.ndim - len(self.axes)
        if self.is_global:
            shape = tuple(g.shape[:lead]) + self.in_spatial
            order = stride_order(g)  # g's: the division may drop the strides of size-1 axes
            if order is None or order == list(range(g.ndim)):
                return self._cast(xp, copy(xp, xp.broadcast_to(work, shape)), g)
            # g's strides say channels-last (its size-1 axes outside the channels): so is the gradient
            view = xp.broadcast_to(permute(work, order), tuple(shape[a] for a in order))
            return self._cast(xp, laid_out(xp, dense_copy(view), shape, order), g)
        work = self._passes(xp, work, lead, transpose=True, widen=_widen(g, work))
        if work is g:
            return copy(xp, g)
        return work if work.dtype == g.dtype else xp.astype(work, g.dtype)

    def _passes(self, xp: Any, work: Any, lead: int, transpose: bool, outer_first: bool | None = None,
                widen: int = 1) -> Any:
        """The per-axis passes, innermost axis first (a sum's forward: outermost first). A NumPy array or torch
        tensor that is a permuted dense one (a ``layout="channels_last"`` view, a channels_last tensor) is passed
        through in its memory order, with the axes renamed: the passes' reads and writes then follow memory (the
        same products in the same order), and the result is laid out as the input. Not with fewer than ``LANES``
        channels innermost (RGB images): runs of 3 or 4 cells cost more per cell than strided reads into
        channels-first buffers."""
        order = memory_order(work)
        if order is not None and 1 < _inner_lanes(order, work.shape, lead) < LANES:
            order = None
        axes = list(range(work.ndim)) if order is None else order
        if order is not None:
            work = permute(work, order)
        # a sum's forward reduces the outer axes first: the innermost pass, the dearest per cell (gathers along
        # rows), then runs on the reduced array (interleaved, torch CPU: 0.37-1.02x the time of innermost-first;
        # the transpose keeps innermost-first, faster there). torch sums each window in one running sum, so
        # neither order is its own; interpolations keep innermost-first, which is.
        if outer_first is None:
            outer_first = self._sums and not transpose
        seq = range(len(self.axes)) if outer_first else reversed(range(len(self.axes)))
        for i in seq:
            work = _apply_axis(xp, work, axes.index(lead + i), self.axes[i], transpose=transpose, widen=widen)
        return work if order is None else permute(work, [order.index(a) for a in range(len(order))])

    def _local(self, transpose: bool) -> Any:
        """The op on one Dask block (NumPy) given the block's local tables and its input and output ranges:
        the divisor is sliced to the outputs (forward) or to the cotangent's block (transpose)."""

        def run(block: np.ndarray, tables: tuple[GatherPlan | None, ...], ins: tuple[tuple[int, int], ...],
                outs: tuple[tuple[int, int], ...]) -> np.ndarray:
            divisor = self.divisor
            if isinstance(divisor, Divisor):
                divisor = Divisor(tuple(f[a:b] for f, (a, b) in zip(divisor.factors, ins if transpose else outs)))
            spatial, out_spatial = tuple(b - a for a, b in ins), tuple(b - a for a, b in outs)
            if not transpose:
                return SeparableLinear(spatial, out_spatial, tables, divisor, custom_vjp=True)._apply(block)
            # the transpose divides first, then gathers through the transposed tables it was given
            work = SeparableLinear(spatial, spatial, (None,) * len(spatial), divisor)._divide(
                np, to_compute(np, block), dtype_name(np, block.dtype))
            # the transposed tables in the transpose's order (innermost first), as the whole-array transpose
            y = SeparableLinear(spatial, out_spatial, tables, None, custom_vjp=True)._apply(work, outer_first=False)
            return y if y.dtype == block.dtype else y.astype(block.dtype)

        return run

    @cached_property
    def _sums(self) -> bool:
        """Every axis an unweighted sum (the pools' windows, area): no interpolation weights."""
        return all(p is None or isinstance(p, SlicePlan) or p.weight is None for p in self.axes)

    @cached_property
    def is_global(self) -> bool:
        """Every axis summed whole into one output (global average pooling)."""
        return all(isinstance(p, SlicePlan) and p.tiles and p.out == 1 for p in self.axes)

    @staticmethod
    def _cast(xp: Any, y: Any, like: Any) -> Any:
        return y if y.dtype == like.dtype else xp.astype(y, like.dtype)

    def _divide(self, xp: Any, y: Any, name: str) -> Any:
        d = self.divisor
        if d is None:
            return y
        if is_dask_array(y) and isinstance(d, Divisor):
            d = d.chunked_like(y)  # built chunk by chunk from the per-axis factors: no task holds all of it
            return _trunc_div(xp, y, d) if name.startswith("int") else y / d.astype(y.dtype)
        if name.startswith("int"):
            d = d if isinstance(d, int) else device_copy(d, "int", d.array(), y, dtype=y.dtype)
            return _trunc_div(xp, y, d)
        if isinstance(d, (int, float)):
            return y / float(d)
        return y / device_copy(d, "float", d.array().astype(np.float64, copy=False), y, dtype=y.dtype)  # kept


def _inner_lanes(order: list[int], shape: tuple[int, ...], lead: int) -> int:
    """The cells of the lead axes (batch, channels) inside the innermost spatial axis of memory ``order``."""
    last = max(i for i, a in enumerate(order) if a >= lead)
    return math.prod(shape[a] for a in order[last + 1:])


def _plane_cells(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> int:
    """The largest array one (batch, channel) plane passes through, innermost axis first."""
    return max(math.prod(in_spatial[:k]) * math.prod(out_spatial[k:]) for k in range(len(in_spatial) + 1))


def _axis_at(axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index, ...)


@lru_cache(maxsize=256)
def _row_groups(table: GatherPlan, rows: int) -> list[tuple[int, int, int, int, GatherPlan]]:
    """(first output, end output, first input row, end input row, local table) for groups of at most
    ``rows`` outputs, each group anchored in one ``rows``-tall band of the input."""
    chunks = (rows,) * (table.length // rows) + ((table.length % rows,) if table.length % rows else ())
    return [(a, b, lo, hi, local_table(table, a, b, lo, hi)) for a, b, lo, hi in groups(table, chunks or (1,))]


def _widen(x: Any, work: Any) -> int:
    """How many times wider ``work``'s items are than the caller's ``x``'s (2: half precision computed in
    float32), by which a gather of every tap shrinks its groups to stay within the call's memory bound."""
    wide, narrow = getattr(work.dtype, "itemsize", 0), getattr(x.dtype, "itemsize", 0)
    return max(1, wide // narrow) if wide and narrow else 1


def _apply_axis(xp: Any, x: Any, axis: int, plan: AxisPlan | None, transpose: bool, widen: int = 1) -> Any:
    if plan is None:
        return x
    if is_dask_array(x):  # chunk-local passes: no task reads more than a chunk and its halo
        return axis_pass(x, axis, as_table(plan).transpose if transpose else plan, "sum")
    few = _TAKE_ALL(x)
    if isinstance(plan, SlicePlan) and (plan.tiles or not few):
        return slice_sum_t(xp, x, axis, plan) if transpose else slice_sum(xp, x, axis, plan)
    table = table_of(plan)
    table = table.transpose if transpose else table
    return take_all(xp, x, axis, table, widen) if few else gather_sum(xp, x, axis, table)


@lru_cache(maxsize=512)
def table_of(plan: AxisPlan) -> GatherPlan:
    """A plan as a gather table, made once per plan (its transpose is cached on it)."""
    return as_table(plan)


def _zeros(xp: Any, like: Any, spatial: tuple[int, ...]) -> Any:
    shape = tuple(like.shape[: like.ndim - len(spatial)]) + tuple(spatial)
    return xp.zeros(shape, dtype=like.dtype, **on(like))


def _trunc_div(xp: Any, a: Any, b: Any) -> Any:
    """Integer division rounding toward zero (C semantics, as torch's int64 avg_pool)."""
    q = a // b
    r = a - q * b
    return xp.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)


@dataclass(frozen=True, eq=False)
class Divisor:
    """The divisor array as the per-axis factors it is the outer product of; the product is made per call
    (an output-sized table kept with every cached plan would outlive the calls)."""

    factors: tuple[np.ndarray, ...]

    def array(self) -> np.ndarray:
        def make() -> np.ndarray:
            d = self.factors[0]
            for f in self.factors[1:]:
                d = np.multiply.outer(d, f)
            return d

        return kept(self, "_kept_array", math.prod(f.size for f in self.factors), make)

    def chunked_like(self, y: Any) -> Any:
        """The same integers as a Dask array chunked like ``y``'s trailing axes, from the small factors."""
        import dask.array as da

        n = len(self.factors)
        lead = y.ndim - n
        d = None
        for i, f in enumerate(self.factors):
            part = da.from_array(f, chunks=(y.chunks[lead + i],))
            part = part.reshape((-1,) + (1,) * (n - i - 1))
            d = part if d is None else d * part
        return d


def outer_product(factors: list[np.ndarray]) -> Divisor | int:
    """The divisor from per-axis factors; a plain int when it is uniform (every factor is)."""
    frozen = []
    for f in factors:
        f = np.array(f, dtype=np.int64)
        f.setflags(write=False)
        frozen.append(f)
    if all(f.size and (f == f[0]).all() for f in frozen):
        return math.prod(int(f[0]) for f in frozen)
    return Divisor(tuple(frozen))


def fixed_point(x: Any, axes: tuple[FixedPoint | None, ...]) -> Any:
    """uint8 resampling in integers (torch's CPU pipeline): along each axis, innermost first, int32 sums of the
    int16 weights times the cells, plus half, shifted right by the precision and clamped to 0..255."""
    xp = namespace(x)
    lead = x.ndim - len(axes)
    work = x
    for i in reversed(range(len(axes))):
        a = axes[i]
        if a is None:
            continue
        acc = _apply_axis(xp, xp.astype(work, xp.int32), lead + i, a.plan, transpose=False)
        acc = (acc + (1 << (a.precision - 1))) // (1 << a.precision)
        work = xp.astype(xp.clip(acc, 0, 255), x.dtype)
    return copy(xp, x) if work is x else work


@lru_cache(maxsize=512)
def adaptive_avg_plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> SeparableLinear:
    """Adaptive average pooling from ``in_spatial`` to ``out_spatial`` (interpolate's ``area`` too)."""
    # custom_vjp on every shape, not only ragged ones, so JAX's transforms do not depend on L % O
    if 0 in out_spatial:
        return SeparableLinear(in_spatial, out_spatial, (), custom_vjp=True)
    axes = tuple(windows.adaptive(L, O) for L, O in zip(in_spatial, out_spatial))
    counts = []
    for L, O in zip(in_spatial, out_spatial):
        start, end = windows.adaptive_bounds(L, O)
        counts.append(end - start)
    return SeparableLinear(in_spatial, out_spatial, axes, outer_product(counts), custom_vjp=True)
