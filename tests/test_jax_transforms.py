"""JAX's forward and reverse transforms on every op family (jvp, linearize, jacfwd, jacrev, jit(grad), hessian,
a third-order gradient, vmap, vmap(grad)), against torch's native op under the matching torch.func transform
(float64, rtol 1e-10), and no scatter in any derivative's program up to the third order."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
from test_autodiff import CONFIGS, MAX_CONFIGS, UNPOOL_CONFIGS, _unpool_operands  # noqa: E402

from oracle import torch_fn  # noqa: E402

tf = torch.func
F = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop:UserWarning")


@pytest.fixture
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _first(fn):
    return lambda t: (lambda r: r[0] if isinstance(r, tuple) else r)(fn(t))


CASES = [(f"{op}-{args.get('mode', '')}-{shape}", op, (1,) + tuple(shape[1:]) if len(shape) > 3 else shape, args)
         for op, shape, args in CONFIGS + MAX_CONFIGS if args.get("mode") != "lanczos"]
CASES += [(f"{op}-{shape}", op, shape, args) for op, shape, args in UNPOOL_CONFIGS]


def _directional(fn, v):
    """t -> <fn(t), v>: a scalar whose gradient is one order higher."""
    return lambda t: (fn(t) * v).sum()


@pytest.mark.parametrize("name, op, shape, args", CASES, ids=[c[0] for c in CASES])
def test_jax_transforms_match_torch_func(jax, name, op, shape, args):
    jnp = jax.numpy
    if op.startswith("max_unpool"):
        values, idx = _unpool_operands(op, shape, args)
        ij, it = jnp.asarray(idx), torch.from_numpy(idx)
        ours = lambda t: getattr(poolspec, op)(t, ij, **args)  # noqa: E731
        native = lambda t: getattr(F, op)(t, it, **args)  # noqa: E731
        xs = values
    else:
        xs = np.random.default_rng(0).standard_normal(shape)
        ours, native = _first(lambda t: getattr(poolspec, op)(t, **args)), _first(torch_fn(op, args))
    vs = np.random.default_rng(4).standard_normal(xs.shape)
    x, v, xt, vt = jnp.asarray(xs), jnp.asarray(vs), torch.from_numpy(xs), torch.from_numpy(vs)
    loss, tloss = (lambda t: (ours(t) ** 3).sum()), (lambda t: (native(t) ** 3).sum())
    pairs = {
        "jvp": (jax.jvp(ours, (x,), (v,))[1], tf.jvp(native, (xt,), (vt,))[1]),
        "linearize": (jax.linearize(ours, x)[1](v), tf.jvp(native, (xt,), (vt,))[1]),
        "jacfwd": (jax.jacfwd(ours)(x), tf.jacfwd(native)(xt)),
        "jit(grad)": (jax.jit(jax.grad(loss))(x), tf.grad(tloss)(xt)),
        "hessian": (jax.hessian(loss)(x), tf.hessian(tloss)(xt)),
        "vmap(grad)": (jax.vmap(jax.grad(loss))(jnp.stack([x, 2 * x])),
                       tf.vmap(tf.grad(tloss))(torch.stack([xt, 2 * xt]))),
        "jacrev": (jax.jacrev(ours)(x), tf.jacrev(native)(xt)),
        "vmap": (jax.vmap(ours)(jnp.stack([x, 2 * x])), tf.vmap(native)(torch.stack([xt, 2 * xt]))),
        "third order": (jax.grad(_directional(_directional(jax.grad(loss), v), v))(x),
                        tf.grad(_directional(_directional(tf.grad(tloss), vt), vt))(xt)),
    }
    for what, (got, want) in pairs.items():
        np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=what)
    third = jax.grad(_directional(_directional(jax.grad(loss), v), v))
    for program in (jax.grad(loss), jax.hessian(loss), jax.jacfwd(ours), jax.jacrev(ours), third):
        assert "scatter" not in str(jax.make_jaxpr(program)(x))


SCANNED = {
    "bilinear": lambda t: poolspec.interpolate(t, size=(8, 8), mode="bilinear"),
    "adaptive_avg-nearest": lambda t: poolspec.interpolate(poolspec.adaptive_avg_pool2d(t, 3), size=(8, 8)),
    "max-bicubic": lambda t: poolspec.interpolate(poolspec.max_pool2d(t, 2), size=(8, 8), mode="bicubic"),
    "max-unpool": lambda t: poolspec.max_unpool2d(*poolspec.max_pool2d(t, 2, return_indices=True), 2),
}


@pytest.mark.parametrize("name", list(SCANNED))
def test_jax_scan_checkpoint_forward_and_reverse_agree(jax, name):
    """Inside lax.scan and jax.checkpoint: jit(grad) and jvp agree (<grad, v> = jvp(v)), with central finite
    differences, and the gradient's program holds no scatter."""
    jnp = jax.numpy
    op = SCANNED[name]

    def body(carry, xi):
        y = jax.checkpoint(op)(xi + carry)
        return y, (y ** 2).sum()

    def loss(x):
        return jax.lax.scan(body, jnp.zeros(x.shape[1:]), x)[1].sum()

    x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 2, 2, 8, 8)))
    v = jnp.asarray(np.random.default_rng(1).standard_normal(x.shape))
    g = jax.jit(jax.grad(loss))(x)
    t = jax.jvp(loss, (x,), (v,))[1]
    np.testing.assert_allclose(float(jnp.vdot(g, v)), float(t), rtol=1e-11)
    e = 1e-6
    np.testing.assert_allclose(float(t), float((loss(x + e * v) - loss(x - e * v)) / (2 * e)), rtol=1e-6)
    assert "scatter" not in str(jax.make_jaxpr(jax.grad(loss))(x))
