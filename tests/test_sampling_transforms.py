"""The transform matrix of the data-dependent ops (grid_sample, affine_grid, fractional_max_pool): every torch
and JAX transform their cards claim, on poolspec's op, against torch's native op (float64).

Each op is seen as f: R^n -> R^m of all its differentiable inputs at once (grid_sample: x and the grid,
flattened and concatenated). torch's native grid_sample and fractional_max_pool have no forward-mode AD, so the
references are built from reverse mode only: J = jacrev(native), second derivatives jacrev(jacrev(native)).
"""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional
tf = torch.func


def _grid(rng, shape):
    g = rng.uniform(-1.2, 1.2, shape)
    return np.where(np.abs(np.round(g * 8) - g * 8) < 1e-3, g + 1e-3, g)  # off the kinks


SAMPLES = np.random.default_rng(1).random((1, 2, 2))  # fractional_max_pool's windows, fixed


def _ops():
    """name -> (inputs, poolspec op, torch op), each op taking the inputs positionally."""
    rng = np.random.default_rng(0)
    x2, g2 = rng.standard_normal((1, 2, 3, 4)), _grid(rng, (1, 2, 3, 2))
    x3, g3 = rng.standard_normal((1, 1, 2, 3, 3)), _grid(rng, (1, 2, 1, 2, 3))
    theta = rng.standard_normal((2, 2, 3)) * 0.5
    xf, u = rng.standard_normal((1, 2, 6, 5)), torch.from_numpy(SAMPLES)
    bil = dict(mode="bilinear", padding_mode="zeros", align_corners=False)
    bic = dict(mode="bicubic", padding_mode="reflection", align_corners=True)
    tri = dict(mode="bilinear", padding_mode="border", align_corners=False)
    return {
        "grid_sample-bilinear-zeros": ((x2, g2), lambda a, g: poolspec.grid_sample(a, g, **bil),
                                       lambda a, g: F.grid_sample(a, g, **bil)),
        "grid_sample-bicubic-reflection": ((x2, g2), lambda a, g: poolspec.grid_sample(a, g, **bic),
                                           lambda a, g: F.grid_sample(a, g, **bic)),
        "grid_sample-3d-border": ((x3, g3), lambda a, g: poolspec.grid_sample(a, g, **tri),
                                  lambda a, g: F.grid_sample(a, g, **tri)),
        "affine_grid": ((theta,), lambda t: poolspec.affine_grid(t, (2, 1, 3, 4)),
                        lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False)),
        "fractional_max_pool2d": ((xf,), lambda a: poolspec.fractional_max_pool2d(a, 2, (3, 3), _random_samples=u),
                                  lambda a: F.fractional_max_pool2d(a, 2, (3, 3), _random_samples=u)),
    }


OPS = list(_ops())


def _flat(inputs, fn, lib="torch"):
    """f(z) with z all inputs flattened and concatenated; the flat output."""
    shapes = [a.shape for a in inputs]
    sizes = [int(np.prod(s)) for s in shapes]

    def f(z):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(z[start:start + size].reshape(shape))
            start += size
        return fn(*parts).reshape(-1)

    z = np.concatenate([a.reshape(-1) for a in inputs])
    return f, z


@pytest.fixture(scope="module")
def references():
    out = {}
    for name, (inputs, _, native) in _ops().items():
        f, z = _flat(inputs, native)
        zt = torch.from_numpy(z)
        out[name] = dict(z=z, y=f(zt).numpy(), J=tf.jacrev(f)(zt).numpy(),
                         H=tf.jacrev(tf.jacrev(lambda t, f=f: 0.5 * (f(t) ** 2).sum()))(zt).numpy())
    return out


TORCH = ["autograd-second-order", "forward_ad", "vmap", "grad", "jacrev", "jacfwd", "jvp", "hessian",
         "gradcheck", "gradgradcheck"]


