"""grid_sample and affine_grid against torch 2.13 (float64, live) on every installed backend: every mode x
padding x align_corners in 2-d and 3-d, on random configurations full of exact ties (dyadic grid values land
on pixel centres and half-pixel points exactly, whatever the CPU), points far outside the image, border clips
and reflection folds; values, the explicit backward (both gradients), torch's double backward, the
transforms of both autodiff systems, determinism and the argument checks."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {"float64": (1e-12, 1e-13), "float32": (2e-5, 2e-5), "float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2)}
MODES = [(n, mode, pad, align) for n in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
         for pad in ("zeros", "border", "reflection") for align in (False, True) if not (n == 3 and mode == "bicubic")]
IDS = [f"{n}d-{m}-{p}-{'ac' if a else 'noac'}" for n, m, p, a in MODES]


def _grid(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform points in and around [-1, 1]; a quarter dyadic (k/8: exact pixel centres and half-pixel ties
    under both unnormalisations), some at -1/1 exactly, some far outside."""
    g = rng.uniform(-1.6, 1.6, shape)
    kind = rng.integers(0, 5, shape)
    g = np.where(kind == 0, np.round(g * 8) / 8, g)
    g = np.where(kind == 1, rng.choice([-1.0, 1.0], shape), g)
    g = np.where(kind == 2, rng.choice([-7.25, -3.0, 3.0, 9.125], shape), g)
    return g


def _config(seed: int, n: int):
    rng = np.random.default_rng(seed)
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    S = tuple(int(v) for v in rng.integers(1, 7 if n == 2 else 5, n))
    O = tuple(int(v) for v in rng.integers(1, 6 if n == 2 else 4, n))
    x = np.round(rng.standard_normal((N, C) + S) * 4) / 4  # ties in value too (equal neighbours)
    grid = _grid(rng, (N,) + O + (n,))
    return rng, x, grid


def _torch_reference(x, grid, go, **args):
    xt = torch.from_numpy(x).requires_grad_()
    gt = torch.from_numpy(grid).requires_grad_()
    out = F.grid_sample(xt, gt, **args)
    gx, gg = torch.autograd.grad(out, (xt, gt), torch.from_numpy(go))
    return out.detach().numpy(), gx.numpy(), gg.numpy()


def _close(backend, got, want, dtype, what):
    rtol, atol = TOL[dtype]
    got = backend.to_numpy(got).astype(np.float64)
    assert got.shape == want.shape, what
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=what)


def _skip_jax(backend, key: str, keep: int = 3) -> None:
    if backend.name == "jax" and zlib.crc32(key.encode()) % keep:
        pytest.skip(f"JAX runs 1 in {keep} of these configurations (compile time)")


