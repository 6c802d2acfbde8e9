"""TensorFlow's conventions on poolspec's kernels: ``poolspec.frontends.tf.nn`` (the ``tf.nn`` pools and
``max_pool_with_argmax``) and ``poolspec.frontends.tf.image`` (``tf.image.resize``), with TensorFlow 2.21's
names, signatures, defaults, layouts and numerics."""
