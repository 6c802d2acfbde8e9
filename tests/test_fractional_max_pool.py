"""fractional_max_pool2d/3d against torch 2.13 on every installed backend: given the same samples, the same
windows, values and indices (random configurations with ties, NaN, -inf and dyadic samples, batched and
unbatched, output_size and output_ratio), the explicit backward, torch's draw when samples are omitted,
autograd to second order, torch.func and JAX transforms, and the argument checks."""

from __future__ import annotations

import contextlib
import zlib

import numpy as np
import pytest

import poolspec
from poolspec.bench_counts import as_on_a_gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _config(seed: int, n: int):
    rng = np.random.default_rng(seed)
    batched = rng.random() < 0.75
    S = tuple(int(v) for v in rng.integers(2, 9 if n == 2 else 6, n))
    k = tuple(int(rng.integers(1, s + 1 - (n == 3))) for s in S)
    O = tuple(max(1, int(rng.integers(1, s - kk + 2 - (n == 3)))) for s, kk in zip(S, k))
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    x = np.round(rng.standard_normal(((N,) if batched else ()) + (C,) + S) * 2) / 2  # many ties
    kind = rng.integers(0, 4)
    if kind == 1:
        x[rng.random(x.shape) < 0.15] = np.nan
    elif kind == 2:
        x[rng.random(x.shape) < 0.3] = -np.inf
    u = rng.random((N if batched else 1, C, n))
    if rng.random() < 0.4:
        u = np.round(u * 8) / 8  # window starts on exact products
    return rng, x, k, O, u


CONFIGS = [(n, seed) for n in (2, 3) for seed in range(12)]


@pytest.mark.parametrize("gpu_paths", [False, True], ids=["cpu-paths", "gpu-paths"])
@pytest.mark.parametrize("n,seed", CONFIGS)
def test_fractional_max_pool_matches_torch(backend, errors, n, seed, gpu_paths):
    """On the CPU's paths and on those a GPU takes (every window at once, the gradient from each window's
    neighbours: the same terms summed in the backend's order)."""
    if backend.name == "jax" and seed % 3:
        pytest.skip("JAX runs a third of the configurations (compile time)")
    if gpu_paths and backend.name not in ("numpy", "torch"):
        pytest.skip("the launch-bound paths are those of NumPy-like and torch arrays")
    with as_on_a_gpu() if gpu_paths else contextlib.nullcontext():
        _matches_torch(backend, errors, n, seed, gpu_paths)


def _matches_torch(backend, errors, n, seed, gpu_paths):
    rng, x, k, O, u = _config(zlib.crc32(f"frac{n}-{seed}".encode()), n)
    args = dict(kernel_size=k, output_size=O) if seed % 4 else \
        dict(kernel_size=k, output_ratio=tuple(min(0.99, (o + 0.5) / s) for o, s in zip(O, x.shape[-n:])))
    xt = torch.from_numpy(x).requires_grad_()
    fn = getattr(F, f"fractional_max_pool{n}d")
    if "output_ratio" in args and args["output_size" if False else "output_ratio"] is not None:
        O = tuple(int(s * r) for s, r in zip(x.shape[-n:], args["output_ratio"]))
        if any(o + kk - 1 > s - (n == 3) or o < 1 for o, kk, s in zip(O, k, x.shape[-n:])):
            pytest.skip("ratio gives no valid output")
    want, want_i = fn(xt, **args, return_indices=True, _random_samples=torch.from_numpy(u))
    go = rng.standard_normal(tuple(want.shape))
    (want_g,) = torch.autograd.grad(want, xt, torch.from_numpy(go))
    xb, ub = backend.asarray(x), backend.asarray(u)
    got, got_i = getattr(poolspec, f"fractional_max_pool{n}d")(xb, **args, return_indices=True, _random_samples=ub)
    errors.record(backend.name, f"fractional_max_pool{n}d", "float64", np.nan_to_num(backend.to_numpy(got)),
                  np.nan_to_num(want.detach().numpy()))
    np.testing.assert_array_equal(backend.to_numpy(got_i), want_i.numpy())
    np.testing.assert_array_equal(backend.to_numpy(got), want.detach().numpy())  # a max is exact
    backward = getattr(poolspec, f"fractional_max_pool{n}d_backward")
    g = backward(backend.asarray(go), xb, **args, _random_samples=ub)
    np.testing.assert_allclose(backend.to_numpy(g), want_g.numpy(), rtol=1e-13, atol=1e-13)
    g2 = backward(backend.asarray(go), xb, **args, indices=got_i)
    if gpu_paths:  # given only indices, the sorted sums (another order)
        np.testing.assert_allclose(backend.to_numpy(g2), backend.to_numpy(g), rtol=1e-13, atol=1e-13)
    else:
        np.testing.assert_array_equal(backend.to_numpy(g2), backend.to_numpy(g))
    np.testing.assert_array_equal(backend.to_numpy(xb), x)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fractional_max_pool_lower_precision(backend, dtype):
    """Window starts computed in the input's dtype, as torch does (float32 products can move a start)."""
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 37, 23)).astype(np.float32)
    u = rng.random((2, 3, 2)).astype(np.float32)
    tdtype = getattr(torch, dtype)
    want, want_i = F.fractional_max_pool2d(torch.from_numpy(x).to(tdtype), (3, 2), output_size=(11, 13),
                                           return_indices=True, _random_samples=torch.from_numpy(u).to(tdtype))
    got, got_i = poolspec.fractional_max_pool2d(backend.asarray(x, dtype), (3, 2), output_size=(11, 13),
                                                return_indices=True, _random_samples=backend.asarray(u, dtype))
    np.testing.assert_array_equal(backend.to_numpy(got_i), want_i.numpy())
    np.testing.assert_array_equal(backend.to_numpy(got).astype(np.float32), want.float().numpy())


