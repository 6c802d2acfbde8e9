"""poolspec: pooling and resampling written once against the Python array API standard.

Runs on NumPy, CuPy, torch, JAX, Dask and array-api-strict arrays with torch's numerics, explicit
``*_backward`` functions on every backend, and deterministic autodiff bindings on torch and JAX.

>>> import numpy as np, poolspec
>>> poolspec.avg_pool2d(np.arange(16.0).reshape(1, 4, 4), 2)
array([[[ 2.5,  4.5],
        [10.5, 12.5]]])
"""

from __future__ import annotations

import importlib
from typing import Any

from . import registry, spec
from ._version import __version__
from .autodiff.torch_fused import set_eager_fusion
from .families import all_families
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
from .families.roi_align.ops import *  # noqa: F403
from .families.roi_pool.ops import *  # noqa: F403
from .spec import infer_arguments, output_shape

# the public functions are what each family's ops.py declares in its __all__, star-imported above (a new
# family adds its line there); the registry, which sits below them, is handed them here
_PUBLIC = [name for family in all_families()
           for name in importlib.import_module(f"{__name__}.families.{family.name}.ops").__all__]
_MISSING = [name for name in _PUBLIC if name not in globals()]
if _MISSING:
    raise ImportError(f"poolspec: {', '.join(_MISSING)} declared by a family's ops.py but not imported: add its "
                      "star-import line (from .families.<family>.ops import *) to poolspec/__init__.py")
registry.bind({name: globals()[name] for name in _PUBLIC})
__all__ = ["__version__", "spec", "output_shape", "infer_arguments", "set_eager_fusion", *_PUBLIC]


def __getattr__(name: str) -> Any:
    """``poolspec.conformance`` (and ``poolspec.export``) on first use, as a failure message's
    ``poolspec.conformance.case(id)`` is written: not imported with the ops, whose import stays light."""
    if name in ("conformance", "export"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'poolspec' has no attribute {name!r}")
