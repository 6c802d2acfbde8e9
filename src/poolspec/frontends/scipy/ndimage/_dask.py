"""The window filters (and the spline prefilter) on Dask arrays, chunk by chunk: each chunk with a halo as deep as
the filter reaches (``map_overlap``), its neighbours' cells inside the array, and at the array's edges the
boundary mode itself (the NumPy function applied to the block extends it there; the periodic modes get the
opposite edge's cells from Dask's 'periodic' boundary). Every output reads exactly the cells it reads in one
NumPy call, in the same order, so the values are the NumPy path's bit for bit.

>>> import dask.array as da, numpy as np
>>> from poolspec.frontends.scipy import ndimage
>>> x = da.arange(12.0, chunks=4)
>>> y = ndimage.uniform_filter1d(x, 3, mode="wrap")
>>> y.chunks, y.compute()[[0, 5, 11]]
(((4, 4, 4),), array([4., 5., 7.]))
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._compat import is_dask_array

# depth(shape, options) -> {axis: (halo, periodic)} for the axes a call reads across, or None: not local (the
# generic path runs and raises what it raises)
Depth = Callable[[tuple[int, ...], dict[str, Any]], "dict[int, tuple[int, bool]] | None"]

_PERIODIC = ("wrap", "grid-wrap")


def _axes(ndim: int, axes: Any) -> list[int] | None:
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, (int, np.integer)):
        return [int(axes) % ndim]
    if isinstance(axes, (list, tuple)) and all(isinstance(a, (int, np.integer)) for a in axes):
        return [int(a) % ndim for a in axes]
    return None


def _per_axis(value: Any, n: int) -> list[Any] | None:
    if isinstance(value, (list, tuple)):
        return list(value) if len(value) == n else None
    return [value] * n


def filter_depth(shape: tuple[int, ...], options: dict[str, Any]) -> dict[int, tuple[int, bool]] | None:
    """A window filter's halo: along each filtered axis the window's extent (its largest, for every axis: an
    upper bound of how far any output reads), periodic for the wrap modes."""
    if "axis" in options:  # a 1-d filter
        axes = _axes(len(shape), options["axis"]) if shape else None
        reach = options.get("size")
    else:
        axes = _axes(len(shape), options.get("axes"))
        footprint = options.get("footprint")
        reach = (max(np.shape(footprint), default=1) if footprint is not None else
                 max(options["size"]) if isinstance(options.get("size"), (list, tuple)) and options["size"]
                 else options.get("size"))
    modes = None if axes is None else _per_axis(options.get("mode", "reflect"), len(axes))
    if axes is None or modes is None or not isinstance(reach, (int, np.integer)):
        return None
    return {a: (int(reach), m in _PERIODIC) for a, m in zip(axes, modes) if shape[a] > 1}


def local(depth: Depth, arrays: int = 1) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a front-end function whose output cell reads input cells within a halo (``depth``): on a Dask
    array, one ``map_overlap`` task per chunk. ``arrays``: how many leading arguments are arrays chunked alike
    (2 for a backward: the cotangent, then the input)."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            given = dict(bound.arguments)
            names = list(signature.parameters)[:arrays]
            inputs = [given.pop(n, None) for n in names]
            x = inputs[-1]
            if not all(is_dask_array(a) for a in inputs):
                return fn(*args, **kwargs)
            # the call's refusals and its output dtype, from a stand-in of at most 2 cells an axis (no rule
            # depends on longer axes)
            stand = [np.zeros(tuple(min(int(n), 2) for n in a.shape), a.dtype) for a in inputs]
            probe = fn(*stand, **given)
            bound.apply_defaults()
            halo = depth(tuple(int(n) for n in x.shape), dict(bound.arguments))
            if halo is None or 0 in x.shape or any(a.shape != x.shape for a in inputs):
                return fn(*args, **kwargs)
            import dask.array as da

            # an axis the window spans whole: one chunk along it, no halo
            whole = {a: -1 for a, (d, _) in halo.items() if d >= x.shape[a]}
            halo = {a: h for a, h in halo.items() if a not in whole}
            chunks = x.rechunk(whole).chunks if whole else x.chunks
            return da.map_overlap(
                lambda *blocks: fn(*blocks, **given), *(a.rechunk(chunks) for a in inputs),
                depth={a: d for a, (d, _) in halo.items()},
                boundary={a: "periodic" if p else "none" for a, (_, p) in halo.items()},
                dtype=probe.dtype, meta=np.empty((0,) * x.ndim, probe.dtype))
        return call
    return wrap