def test_torch_draw_reproduces_torchs_windows():
    """Without samples, poolspec draws on torch exactly as torch does: the same seed, the same output."""
    x = torch.randn(2, 3, 11, 9, dtype=torch.float64)
    torch.manual_seed(5)
    want = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.6), return_indices=True)
    torch.manual_seed(5)
    got = poolspec.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.6), return_indices=True)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    x3 = torch.randn(3, 7, 7, 7)
    torch.manual_seed(6)
    want = F.fractional_max_pool3d(x3, 2, output_size=4)
    torch.manual_seed(6)
    assert torch.equal(poolspec.fractional_max_pool3d(x3, 2, output_size=4), want)


def test_host_and_jax_draws_are_seeded(backend):
    x = backend.asarray(np.random.default_rng(0).standard_normal((2, 3, 9, 9)))
    if backend.name == "torch":
        pytest.skip("torch draws from torch's generator (test_torch_draw_reproduces_torchs_windows)")
    a = poolspec.fractional_max_pool2d(x, 2, output_size=4, rng=7)
    b = poolspec.fractional_max_pool2d(x, 2, output_size=4, rng=7)
    c = poolspec.fractional_max_pool2d(x, 2, output_size=4, rng=8)
    np.testing.assert_array_equal(backend.to_numpy(a), backend.to_numpy(b))
    assert not np.array_equal(backend.to_numpy(a), backend.to_numpy(c))
    u = np.random.default_rng(7).random((2, 3, 2))
    np.testing.assert_array_equal(backend.to_numpy(a), backend.to_numpy(
        poolspec.fractional_max_pool2d(x, 2, output_size=4, _random_samples=backend.asarray(u))))


def test_jax_key_draw_under_jit():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = jax.numpy.asarray(np.random.default_rng(0).standard_normal((1, 2, 9, 9)))
    f = jax.jit(lambda x, key: poolspec.fractional_max_pool2d(x, 2, output_size=4, rng=key))
    key = jax.random.key(3)
    u = jax.random.uniform(key, (1, 2, 2), dtype=x.dtype)
    np.testing.assert_array_equal(np.asarray(f(x, key)),
                                  np.asarray(poolspec.fractional_max_pool2d(x, 2, output_size=4, _random_samples=u)))
    with pytest.raises(ValueError, match="under jax.jit pass rng"):
        jax.jit(lambda x: poolspec.fractional_max_pool2d(x, 2, output_size=4))(x)


def test_torch_autograd_and_transforms():
    """autograd to second order (the backward of the backward gathers at the winners), gradcheck,
    torch.func vmap / grad / jacrev / jacfwd (forward mode, which torch's op lacks) against torch."""
    tf = torch.func
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.standard_normal((2, 3, 7, 8))).requires_grad_()
    u = torch.from_numpy(rng.random((2, 3, 2)))
    args = dict(kernel_size=(3, 2), output_size=(4, 5), _random_samples=u)
    ours = lambda t: poolspec.fractional_max_pool2d(t, **args)  # noqa: E731
    theirs = lambda t: F.fractional_max_pool2d(t, **args)  # noqa: E731
    v = torch.from_numpy(rng.standard_normal((2, 3, 4, 5)))
    results = []
    for fn in (theirs, ours):
        (g,) = torch.autograd.grad((fn(x) * v).sum(), x, create_graph=True)
        (gg,) = torch.autograd.grad((g * x.detach()).sum(), x, allow_unused=True, materialize_grads=True)
        results.append((g.detach(), gg))
    for a, b in zip(*results):
        assert torch.allclose(a, b, rtol=1e-13, atol=1e-13)
    assert torch.autograd.gradcheck(ours, (x,))
    xs = x.detach()
    jr = tf.jacrev(theirs)(xs)
    assert torch.allclose(tf.jacrev(ours)(xs), jr)
    assert torch.allclose(tf.jacfwd(ours)(xs), jr)
    assert torch.allclose(tf.vmap(ours)(torch.stack([xs, -xs])), torch.stack([theirs(xs), theirs(-xs)]))


