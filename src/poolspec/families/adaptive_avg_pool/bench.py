"""adaptive_avg_pool's benchmark peers: ``jnp.mean`` (output size 1) or antialiased linear resize on JAX, which
has no adaptive pool; ONNX's GlobalAveragePool and ``block_reduce`` at output size 1 on NumPy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers


def _jax_adaptive_avg_pool(jax: Any, case: BenchCase) -> tuple[str, Callable[..., Any]]:
    jnp, o, axes = jax.numpy, case.args["output_size"], tuple(range(2, len(case.shape)))
    if o == 1:
        names = ("D", "H", "W")[3 - len(axes):] if len(axes) > 1 else ("L",)
        return f"jnp.mean over {', '.join(names)}", lambda x: jnp.mean(x, axis=axes, keepdims=True)
    return ("jax.image.resize linear antialias (nearest equivalent: JAX has no adaptive pool)",
            lambda x: jax.image.resize(x, x.shape[:2] + (o,) * len(axes), "linear", antialias=True))


PEERS = Peers(jax=_jax_adaptive_avg_pool, global_mean=True)