@pytest.mark.parametrize("n,mode,pad,align", MODES, ids=IDS)
@pytest.mark.parametrize("seed", range(3))
def test_grid_sample_matches_torch(backend, errors, n, mode, pad, align, seed):
    _skip_jax(backend, f"{n}{mode}{pad}{align}{seed}")
    rng, x, grid = _config(zlib.crc32(f"{n}{mode}{pad}{align}{seed}".encode()), n)
    args = dict(mode=mode, padding_mode=pad, align_corners=align)
    want, want_gx, want_gg = _torch_reference(x, grid, go := rng.standard_normal(x.shape[:2] + grid.shape[1:-1]),
                                              **args)
    xb, gb = backend.asarray(x), backend.asarray(grid)
    out = poolspec.grid_sample(xb, gb, **args)
    errors.record(backend.name, "grid_sample", "float64", backend.to_numpy(out), want)
    _close(backend, out, want, "float64", "forward")
    gx, gg = poolspec.grid_sample_backward(backend.asarray(go), xb, gb, **args)
    _close(backend, gx, want_gx, "float64", "grad_x")
    _close(backend, gg, want_gg, "float64", "grad_grid")
    np.testing.assert_array_equal(backend.to_numpy(xb), x)  # inputs are never modified
    np.testing.assert_array_equal(backend.to_numpy(gb), grid)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_lower_precision(backend, mode, dtype):
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    _skip_jax(backend, f"{mode}{dtype}", 2)
    rng = np.random.default_rng(zlib.crc32(f"{mode}{dtype}".encode()))
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(np.float32)
    tdtype = getattr(torch, dtype)
    want = F.grid_sample(torch.from_numpy(x).to(tdtype), torch.from_numpy(grid).to(tdtype), mode=mode,
                         align_corners=False).float().numpy()
    out = poolspec.grid_sample(backend.asarray(x, dtype), backend.asarray(grid, dtype), mode=mode)
    assert str(out.dtype).endswith(dtype)
    # half precision: the grid's rounding moves the sampling points themselves, so compare at the points
    # torch saw: float32 values of the rounded grid through the float64 reference
    g64 = torch.from_numpy(grid).to(getattr(torch, dtype)).double()
    x64 = torch.from_numpy(x).to(getattr(torch, dtype)).double()
    ref = F.grid_sample(x64, g64, mode=mode, align_corners=False).numpy()
    _close(backend, out, ref, dtype, "forward")
    if dtype == "float32":
        _close(backend, out, want, dtype, "forward")


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 7), (3, 2, 1, 1), (2, 1, 3, 4, 5), (1, 2, 1, 6, 1)])
def test_affine_grid_matches_torch(backend, errors, size, align):
    n = len(size) - 2
    rng = np.random.default_rng(len(size) * 10 + align)
    theta = rng.standard_normal((size[0], n, n + 1))
    tt = torch.from_numpy(theta).requires_grad_()
    want = F.affine_grid(tt, size, align_corners=align)
    go = rng.standard_normal(tuple(want.shape))
    (want_gt,) = torch.autograd.grad(want, tt, torch.from_numpy(go))
    tb = backend.asarray(theta)
    got = poolspec.affine_grid(tb, size, align_corners=align)
    errors.record(backend.name, "affine_grid", "float64", backend.to_numpy(got), want.detach().numpy())
    _close(backend, got, want.detach().numpy(), "float64", "affine_grid")
    _close(backend, poolspec.affine_grid_backward(backend.asarray(go), tb, size, align_corners=align),
           want_gt.numpy(), "float64", "affine_grid_backward")


def test_affine_grid_base_points_are_torchs_linspace():
    """The base grid alone (theta = identity): torch's symmetric linspace (each point rounded once, as its
    fused kernel does) and its (L-1)/L, to the last bit but one."""
    for L, align, dtype in itertools.product((1, 2, 3, 7, 10, 33), (False, True), ("float32", "float64")):
        theta = np.eye(2, 3, dtype=dtype)[None]
        want = F.affine_grid(torch.from_numpy(theta), (1, 1, 1, L), align_corners=align).numpy()[0, 0, :, 0]
        got = poolspec.affine_grid(theta, (1, 1, 1, L), align_corners=align)[0, 0, :, 0]
        np.testing.assert_allclose(got, want, rtol=0, atol=float(np.finfo(dtype).eps), err_msg=f"L={L} {align} {dtype}")


