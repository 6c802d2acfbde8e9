"""``flax``'s pooling conventions on poolspec's kernels: :mod:`poolspec.frontends.flax.linen` mirrors the
pooling functions of ``flax.linen`` (``max_pool``, ``avg_pool``, ``min_pool``, ``pool``)."""

from .._common import mirror
from . import linen

__all__ = ["linen"]
# other names are flax's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "flax", __all__)
