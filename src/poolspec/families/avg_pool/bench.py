"""avg_pool's benchmark peers: ``lax.reduce_window(add)`` over the window count on JAX, ONNX's AveragePool and
scikit-image's ``block_reduce`` (where the windows tile the plane) on NumPy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers, reduce_window_args


def _jax_avg_pool(jax: Any, case: BenchCase) -> tuple[str, Callable[..., Any]]:
    jnp, lax = jax.numpy, jax.lax
    dims, strides, pads = reduce_window_args(case)
    if case.args.get("count_include_pad", True):
        count = math.prod(dims)
        return "lax.reduce_window(add) / k^n", lambda x: lax.reduce_window(x, 0.0, lax.add, dims, strides, pads) / count
    return ("lax.reduce_window(add) / window count (flax avg_pool, count_include_pad=False)",
            lambda x: lax.reduce_window(x, 0.0, lax.add, dims, strides, pads)
            / lax.reduce_window(jnp.ones(x.shape[2:], x.dtype), 0.0, lax.add, dims[2:], strides[2:], pads[2:]))


PEERS = Peers(jax=_jax_avg_pool, onnx=("AveragePool", True), block_mean=True)
