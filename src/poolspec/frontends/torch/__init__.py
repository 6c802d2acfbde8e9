"""torch's module conventions on poolspec's kernels: :mod:`poolspec.frontends.torch.nn` mirrors torch.nn's pooling
and upsampling modules (and, in ``nn.functional``, torch.nn.functional's pools), on any array-API array, without
importing torch where the caller does not use it."""

from .._common import mirror
from . import nn

__all__ = ["nn"]
# other names are torch's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "torch", __all__)
