"""Dask stays lazy: no op computes anything while its graph is built, and the batch and channel chunks of the
input survive, forward and backward, in every op family (the values are NumPy's, which the numeric tests hold
against torch)."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

da = pytest.importorskip("dask.array")
from dask.callbacks import Callback  # noqa: E402


class Computes(Callback):
    """Counts every graph Dask starts to compute while active."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def _start(self, dsk) -> None:
        self.count += 1


SHAPE, CHUNKS = (4, 6, 12, 10), (2, 3, 6, 5)
IDX = np.random.default_rng(3).permutation(12 * 10)[:30].reshape(1, 1, 6, 5) + np.zeros((4, 6, 1, 1), np.int64)


def _idx(like):
    return da.from_array(IDX, chunks=CHUNKS[:2] + (3, 5)) if isinstance(like, da.Array) else IDX


# (name, forward, backward(g, x)) on (N, C, H, W)
CALLS = [
    ("avg_pool2d", lambda x: poolspec.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
     lambda g, x: poolspec.avg_pool2d_backward(g, x, 3, 2, 1, ceil_mode=True)),
    ("adaptive_avg_pool2d", lambda x: poolspec.adaptive_avg_pool2d(x, (5, 3)),
     lambda g, x: poolspec.adaptive_avg_pool2d_backward(g, x, (5, 3))),
    ("max_pool2d", lambda x: poolspec.max_pool2d(x, 3, 2, 1, dilation=(1, 2)),
     lambda g, x: poolspec.max_pool2d_backward(g, x, 3, 2, 1, dilation=(1, 2))),
    ("max_pool2d-indices", lambda x: poolspec.max_pool2d(x, 2, return_indices=True),
     lambda g, x: poolspec.max_pool2d_backward(g, x, 2, indices=poolspec.max_pool2d(x, 2, return_indices=True)[1])),
    ("adaptive_max_pool2d", lambda x: poolspec.adaptive_max_pool2d(x, (5, 4), return_indices=True),
     lambda g, x: poolspec.adaptive_max_pool2d_backward(g, x, (5, 4))),
    ("max_unpool2d", lambda x: poolspec.max_unpool2d(x[..., :6, :5], _idx(x), 2),
     lambda g, x: poolspec.max_unpool2d_backward(g, x[..., :6, :5], _idx(x), 2)),
    ("lp_pool2d", lambda x: poolspec.lp_pool2d(x, 3, 2, ceil_mode=True),
     lambda g, x: poolspec.lp_pool2d_backward(g, x, 3, 2, ceil_mode=True)),
    ("interpolate-bilinear", lambda x: poolspec.interpolate(x, size=(7, 13), mode="bilinear"),
     lambda g, x: poolspec.interpolate_backward(g, x, size=(7, 13), mode="bilinear")),
    ("interpolate-bicubic-aa", lambda x: poolspec.interpolate(x, scale_factor=0.6, mode="bicubic", antialias=True),
     lambda g, x: poolspec.interpolate_backward(g, x, scale_factor=0.6, mode="bicubic", antialias=True)),
    ("interpolate-nearest", lambda x: poolspec.interpolate(x, scale_factor=2, mode="nearest"),
     lambda g, x: poolspec.interpolate_backward(g, x, scale_factor=2, mode="nearest")),
]


