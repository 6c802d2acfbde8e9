"""poolspec: pooling and resampling written once against the Python array API standard.

Runs on NumPy, CuPy, torch, JAX, Dask and array-api-strict arrays with torch's numerics, explicit
``*_backward`` functions on every backend, and deterministic autodiff bindings on torch and JAX.

>>> import numpy as np, poolspec
>>> poolspec.avg_pool2d(np.arange(16.0).reshape(1, 4, 4), 2)
array([[[ 2.5,  4.5],
        [10.5, 12.5]]])
"""

from __future__ import annotations

from typing import Any

from . import spec
from .autodiff.torch_fused import set_eager_fusion
from .ops.avg_pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool1d_backward,
    adaptive_avg_pool2d,
    adaptive_avg_pool2d_backward,
    adaptive_avg_pool3d,
    adaptive_avg_pool3d_backward,
    avg_pool1d,
    avg_pool1d_backward,
    avg_pool2d,
    avg_pool2d_backward,
    avg_pool3d,
    avg_pool3d_backward,
)
from .ops.fractional_max_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_backward,
    fractional_max_pool3d,
    fractional_max_pool3d_backward,
)
from .ops.grid_sample import affine_grid, affine_grid_backward, grid_sample, grid_sample_backward
from .ops.interpolate import interpolate, interpolate_backward
from .ops.lp_pool import (
    lp_pool1d,
    lp_pool1d_backward,
    lp_pool2d,
    lp_pool2d_backward,
    lp_pool3d,
    lp_pool3d_backward,
)
from .ops.max_pool import (
    adaptive_max_pool1d,
    adaptive_max_pool1d_backward,
    adaptive_max_pool2d,
    adaptive_max_pool2d_backward,
    adaptive_max_pool3d,
    adaptive_max_pool3d_backward,
    max_pool1d,
    max_pool1d_backward,
    max_pool2d,
    max_pool2d_backward,
    max_pool3d,
    max_pool3d_backward,
)
from .ops.max_unpool import (
    max_unpool1d,
    max_unpool1d_backward,
    max_unpool2d,
    max_unpool2d_backward,
    max_unpool3d,
    max_unpool3d_backward,
)
from .spec import infer_arguments, output_shape

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "spec",
    "output_shape",
    "infer_arguments",
    "set_eager_fusion",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "avg_pool1d_backward",
    "avg_pool2d_backward",
    "avg_pool3d_backward",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_avg_pool1d_backward",
    "adaptive_avg_pool2d_backward",
    "adaptive_avg_pool3d_backward",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_backward",
    "max_pool2d_backward",
    "max_pool3d_backward",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_backward",
    "adaptive_max_pool2d_backward",
    "adaptive_max_pool3d_backward",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "max_unpool1d_backward",
    "max_unpool2d_backward",
    "max_unpool3d_backward",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "lp_pool1d_backward",
    "lp_pool2d_backward",
    "lp_pool3d_backward",
    "interpolate",
    "interpolate_backward",
    "grid_sample",
    "grid_sample_backward",
    "affine_grid",
    "affine_grid_backward",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_backward",
    "fractional_max_pool3d_backward",
]


def __getattr__(name: str) -> Any:
    """``poolspec.conformance`` (and ``poolspec.export``) on first use, as a failure message's
    ``poolspec.conformance.case(id)`` is written: not imported with the ops, whose import stays light."""
    if name in ("conformance", "export"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'poolspec' has no attribute {name!r}")
