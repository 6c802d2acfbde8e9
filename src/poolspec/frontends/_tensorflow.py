"""TensorFlow tensors through the front-ends (``tf.nn``, ``tf.image`` and Keras on its TensorFlow backend).

TensorFlow is not an array-API library, so a ``tf.Tensor`` is computed on the host: poolspec's NumPy kernels run
inside ``tf.numpy_function`` (eagerly and inside ``tf.function`` alike), and the gradient TensorFlow asks for is the
front-end call's own vector-Jacobian product, computed through poolspec's deterministic torch bindings (or its JAX
ones where torch is not installed). First order only: TensorFlow cannot differentiate the gradient again."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

# the rule each TensorFlow-facing card states
NOTE = ("TensorFlow tensors and variables are taken too (eagerly and inside tf.function, unknown batch sizes "
        "included): computed on the host by poolspec's NumPy kernels in tf.numpy_function, the gradient by "
        "poolspec's deterministic torch bindings (JAX's where torch is not installed), first order; bfloat16 "
        "tensors are refused (NumPy has no bfloat16)")


def is_tensorflow(x: Any) -> bool:
    """Whether ``x`` is a TensorFlow tensor or variable (only possible once TensorFlow is imported)."""
    tf = sys.modules.get("tensorflow")
    if tf is None or not hasattr(tf, "Tensor"):
        return False
    return isinstance(x, (tf.Tensor, tf.Variable))


def _outputs(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, tuple) else (result,)


def _vjp(fn: Callable[[Any], Any], a: np.ndarray, cotangents: tuple[np.ndarray, ...]) -> np.ndarray:
    """d<fn(a), cotangents>/da through poolspec's torch bindings, else its JAX ones (float outputs only)."""
    if importlib.util.find_spec("torch") is not None:
        import torch

        t = torch.from_numpy(np.array(a)).requires_grad_(True)
        pairs = [(o, torch.from_numpy(np.array(g))) for o, g in zip(_outputs(fn(t)), cotangents)
                 if o.is_floating_point()]
        (grad,) = torch.autograd.grad([o for o, _ in pairs], [t], [g for _, g in pairs], allow_unused=True)
        return np.zeros_like(a) if grad is None else grad.detach().numpy()
    if importlib.util.find_spec("jax") is not None:
        import jax

        if a.dtype == np.float64 and not jax.config.read("jax_enable_x64"):
            raise TypeError("the gradient of a float64 TensorFlow tensor through poolspec's JAX bindings needs "
                            "jax_enable_x64 (or torch installed)")

        floating: list[bool] = []  # which outputs are floats, learnt while jax.vjp traces the call once

        def floats(x: Any) -> tuple[Any, ...]:
            outs = _outputs(fn(x))
            floating[:] = [jax.numpy.issubdtype(o.dtype, jax.numpy.floating) for o in outs]
            return tuple(o for o, f in zip(outs, floating) if f)

        _, pullback = jax.vjp(floats, jax.numpy.asarray(a))
        return np.asarray(pullback(tuple(g for g, f in zip(cotangents, floating) if f))[0])
    raise RuntimeError("the gradient of a TensorFlow tensor through poolspec's front-ends is computed by poolspec's "
                       "torch or JAX bindings: install torch or jax")


def on_tensorflow(function: str, fn: Callable[[Any], Any], x: Any) -> Any:
    """``fn`` (a front-end call on one array, keeping its rank) applied to the TensorFlow tensor ``x``: the
    results are TensorFlow tensors, differentiable once with respect to ``x``."""
    tf = sys.modules["tensorflow"]
    x = tf.convert_to_tensor(x)
    if x.dtype == tf.bfloat16:
        raise TypeError(f"{function}: a bfloat16 TensorFlow tensor: the host bridge computes in NumPy, which has "
                        "no bfloat16 (cast to float32 first)")
    dtype = x.dtype.as_numpy_dtype
    known = [d if d is not None else 1 for d in x.shape.as_list()] if x.shape.rank is not None else None
    if known is None:
        raise ValueError(f"{function}: a TensorFlow tensor of unknown rank: the front-ends need the rank")

    # plain Python for TensorFlow: autograph, converting what a tf.function calls, would rewrite poolspec
    @tf.autograph.experimental.do_not_convert
    def host(a: np.ndarray) -> list[np.ndarray]:
        return [np.asarray(o) for o in _outputs(fn(np.asarray(a)))]

    @tf.autograph.experimental.do_not_convert
    def host_vjp(a: np.ndarray, *cotangents: np.ndarray) -> np.ndarray:
        return _vjp(fn, np.asarray(a), cotangents).astype(dtype, copy=False)

    @tf.custom_gradient
    def run(t: Any) -> Any:
        if tf.executing_eagerly():
            outs = [tf.convert_to_tensor(o) for o in host(t.numpy())]
        else:
            # dtypes and static sizes from a call on zeros (an unknown size stays unknown in the result)
            probe = host(np.zeros(known, dtype))
            outs = tf.numpy_function(host, [t], [tf.as_dtype(p.dtype) for p in probe], stateful=False)
            for o, p in zip(outs, probe):
                o.set_shape([None if d is None else pd for d, pd in zip(t.shape.as_list(), p.shape)])

        def grad(*cotangents: Any) -> Any:
            g = tf.numpy_function(host_vjp,
                                  [t, *[tf.zeros_like(o) if c is None else c for o, c in zip(outs, cotangents)]],
                                  t.dtype, stateful=False)
            g.set_shape(t.shape)
            return g

        return (outs[0] if len(outs) == 1 else tuple(outs)), grad

    return run(x)
