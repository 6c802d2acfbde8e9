"""Reads at data-dependent cells, and their transpose without a scatter.

``Cells.select(x, idx)`` reads each plane of ``x`` (..., P) at flat cell indices ``idx`` (..., K) that are
data (grid_sample's taps, fractional max pooling's winners); ``idx == P`` marks a read outside the plane,
which gives 0. Its transpose, ``Cells.route(g, idx)``, adds every ``g`` into the cell it was read from: in
every other implementation a scatter-add (atomic, order-dependent on GPUs). Here it is a sort and a
segmented sum, gathers only:

1. sort each row of ``idx`` once (stable), and gather ``g`` in that order;
2. a segmented inclusive scan by doubling: at step ``d`` each entry adds the one ``d`` places back when both
   belong to the same cell (ceil(log2(L)) steps for the longest run L, the most reads of one cell);
3. each cell reads the last entry of its run, found by a binary search of the sorted keys; cells nobody
   read get 0.

The sum of a cell's reads is taken in a fixed tree order that depends only on ``idx``, so the result is
bit-identical run to run on every backend. ``idx`` may broadcast against the leading axes of ``x`` and ``g``
(grid_sample shares one index row between all channels: (N, 1, K)); the sort is done per index row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._compat import is_jax_array, namespace


def _traced(a: Any) -> bool:
    if not is_jax_array(a):
        return False
    import jax

    return isinstance(a, jax.core.Tracer)


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
        xp = namespace(x)
        lead = _lead(x.shape[:-1], idx.shape[:-1])
        inside = idx < self.cells
        safe = xp.where(inside, idx, xp.zeros((), dtype=idx.dtype))
        out = xp.take_along_axis(xp.broadcast_to(x, lead + (x.shape[-1],)),
                                 xp.broadcast_to(safe, lead + (self.taps,)), axis=-1)
        return xp.where(inside, out, xp.zeros((), dtype=out.dtype))

    def route(self, g: Any, idx: Any) -> Any:
        """The transpose of :meth:`select`: (..., K) -> (..., P), each cell the sum of what read it."""
        xp = namespace(g)
        P, K = self.cells, self.taps
        lead = _lead(g.shape[:-1], idx.shape[:-1])
        rows_shape = tuple(idx.shape[:-1])
        rows = math.prod(rows_shape)
        if K == 0 or P == 0:
            return xp.zeros(lead + (P,), dtype=g.dtype)
        order = xp.argsort(idx, axis=-1, stable=True)
        keys = xp.take_along_axis(idx, order, axis=-1)
        s = xp.take_along_axis(xp.broadcast_to(g, lead + (K,)), xp.broadcast_to(order, lead + (K,)), axis=-1)
        # one sorted key vector for all rows (row r's keys offset by r * (P + 1)), so a single 1-d binary
        # search finds every (row, cell) run; P itself (outside) is never looked up
        offsets = xp.reshape(xp.arange(rows, dtype=idx.dtype) * (P + 1), rows_shape + (1,))
        flat = xp.reshape(keys + offsets, (rows * K,))
        query = xp.reshape(offsets + xp.arange(P, dtype=idx.dtype), (rows * P,))
        end = xp.searchsorted(flat, query, side="right")
        longest = K
        if not _traced(flat):
            start = xp.searchsorted(flat, query, side="left")
            longest = int(xp.max(end - start)) if rows * P else 0
        zero = xp.zeros((), dtype=s.dtype)
        d = 1
        while d < longest:
            same = keys[..., d:] == keys[..., :-d]
            s = xp.concat([s[..., :d], s[..., d:] + xp.where(same, s[..., :-d], zero)], axis=-1)
            d *= 2
        last = xp.astype(end, idx.dtype) - 1
        row_start = xp.reshape(xp.arange(rows, dtype=idx.dtype) * K, (rows, 1))
        last = xp.reshape(last, (rows, P))
        local = last - row_start
        valid = local >= 0
        safe = xp.where(valid, local, xp.zeros((), dtype=idx.dtype))
        found = xp.take(flat, xp.reshape(safe + row_start, (rows * P,)), axis=0)
        valid = valid & (xp.reshape(found, (rows, P)) == xp.reshape(query, (rows, P)))
        valid = xp.reshape(valid, rows_shape + (P,))
        safe = xp.reshape(safe, rows_shape + (P,))
        out = xp.take_along_axis(s, xp.broadcast_to(safe, lead + (P,)), axis=-1)
        return xp.where(valid, out, zero)


def _lead(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two leading shapes of equal rank."""
    return tuple(q if p == 1 else p for p, q in zip(a, b))
