"""ONNX's pooling and resampling operators (opset 22 semantics), one function per operator, named as the operator:
inputs positional (an optional input as None), attributes as keyword arguments with ONNX's names and defaults.

Arrays are channels first (N, C, *spatial), as ONNX's. The pools map onto poolspec's pools with (low, high) pads,
Resize onto per-axis tap tables built on the host from ONNX's coordinate and coefficient rules, GridSample and
AffineGrid onto :func:`poolspec.grid_sample` and :func:`poolspec.affine_grid`. Where onnx's reference evaluator
and onnxruntime disagree, the ONNX specification (and the reference where it follows it) is the rule; each
function's card names the other's difference.

>>> import numpy as np
>>> from poolspec.frontends import onnx
>>> onnx.MaxPool(np.arange(16.0).reshape(1, 1, 4, 4), kernel_shape=[2, 2], strides=[2, 2])[0][0, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

from .cards import CARDS as CARDS  # the cards spec.frontends discovers here
from .pool import AveragePool, GlobalAveragePool, GlobalLpPool, GlobalMaxPool, LpPool, MaxPool, MaxUnpool
from .resize import Resize
from .roi import MaxRoiPool, RoiAlign
from .sampling import AffineGrid, GridSample

__all__ = ["AffineGrid", "AveragePool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "LpPool",
           "MaxPool", "MaxRoiPool", "MaxUnpool", "Resize", "RoiAlign"]

# the operators are documented and doctested as this module's own (poolspec.frontends.onnx.MaxPool)
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name


def __dir__() -> list[str]:
    return sorted(__all__)