def test_spatial_transformer_end_to_end(backend):
    """affine_grid then grid_sample, the spatial transformer, and its input and theta gradients."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 5))
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    go = rng.standard_normal((2, 3, 4, 4))
    xt, tt = torch.from_numpy(x).requires_grad_(), torch.from_numpy(theta).requires_grad_()
    gt = F.affine_grid(tt, (2, 3, 4, 4), align_corners=False)
    want = F.grid_sample(xt, gt, align_corners=False)
    wx, wt = torch.autograd.grad(want, (xt, tt), torch.from_numpy(go))
    xb, tb = backend.asarray(x), backend.asarray(theta)
    grid = poolspec.affine_grid(tb, (2, 3, 4, 4))
    _close(backend, poolspec.grid_sample(xb, grid), want.detach().numpy(), "float64", "forward")
    gx, gg = poolspec.grid_sample_backward(backend.asarray(go), xb, grid)
    _close(backend, gx, wx.numpy(), "float64", "grad_x")
    _close(backend, poolspec.affine_grid_backward(gg, tb, (2, 3, 4, 4)), wt.numpy(), "float64", "grad_theta")


# --- torch autograd: first and second order through the op itself, against torch's own --------------

@pytest.mark.parametrize("n,mode,pad,align", MODES, ids=IDS)
def test_torch_autograd_to_second_order(n, mode, pad, align):
    rng, x, grid = _config(zlib.crc32(f"2nd{n}{mode}{pad}{align}".encode()), n)
    args = dict(mode=mode, padding_mode=pad, align_corners=align)
    results = []
    for fn in (F.grid_sample, poolspec.grid_sample):
        xt = torch.from_numpy(x).requires_grad_()
        gt = torch.from_numpy(grid).requires_grad_()
        out = fn(xt, gt, **args)
        v = torch.from_numpy(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        gx, gg = torch.autograd.grad((out * v).sum(), (xt, gt), create_graph=True)
        u = np.random.default_rng(2)
        s = (gx * torch.from_numpy(u.standard_normal(x.shape))).sum() + \
            (gg * torch.from_numpy(u.standard_normal(grid.shape))).sum()
        second = torch.autograd.grad(s, (xt, gt), allow_unused=True, materialize_grads=True)
        results.append([t.detach().numpy() for t in (out, gx, gg) + tuple(second)])
    for name, w, g in zip(("forward", "grad_x", "grad_grid", "d2/dx", "d2/dgrid"), *results):
        scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12 * scale, err_msg=name)


def test_explicit_backward_is_differentiable_on_torch():
    """grid_sample_backward on tracked tensors: its derivative w.r.t. grad_output is grid_sample's forward
    transpose, w.r.t. the grid torch's double backward."""
    rng, x, grid = _config(11, 2)
    go = rng.standard_normal(x.shape[:2] + grid.shape[1:-1])
    ref = []
    for impl in ("torch", "poolspec"):
        xt, gt, got = (torch.from_numpy(a).requires_grad_() for a in (x, grid, go))
        if impl == "torch":
            out = F.grid_sample(xt, gt, align_corners=False)
            gx, gg = torch.autograd.grad(out, (xt, gt), got, create_graph=True)
        else:
            gx, gg = poolspec.grid_sample_backward(got, xt, gt)
        s = (gx ** 2).sum() + (gg ** 2).sum()
        ref.append([t.detach().numpy() for t in torch.autograd.grad(s, (xt, gt, got), materialize_grads=True,
                                                                     allow_unused=True)])
    for w, g in zip(*ref):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


def test_input_gradient_is_deterministic_and_scatter_free():
    """Bit-identical input gradients run to run on a grid that piles every point on a few cells (the case a
    scatter-add reorders), under torch.use_deterministic_algorithms(True)."""
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((2, 4, 8, 8))).requires_grad_()
    grid = torch.from_numpy(np.round(rng.uniform(-0.3, 0.3, (2, 64, 64, 2)) * 4) / 4 +
                            rng.uniform(0, 1e-3, (2, 64, 64, 2)))
    go = torch.from_numpy(rng.standard_normal((2, 4, 64, 64)))
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        runs = [torch.autograd.grad(poolspec.grid_sample(x, grid), x, go)[0] for _ in range(3)]
    finally:
        torch.use_deterministic_algorithms(previous)
    assert all(torch.equal(runs[0], r) for r in runs[1:])
    want = torch.autograd.grad(F.grid_sample(x, grid, align_corners=False), x, go)[0]
    np.testing.assert_allclose(runs[0].numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


# --- transforms ------------------------------------------------------------------------------------

TRANSFORM_CASES = [(2, "bilinear", "zeros", False), (2, "bicubic", "reflection", True),
                   (3, "bilinear", "border", False), (2, "nearest", "border", True)]


def _small(n, seed=5):
    rng = np.random.default_rng(seed)
    S, O = ((3, 4), (2, 3)) if n == 2 else ((2, 3, 3), (2, 2, 1))
    x = rng.standard_normal((1, 2) + S)
    grid = _grid(rng, (1,) + O + (n,))
    grid = np.where(np.abs(grid) > 2, grid, grid + 1e-3)  # off the kinks, where one-sided rules would differ
    return x, grid


@pytest.mark.parametrize("n,mode,pad,align", TRANSFORM_CASES)
def test_torch_func_transforms(n, mode, pad, align):
    """vmap, grad, jacrev, jacfwd, jvp, hessian of poolspec's op against torch's native op (whose jacfwd and
    jvp raise: no forward AD for grid_sampler, so the reference there is jacrev)."""
    tf = torch.func
    x, grid = (torch.from_numpy(a) for a in _small(n))
    args = dict(mode=mode, padding_mode=pad, align_corners=align)

    def ours(a, g):
        return poolspec.grid_sample(a, g, **args)

    def theirs(a, g):
        return F.grid_sample(a, g, **args)

    def close(a, b):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)

    close(tf.vmap(ours)(x[None].expand(3, *x.shape), grid[None].expand(3, *grid.shape)),
          tf.vmap(theirs)(x[None].expand(3, *x.shape), grid[None].expand(3, *grid.shape)))
    for argnums in (0, 1):
        jr = tf.jacrev(theirs, argnums=argnums)(x, grid)
        close(tf.jacrev(ours, argnums=argnums)(x, grid), jr)
        close(tf.jacfwd(ours, argnums=argnums)(x, grid), jr)
        close(tf.grad(lambda a, g: (ours(a, g) ** 2).sum(), argnums=argnums)(x, grid),
              tf.grad(lambda a, g: (theirs(a, g) ** 2).sum(), argnums=argnums)(x, grid))
    tx, tg = torch.ones_like(x), torch.ones_like(grid) * 0.1
    _, jv = tf.jvp(ours, (x, grid), (tx, tg))
    j0, j1 = tf.jacrev(theirs, argnums=(0, 1))(x, grid)
    want = (j0.reshape(-1, x.numel()) @ tx.reshape(-1) + j1.reshape(-1, grid.numel()) @ tg.reshape(-1))
    close(jv.reshape(-1), want)
    h = tf.hessian(lambda g: (ours(x, g) ** 2).sum())(grid)
    close(h, tf.jacrev(tf.jacrev(lambda g: (theirs(x, g) ** 2).sum()))(grid))  # torch's hessian is fwd-over-rev


