"""``jax``'s pooling and resampling conventions on poolspec's kernels: :mod:`poolspec.frontends.jax.image`
mirrors ``jax.image`` (``resize``, ``scale_and_translate``, ``ResizeMethod``)."""

from .._common import mirror
from . import image

__all__ = ["image"]
# other names are jax's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "jax", __all__)
