"""Other libraries' conventions on poolspec's kernels: each module mirrors a library's own path, function
names and signatures, so that changing the import prefix is the whole port.

============================================  =============================================================
``poolspec.frontends.keras.ops``              ``max_pool``, ``average_pool``, ``adaptive_*_pool``
``poolspec.frontends.keras.ops.image``        ``resize``
``poolspec.frontends.jax.image``              ``resize``, ``scale_and_translate``
``poolspec.frontends.flax.linen``             ``max_pool``, ``avg_pool``, ``min_pool``, ``pool``
``poolspec.frontends.tf.nn``                  ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``max_pool_with_argmax``
``poolspec.frontends.tf.image``               ``resize``, ``crop_and_resize``
``poolspec.frontends.onnx``                   one function per ONNX operator (pools, Resize, RoiAlign, ...)
``poolspec.frontends.torch.nn``               ``MaxPool1d/2d/3d``, ``AvgPool*``, ``Adaptive*Pool*``, ``LPPool*``,
                                              ``MaxUnpool*``, ``FractionalMaxPool2d/3d``, ``Upsample``,
                                              ``UpsamplingNearest2d``, ``UpsamplingBilinear2d`` (module classes)
``poolspec.frontends.torch.nn.functional``    torch.nn.functional's pools, ``interpolate``, ``grid_sample``, ...
``poolspec.frontends.torchvision.ops``        ``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool``,
                                              ``RoIAlign``, ``RoIPool``, ``PSRoIAlign``, ``PSRoIPool``,
                                              ``MultiScaleRoIAlign`` (module classes, as torch.nn's)
``poolspec.frontends.scipy.ndimage``          ``uniform_filter(1d)``, ``maximum_filter(1d)``, ``minimum_filter(1d)``
============================================  =============================================================

They take any array-API array (NumPy, CuPy, torch, JAX, Dask, array-api-strict), not only the mirrored
library's, and differentiate through poolspec's deterministic bindings on torch and JAX; TensorFlow tensors go
through a host bridge (NumPy kernels in ``tf.numpy_function``, first-order gradients), Keras' symbolic tensors get
symbolic results; torch.nn's module classes are ``torch.nn.Module`` subclasses where torch is imported and plain
classes (never importing torch) elsewhere. Every other name of a mirrored module is the library's own (imported on
first use). Each function (and module class) has a card (``poolspec.spec.frontend_card``) stating the library's
rules as established against it.

>>> import numpy as np
>>> from poolspec.frontends.tf import nn
>>> nn.max_pool2d(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID")[0, :, :, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""
