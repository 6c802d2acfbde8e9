"""The RoI families' shared Dask map (families/_roi/ops.py): channel blocks widened to whole channel groups, for an
op whose output channel c reads input channels c * group .. (c + 1) * group - 1 (the position-sensitive ops)."""

from __future__ import annotations

import numpy as np
import pytest

from poolspec.families._roi.ops import dask_map

da = pytest.importorskip("dask.array")


def _forward(x, boxes, scale):  # each output channel the sum of its group of 3 input channels, times scale
    return x.reshape(x.shape[0], -1, 3, *x.shape[2:]).sum(axis=2) * scale


def _backward(g, x, boxes, scale):
    return np.repeat(g, 3, axis=1) * scale


@pytest.mark.parametrize("chunks", [(1, 2, 3, 2, 1, 3), (6, 6), (4, 8), (12,)])
def test_dask_map_keeps_channel_groups_whole(chunks):
    x = np.random.default_rng(0).standard_normal((1, 12, 2, 3))
    boxes = np.zeros((1, 5))
    lazy = da.from_array(x, chunks=(1, chunks, 2, 3))
    out = dask_map(_forward, _backward, lazy, boxes, dict(scale=2.0), 1, (2, 3), channel_group=3)
    assert sum(out.chunks[1]) == 4 and all(c > 0 for c in out.chunks[1])
    np.testing.assert_array_equal(out.compute(), _forward(x, boxes, 2.0))
    g = np.random.default_rng(1).standard_normal((1, 4, 2, 3))
    grad = dask_map(_forward, _backward, lazy, boxes, dict(scale=2.0), 1, (2, 3), da.from_array(g, chunks=(1, 1, 2, 3)),
                    channel_group=3)
    np.testing.assert_array_equal(grad.compute(), _backward(g, x, boxes, 2.0))


def test_dask_map_one_channel_per_channel_keeps_the_blocks():
    x = np.arange(24.0).reshape(1, 4, 2, 3)
    lazy = da.from_array(x, chunks=(1, (1, 3), 2, 3))
    out = dask_map(lambda xb, boxes: xb[:, :, :1, :1], None, lazy, np.zeros((1, 5)), {}, 1, (1, 1))
    assert out.chunks[1] == (1, 3)
    np.testing.assert_array_equal(out.compute(), x[:, :, :1, :1])
