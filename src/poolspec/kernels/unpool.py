"""max_unpool as gathers: each output cell looks itself up among the sorted indices of its plane.

The indices are data, so there is no static plan: per call, the keys plane * P + index (P the output plane
size) are sorted once (stable), and every output cell counts the keys up to its own with a binary search:
where the count grows from the cell before, the last key equal to its own is the one just below the count,
and the cell takes that input's value. Duplicate indices therefore resolve to the **last** input cell in
row-major order, the one a sequential scatter would leave - on every backend, every run. The adjoint
gathers the cotangent at the indices and gives it to those winners only, so the pair stays exact
transposes (torch's backward also feeds the losing duplicates, which its forward dropped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import buffer, index_dtype, is_jax_array, namespace, on, put_rows, readable, take_rows
from . import paths
from .blocks import nbytes
from .sums import device_copy

# output cells looked up at a time (a few int64 temporaries each); on a launch-bound backend as many as fit
# in _SPREAD times the input and output, at _CELL_BYTES of temporaries per cell (at most two int64 arrays
# and a mask live at once: the query and its counts, then the counts and their steps)
_CHUNK_CELLS = 1 << 18
_SPREAD, _CELL_BYTES = 4, 17

_PLACED = paths.writes(
    "unpool.placed", "each input cell written once to its index, row by row, and read back: where every cell finds "
    "its own bits, that is the last-wins result whatever order the writes took (no sort, no lookups)")
_ZEROS = paths.launches(
    "unpool.placed-zeros", "where each operation is a kernel launch: the placed path's output made by one zeros "
    "call (a buffer is an empty and a fill)", exact="bitwise", within="unpool.placed")
_WIDE = paths.launches(
    "unpool.wide-chunks", "where each operation is a kernel launch: output cells looked up in chunks as large as "
    "4x the input and output allow, not 2**18 at a time", exact="bitwise")
_CHUNKS_IN_PLACE = paths.writes(
    "unpool.chunks-in-place", "each chunk of looked-up output cells written into one output buffer (no concatenation)")
_DISTINCT = paths.writes(
    "unpool.distinct", "where no two indices of a row name the same cell (one write and read-back of positions "
    "tells): the gradient read straight at the indices (no sort, no lookups)")


@dataclass(frozen=True, eq=False)
class Unpool:
    """Scatter-free unpooling of (..., *in_spatial) values into (..., *out_spatial) planes. ``route`` is the
    op, ``select`` its transpose (the gradient w.r.t. the values)."""

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]

    # the spatial shapes route (the unpooling) and select (its transpose) produce
    @property
    def routed(self) -> tuple[int, ...]:
        return self.out_spatial

    @property
    def selected(self) -> tuple[int, ...]:
        return self.in_spatial

    @property
    def _sizes(self) -> tuple[int, int]:
        return int(np.prod(self.in_spatial, dtype=np.int64)), int(np.prod(self.out_spatial, dtype=np.int64))

    def _flat_keys(self, xp: Any, idx: Any) -> Any:
        """The keys plane * P + index of the input cells, flat in row-major order."""
        m, p = self._sizes
        itype = index_dtype(xp, idx)
        lead = tuple(idx.shape[:idx.ndim - len(self.in_spatial)])
        if idx.dtype != itype:
            idx = xp.astype(idx, itype)
        # the plane offsets depend on the shape only: a kept constant, broadcast along the plane's cells
        offsets = np.arange(0, math.prod(lead) * p, p, dtype=np.int64).reshape(lead + (1,) * len(self.in_spatial))
        keys = idx + device_copy(self, "offsets", offsets, idx, itype)
        if not readable(idx):
            # an out-of-range index (only reachable under tracing) gets a key past every cell, so it can
            # never land in a neighbouring plane nor be counted below a cell
            beyond = xp.full_like(keys, math.prod(lead) * p)
            keys = xp.where((idx >= 0) & (idx < p), keys, beyond)
        return xp.reshape(keys, (-1,))

    def _keys(self, xp: Any, idx: Any) -> tuple[Any, Any, Any]:
        keys = self._flat_keys(xp, idx)
        order = xp.argsort(keys, stable=True)
        return keys, order, xp.take(keys, order)

    def _rows(self, a: Any, planes: int, cells: int) -> Any:
        """``a`` as a (planes, cells) array (int64 for indices, as scatter and gather want)."""
        xp = namespace(a)
        a = xp.reshape(a, (planes, cells))
        return a if a.dtype == xp.int64 else xp.astype(a, xp.int64)

    def _placed(self, mod: Any, x: Any, idx: Any, planes: int) -> Any:
        """The unpooling as one write per input cell, row by row, where which duplicate's write stays cannot
        reach the result, else None: read back at the indices, every input cell finds its own bits (so a
        repeated index only ever carries one value - as overlapping max windows sharing a winner do), and
        the result is then the last-wins one bit for bit whatever order the writes took."""
        m, p = self._sizes
        rows, values = self._rows(idx, planes, m), x.reshape((planes, m))
        y = namespace(x).zeros((planes, p), dtype=x.dtype, **on(x)) if _ZEROS(x) else \
            buffer(mod, (planes, p), x.dtype, x, zero=True)
        put_rows(mod, y, rows, values)
        if bool(mod.all(_bits(mod, take_rows(mod, y, rows)) == _bits(mod, values))):
            return y
        return None

    def _distinct(self, mod: Any, idx: Any, planes: int) -> Any:
        """The (planes, M) indices where no two of a row name the same cell (the usual case: a pool's winners
        without ties across windows), else None. Each cell gets its writer's position; a cell named twice
        keeps one of them (the backend's choice), so some position reads back another's."""
        m, p = self._sizes
        rows = self._rows(idx, planes, m)
        own = namespace(rows).arange(m, dtype=rows.dtype, **on(rows))  # broadcast along the rows
        claim = buffer(mod, (planes, p), rows.dtype, rows)
        put_rows(mod, claim, rows, own)
        return rows if bool(mod.all(take_rows(mod, claim, rows) == own)) else None

    def route(self, x: Any, idx: Any) -> Any:
        xp = namespace(x)
        lead = tuple(x.shape[:x.ndim - len(self.in_spatial)])
        m, p = self._sizes
        planes = int(np.prod(lead, dtype=np.int64))
        if planes * m == 0 or p == 0:
            return xp.zeros(lead + self.out_spatial, dtype=x.dtype, **on(x))
        flat, total = xp.reshape(x, (-1,)), planes * p
        mod = _PLACED(x)
        if mod is not None and mod is _PLACED(idx):
            y = self._placed(mod, x, idx, planes)
            if y is not None:
                return xp.reshape(y, lead + self.out_spatial)
        _, order, ordered = self._keys(xp, idx)
        zero = device_copy(self, "zero", np.zeros(1), x, x.dtype)
        # the values in key order behind a zero: a count s of keys reads the value of the s-th, the last
        # duplicate of its key
        ranked = xp.concat((zero, xp.take(flat, order)))
        del order  # not needed by the lookups: its memory is theirs
        itype = index_dtype(xp, x)
        # output cells a chunk at a time: each looks itself up with a few int64 temporaries (JAX's compiler
        # schedules its own memory: one piece; a launch-bound backend: pieces up to 4x input + output)
        step = total if is_jax_array(x) else _CHUNK_CELLS
        if _WIDE(x):
            held = nbytes(x) + nbytes(idx) + total * nbytes(x) // max(1, math.prod(x.shape))
            step = max(step, _SPREAD * held // _CELL_BYTES)
        mod = None if step >= total else _CHUNKS_IN_PLACE(x)
        y = None if mod is None else buffer(mod, (total,), x.dtype, x)
        parts, before = [], None
        for a in range(0, total, step):
            counts = xp.searchsorted(ordered, xp.arange(a, min(a + step, total), dtype=itype, **on(x)),
                                     side="right")
            if before is None:  # no key lies below cell 0 (out-of-range ones are past the last cell)
                before = device_copy(self, "none", np.zeros(1, np.int64), counts, counts.dtype)
            # a cell has a winner where the count of keys up to it grows
            hit = xp.diff(counts, prepend=before) > 0
            part = xp.where(hit, xp.take(ranked, counts), zero)
            if a + step < total:
                before = counts[-1:]
            if y is None:
                parts.append(part)
            else:
                y[a:a + part.shape[0]] = part
        if y is None:
            y = parts[0] if len(parts) == 1 else xp.concat(parts)
        return xp.reshape(y, lead + self.out_spatial)

    def select(self, gy: Any, idx: Any) -> Any:
        xp = namespace(gy)
        lead = tuple(gy.shape[:gy.ndim - len(self.out_spatial)])
        m, p = self._sizes
        planes = int(np.prod(lead, dtype=np.int64))
        if planes * m == 0 or p == 0:
            return xp.zeros(lead + self.in_spatial, dtype=gy.dtype, **on(gy))
        mod = _DISTINCT(gy)
        if mod is not None and mod is _DISTINCT(idx):
            rows = self._distinct(mod, idx, planes)
            if rows is not None:  # every input cell is its index's winner
                return xp.reshape(take_rows(mod, gy.reshape((planes, p)), rows), lead + self.in_spatial)
        keys, order, ordered = self._keys(xp, idx)
        last = xp.searchsorted(ordered, keys, side="right") - 1
        winner = xp.take(order, last) == xp.arange(keys.shape[0], dtype=index_dtype(xp, gy), **on(gy))
        if not readable(idx):
            inside = keys < planes * p
            winner, keys = winner & inside, xp.where(inside, keys, xp.zeros_like(keys))
        v = xp.take(xp.reshape(gy, (-1,)), keys)
        zero = device_copy(self, "zero", np.zeros(1), gy, gy.dtype)
        return xp.reshape(xp.where(winner, v, zero), lead + self.in_spatial)

def _bits(mod: Any, a: Any) -> Any:
    """Floating-point values as the integers of their bits (so that -0.0 and 0.0, and NaNs, compare by
    bits); integers as they are."""
    if mod.__name__ == "torch":
        if a.dtype.is_floating_point:
            return a.view({2: mod.int16, 4: mod.int32, 8: mod.int64}[a.element_size()])
        return a
    if a.dtype.kind == "f":
        return a.view({2: mod.int16, 4: mod.int32, 8: mod.int64}[a.dtype.itemsize])
    return a
