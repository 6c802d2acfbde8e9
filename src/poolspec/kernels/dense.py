"""The max family's shared base: every window's cells gathered at once from the flattened plane through a table
and reduced (values and torch's winners), the forward of the GPU paths and of small ragged pools, and the
gradient routed by one gather over each cell's covering windows (``max_routes._flat_route``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._compat import laid_out, namespace, permute, take, to_compute
from . import paths
from .blocks import MEMORY_FLOOR, nbytes
from .max_routes import _flat_route, _lowest, _reduce_cells, lane_sizes, lanes, take_last
from .sums import device_copy, pad_axis


class _PoolRoutes:
    """A pool's ``route`` gives a gradient of its input's spatial shape, ``select`` one of its output's."""

    in_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]

    @property
    def routed(self) -> tuple[int, ...]:
        return self.in_spatial

    @property
    def selected(self) -> tuple[int, ...]:
        return self.out_spatial


# the gathered cells (taps x outputs) or covering-window terms (covers x inputs) of a GPU path, at most this
# many times the larger of a plane's input and output; past it the GPU takes the CPU's paths
_SPREAD = 4
# a plan's kept tables beside those cells: at most this many times the call's planes (input and output)
_TABLES = 2

_LANES = paths.writes(
    "dense.lanes", "a channels-last NumPy array or torch tensor: the window gather runs along the cells of its "
    "memory-order view, so nothing is copied to change layout and the results are laid out as the input")


class _Dense(_PoolRoutes):
    """Every window's cells gathered at once from the flattened plane through a table (one gather, whatever the
    window), reduced as tiling blocks are: the forward of a GPU path, and of small ragged pools."""

    def _dense_tables(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        raise NotImplementedError

    def _dense_fits(self, K: int, x: Any) -> bool:
        """Whether every window's K cells fit: per plane at most ``_SPREAD`` times the larger of its input and
        output, and the plan's two int64 tables (the cells read, the winners' cells) within :func:`_tables_fit`."""
        P, M = math.prod(self.in_spatial), math.prod(self.out_spatial)
        return 0 < K * M <= _SPREAD * max(P, M) and _tables_fit(16 * K * M, x, len(self.in_spatial), P + M)

    def _dense(self, x: Any, with_index: bool) -> tuple[Any, Any]:
        """Every window's cells gathered at once from the flattened plane (one gather, whatever the
        window's size), then reduced as :meth:`MaxWindows._tiled` reduces tiling blocks; only where that
        table is small (``blocks.fits``)."""
        xp = namespace(x)
        n = len(self.in_spatial)
        lead = x.ndim - n
        mod = _LANES(x)
        order = None if mod is None else lanes(mod, x, n)
        if order is not None:
            return self._dense_lanes(xp, x, with_index, order)
        head = tuple(x.shape[:lead])
        read, real, K, first = self._dense_tables()
        plane = pad_axis(xp, xp.reshape(x, head + (math.prod(self.in_spatial),)), lead, 0, 1, _lowest(xp, x))
        cells = take_last(xp, plane, device_copy(self, "dense_read", read, plane))
        cells = xp.reshape(cells, head + self.out_spatial + (K,))

        def index_of(pos: Any, dtype: Any) -> Any:
            at = xp.reshape(pos + device_copy(self, "dense_first", first, pos, dtype), (-1,))
            return xp.reshape(take(xp, device_copy(self, "dense_real", real, pos, dtype), at, 0), tuple(pos.shape))

        return _reduce_cells(xp, x, cells, with_index, index_of)

    def _dense_lanes(self, xp: Any, x: Any, with_index: bool, order: list[int]) -> tuple[Any, Any]:
        """:meth:`_dense` on an array laid out (outer, cells, inner) in memory (channels-last): the gather
        runs along the cells of that view, so nothing is copied to change layout and the results are laid out
        as ``x``."""
        outer, inner = lane_sizes(tuple(x.shape), order, len(self.in_spatial))
        read, real, K, first = self._dense_tables()
        M = math.prod(self.out_spatial)
        plane = xp.reshape(permute(x, order), (outer, math.prod(self.in_spatial), inner))
        plane = pad_axis(xp, plane, 1, 0, 1, _lowest(xp, x))
        cells = take(xp, plane, device_copy(self, "dense_read", read, plane), 1)
        cells = xp.moveaxis(xp.reshape(cells, (outer, M, K, inner)), 2, -1)

        def index_of(pos: Any, dtype: Any) -> Any:
            start = xp.reshape(device_copy(self, "dense_first", first, pos, dtype), (1, M, 1))
            return xp.reshape(take(xp, device_copy(self, "dense_real", real, pos, dtype),
                                   xp.reshape(pos + start, (-1,)), 0), tuple(pos.shape))

        values, idx = _reduce_cells(xp, x, cells, with_index, index_of)
        shape = tuple(x.shape[:x.ndim - len(self.in_spatial)]) + self.out_spatial
        return laid_out(xp, values, shape, order), None if idx is None else laid_out(xp, idx, shape, order)

    def _gpu_route(self, g: Any, idx: Any, C: int, covers: Callable[[], list[np.ndarray]]) -> Any | None:
        """The route of a GPU path: one gather of the cotangent and one of the winners over every cell's
        covering windows, one select and one sum (``max_routes._flat_route``); None past ``_SPREAD``. ``C``: the
        product of the axes' cover counts, known before ``covers()`` builds the tables (C x L cells each)."""
        P, M = math.prod(self.in_spatial), math.prod(self.out_spatial)
        # the read and cell tables: two int64 per cover and cell
        if 0 in g.shape or not 0 < C * P <= _SPREAD * max(P, M) \
                or not _tables_fit(16 * C * P, g, len(self.in_spatial), P + M):
            return None
        xp = namespace(g)
        out = _flat_route(xp, to_compute(xp, g), idx, covers(), self.in_spatial, self)
        return out if out.dtype == g.dtype else xp.astype(out, g.dtype)


def _tables_fit(table_bytes: int, x: Any, spatial: int, plane_cells: int) -> bool:
    """Whether a plan's tables (made once per plan, kept for the next call) fit in ``_TABLES`` times the call's
    planes (``plane_cells`` each, input and output) plus ``blocks.MEMORY_FLOOR``: a call of few planes does not
    take a table many times its data, and the tables beside the gathered cells (up to ``_SPREAD`` times the
    data) stay within the call's memory bound."""
    size = nbytes(x) // max(1, math.prod(x.shape))
    planes = math.prod(x.shape[:x.ndim - spatial])
    return table_bytes <= _TABLES * planes * plane_cells * size + MEMORY_FLOOR
