"""``flax``'s pooling conventions on poolspec's kernels: :mod:`poolspec.frontends.flax.linen` mirrors the
pooling functions of ``flax.linen`` (``max_pool``, ``avg_pool``, ``min_pool``, ``pool``)."""
