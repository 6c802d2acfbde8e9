"""max_unpool as gathers: each output cell looks itself up among the sorted indices of its plane.

The indices are data, so there is no static plan: per call, the keys plane * P + index (P the output plane
size) are sorted once (stable), every output cell finds the last key equal to its own with a binary
search, and takes that input's value. Duplicate indices therefore resolve to the **last** input cell in
row-major order, the one a sequential scatter would leave - on every backend, every run. The adjoint
gathers the cotangent at the indices and gives it to those winners only, so the pair stays exact
transposes (torch's backward also feeds the losing duplicates, which its forward dropped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import buffer, index_dtype, is_jax_array, namespace, on, put, take, writable_module

# output cells looked up at a time (a few int64 temporaries each)
_CHUNK_CELLS = 1 << 18


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
        m, p = self._sizes
        itype = index_dtype(xp, idx)
        flat = xp.reshape(xp.astype(idx, itype), (-1,))
        plane = xp.arange(flat.shape[0], dtype=itype, **on(idx)) // m
        # an out-of-range index (only reachable under tracing: the op checks concrete indices) gets key -1,
        # so it can never land in a neighbouring plane
        return xp.where((flat >= 0) & (flat < p), plane * p + flat, xp.full_like(flat, -1))

    def _keys(self, xp: Any, idx: Any) -> tuple[Any, Any, Any]:
        keys = self._flat_keys(xp, idx)
        order = xp.argsort(keys, stable=True)
        return keys, order, xp.take(keys, order)

    def _distinct_keys(self, mod: Any, xp: Any, idx: Any, total: int) -> Any:
        """The flat keys plane * P + index where no two name the same cell (the usual case: a pool's
        winners), else None; the indices are in range (the op checks concrete ones). Checked by writing each
        key's position into its cell and reading back: a cell named twice keeps one of the positions, so some
        key reads back another's. Which one stays is the backend's choice, but only whether all read back
        their own reaches the result."""
        m, p = self._sizes
        n = math.prod(idx.shape)
        if n > total:
            return None  # more reads than cells: some cell is named twice
        itype = index_dtype(xp, idx)
        offsets = xp.arange(0, total, p, dtype=itype, **on(idx))  # each plane's first cell
        keys = xp.reshape(xp.reshape(xp.astype(idx, itype), (n // m, m)) + offsets[:, None], (-1,))
        claim = buffer(mod, (total,), keys.dtype, keys)
        own = xp.arange(n, dtype=itype, **on(keys))
        put(mod, claim, keys, own)
        return keys if bool(xp.all(take(xp, claim, keys, 0) == own)) else None

    def route(self, x: Any, idx: Any) -> Any:
        xp = namespace(x)
        lead = tuple(x.shape[:x.ndim - len(self.in_spatial)])
        m, p = self._sizes
        planes = int(np.prod(lead, dtype=np.int64))
        if planes * m == 0 or p == 0:
            return xp.zeros(lead + self.out_spatial, dtype=x.dtype, **on(x))
        flat, total = xp.reshape(x, (-1,)), planes * p
        mod = writable_module(x)
        if mod is not None and mod is writable_module(idx):
            keys = self._distinct_keys(mod, xp, idx, total)
            if keys is not None:  # each cell written at most once: a plain indexed write, deterministic
                y = buffer(mod, (total,), x.dtype, x, zero=True)
                put(mod, y, keys, flat)
                return xp.reshape(y, lead + self.out_spatial)
        _, order, ordered = self._keys(xp, idx)
        itype = index_dtype(xp, x)
        # output cells a chunk at a time: each looks itself up with int64 temporaries, a few times the output
        # in one piece (JAX's compiler schedules its own memory: one piece)
        step = total if is_jax_array(x) else _CHUNK_CELLS
        y = None if mod is None or step >= total else buffer(mod, (total,), x.dtype, x)
        parts = []
        for a in range(0, total, step):
            cells = xp.arange(a, min(a + step, total), dtype=itype, **on(x))
            last = xp.searchsorted(ordered, cells, side="right") - 1
            last = xp.where(last < 0, xp.zeros_like(last), last)
            hit = xp.take(ordered, last) == cells
            values = xp.take(flat, xp.take(order, last))
            part = xp.where(hit, values, xp.zeros_like(values))
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
        mod = writable_module(gy)
        if mod is not None and mod is writable_module(idx):
            distinct = self._distinct_keys(mod, xp, idx, planes * p)
            if distinct is not None:  # every input cell is its index's winner
                return xp.reshape(take(xp, xp.reshape(gy, (-1,)), distinct, 0), lead + self.in_spatial)
        keys, order, ordered = self._keys(xp, idx)
        last = xp.searchsorted(ordered, keys, side="right") - 1
        own = xp.arange(keys.shape[0], dtype=index_dtype(xp, gy), **on(gy))
        inside = keys >= 0
        winner = (xp.take(order, last) == own) & inside
        safe = xp.where(inside, keys, xp.zeros_like(keys))
        v = xp.take(xp.reshape(gy, (-1,)), safe)
        return xp.reshape(xp.where(winner, v, xp.zeros_like(v)), lead + self.in_spatial)
