"""``scipy``'s image filters on poolspec's kernels: :mod:`poolspec.frontends.scipy.ndimage` mirrors
``scipy.ndimage`` (the window filters ``uniform_filter(1d)``, ``maximum_filter(1d)``, ``minimum_filter(1d)``)."""

from .._common import mirror
from . import ndimage

__all__ = ["ndimage"]
# other names are scipy's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "scipy", __all__)
