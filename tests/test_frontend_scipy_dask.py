"""``poolspec.frontends.scipy.ndimage`` on Dask arrays of many chunks: the window filters run chunk by chunk with
halos (one task per chunk, the input's chunks kept), their values against live SciPy and their explicit
backwards against SciPy's Jacobian (central differences of SciPy's own function)."""

from __future__ import annotations

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")
da = pytest.importorskip("dask.array")

from poolspec.frontends.scipy import ndimage  # noqa: E402

CASES = [
    ("uniform_filter1d", {"size": 4, "origin": 1, "mode": "mirror"}),
    ("uniform_filter1d", {"size": 30, "axis": 0, "mode": "wrap"}),  # a window wider than a chunk
    ("uniform_filter", {"size": (3, 2), "mode": ("wrap", "constant"), "cval": 1.5}),
    ("maximum_filter1d", {"size": 3, "axis": 0, "mode": "reflect"}),
    ("minimum_filter", {"size": (2, 5), "mode": "nearest", "origin": (0, -1)}),
    ("maximum_filter", {"footprint": np.array([[True, False, True], [False, True, False]]), "mode": "grid-wrap"}),
    ("minimum_filter1d", {"size": 7, "mode": "constant", "cval": -0.5}),
]


@pytest.mark.parametrize("name,options", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_chunk_local_against_scipy(name, options):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((24, 20))
    d = da.from_array(x, chunks=(6, 5))
    y = getattr(ndimage, name)(d, **options)
    # chunk by chunk: Dask keeps the chunks, merging those thinner than the halo (an axis the window spans whole:
    # one chunk)
    whole = options.get("size") == 30
    assert y.chunks[0] == ((24,) if whole else d.chunks[0]) and len(y.chunks[1]) > 1, y.chunks
    assert any(k.startswith("overlap") for k in y.__dask_graph__().layers) or whole
    np.testing.assert_allclose(y.compute(), getattr(ndi, name)(x, **options), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,options", CASES[:4], ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES[:4])])
def test_chunk_local_backward_against_scipy(name, options):
    rng = np.random.default_rng(8)
    x, g = rng.standard_normal((9, 11)), rng.standard_normal((9, 11))
    got = getattr(ndimage, f"{name}_backward")(da.from_array(g, chunks=(4, 3)), da.from_array(x, chunks=(4, 3)),
                                              **options).compute()
    want = np.zeros_like(x)
    for i in range(x.size):  # the filters here are linear or piecewise linear with no ties within the step
        e = np.zeros_like(x)
        e.flat[i] = 1e-6
        want.flat[i] = np.sum(g * (getattr(ndi, name)(x + e, **options) - getattr(ndi, name)(x - e, **options)))
    np.testing.assert_allclose(got, want / 2e-6, rtol=1e-6, atol=1e-7)


def test_refusals_before_any_computation():
    d = da.zeros((10, 10), chunks=3)
    with pytest.raises(ValueError, match="mode"):
        ndimage.uniform_filter(d, 3, mode="bogus")
    with pytest.raises(ValueError, match="origin"):
        ndimage.maximum_filter1d(d, 3, origin=2)


@pytest.mark.parametrize("mode", ["mirror", "reflect", "grid-wrap", "nearest"])
@pytest.mark.parametrize("order", [2, 5])
def test_spline_filter_chunk_by_chunk(mode, order):
    """The prefilter along a long chunked axis: one task per chunk with a halo of the band (no axis gathered whole),
    against SciPy; its explicit backward against the NumPy path's."""
    rng = np.random.default_rng(order)
    x, g = rng.standard_normal((400, 9)), rng.standard_normal((400, 9))
    d = da.from_array(x, chunks=(100, 9))
    y = ndimage.spline_filter1d(d, order, axis=0, mode=mode)
    assert y.chunks == d.chunks
    np.testing.assert_allclose(y.compute(), ndi.spline_filter1d(x, order, axis=0, mode=mode), rtol=1e-10,
                               atol=1e-12)
    got = ndimage.spline_filter_backward(da.from_array(g, chunks=(100, 9)), d, order, mode=mode).compute()
    np.testing.assert_allclose(got, ndimage.spline_filter_backward(g, x, order, mode=mode), rtol=1e-10, atol=1e-12)
