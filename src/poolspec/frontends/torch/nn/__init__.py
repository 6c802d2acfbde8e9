"""``torch.nn``'s pooling and upsampling modules on poolspec's kernels: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``,
``AdaptiveAvgPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d/3d``, ``LPPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``,
``FractionalMaxPool2d/3d``, ``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``, with torch 2.13's
constructor arguments, defaults, attributes, ``extra_repr``/``repr`` and state dicts; ``forward`` calls poolspec's
function of the same name with the arguments torch.nn.functional gets. :mod:`.functional` has torch.nn.functional's
pools (poolspec's own functions). Every other name is torch.nn's (imported on first use).

Design: torch is not a dependency of poolspec, and poolspec never imports it. Each class is defined once, on a
plain base that has what a pooling module uses of ``torch.nn.Module`` (``__call__``, ``repr``, ``train``/``eval``,
buffers, ``state_dict``/``load_state_dict``), so that on NumPy, JAX, Dask, CuPy or array-api-strict nothing imports
torch. Where the caller has imported torch (``"torch" in sys.modules``), the module's classes are their torch twins,
built on first access: the same class body on ``torch.nn.Module`` (the plain base's methods replaced by torch's),
so that they are real ``torch.nn.Module`` subclasses that compose with torch (``nn.Sequential``, ``.to()``, hooks,
``torch.compile(fullgraph=True)``, ``torch.save``/pickle, state dicts). A class imported before torch was, and
instantiated after, gives a twin instance too; every twin is a subclass of its plain class
(``isinstance(m, MaxPool2d)`` holds either way). Modules built before torch is imported stay plain.

>>> import numpy as np
>>> from poolspec.frontends.torch import nn
>>> pool = nn.MaxPool2d(2, stride=2)
>>> pool
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> pool(np.arange(16.0).reshape(1, 1, 4, 4))[0, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

from ..._common import mirror as _mirror
from . import functional
from ._cards import CARDS
from .modules import CLASSES as _CLASSES
from .modules import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    Module,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    torch_aware,
)

__all__ = ["functional", *_CLASSES]
_ = CARDS  # the front-end cards (poolspec.spec.frontend_card("torch.nn.MaxPool2d"))
_PASS_ON, __dir__ = _mirror(__name__, "torch.nn", __all__)
# a class read from this module is its torch twin where torch is imported; other names are torch.nn's
__getattr__ = torch_aware(__name__, _CLASSES, _PASS_ON)

# the names the classes are defined with (their plain base included), for tools that read the module statically
_DEFINED = (Module, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
            AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d,
            LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, Upsample,
            UpsamplingBilinear2d, UpsamplingNearest2d)
