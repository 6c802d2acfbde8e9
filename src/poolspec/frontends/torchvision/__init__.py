"""torchvision's conventions on poolspec's kernels: :mod:`poolspec.frontends.torchvision.ops` mirrors
torchvision.ops' RoI functions (``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool``) and modules
(``RoIAlign``, ``RoIPool``, ``PSRoIAlign``, ``PSRoIPool``, ``MultiScaleRoIAlign``) on any array-API array, without
importing torch or torchvision where the caller does not use them."""

from .._common import mirror
from . import ops

__all__ = ["ops"]
# other names are torchvision's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "torchvision", __all__)
