"""``jax``'s pooling and resampling conventions on poolspec's kernels: :mod:`poolspec.frontends.jax.image`
mirrors ``jax.image`` (``resize``, ``scale_and_translate``, ``ResizeMethod``)."""
