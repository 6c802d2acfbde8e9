"""The image-pyramid recipe (poolspec.pyramid): Dask levels written as OME-Zarr multiscales, each level NumPy's
call on the level above bit for bit, regular chunks, one task per chunk, read back from the store."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec.pyramid import levels, to_ome_zarr

da = pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("mode", ["area", "bilinear", "bicubic"])
def test_pyramid_levels_written_as_ome_zarr(tmp_path, mode):
    src = str(tmp_path / "in.zarr")
    da.to_zarr(da.random.default_rng(0).random((1, 1, 256, 192), chunks=(1, 1, 64, 64), dtype=np.float32), src)
    image = da.from_zarr(src)  # Zarr in
    pyramid = levels(image, 4, mode=mode)
    host = image.compute()
    for level in pyramid[1:]:
        assert all(len(set(c[:-1])) <= 1 for c in level.chunks), level.chunks  # regular: to_zarr writes them
        want = poolspec.interpolate(host, size=level.shape[2:], mode=mode,
                                    **({} if mode == "area" else {"antialias": True}))
        host = want
        assert np.array_equal(level.compute(), want)
    if mode == "area":  # windows tile the chunks: one task per chunk and level, as da.coarsen
        one = levels(image, 2)[1]
        assert len(one.__dask_graph__()) <= 1.2 * len(da.coarsen(np.mean, image, {2: 2, 3: 2}).__dask_graph__())
    out = str(tmp_path / "out.zarr")
    to_ome_zarr(pyramid, out)  # OME-Zarr levels out
    group = zarr.open_group(out, mode="r")
    meta = dict(group.attrs)["ome"]["multiscales"][0]
    assert [a["name"] for a in meta["axes"]] == ["t", "c", "y", "x"]
    assert [d["coordinateTransformations"][0]["scale"][2:] for d in meta["datasets"]] == [[1.0, 1.0], [2.0, 2.0],
                                                                                         [4.0, 4.0], [8.0, 8.0]]
    for i, level in enumerate(pyramid):
        assert np.array_equal(group[str(i)][...], level.compute())


@pytest.mark.parametrize("shape", [(128, 96), (3, 128, 96), (1, 2, 3, 128, 96)])
def test_pyramid_of_any_rank_rechunks_deep_levels(shape):
    image = da.random.default_rng(1).random(shape, chunks=(1,) * (len(shape) - 2) + (32, 32))
    pyramid = levels(image, 3, chunks=(1,) * (len(shape) - 2) + (32, 32))
    assert [p.shape[-2:] for p in pyramid] == [(128, 96), (64, 48), (32, 24)]
    assert pyramid[2].chunks[-2:] == ((32,), (24,))
    host = image.compute().reshape((-1, 1, 128, 96))
    want = poolspec.interpolate(host, size=(64, 48), mode="area").reshape(shape[:-2] + (64, 48))
    assert np.array_equal(pyramid[1].compute(), want)


def test_pyramid_refuses_what_it_cannot_halve():
    with pytest.raises(ValueError, match="count"):
        levels(da.ones((4, 4)), 0)
    with pytest.raises(ValueError, match="below one cell"):
        levels(da.ones((4, 4)), 4)
    with pytest.raises(ValueError, match="at least 2 axes"):
        levels(da.ones(4), 2)
