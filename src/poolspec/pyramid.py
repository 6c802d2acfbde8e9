"""Image pyramids on Dask, written as OME-Zarr multiscales: each level the previous one halved along the two
innermost axes by one poolspec call (area averaging by default, or an antialiased resize), one task per chunk
(or one overlap pass where an antialiased kernel reaches past a chunk), regular output chunks that ``to_zarr``
writes as they are.

>>> import dask.array as da
>>> from poolspec.pyramid import levels
>>> [level.shape for level in levels(da.ones((64, 48), chunks=16), 3)]
[(64, 48), (32, 24), (16, 12)]
"""

from __future__ import annotations

from typing import Any

from .families.interpolate.ops import interpolate


def levels(image: Any, count: int, mode: str = "area", antialias: bool = True,
           chunks: tuple[int, ...] | None = None) -> list[Any]:
    """``count`` levels of ``image`` (any rank >= 2; the two innermost axes are halved, floor, per level), the
    first being ``image`` itself. ``mode``: "area" (the mean of each 2x2 block) or an interpolate mode
    ("bilinear", "bicubic", with ``antialias``). Where ``chunks`` is given, every level from the second is
    re-chunked to it (deep levels otherwise hold chunks of a few cells each: the input's divided by 2 per
    level); it merges whole chunks, so the chunks stay regular. A 4-D (t, c, y, x) image runs as it is; other
    ranks are reshaped to 4-D and back around each level (two layers more per level)."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if getattr(image, "ndim", 0) < 2:
        raise ValueError(f"image must have at least 2 axes, got shape {getattr(image, 'shape', None)}")
    kwargs: dict[str, Any] = {"mode": mode} if mode == "area" else {"mode": mode, "antialias": antialias}
    out = [image]
    for _ in range(count - 1):
        prev = out[-1]
        if min(prev.shape[-2:]) < 2:
            raise ValueError(f"count={count} halves {tuple(image.shape[-2:])} below one cell")
        four = prev.ndim == 4  # (t, c, y, x) as it is; other ranks as (-1, 1, y, x) and back
        x = prev if four else prev.reshape((-1, 1) + tuple(prev.shape[-2:]))
        if not four and hasattr(prev, "chunks"):  # keep the spatial chunks through the reshape
            x = x.rechunk((1, 1) + tuple(prev.chunksize[-2:]))
        size = (prev.shape[-2] // 2, prev.shape[-1] // 2)
        y = interpolate(x, size=size, **kwargs)
        y = y if four else y.reshape(tuple(prev.shape[: prev.ndim - 2]) + size)
        if chunks is not None:
            y = y.rechunk(tuple(min(c, s) for c, s in zip(chunks, y.shape)))
        out.append(y)
    return out


_AXES = {2: ("y", "x"), 3: ("c", "y", "x"), 4: ("t", "c", "y", "x"), 5: ("t", "c", "z", "y", "x")}


def to_ome_zarr(pyramid: list[Any], path: str, axes: tuple[str, ...] | None = None) -> None:
    """Write ``pyramid`` (from :func:`levels`) to ``path`` as an OME-Zarr (0.5) multiscales group: arrays
    "0", "1", ... with their chunks, and the ``multiscales`` metadata (a scale of 2**level on the two innermost
    axes). ``axes``: the names of the axes, by default "y", "x" after "c" or "t", "c" for the leading ones."""
    import dask.array as da
    import zarr

    ndim = pyramid[0].ndim
    names = axes or _AXES.get(ndim, ())
    if len(names) != ndim:
        raise ValueError(f"axes must name {ndim} axes, got {axes}")
    kinds = {"t": "time", "c": "channel", "z": "space", "y": "space", "x": "space"}
    group = zarr.open_group(path, mode="w")
    datasets: list[Any] = []
    for i, level in enumerate(pyramid):
        da.to_zarr(level, path, component=str(i), overwrite=True)
        scale = [1.0] * (ndim - 2) + [float(2 ** i)] * 2
        datasets.append({"path": str(i), "coordinateTransformations": [{"type": "scale", "scale": scale}]})
    group.attrs["ome"] = {"version": "0.5", "multiscales": [{
        "axes": [{"name": n, "type": kinds.get(n, "space")} for n in names], "datasets": datasets}]}
