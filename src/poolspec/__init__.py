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
from .families import public_names
from .families.adaptive_avg_pool.ops import *  # noqa: F403
from .families.adaptive_max_pool.ops import *  # noqa: F403
from .families.affine_grid.ops import *  # noqa: F403
from .families.avg_pool.ops import *  # noqa: F403
from .families.fractional_max_pool.ops import *  # noqa: F403
from .families.grid_sample.ops import *  # noqa: F403
from .families.interpolate.ops import *  # noqa: F403
from .families.lp_pool.ops import *  # noqa: F403
from .families.max_pool.ops import *  # noqa: F403
from .families.max_unpool.ops import *  # noqa: F403
from .spec import infer_arguments, output_shape

__version__ = "0.1.0"

# the public functions are what each family's ops.py declares in its __all__, star-imported above (a new
# family adds its line there)
__all__ = ["__version__", "spec", "output_shape", "infer_arguments", "set_eager_fusion", *public_names()]


def __getattr__(name: str) -> Any:
    """``poolspec.conformance`` (and ``poolspec.export``) on first use, as a failure message's
    ``poolspec.conformance.case(id)`` is written: not imported with the ops, whose import stays light."""
    if name in ("conformance", "export"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'poolspec' has no attribute {name!r}")
