"""ONNX GridSample and AffineGrid (opset 20 to 22) on :func:`poolspec.grid_sample` and :func:`poolspec.affine_grid`.

>>> import numpy as np
>>> AffineGrid(np.array([[[2.0, 0, 0], [0, 1, 0]]]), [1, 1, 1, 2], align_corners=1)[0, 0].tolist()
[[-2.0, 0.0], [2.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

from ..._types import Array
from ...families.affine_grid.ops import affine_grid as _affine_grid
from ...families.grid_sample.ops import grid_sample as _grid_sample
from ._args import checked, host, text
from .cards import GRID_MODES


def GridSample(X: Array, grid: Array, *, align_corners: int = 0, mode: str = "linear",
               padding_mode: str = "zeros") -> Array:
    """ONNX GridSample: X sampled at the normalised positions ``grid``, as ``onnx`` opset 20 to 22.

    Parameters
    ----------
    X : array
        (N, C, H, W) or (N, C, D, H, W), non-empty spatial axes; float16, bfloat16, float32 or float64.
    grid : array
        (N, *O, n) positions in [-1, 1], ``grid[..., 0]`` along the last axis (W); X's dtype.
    align_corners : int, default 0
        1: -1 and 1 are the centres of the corner cells; 0: their outer edges.
    mode : str, default "linear"
        linear, nearest (round half to even) or cubic (4-D X only); opset 16's bilinear and bicubic too.
    padding_mode : str, default "zeros"
        zeros, border or reflection.

    Returns
    -------
    array
        (N, C, *O), X's namespace and dtype.

    Raises
    ------
    ValueError
        If a mode is unknown, X is not 4-D or 5-D, cubic comes with 5-D X, or grid does not fit X.
    TypeError
        If X or grid is not floating or align_corners is not 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> GridSample(np.arange(4.0).reshape(1, 1, 2, 2), np.zeros((1, 1, 1, 2)), align_corners=1)
    array([[[[1.5]]]])
    """
    checked("GridSample", locals())
    return _grid_sample(X, grid, mode=GRID_MODES[text(mode)], padding_mode=text(padding_mode),
                        align_corners=bool(align_corners))


def AffineGrid(theta: Array, size: Any, *, align_corners: int = 0) -> Array:
    """ONNX AffineGrid: the normalised sampling grid of the affine maps ``theta``, as ``onnx`` opset 20 to 22.

    Parameters
    ----------
    theta : array
        (N, 2, 3) for 2-d, (N, 3, 4) for 3-d; float16, bfloat16, float32 or float64.
    size : array or sequence of int
        (N, C, H, W) or (N, C, D, H, W), int64, read on the host; N must be theta's.
    align_corners : int, default 0
        1: the grid runs from -1 to 1 through the corner cells' centres; 0: (L - 1) / L of that.

    Returns
    -------
    array
        (N, H, W, 2) or (N, D, H, W, 3), theta's namespace and dtype; a size-1 axis samples at 0.

    Raises
    ------
    ValueError
        If size has not 4 or 5 entries, an entry is < 1, or theta does not fit it.
    TypeError
        If theta is not floating, size is not integer, or align_corners is not 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> AffineGrid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), np.array([1, 1, 1, 2]))[0, 0].tolist()
    [[-0.5, 0.0], [0.5, 0.0]]
    """
    checked("AffineGrid", locals())
    return _affine_grid(theta, host("AffineGrid", "size", size, "iu"), align_corners=bool(align_corners))
