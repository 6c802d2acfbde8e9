"""TensorFlow's conventions on poolspec's kernels: ``poolspec.frontends.tf.nn`` (the ``tf.nn`` pools and
``max_pool_with_argmax``) and ``poolspec.frontends.tf.image`` (``tf.image.resize``), with TensorFlow 2.21's
names, signatures, defaults, layouts and numerics."""

from .._common import mirror
from . import image, nn

__all__ = ["nn", "image"]
# other names are tensorflow's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "tensorflow", __all__)
