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
# windows past kernels/maxes._UNROLL taps: on JAX their gradient loops over the covering windows and their
# tangent is one take_along_axis at the winners
LARGE_MAX = [
    ("max_pool1d", (1, 2, 40), dict(kernel_size=20, stride=1)),
    ("max_pool2d", (1, 1, 9, 9), dict(kernel_size=5, stride=1, padding=2)),
    ("max_pool2d", (1, 1, 12, 11), dict(kernel_size=5, stride=2, padding=2, dilation=2)),
    ("max_pool3d", (1, 1, 5, 5, 5), dict(kernel_size=3, stride=1, padding=1)),
    ("adaptive_max_pool2d", (1, 1, 13, 11), dict(output_size=(2, 2))),
]
CASES += [(f"large-{op}-{shape}", op, shape, args) for op, shape, args in LARGE_MAX]


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


def _hlo_ops(program, *args) -> int:
    return sum(1 for line in program.lower(*args).as_text().splitlines() if " = " in line)


# pairs of windows that take the same route: a loop over the covering windows (up to kernels/maxes._JAX_GATHERS
# of them per cell), or a sort of the winners (more)
@pytest.mark.parametrize("op, small, large", [
    ("max_pool2d", dict(kernel_size=5, stride=1, padding=2), dict(kernel_size=7, stride=1, padding=3)),
    ("max_pool2d", dict(kernel_size=9, stride=1, padding=4), dict(kernel_size=21, stride=1, padding=10)),
    ("max_pool3d", dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=4, stride=1, padding=2)),
    ("max_pool3d", dict(kernel_size=5, stride=1, padding=2), dict(kernel_size=7, stride=1, padding=3)),
    ("adaptive_max_pool2d", dict(output_size=(9, 8)), dict(output_size=(3, 2))),
])
def test_jax_max_backward_program_does_not_grow_with_the_window(jax, op, small, large):
    """The compiled VJP (and the gather at the winners, the tangent) of a max pool is the same program
    whatever the window's size: a loop over the covering windows or a sort of the winners, not one unrolled
    term per tap."""
    jnp = jax.numpy
    n = int(op[-2])
    x = jnp.asarray(np.random.default_rng(0).standard_normal((1, 2) + (24,) * n))
    sizes = []
    for args in (small, large):
        y, idx = getattr(poolspec, op)(x, **args, return_indices=True)
        bw = jax.jit(lambda g, t, args=args, idx=idx: getattr(poolspec, op + "_backward")(g, t, **args, indices=idx))
        tangent = jax.jit(lambda t, args=args: jax.jvp(lambda u: getattr(poolspec, op)(u, **args), (t,), (t,))[1])
        sizes.append((_hlo_ops(bw, y, x), _hlo_ops(tangent, x)))
        want = torch.autograd.grad(getattr(F, op)(xt := torch.from_numpy(np.array(x)).requires_grad_(), **args),
                                   xt, torch.from_numpy(np.asarray(y)))[0]
        np.testing.assert_allclose(np.asarray(bw(y, x)), want.numpy(), rtol=1e-12)
    (bw_small, _), (bw_large, _) = sizes
    assert bw_large <= bw_small + 4, sizes