@pytest.mark.parametrize("transform", TORCH)
@pytest.mark.parametrize("name", OPS)
def test_torch_transform(references, name, transform):
    inputs, ours, _ = _ops()[name]
    f, z = _flat(inputs, ours)
    ref = references[name]
    J, y = ref["J"], ref["y"]
    zt = torch.from_numpy(z)
    t = torch.from_numpy(np.linspace(-1, 1, z.size))

    def close(got, want):
        np.testing.assert_allclose(np.asarray(got.detach() if hasattr(got, "detach") else got), want,
                                   rtol=1e-10, atol=1e-11, err_msg=f"{name} {transform}")

    if transform == "autograd-second-order":
        zr = zt.clone().requires_grad_()
        (g,) = torch.autograd.grad(0.5 * (f(zr) ** 2).sum(), zr, create_graph=True)
        (h,) = torch.autograd.grad((g * t).sum(), zr)
        close(g, J.T @ y)
        close(h, ref["H"] @ t.numpy())
    elif transform == "forward_ad":
        import torch.autograd.forward_ad as fwad

        with fwad.dual_level():
            out = f(fwad.make_dual(zt, t))
            close(fwad.unpack_dual(out).tangent, J @ t.numpy())
    elif transform == "vmap":
        batch = torch.stack([zt, zt * 0.5, -zt])
        want = np.stack([references[name]["y"], *[_native_flat(name)(b).numpy() for b in batch[1:]]])
        close(tf.vmap(f)(batch), want)
    elif transform == "grad":
        close(tf.grad(lambda v: 0.5 * (f(v) ** 2).sum())(zt), J.T @ y)
    elif transform == "jacrev":
        close(tf.jacrev(f)(zt), J)
    elif transform == "jacfwd":
        close(tf.jacfwd(f)(zt), J)
    elif transform == "jvp":
        close(tf.jvp(f, (zt,), (t,))[1], J @ t.numpy())
    elif transform == "hessian":
        close(tf.hessian(lambda v: 0.5 * (f(v) ** 2).sum())(zt), ref["H"])
    elif transform == "gradcheck":
        assert torch.autograd.gradcheck(f, (zt.clone().requires_grad_(),))
    elif transform == "gradgradcheck":
        assert torch.autograd.gradgradcheck(f, (zt.clone().requires_grad_(),))


def _native_flat(name):
    inputs, _, native = _ops()[name]
    return _flat(inputs, native)[0]


JAX = ["jit", "grad", "grad-of-grad", "vmap", "jvp", "jacfwd", "jacrev", "hessian", "linearize", "scan"]


@pytest.mark.parametrize("transform", JAX)
@pytest.mark.parametrize("name", OPS)
def test_jax_transform(references, name, transform):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    inputs, ours, _ = _ops()[name]
    if name == "fractional_max_pool2d":
        samples = jnp.asarray(SAMPLES)  # the same windows, as a JAX array

        def ours(a):  # noqa: F811
            return poolspec.fractional_max_pool2d(a, 2, (3, 3), _random_samples=samples)

    f, z = _flat(inputs, ours)
    ref = references[name]
    J, y, H = ref["J"], ref["y"], ref["H"]
    z = jnp.asarray(z)
    t = jnp.asarray(np.linspace(-1, 1, z.size))

    def close(got, want):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-11, err_msg=f"{name} {transform}")

    loss = lambda v: 0.5 * (f(v) ** 2).sum()  # noqa: E731
    if transform == "jit":
        close(jax.jit(f)(z), y)
    elif transform == "grad":
        close(jax.grad(loss)(z), J.T @ y)
    elif transform == "grad-of-grad":
        close(jax.grad(lambda v: jnp.vdot(jax.grad(loss)(v), t))(z), H @ np.asarray(t))
    elif transform == "vmap":
        batch = jnp.stack([z, 0.5 * z, -z])
        want = np.stack([_native_flat(name)(torch.from_numpy(np.asarray(b))).numpy() for b in batch])
        close(jax.vmap(f)(batch), want)
    elif transform == "jvp":
        close(jax.jvp(f, (z,), (t,))[1], J @ np.asarray(t))
    elif transform == "jacfwd":
        close(jax.jacfwd(f)(z), J)
    elif transform == "jacrev":
        close(jax.jacrev(f)(z), J)
    elif transform == "hessian":
        close(jax.hessian(loss)(z), H)
    elif transform == "linearize":
        _, lin = jax.linearize(f, z)
        close(lin(t), J @ np.asarray(t))
    elif transform == "scan":
        def step(carry, scale):
            return carry + f(z * scale).sum(), f(z * scale)

        total, ys = jax.lax.scan(step, 0.0, jnp.asarray([1.0, -0.5]))
        want = np.stack([_native_flat(name)(torch.from_numpy(np.asarray(z * s))).numpy() for s in (1.0, -0.5)])
        close(ys, want)
        close(total, want.sum())

