"""Checked by mypy (the test command's type check), never run: the public ops return the caller's array type,
and ``return_indices=True`` a pair."""

from typing import assert_type

import numpy as np
import torch

import poolspec

x = np.zeros((1, 1, 8, 8))
t = torch.zeros(1, 1, 8, 8)

assert_type(poolspec.avg_pool2d(x, 2), np.ndarray[tuple[int, int, int, int], np.dtype[np.float64]])
assert_type(poolspec.avg_pool2d(t, 2), torch.Tensor)
assert_type(poolspec.interpolate(t, scale_factor=2, mode="bilinear"), torch.Tensor)
assert_type(poolspec.max_pool2d(t, 2), torch.Tensor)
assert_type(poolspec.max_pool2d(t, 2, return_indices=True), tuple[torch.Tensor, torch.Tensor])
assert_type(poolspec.adaptive_max_pool2d(t, 3, True), tuple[torch.Tensor, torch.Tensor])
assert_type(poolspec.fractional_max_pool2d(t, 2, output_size=3, return_indices=True),
            tuple[torch.Tensor, torch.Tensor])
flag: bool = bool(np.random.rand() > 0.5)
assert_type(poolspec.max_pool3d(t, 2, return_indices=flag), torch.Tensor | tuple[torch.Tensor, torch.Tensor])
assert_type(poolspec.grid_sample_backward(t, t, t), tuple[torch.Tensor, torch.Tensor])
assert_type(poolspec.max_unpool2d(t, t, 2), torch.Tensor)