def test_jax_transforms_and_no_scatter():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(9)
    xn, un = rng.standard_normal((1, 2, 6, 7)), rng.random((1, 2, 2))
    x, u = jax.numpy.asarray(xn), jax.numpy.asarray(un)
    args = dict(kernel_size=2, output_size=(3, 4))
    ours = lambda t: poolspec.fractional_max_pool2d(t, **args, _random_samples=u)  # noqa: E731
    jr = torch.func.jacrev(lambda t: F.fractional_max_pool2d(t, **args, _random_samples=torch.from_numpy(un)))(
        torch.from_numpy(xn)).numpy()
    np.testing.assert_allclose(np.asarray(jax.jacfwd(ours)(x)), jr)
    np.testing.assert_allclose(np.asarray(jax.jacrev(ours)(x)), jr)
    np.testing.assert_allclose(np.asarray(jax.hessian(lambda t: (ours(t) ** 2).sum())(x)).reshape(84, 84),
                               2 * jr.reshape(-1, 84).T @ jr.reshape(-1, 84))
    text = jax.jit(jax.grad(lambda t: (ours(t) ** 2).sum())).lower(x).as_text()
    assert "scatter" not in text


@pytest.mark.parametrize("shape,args,kind,match", [
    ((1, 2, 5, 5), dict(kernel_size=2), ValueError, "one of output_size and output_ratio"),
    ((1, 2, 5, 5), dict(kernel_size=4, output_size=3), ValueError, "kernel_size=4: is too large"),
    ((1, 2, 4, 4, 4), dict(kernel_size=2, output_size=3), ValueError, "kernel_size=2: is too large.*<"),
    ((1, 2, 5, 5), dict(kernel_size=0, output_size=3), ValueError, "kernel_size=0"),
    ((1, 2, 5, 5), dict(kernel_size=2, output_ratio=1.5), ValueError, "output_ratio=1.5"),
    ((1, 0, 5, 5), dict(kernel_size=2, output_size=2), ValueError, "dimension 1 is empty"),
])
def test_fractional_rejects(shape, args, kind, match):
    n = len(shape) - 2
    with pytest.raises(kind, match=match):
        getattr(poolspec, f"fractional_max_pool{n}d")(np.zeros(shape), **args)


def test_fractional_rejects_bad_samples():
    x = np.zeros((1, 2, 5, 5))
    with pytest.raises(ValueError, match=r"_random_samples.shape=\(1, 2, 3\)"):
        poolspec.fractional_max_pool2d(x, 2, output_size=3, _random_samples=np.zeros((1, 2, 3)))
    with pytest.raises(TypeError, match="_random_samples.dtype='float32'"):
        poolspec.fractional_max_pool2d(x, 2, output_size=3, _random_samples=np.zeros((1, 2, 2), np.float32))
    with pytest.raises(ValueError, match="samples must lie in"):
        poolspec.fractional_max_pool2d(x, 2, output_size=3, _random_samples=np.full((1, 2, 2), 1.5))
    with pytest.raises(ValueError, match="pass the forward's _random_samples or its indices"):
        poolspec.fractional_max_pool2d_backward(np.zeros((1, 2, 3, 3)), x, 2, output_size=3)


@pytest.mark.parametrize("bad, kind, match", [(25, ValueError, r"indices must lie in \[0, 25\)"),
                                               (-1, ValueError, r"indices must lie in \[0, 25\)"),
                                               (1.0, TypeError, "indices.dtype='float64': must be an integer")])
def test_fractional_backward_rejects_foreign_indices(backend, bad, kind, match):
    """Indices given to the backward in place of the samples are flat positions in the plane: an integer dtype,
    and (where their values are read before computing: not in Dask's lazy graphs) within the plane."""
    if backend.name == "dask" and kind is ValueError:
        pytest.skip("Dask's indices are not read before computing")
    x = backend.asarray(np.arange(25.0).reshape(1, 1, 5, 5))
    idx = backend.asarray(np.full((1, 1, 2, 2), bad, dtype=np.int64 if kind is ValueError else np.float64))
    with pytest.raises(kind, match=match):
        poolspec.fractional_max_pool2d_backward(backend.asarray(np.ones((1, 1, 2, 2))), x, 2, output_size=2,
                                                indices=idx)
