"""Keras 3 (``keras.ops``, ``keras.ops.image``) on poolspec's kernels: the pools and ``image.resize`` with the
names, signatures, defaults and numerics of Keras 3.15 on its JAX backend (``from poolspec.frontends.keras import
ops`` in place of ``from keras import ops``)."""

import sys

from .._common import mirror
from . import ops

__all__ = ["ops"]
# other names are keras's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "keras", __all__)

# Keras is here already: register the operation a saved functional model names, so that it loads
if sys.modules.get("keras") is not None:
    from . import _operation  # noqa: F401