def _first(result):
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("name, forward, backward", CALLS, ids=[c[0] for c in CALLS])
def test_every_family_stays_lazy_and_keeps_batch_channel_chunks(name, forward, backward):
    host = np.random.default_rng(0).standard_normal(SHAPE)
    if name == "lp_pool2d":
        host = np.abs(host) + 0.1  # away from lp's zero-sum rule
    x = da.from_array(host, chunks=CHUNKS)
    with Computes() as computes:
        results = forward(x)
        y = _first(results)
        g = da.from_array(np.random.default_rng(1).standard_normal(y.shape), chunks=CHUNKS[:2] + (4, 4))
        gx = backward(g, x)
        assert computes.count == 0, f"{name}: {computes.count} computes while building the graph"
    for out in (results if isinstance(results, tuple) else (results,)) + (gx,):
        assert out.chunks[:2] == x.chunks[:2], (name, out.chunks)
    want = forward(host)
    got = (results if isinstance(results, tuple) else (results,))
    for a, b in zip(got, want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(a.compute(), b)
    np.testing.assert_array_equal(gx.compute(), backward(g.compute(), host))


def test_pool_unpool_backward_pipeline_computes_only_when_asked():
    """max_pool2d(return_indices) -> max_unpool2d -> both backwards: nothing runs before .compute(), the
    batch/channel chunks are kept, and the values are torch's."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    host = np.random.default_rng(0).standard_normal((4, 6, 16, 16))
    x = da.from_array(host, chunks=(2, 3, 8, 8))
    with Computes() as computes:
        y, idx = poolspec.max_pool2d(x, 2, return_indices=True)
        up = poolspec.max_unpool2d(y, idx, 2)
        g_up = da.ones_like(up) * 0.5 + up
        g_y = poolspec.max_unpool2d_backward(g_up, y, idx, 2)
        g_x = poolspec.max_pool2d_backward(g_y, x, 2, indices=idx)
        assert computes.count == 0
        for a in (y, idx, up, g_y, g_x):
            assert a.chunks[:2] == ((2, 2), (3, 3)), a.chunks
        got = da.compute(up, g_x)
        assert computes.count == 1
    xt = torch.from_numpy(host).requires_grad_(True)
    yt, it = F.max_pool2d(xt, 2, return_indices=True)
    ut = F.max_unpool2d(yt, it, 2)
    (gt,) = torch.autograd.grad(ut, xt, torch.ones_like(ut) * 0.5 + ut.detach())
    np.testing.assert_array_equal(got[0], ut.detach().numpy())
    np.testing.assert_allclose(got[1], gt.numpy(), rtol=1e-15, atol=0)


def test_unpool_indices_are_checked_at_compute_time():
    x = da.ones((2, 2, 3, 3), chunks=(1, 1, 3, 3))
    bad = np.zeros((2, 2, 3, 3), np.int64)
    bad[1, 1, 2, 2] = 36  # the output plane is 6 x 6
    with Computes() as computes:
        y = poolspec.max_unpool2d(x, da.from_array(bad, chunks=(1, 1, 3, 3)), 2)
        assert computes.count == 0
    with pytest.raises(ValueError, match=r"max_unpool2d: indices contains 36, outside the output plane"):
        y.compute()
    with pytest.raises(ValueError, match=r"max_unpool2d: indices contains 36, outside the output plane"):
        poolspec.max_unpool2d(np.ones((2, 2, 3, 3)), bad, 2)


def _tasks_and_layers(a):
    graph = a.__dask_graph__()
    return len(graph), len(graph.layers)


# (name, call) of integer downscales by 2, each in one task per chunk (or one overlap pass where windows reach
# past a chunk: the antialiased resizes)
DOWNSCALES = [
    ("avg_pool2d", lambda x: poolspec.avg_pool2d(x, 2), True),
    ("area", lambda x: poolspec.interpolate(x, scale_factor=0.5, mode="area"), True),
    ("adaptive_avg_pool2d", lambda x: poolspec.adaptive_avg_pool2d(x, (x.shape[-2] // 2, x.shape[-1] // 2)), True),
    ("bilinear-aa", lambda x: poolspec.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True), False),
    ("bicubic-aa", lambda x: poolspec.interpolate(x, scale_factor=0.5, mode="bicubic", antialias=True), False),
]


@pytest.mark.parametrize("name, call, tiles", DOWNSCALES, ids=[d[0] for d in DOWNSCALES])
def test_integer_downscales_take_a_task_per_chunk_with_regular_chunks(name, call, tiles):
    """An image pyramid's step (OME-Zarr levels): at most 1.2x the tasks of ``da.coarsen`` where windows tile the
    chunks, graph layers that do not grow with the number of chunks, output chunks the input's halved (to_zarr
    needs regular chunks), and NumPy's values bit for bit, forward and backward."""
    sizes = {}
    for n in (64, 128):
        x = da.random.default_rng(0).random((1, 2, n, n), chunks=(1, 1, 16, 16))
        y = call(x)
        assert y.chunks[2:] == ((8,) * (n // 16),) * 2, y.chunks
        tasks, layers = _tasks_and_layers(y)
        coarsen_tasks, _ = _tasks_and_layers(da.coarsen(np.mean, x, {2: 2, 3: 2}))
        if tiles:
            assert tasks <= 1.2 * coarsen_tasks, (tasks, coarsen_tasks)
        sizes[n] = layers
        host = x.compute()
        assert np.array_equal(y.compute(), call(host))
        g = da.ones_like(y).rechunk(y.chunks) * 0.5
        grad = poolspec.interpolate_backward if name.endswith("-aa") or name == "area" else None
        if grad is not None:
            kw = {"scale_factor": 0.5, "mode": name.split("-")[0], "antialias": name.endswith("-aa")}
            gx = grad(g, x, **kw)
            assert gx.chunks == x.chunks and np.array_equal(gx.compute(), grad(g.compute(), host, **kw))
    assert sizes[64] == sizes[128], sizes
