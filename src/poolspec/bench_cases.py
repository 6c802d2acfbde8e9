"""The ratio benchmark's cases (``poolspec.bench``): what is called, on which shape, with which arguments.

>>> from poolspec.bench_cases import CASES, scaled
>>> scaled(CASES[10], (1, 3, 64, 64)).args["size"]
(128, 128)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchCase:
    """One benchmark call: ``poolspec.<op>`` (and its peer) on a float32 input of ``shape`` with ``args``."""

    key: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)


CASES = [
    BenchCase("1 max_pool2d 3x3/2 p1 (ResNet stem)", "max_pool2d", (8, 64, 112, 112),
              dict(kernel_size=3, stride=2, padding=1)),
    BenchCase("2 avg_pool2d 2x2/2", "avg_pool2d", (32, 64, 56, 56), dict(kernel_size=2, stride=2)),
    BenchCase("3 avg_pool2d 3x3/1 p1 excl. pad", "avg_pool2d", (8, 256, 28, 28),
              dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    BenchCase("4 adaptive_avg_pool2d -> 1", "adaptive_avg_pool2d", (32, 512, 7, 7), dict(output_size=1)),
    BenchCase("5 adaptive_avg_pool2d 13 -> 7", "adaptive_avg_pool2d", (8, 256, 13, 13), dict(output_size=7)),
    BenchCase("6 avg_pool3d 2x2x2", "avg_pool3d", (4, 32, 16, 32, 32), dict(kernel_size=2)),
    BenchCase("7 max_pool1d 3/2", "max_pool1d", (32, 128, 1024), dict(kernel_size=3, stride=2)),
    BenchCase("8 bilinear x2", "interpolate", (8, 64, 56, 56), dict(scale_factor=2, mode="bilinear",
                                                                      align_corners=False)),
    BenchCase("9 nearest x2", "interpolate", (8, 64, 56, 56), dict(scale_factor=2, mode="nearest")),
    BenchCase("10 bicubic AA 224 -> 160", "interpolate", (8, 3, 224, 224), dict(size=(160, 160), mode="bicubic",
                                                                               antialias=True)),
    BenchCase("11 bilinear 512 -> 1024", "interpolate", (1, 3, 512, 512), dict(size=(1024, 1024), mode="bilinear",
                                                                              align_corners=False)),
]
# four sizes per case at 1x, 2x, 4x and 16x the elements of the benchmark case (spatial sizes grow). They
# straddle the L3 and glibc's 32 MiB mmap threshold, past which every fresh buffer pays its page faults on
# every call, so the native peer's slope at the same sizes is printed beside poolspec's.
SCALE_CASES = {"1": [(8, 64, 112, 112), (8, 64, 224, 112), (8, 64, 224, 224), (8, 64, 448, 448)],
               "8": [(8, 64, 56, 56), (8, 64, 112, 56), (8, 64, 112, 112), (8, 64, 224, 224)],
               "11": [(1, 3, 512, 512), (1, 3, 1024, 512), (1, 3, 1024, 1024), (1, 3, 2048, 2048)]}


# Where the main cases do not look (issue 16): global and near-global max pools, whose backward must not grow
# with the window, and tiny calls, where the per-call overhead is the whole cost. torch only, in the same run.
GLOBAL_MAX = [
    BenchCase("adaptive_max_pool2d -> 1", "adaptive_max_pool2d", (4, 64, 32, 32), dict(output_size=1)),
    BenchCase("max_pool2d 32 (global)", "max_pool2d", (4, 64, 32, 32), dict(kernel_size=32)),
    BenchCase("adaptive_max_pool3d -> 1", "adaptive_max_pool3d", (2, 32, 8, 16, 16), dict(output_size=1)),
    BenchCase("adaptive_max_pool1d -> 1 (PointNet)", "adaptive_max_pool1d", (16, 128, 256), dict(output_size=1)),
    BenchCase("adaptive_max_pool2d 28 -> 7", "adaptive_max_pool2d", (8, 64, 28, 28), dict(output_size=7)),
]
# Ordinary CNN shapes beyond the main cases, several per family (issue 16): stride-equals-kernel max pools with
# their backward, ragged adaptive windows, downscales with and without align_corners, 1-d and 3-d.
ORDINARY = [
    BenchCase("max_pool2d 2x2/2 (VGG)", "max_pool2d", (8, 128, 56, 56), dict(kernel_size=2)),
    BenchCase("max_pool2d 2x2/2 small", "max_pool2d", (16, 64, 32, 32), dict(kernel_size=2)),
    BenchCase("max_pool2d 3x3/2 ceil (GoogLeNet)", "max_pool2d", (8, 192, 27, 27),
              dict(kernel_size=3, stride=2, ceil_mode=True)),
    BenchCase("max_pool3d 2x2x2", "max_pool3d", (2, 32, 16, 28, 28), dict(kernel_size=2)),
    BenchCase("max_pool1d 2/2", "max_pool1d", (32, 128, 1024), dict(kernel_size=2)),
    BenchCase("avg_pool2d 7x7 (ResNet head)", "avg_pool2d", (16, 512, 7, 7), dict(kernel_size=7)),
    BenchCase("avg_pool1d 4/4", "avg_pool1d", (32, 128, 512), dict(kernel_size=4)),
    BenchCase("avg_pool3d 3x3x3/1 p1", "avg_pool3d", (2, 16, 16, 28, 28), dict(kernel_size=3, stride=1, padding=1)),
    BenchCase("adaptive_avg_pool2d 13 -> 6 (AlexNet)", "adaptive_avg_pool2d", (8, 256, 13, 13), dict(output_size=6)),
    BenchCase("adaptive_avg_pool2d 33 -> 6 (PSP)", "adaptive_avg_pool2d", (4, 256, 33, 33), dict(output_size=6)),
    BenchCase("adaptive_avg_pool1d 100 -> 32", "adaptive_avg_pool1d", (16, 256, 100), dict(output_size=32)),
    BenchCase("adaptive_max_pool2d 14 -> 5", "adaptive_max_pool2d", (8, 128, 14, 14), dict(output_size=5)),
    BenchCase("lp_pool2d p2 3x3/2", "lp_pool2d", (8, 64, 56, 56), dict(norm_type=2, kernel_size=3, stride=2)),
    BenchCase("bilinear 64 -> 45 align_corners", "interpolate", (8, 64, 64, 64),
              dict(size=(45, 45), mode="bilinear", align_corners=True)),
    BenchCase("bilinear x2 align_corners (FPN)", "interpolate", (4, 256, 32, 32),
              dict(scale_factor=2, mode="bilinear", align_corners=True)),
    BenchCase("nearest x0.5", "interpolate", (8, 64, 64, 64), dict(scale_factor=0.5, mode="nearest")),
    BenchCase("bicubic x2", "interpolate", (4, 3, 128, 128), dict(scale_factor=2, mode="bicubic")),
    BenchCase("trilinear x2", "interpolate", (2, 16, 16, 16, 16), dict(scale_factor=2, mode="trilinear")),
    BenchCase("area 64 -> 24", "interpolate", (8, 64, 64, 64), dict(size=(24, 24), mode="area")),
]
TINY = [
    BenchCase("max_pool2d 1x1x4x4 k2", "max_pool2d", (1, 1, 4, 4), dict(kernel_size=2)),
    BenchCase("avg_pool2d 1x1x4x4 k2", "avg_pool2d", (1, 1, 4, 4), dict(kernel_size=2)),
    BenchCase("bilinear 1x1x4x4 x2", "interpolate", (1, 1, 4, 4), dict(scale_factor=2, mode="bilinear")),
    BenchCase("adaptive_avg_pool2d 1x8x7x7 -> 1", "adaptive_avg_pool2d", (1, 8, 7, 7), dict(output_size=1)),
    BenchCase("adaptive_max_pool2d 1x8x7x7 -> 1", "adaptive_max_pool2d", (1, 8, 7, 7), dict(output_size=1)),
    BenchCase("lp_pool2d 1x1x4x4 p2 k2", "lp_pool2d", (1, 1, 4, 4), dict(norm_type=2, kernel_size=2)),
    BenchCase("max_pool1d 1x4x8 k2", "max_pool1d", (1, 4, 8), dict(kernel_size=2)),
    BenchCase("avg_pool3d 1x1x4x4x4 k2", "avg_pool3d", (1, 1, 4, 4, 4), dict(kernel_size=2)),
    BenchCase("max_unpool2d 1x1x2x2 k2", "max_unpool2d", (1, 1, 4, 4), dict(kernel_size=2)),
]


# grid_sample (2-d bilinear, align_corners=False), torch only: an image warped by a small random rotation and
# scale (affine_grid), by a flow field (identity plus a random displacement of about 1.6 pixels), and one tiny
# call. Per case: the forward, the forward plus the gradients w.r.t. x and the grid, the backward pass of the
# input gradient alone (the deterministic sort-and-sum against torch's serial CPU kernel), and the explicit
# backward function (both gradients) against aten's grid_sampler_2d_backward.
GRID_SAMPLE = [
    BenchCase("grid_sample affine zeros", "grid_sample", (8, 32, 64, 64), dict(grid="affine", padding_mode="zeros")),
    BenchCase("grid_sample affine border", "grid_sample", (8, 32, 64, 64), dict(grid="affine", padding_mode="border")),
    BenchCase("grid_sample flow zeros", "grid_sample", (8, 32, 64, 64), dict(grid="flow", padding_mode="zeros")),
    BenchCase("grid_sample flow border", "grid_sample", (8, 32, 64, 64), dict(grid="flow", padding_mode="border")),
    BenchCase("grid_sample 1x1x4x4 affine zeros (tiny)", "grid_sample", (1, 1, 4, 4),
              dict(grid="affine", padding_mode="zeros", tiny=True)),
    BenchCase("grid_sample 1x1x4x4 affine border (tiny)", "grid_sample", (1, 1, 4, 4),
              dict(grid="affine", padding_mode="border", tiny=True)),
]


def scaled(case: BenchCase, shape: tuple[int, ...]) -> BenchCase:
    """``case`` on ``shape`` (the scale sweep), a resize to a fixed size made a resize to twice the input's."""
    args = dict(case.args)
    if "size" in args:
        args["size"] = tuple(2 * s for s in shape[2:])
    return BenchCase(case.key, case.op, shape, args)
