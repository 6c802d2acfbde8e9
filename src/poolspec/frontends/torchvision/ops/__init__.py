"""``torchvision.ops``' RoI functions and modules on poolspec's kernels: ``roi_align``, ``roi_pool``,
``ps_roi_align``, ``ps_roi_pool``, and the module classes ``RoIAlign``, ``RoIPool``, ``PSRoIAlign``, ``PSRoIPool``
and ``MultiScaleRoIAlign`` (torchvision 0.29's constructor arguments, attributes and ``repr``;
:mod:`.poolers` has its ``LevelMapper``). Every other name is torchvision.ops' (imported on first use).

The functions take any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) and check the boxes as
torchvision's ``check_roi_boxes_shape`` does (its AssertionError and IndexError as ValueError, naming the
argument); the classes are plain classes on other arrays and ``torch.nn.Module`` twins where the caller has
imported torch, as :mod:`poolspec.frontends.torch.nn`'s (torch and torchvision are never imported here).

>>> import numpy as np
>>> from poolspec.frontends.torchvision import ops
>>> ops.roi_pool(np.arange(16.0).reshape(1, 1, 4, 4), [np.array([[0.0, 0.0, 3.0, 3.0]])], 1).ravel().tolist()
[15.0]
"""

from __future__ import annotations

from ..._common import mirror as _mirror
from ...torch.nn.modules import torch_aware
from . import poolers
from ._cards import CARDS
from ._functions import ps_roi_align, ps_roi_pool, roi_align, roi_pool
from ._modules import PSRoIAlign, PSRoIPool, RoIAlign, RoIPool
from .poolers import MultiScaleRoIAlign

FUNCTIONS = ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool")
CLASSES = ("RoIAlign", "RoIPool", "PSRoIAlign", "PSRoIPool", "MultiScaleRoIAlign")
__all__ = [*FUNCTIONS, *CLASSES]
_ = CARDS, poolers  # the front-end cards (poolspec.spec.frontend_card("torchvision.ops.roi_align"))

# the functions are documented and doctested as this module's own (poolspec.frontends.torchvision.ops.roi_align)
for _name in FUNCTIONS:
    globals()[_name].__module__ = __name__
del _name

_PASS_ON, __dir__ = _mirror(__name__, "torchvision.ops", __all__)
# a class read from this module is its torch twin where torch is imported; other names are torchvision.ops'
__getattr__ = torch_aware(__name__, CLASSES, _PASS_ON)

# the names the classes are defined with, for tools that read the module statically
_DEFINED = (roi_align, roi_pool, ps_roi_align, ps_roi_pool, RoIAlign, RoIPool, PSRoIAlign, PSRoIPool,
            MultiScaleRoIAlign)
