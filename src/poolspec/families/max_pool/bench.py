"""max_pool's benchmark peers: ``lax.reduce_window(max)`` on JAX, ONNX's MaxPool on NumPy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers, reduce_window_args


def _jax_max_pool(jax: Any, case: BenchCase) -> tuple[str, Callable[..., Any]]:
    jnp, lax = jax.numpy, jax.lax
    dims, strides, pads = reduce_window_args(case)
    return "lax.reduce_window(max)", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, dims, strides, pads)


PEERS = Peers(jax=_jax_max_pool, onnx=("MaxPool", False))