@pytest.mark.parametrize("n,mode,pad,align", TRANSFORM_CASES)
def test_jax_transforms(n, mode, pad, align):
    """jit, grad (x and grid), jvp, jacfwd, linearize, hessian, vmap of poolspec's op on JAX against torch."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    xn, gn = _small(n)
    x, grid = jnp.asarray(xn), jnp.asarray(gn)
    args = dict(mode=mode, padding_mode=pad, align_corners=align)
    xt, gt = torch.from_numpy(xn), torch.from_numpy(gn)

    def theirs(a, g):
        return F.grid_sample(a, g, **args)

    def ours(a, g):
        return poolspec.grid_sample(a, g, **args)

    def close(a, b):
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)

    close(jax.jit(ours)(x, grid), theirs(xt, gt))
    for argnums in (0, 1):
        jr = torch.func.jacrev(theirs, argnums=argnums)(xt, gt)
        close(jax.jacfwd(ours, argnums=argnums)(x, grid), jr)
        close(jax.jacrev(ours, argnums=argnums)(x, grid), jr)
        close(jax.grad(lambda a, g: (ours(a, g) ** 2).sum(), argnums=argnums)(x, grid),
              torch.func.grad(lambda a, g: (theirs(a, g) ** 2).sum(), argnums=argnums)(xt, gt))
    _, jv = jax.jvp(ours, (x, grid), (jnp.ones_like(x), jnp.full_like(grid, 0.1)))
    _, lin = jax.linearize(ours, x, grid)
    j0, j1 = torch.func.jacrev(theirs, argnums=(0, 1))(xt, gt)
    want = j0.reshape(-1, xt.numel()) @ torch.ones(xt.numel(), dtype=torch.float64) + \
        j1.reshape(-1, gt.numel()) @ torch.full((gt.numel(),), 0.1, dtype=torch.float64)
    close(jv.reshape(-1), want)
    close(lin(jnp.ones_like(x), jnp.full_like(grid, 0.1)).reshape(-1), want)
    close(jax.hessian(lambda g: (ours(x, g) ** 2).sum())(grid),
          torch.func.jacrev(torch.func.jacrev(lambda g: (theirs(xt, g) ** 2).sum()))(gt))
    close(jax.vmap(ours)(jnp.stack([x, 2 * x]), jnp.stack([grid, -grid])),
          torch.stack([theirs(xt, gt), theirs(2 * xt, -gt)]))


def test_jax_gradient_program_has_no_scatter():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    xn, gn = _small(2)
    x, grid = jax.numpy.asarray(xn), jax.numpy.asarray(gn)
    for argnums in (0, 1, (0, 1)):
        text = jax.jit(jax.grad(lambda a, g: (poolspec.grid_sample(a, g) ** 2).sum(), argnums=argnums)) \
            .lower(x, grid).as_text()
        assert "scatter" not in text, argnums


# --- argument checks ------------------------------------------------------------------------------

@pytest.mark.parametrize("x_shape,grid_shape,args,kind,match", [
    ((1, 2, 3, 3), (2, 2, 2, 2), {}, ValueError, "grid.shape.*batch"),
    ((1, 2, 3, 3), (1, 2, 2, 3), {}, ValueError, "grid.shape.*last dimension must be 2"),
    ((1, 2, 3, 3, 3), (1, 2, 2, 2, 3), dict(mode="bicubic"), ValueError, "mode.*bicubic needs a 4-D"),
    ((1, 2, 3, 3), (1, 2, 2, 2), dict(mode="cubic"), ValueError, "mode='cubic'"),
    ((1, 2, 3, 3), (1, 2, 2, 2), dict(padding_mode="wrap"), ValueError, "padding_mode='wrap'"),
    ((1, 2, 3, 3), (1, 2, 2, 2), dict(align_corners=1), TypeError, "align_corners"),
    ((1, 2, 0, 3), (1, 2, 2, 2), {}, ValueError, "x=.*spatial dimension 2 is empty"),
    ((2, 3), (1, 2, 2, 2), {}, ValueError, "x=.*must have 4 or 5 dimensions"),
    ((1, 2, 3, 3), (1, 2, 2, 2, 2), {}, ValueError, "grid.shape.*must have 4 dimensions"),
])
def test_grid_sample_rejects(x_shape, grid_shape, args, kind, match):
    with pytest.raises(kind, match=match):
        poolspec.grid_sample(np.zeros(x_shape), np.zeros(grid_shape), **args)


def test_grid_sample_rejects_mixed_dtypes_and_libraries():
    with pytest.raises(TypeError, match="grid.dtype='float32': must equal x.dtype 'float64'"):
        poolspec.grid_sample(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 1, 2), np.float32))
    with pytest.raises(TypeError, match="grid belongs to"):
        poolspec.grid_sample(np.zeros((1, 1, 2, 2)), torch.zeros(1, 1, 1, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="grad_output.shape"):
        poolspec.grid_sample_backward(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 1, 2)))


@pytest.mark.parametrize("theta_shape,size,kind,match", [
    ((1, 2, 3), (1, 1, 4), ValueError, "size=.*4 .*or 5"),
    ((1, 2, 3), (1, 1, 0, 4), ValueError, "size=.*> 0"),
    ((1, 3, 4), (1, 1, 4, 4), ValueError, "theta=.*must be \\(N, 2, 3\\)"),
    ((2, 2, 3), (1, 1, 4, 4), ValueError, "theta=.*batch dimension must equal size\\[0\\]"),
    ((1, 2, 3), "abc", TypeError, "size="),
])
def test_affine_grid_rejects(theta_shape, size, kind, match):
    with pytest.raises(kind, match=match):
        poolspec.affine_grid(np.zeros(theta_shape), size)


def test_cards_infer_the_output_shape():
    assert poolspec.output_shape("grid_sample", ("N", 3, 64, 64), grid=("N", 32, 16, 2)) == ("N", 3, 32, 16)
    assert poolspec.output_shape("affine_grid", (4, 3, 4), size=(4, 1, 5, 6, 7)) == (4, 5, 6, 7, 3)
    with pytest.raises(TypeError, match="missing required argument 'grid'"):
        poolspec.output_shape("grid_sample", ("N", 3, 64, 64))


def test_cards_infer_the_arguments_from_the_output_shape():
    assert poolspec.infer_arguments("grid_sample", ("N", 3, 64, 64), ("N", 3, 32, 16)) == {"grid": ("N", 32, 16, 2)}
    assert poolspec.infer_arguments("grid_sample", (2, 1, 4, 4, 4), (2, 1, 3, 2, 5)) == {"grid": (2, 3, 2, 5, 3)}
    assert poolspec.infer_arguments("fractional_max_pool2d", (2, 3, 9, 9), (2, 3, 5, 4)) == {"output_size": (5, 4)}
    with pytest.raises(ValueError, match="output_shape"):
        poolspec.infer_arguments("grid_sample", ("N", 3, 64, 64), ("M", 3, 32, 16))
    with pytest.raises(ValueError, match="output_shape"):
        poolspec.infer_arguments("fractional_max_pool2d", (2, 3, 9, 9), (2, 3, 10, 4))
