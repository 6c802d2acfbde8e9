"""docs/ROI_CONVENTIONS.md, row by row: each stated equivalence computed (the libraries' own numbers are checked
against them in test_roi_align.py, test_roi_pool.py and test_frontend_roi.py; here the rows' relations)."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec.frontends import onnx
from poolspec.frontends.tf import image


def _inputs(seed: int, N: int = 2, C: int = 3, H: int = 9, W: int = 11, K: int = 6):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W))
    corner = rng.integers(0, 4 * np.array([W, H]) - 8, (K, 2)) / 4  # quarters: exact in every dtype
    size = rng.integers(4, 16, (K, 2)) / 4
    boxes = np.concatenate([rng.integers(0, N, (K, 1)), corner, corner + size], axis=1)
    return x, boxes


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_aligned_is_a_half_pixel_shift_without_the_clamp(scale):
    """aligned=True (torchvision, detectron2, ONNX half_pixel) == aligned=False on boxes moved by -0.5 /
    spatial_scale, for rois of at least one cell (the clamp of aligned=False then never acts)."""
    x, boxes = _inputs(0)
    boxes[:, 1:] /= scale
    shifted = boxes.copy()
    shifted[:, 1:] -= 0.5 / scale
    for ratio in (1, 2, 0):
        a = poolspec.roi_align(x, boxes, (3, 2), scale, ratio, aligned=True)
        b = poolspec.roi_align(x, shifted, (3, 2), scale, ratio, aligned=False)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("mode,aligned", [("half_pixel", True), ("output_half_pixel", False)])
def test_onnx_coordinate_modes_are_torchvisions_aligned_flag(mode, aligned):
    x, boxes = _inputs(1)
    for ratio in (0, 2):
        got = onnx.RoiAlign(x, boxes[:, 1:], boxes[:, 0].astype(np.int64), coordinate_transformation_mode=mode,
                            output_height=3, output_width=2, sampling_ratio=ratio, spatial_scale=1.0)
        want = poolspec.roi_align(x, boxes, (3, 2), 1.0, ratio, aligned=aligned)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_onnx_max_mode_takes_weighted_corner_terms_not_samples():
    """ONNX's max (the spec's) differs from the maximum of the bilinear samples, which max_of="samples" gives;
    both are at most the largest value read."""
    x, boxes = _inputs(2)
    kw = dict(output_height=2, output_width=2, sampling_ratio=2, mode="max")
    spec = onnx.RoiAlign(x, boxes[:, 1:], boxes[:, 0].astype(np.int64), **kw)
    samples = onnx.RoiAlign(x, boxes[:, 1:], boxes[:, 0].astype(np.int64), max_of="samples", **kw)
    assert not np.allclose(spec, samples)
    assert spec.max() <= x.max() and samples.max() <= x.max()


def test_max_roi_pool_is_roi_pool():
    x, boxes = _inputs(3)
    got = onnx.MaxRoiPool(x.astype(np.float32), boxes.astype(np.float32), pooled_shape=(3, 2), spatial_scale=1.0)
    want = poolspec.roi_pool(x.astype(np.float32), boxes.astype(np.float32), (3, 2), 1.0)
    np.testing.assert_array_equal(got, want)


def test_crop_and_resize_samples_corner_aligned_points():
    """tf.image.crop_and_resize == grid_sample(align_corners=True) at the same points, for boxes inside the image
    (outside, TF gives extrapolation_value where grid_sample's zero padding blends): checked against TF itself."""
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(4)
    N, H, W, C, crop = 2, 9, 11, 3, (4, 5)
    img = rng.standard_normal((N, H, W, C)).astype(np.float32)
    lo, hi = rng.uniform(0, 0.45, (5, 2)), rng.uniform(0.55, 1, (5, 2))
    boxes = np.concatenate([lo, hi], axis=1).astype(np.float32)  # [y1, x1, y2, x2], normalised
    idx = rng.integers(0, N, 5).astype(np.int32)
    ours = np.asarray(image.crop_and_resize(img, boxes, idx, crop))
    theirs = tf.image.crop_and_resize(img, boxes, idx, crop).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    ty = boxes[:, 0:1] + (boxes[:, 2:3] - boxes[:, 0:1]) * np.linspace(0, 1, crop[0])[None]  # (K, ch) in [0, 1]
    tx = boxes[:, 1:2] + (boxes[:, 3:4] - boxes[:, 1:2]) * np.linspace(0, 1, crop[1])[None]
    grid = np.stack(np.broadcast_arrays(tx[:, None, :] * 2 - 1, ty[:, :, None] * 2 - 1), axis=-1)
    x = np.moveaxis(img, -1, 1)[idx].astype(np.float64)
    via_grid = poolspec.grid_sample(x, grid.astype(np.float64), align_corners=True)
    np.testing.assert_allclose(np.moveaxis(via_grid, 1, -1), theirs, rtol=1e-5, atol=1e-5)
