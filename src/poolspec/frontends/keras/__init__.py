"""Keras 3 (``keras.ops``, ``keras.ops.image``) on poolspec's kernels: the pools and ``image.resize`` with the
names, signatures, defaults and numerics of Keras 3.15 on its JAX backend (``from poolspec.frontends.keras import
ops`` in place of ``from keras import ops``)."""
