"""Autodiff through poolspec on torch and JAX: every order, against torch's own first and second derivatives."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional

# (op, input shape, arguments): regular and ragged windows, every rank, the edge flags.
CONFIGS = [
    ("avg_pool1d", (2, 2, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (2, 2, 7, 6), dict(kernel_size=(3, 2), stride=(2, 3), padding=1, count_include_pad=False)),
    ("avg_pool2d", (2, 5, 5), dict(kernel_size=2, stride=3, ceil_mode=True, divisor_override=-3)),
    ("avg_pool3d", (1, 2, 4, 5, 6), dict(kernel_size=2, stride=(1, 2, 2), padding=1, ceil_mode=True)),
    ("adaptive_avg_pool1d", (2, 2, 13), dict(output_size=7)),
    ("adaptive_avg_pool2d", (2, 2, 7, 5), dict(output_size=(13, 3))),
    ("adaptive_avg_pool2d", (2, 6, 6), dict(output_size=3)),
    ("adaptive_avg_pool3d", (1, 2, 5, 4, 7), dict(output_size=(3, 4, 2))),
    # interpolate: every mode, outside torch's quirk zones (there torch is not the reference)
    ("interpolate", (2, 2, 7), dict(size=12, mode="linear", align_corners=True)),
    ("interpolate", (2, 2, 6, 7), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ("interpolate", (2, 2, 6, 7), dict(size=(9, 4), mode="bicubic")),
    ("interpolate", (1, 2, 4, 5, 3), dict(scale_factor=1.5, mode="trilinear", align_corners=True)),
    ("interpolate", (2, 2, 5, 7), dict(size=(11, 3), mode="nearest")),
    ("interpolate", (1, 2, 4, 3, 5), dict(scale_factor=(1.5, 0.7, 1.25), mode="nearest-exact")),
    ("interpolate", (2, 2, 9, 7), dict(size=(4, 5), mode="area")),
    ("interpolate", (2, 2, 11, 9), dict(size=(5, 13), mode="bilinear", antialias=True)),
    ("interpolate", (2, 2, 11, 9), dict(scale_factor=0.4, mode="bicubic", antialias=True)),
    ("interpolate", (2, 2, 12, 8), dict(size=(5, 3), mode="lanczos", antialias=True)),
]
IDS = [f"{op}-{args.get('mode', '')}-{shape}" for op, shape, args in CONFIGS]


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _torch_op(op, args):
    from oracle import torch_fn

    return torch_fn(op, args)


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_torch_gradcheck_and_gradgradcheck(op, shape, args):
    x = torch.from_numpy(_x(shape)).requires_grad_(True)
    fn = lambda t: getattr(poolspec, op)(t, **args)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_torch_first_and_second_order_match_torch(op, shape, args):
    """Gradient and Hessian-vector product of a nonlinear loss, and the derivative of the explicit backward
    w.r.t. its cotangent, against torch's own autograd."""
    xs = _x(shape)
    v = _x(shape, 1)
    results = []
    for fn in (lambda t: getattr(poolspec, op)(t, **args), _torch_op(op, args)):
        x = torch.from_numpy(xs).requires_grad_(True)
        loss = (fn(x) ** 3).sum()
        (g,) = torch.autograd.grad(loss, x, create_graph=True)
        (hv,) = torch.autograd.grad(g, x, torch.from_numpy(v))
        results.append((g.detach().numpy(), hv.numpy()))
    (g1, h1), (g2, h2) = results
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h1, h2, rtol=1e-12, atol=1e-13)

    from oracle import double_backward

    out_shape = poolspec.output_shape(op, shape, **args)
    gout, w = _x(out_shape, 2), _x(shape, 3)
    gt = torch.from_numpy(gout).requires_grad_(True)
    grad = getattr(poolspec, op + "_backward")(gt, torch.from_numpy(xs), **args)
    (gg,) = torch.autograd.grad(grad, gt, torch.from_numpy(w))
    np.testing.assert_allclose(gg.numpy(), double_backward(op, xs, args, gout, w), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_torch_deterministic_mode_and_bit_identical(op, shape, args):
    prior = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        grads = []
        for _ in range(3):
            x = torch.from_numpy(_x(shape)).requires_grad_(True)
            y = getattr(poolspec, op)(x, **args)
            (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
            (gg,) = torch.autograd.grad(g.sum(), x)
            grads.append((g.detach().numpy(), gg.numpy()))
    finally:
        torch.use_deterministic_algorithms(prior)
    for g, gg in grads[1:]:
        assert np.array_equal(g, grads[0][0]) and np.array_equal(gg, grads[0][1])


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_torch_forward_mode(op, shape, args):
    import torch.autograd.forward_ad as fwAD

    xs, ts = _x(shape), _x(shape, 4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.from_numpy(xs), torch.from_numpy(ts))
        tangent = fwAD.unpack_dual(getattr(poolspec, op)(dual, **args)).tangent
    want = _torch_op(op, args)(torch.from_numpy(ts))  # linear: the JVP is the op applied to the tangent
    np.testing.assert_allclose(tangent.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_torch_autograd_low_precision(dtype):
    x = torch.from_numpy(_x((2, 3, 9, 9))).to(getattr(torch, dtype)).requires_grad_(True)
    y = poolspec.adaptive_avg_pool2d(x, 4)
    (g,) = torch.autograd.grad(y.sum(), x)
    assert y.dtype == x.dtype and g.dtype == x.dtype
    want = poolspec.adaptive_avg_pool2d_backward(torch.ones_like(y), x.detach(), 4)
    assert torch.equal(g, want)


# ---------------------------------------------------------------------------------------------- JAX


@pytest.fixture
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_jax_jit_grad_gradgrad_match_torch(jax, op, shape, args):
    jnp = jax.numpy
    xs, v = _x(shape), _x(shape, 1)

    def loss(x):
        return (getattr(poolspec, op)(x, **args) ** 3).sum()

    g = jax.jit(jax.grad(loss))(jnp.asarray(xs))
    hv = jax.jit(jax.grad(lambda x: jnp.vdot(jax.grad(loss)(x), jnp.asarray(v))))(jnp.asarray(xs))

    x = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((_torch_op(op, args)(x) ** 3).sum(), x, create_graph=True)
    (thv,) = torch.autograd.grad(tg, x, torch.from_numpy(v))
    np.testing.assert_allclose(np.asarray(g), tg.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(hv), thv.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_jax_backward_differentiable_in_cotangent(jax, op, shape, args):
    from oracle import double_backward

    jnp = jax.numpy
    xs = _x(shape)
    out_shape = poolspec.output_shape(op, shape, **args)
    gout, w = _x(out_shape, 2), _x(shape, 3)
    backward = getattr(poolspec, op + "_backward")
    gg = jax.grad(lambda g: jnp.vdot(backward(g, jnp.asarray(xs), **args), jnp.asarray(w)))(jnp.asarray(gout))
    np.testing.assert_allclose(np.asarray(gg), double_backward(op, xs, args, gout, w), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_jax_vmap(jax, op, shape, args):
    jnp = jax.numpy
    stacked = np.stack([_x(shape, s) for s in range(3)])
    fn = lambda x: getattr(poolspec, op)(x, **args)  # noqa: E731
    got = jax.vmap(fn)(jnp.asarray(stacked))
    want = np.stack([_torch_op(op, args)(torch.from_numpy(s)).numpy() for s in stacked])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-13)
    grads = jax.vmap(jax.grad(lambda x: (fn(x) ** 2).sum()))(jnp.asarray(stacked))
    singles = [jax.grad(lambda x: (fn(x) ** 2).sum())(jnp.asarray(s)) for s in stacked]
    np.testing.assert_allclose(np.asarray(grads), np.stack([np.asarray(s) for s in singles]), rtol=1e-13)


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_jax_transforms_as_the_card_states(jax, op, shape, args):
    """Forward mode works, as every card says, and gives torch's Jacobian-vector product (the ops are linear)."""
    jnp = jax.numpy
    xs, ts = jnp.asarray(_x(shape)), jnp.asarray(_x(shape, 4))
    fn = lambda x: getattr(poolspec, op)(x, **args)  # noqa: E731
    claimed = poolspec.spec.card(op).gradient.jax
    assert {"jvp", "jacfwd", "hessian", "linearize"} <= set(claimed)
    _, tangent = jax.jvp(fn, (xs,), (ts,))
    want = _torch_op(op, args)(torch.from_numpy(np.array(ts))).numpy()
    np.testing.assert_allclose(np.asarray(tangent), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(jax.linearize(fn, xs)[1](ts)), want, rtol=1e-12, atol=1e-13)
    h = jax.hessian(lambda x: (fn(x) ** 2).sum())(xs)
    assert h.shape == xs.shape * 2


@pytest.mark.parametrize("op,shape,args", CONFIGS, ids=IDS)
def test_jax_gradients_never_scatter(jax, op, shape, args):
    """No scatter (hence no atomics on GPU) in the first or second derivative programs."""
    jnp = jax.numpy
    fn = lambda x: (getattr(poolspec, op)(x, **args) ** 2).sum()  # noqa: E731
    xs = jnp.asarray(_x(shape))
    for program in (jax.grad(fn), jax.grad(lambda x: jax.grad(fn)(x).sum())):
        text = str(jax.make_jaxpr(program)(xs))
        assert "scatter" not in text


@pytest.mark.parametrize("op,shape,args", CONFIGS[:2] + CONFIGS[4:6], ids=IDS[:2] + IDS[4:6])
def test_jax_bit_identical_repeats(jax, op, shape, args):
    jnp = jax.numpy
    fn = jax.grad(lambda x: (getattr(poolspec, op)(x, **args) ** 2).sum())
    first = np.asarray(fn(jnp.asarray(_x(shape))))
    for _ in range(2):
        assert np.array_equal(np.asarray(fn(jnp.asarray(_x(shape)))), first)


# ------------------------------------------------------------------------------------------ max family

MAX_CONFIGS = [
    ("max_pool1d", (2, 2, 11), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("max_pool2d", (2, 2, 7, 6), dict(kernel_size=(3, 2), stride=(2, 1), padding=1)),
    ("max_pool2d", (2, 6, 6), dict(kernel_size=3, stride=1, padding=1)),  # overlapping windows
    ("max_pool3d", (1, 2, 5, 4, 6), dict(kernel_size=2, stride=(1, 2, 2), padding=1, dilation=(2, 1, 1))),
    ("adaptive_max_pool1d", (2, 2, 13), dict(output_size=5)),  # ragged, overlapping windows
    ("adaptive_max_pool2d", (2, 2, 7, 6), dict(output_size=(3, 4))),
    ("adaptive_max_pool2d", (2, 6, 6), dict(output_size=3)),  # evenly dividing: the strided-slice path
    ("adaptive_max_pool3d", (1, 2, 5, 4, 7), dict(output_size=(3, 2, 4))),
]
MAX_IDS = [f"{op}-{shape}" for op, shape, _ in MAX_CONFIGS]


@pytest.mark.parametrize("op,shape,args", MAX_CONFIGS, ids=MAX_IDS)
def test_torch_max_gradcheck_gradgradcheck_and_deterministic(op, shape, args):
    x = torch.from_numpy(_x(shape)).requires_grad_(True)
    fn = lambda t: getattr(poolspec, op)(t, **args)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    prior = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        runs = []
        for _ in range(2):
            values, idx = getattr(poolspec, op)(x, **args, return_indices=True)
            (g,) = torch.autograd.grad((values ** 3).sum(), x, create_graph=True)
            (hv,) = torch.autograd.grad(g, x, torch.from_numpy(_x(shape, 1)))
            runs.append((g.detach().numpy(), hv.numpy()))
    finally:
        torch.use_deterministic_algorithms(prior)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1]))
    xt = torch.from_numpy(_x(shape)).requires_grad_(True)
    (tg,) = torch.autograd.grad((getattr(F, op)(xt, **args) ** 3).sum(), xt, create_graph=True)
    (thv,) = torch.autograd.grad(tg, xt, torch.from_numpy(_x(shape, 1)))
    np.testing.assert_allclose(runs[0][0], tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(runs[0][1], thv.numpy(), rtol=1e-12)


@pytest.mark.parametrize("op,shape,args", MAX_CONFIGS, ids=MAX_IDS)
def test_max_backward_differentiable_in_cotangent(jax, op, shape, args):
    """The explicit backward, differentiated w.r.t. grad_output, is the gather at the indices (torch's
    double backward), on torch and JAX."""
    from oracle import double_backward

    xs = _x(shape)
    out_shape = poolspec.output_shape(op, shape, **args)
    gout, w = _x(out_shape, 2), _x(shape, 3)
    want = double_backward(op, xs, args, gout, w)
    backward = getattr(poolspec, op + "_backward")
    gt = torch.from_numpy(gout).requires_grad_(True)
    (gg,) = torch.autograd.grad(backward(gt, torch.from_numpy(xs), **args), gt, torch.from_numpy(w))
    np.testing.assert_allclose(gg.numpy(), want, rtol=1e-12, atol=1e-13)
    jnp = jax.numpy
    gj = jax.grad(lambda g: jnp.vdot(backward(g, jnp.asarray(xs), **args), jnp.asarray(w)))(jnp.asarray(gout))
    np.testing.assert_allclose(np.asarray(gj), want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", MAX_CONFIGS, ids=MAX_IDS)
def test_jax_max_jit_grad_gradgrad_vmap_no_scatter(jax, op, shape, args):
    jnp = jax.numpy
    xs, v = _x(shape), _x(shape, 1)

    def loss(x):
        return (getattr(poolspec, op)(x, **args) ** 3).sum()

    g = jax.jit(jax.grad(loss))(jnp.asarray(xs))
    gradgrad = jax.grad(lambda x: jnp.vdot(jax.grad(loss)(x), jnp.asarray(v)))
    hv = jax.jit(gradgrad)(jnp.asarray(xs))
    x = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((getattr(F, op)(x, **args) ** 3).sum(), x, create_graph=True)
    (thv,) = torch.autograd.grad(tg, x, torch.from_numpy(v))
    np.testing.assert_allclose(np.asarray(g), tg.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(hv), thv.numpy(), rtol=1e-12, atol=1e-13)
    for program in (jax.grad(loss), gradgrad):
        assert "scatter" not in str(jax.make_jaxpr(program)(jnp.asarray(xs)))
    stacked = np.stack([_x(shape, s) for s in range(3)])
    got = jax.vmap(jax.grad(loss))(jnp.asarray(stacked))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(jax.grad(loss)(jnp.asarray(s)))
                                                          for s in stacked]), rtol=1e-13)


def test_jax_max_pool_with_dilation_where_jax_own_gradient_fails(jax):
    """JAX's own reduce_window max has no gradient with window dilation; poolspec's max_pool has, and it is
    torch's."""
    jnp, lax = jax.numpy, jax.lax
    xs = _x((1, 2, 9, 9))
    own = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "VALID",  # noqa: E731
                                      window_dilation=(1, 1, 2, 2)).sum()
    with pytest.raises(Exception):  # noqa: B017 - whatever JAX raises, it has no such gradient
        jax.grad(own)(jnp.asarray(xs))
    args = dict(kernel_size=3, stride=2, dilation=2)
    g = jax.grad(lambda x: poolspec.max_pool2d(x, **args).sum())(jnp.asarray(xs))
    xt = torch.from_numpy(xs).requires_grad_(True)
    (want,) = torch.autograd.grad(F.max_pool2d(xt, **args).sum(), xt)
    np.testing.assert_array_equal(np.asarray(g), want.numpy())


# ------------------------------------------------------------------------------------------ max_unpool

UNPOOL_CONFIGS = [
    ("max_unpool1d", (2, 2, 11), dict(kernel_size=3, stride=2, padding=1)),
    ("max_unpool2d", (2, 2, 6, 8), dict(kernel_size=2)),
    ("max_unpool2d", (2, 7, 7), dict(kernel_size=3, stride=2, padding=1, output_size=(8, 7))),
    ("max_unpool3d", (1, 2, 4, 6, 4), dict(kernel_size=2, stride=(1, 2, 2))),
]
UNPOOL_IDS = [f"{op}-{shape}" for op, shape, _ in UNPOOL_CONFIGS]


def _unpool_operands(op, shape, args):
    """Values shaped as max_pool's output on ``shape`` (torch's), and indices unique within each plane (so torch's
    max_unpool is defined), drawn into the unpool's output plane."""
    n = int(op[-2])
    pool_args = {k: v for k, v in args.items() if k != "output_size"}
    pooled = tuple(getattr(F, f"max_pool{n}d")(torch.zeros(shape, dtype=torch.float64), **pool_args).shape)
    out = poolspec.output_shape(op, pooled, **args)
    rng = np.random.default_rng(5)
    m, size = int(np.prod(pooled[-n:])), int(np.prod(out[-n:]))
    planes = int(np.prod(pooled[:-n]))
    idx = np.stack([rng.permutation(size)[:m] for _ in range(planes)]).reshape(pooled)
    return _x(pooled), idx


@pytest.mark.parametrize("op,shape,args", UNPOOL_CONFIGS, ids=UNPOOL_IDS)
def test_torch_unpool_every_order_deterministic_and_as_torch(op, shape, args):
    xs, idx = _unpool_operands(op, shape, args)
    it = torch.from_numpy(idx)
    fn = lambda t: getattr(poolspec, op)(t, it, **args)  # noqa: E731
    x = torch.from_numpy(xs).requires_grad_(True)
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    v = _x(xs.shape, 1)
    prior = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)  # torch's own max_unpool raises here, even on CPU
    try:
        runs = []
        for _ in range(2):
            (g,) = torch.autograd.grad((fn(x) ** 3).sum(), x, create_graph=True)
            (hv,) = torch.autograd.grad(g, x, torch.from_numpy(v))
            runs.append((g.detach().numpy(), hv.numpy()))
    finally:
        torch.use_deterministic_algorithms(prior)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1]))
    xt = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((getattr(F, op)(xt, it, **args) ** 3).sum(), xt, create_graph=True)
    (thv,) = torch.autograd.grad(tg, xt, torch.from_numpy(v))
    np.testing.assert_allclose(runs[0][0], tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(runs[0][1], thv.numpy(), rtol=1e-12)
    # the explicit backward, differentiated in its cotangent, is the unpool again (torch's double backward)
    out_shape = poolspec.output_shape(op, xs.shape, **args)
    gout, w = _x(out_shape, 2), _x(xs.shape, 3)
    gt = torch.from_numpy(gout).requires_grad_(True)
    (gg,) = torch.autograd.grad(getattr(poolspec, op + "_backward")(gt, torch.from_numpy(xs), it, **args), gt,
                                torch.from_numpy(w))
    xr, gr = torch.from_numpy(xs).requires_grad_(True), torch.from_numpy(gout).requires_grad_(True)
    (grad,) = torch.autograd.grad(getattr(F, op)(xr, it, **args), xr, gr, create_graph=True)
    (want,) = torch.autograd.grad(grad, gr, torch.from_numpy(w))
    np.testing.assert_allclose(gg.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", UNPOOL_CONFIGS, ids=UNPOOL_IDS)
def test_jax_unpool_jit_grad_gradgrad_vmap_no_scatter(jax, op, shape, args):
    jnp = jax.numpy
    xs, idx = _unpool_operands(op, shape, args)
    ij = jnp.asarray(idx)
    v = _x(xs.shape, 1)

    def loss(x):
        return (getattr(poolspec, op)(x, ij, **args) ** 3).sum()

    g = jax.jit(jax.grad(loss))(jnp.asarray(xs))
    gradgrad = jax.grad(lambda x: jnp.vdot(jax.grad(loss)(x), jnp.asarray(v)))
    hv = jax.jit(gradgrad)(jnp.asarray(xs))
    it = torch.from_numpy(idx)
    x = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((getattr(F, op)(x, it, **args) ** 3).sum(), x, create_graph=True)
    (thv,) = torch.autograd.grad(tg, x, torch.from_numpy(v))
    np.testing.assert_allclose(np.asarray(g), tg.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(hv), thv.numpy(), rtol=1e-12, atol=1e-13)
    for program in (jax.grad(loss), gradgrad):
        assert "scatter" not in str(jax.make_jaxpr(program)(jnp.asarray(xs)))
    stacked = np.stack([_x(xs.shape, s) for s in range(3)])
    got = jax.vmap(lambda x: getattr(poolspec, op)(x, ij, **args))(jnp.asarray(stacked))
    want = np.stack([getattr(F, op)(torch.from_numpy(s), it, **args).numpy() for s in stacked])
    np.testing.assert_array_equal(np.asarray(got), want)
    grads = jax.vmap(jax.grad(loss))(jnp.asarray(stacked))
    np.testing.assert_allclose(np.asarray(grads), np.stack([np.asarray(jax.grad(loss)(jnp.asarray(s)))
                                                            for s in stacked]), rtol=1e-13)


# ------------------------------------------------------------------------------------------ lp_pool

LP_CONFIGS = [
    ("lp_pool1d", (2, 2, 9), dict(norm_type=2.0, kernel_size=3, stride=2, ceil_mode=True)),
    ("lp_pool2d", (2, 2, 7, 6), dict(norm_type=1.5, kernel_size=(3, 2), stride=(2, 1))),
    ("lp_pool2d", (2, 6, 6), dict(norm_type=3, kernel_size=2, ceil_mode=True)),
    ("lp_pool3d", (1, 2, 4, 5, 4), dict(norm_type=2.5, kernel_size=2, stride=(1, 2, 2))),
    ("lp_pool2d", (2, 2, 6, 6), dict(norm_type=float("inf"), kernel_size=2, stride=1)),
    ("lp_pool1d", (2, 2, 9), dict(norm_type=float("-inf"), kernel_size=3, stride=2)),
]
LP_IDS = [f"{op}-p{a['norm_type']}-{shape}" for op, shape, a in LP_CONFIGS]


def _lp_x(shape, args, seed=0):
    """Positive data away from zero where a negative window sum would give NaN (fractional or odd p); signed
    data otherwise."""
    x = _x(shape, seed)
    p = args["norm_type"]
    return np.abs(x) + 0.5 if np.isfinite(p) and p not in (1, 2) else x


@pytest.mark.parametrize("op,shape,args", LP_CONFIGS, ids=LP_IDS)
def test_torch_lp_every_order_deterministic_and_as_torch(op, shape, args):
    xs, v = _lp_x(shape, args), _x(shape, 1)
    fn = lambda t: getattr(poolspec, op)(t, **args)  # noqa: E731
    x = torch.from_numpy(xs).requires_grad_(True)
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    prior = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        runs = []
        for _ in range(2):
            (g,) = torch.autograd.grad((fn(x) ** 3).sum(), x, create_graph=True)
            (hv,) = torch.autograd.grad(g, x, torch.from_numpy(v))
            runs.append((g.detach().numpy(), hv.numpy()))
    finally:
        torch.use_deterministic_algorithms(prior)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1]))
    xt = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((_torch_op(op, args)(xt) ** 3).sum(), xt, create_graph=True)
    (thv,) = torch.autograd.grad(tg, xt, torch.from_numpy(v))
    np.testing.assert_allclose(runs[0][0], tg.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(runs[0][1], thv.numpy(), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("op,shape,args", LP_CONFIGS, ids=LP_IDS)
def test_lp_backward_differentiable_in_cotangent(jax, op, shape, args):
    from oracle import double_backward

    xs = _lp_x(shape, args)
    gout, w = _x(poolspec.output_shape(op, shape, **args), 2), _x(shape, 3)
    want = double_backward(op, xs, args, gout, w)
    backward = getattr(poolspec, op + "_backward")
    gt = torch.from_numpy(gout).requires_grad_(True)
    (gg,) = torch.autograd.grad(backward(gt, torch.from_numpy(xs), **args), gt, torch.from_numpy(w))
    np.testing.assert_allclose(gg.numpy(), want, rtol=1e-12, atol=1e-13)
    jnp = jax.numpy
    gj = jax.grad(lambda g: jnp.vdot(backward(g, jnp.asarray(xs), **args), jnp.asarray(w)))(jnp.asarray(gout))
    np.testing.assert_allclose(np.asarray(gj), want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args", LP_CONFIGS, ids=LP_IDS)
def test_jax_lp_jit_grad_gradgrad_vmap_no_scatter(jax, op, shape, args):
    jnp = jax.numpy
    xs, v = _lp_x(shape, args), _x(shape, 1)

    def loss(x):
        return (getattr(poolspec, op)(x, **args) ** 3).sum()

    g = jax.jit(jax.grad(loss))(jnp.asarray(xs))
    gradgrad = jax.grad(lambda x: jnp.vdot(jax.grad(loss)(x), jnp.asarray(v)))
    hv = jax.jit(gradgrad)(jnp.asarray(xs))
    xt = torch.from_numpy(xs).requires_grad_(True)
    (tg,) = torch.autograd.grad((_torch_op(op, args)(xt) ** 3).sum(), xt, create_graph=True)
    (thv,) = torch.autograd.grad(tg, xt, torch.from_numpy(v))
    np.testing.assert_allclose(np.asarray(g), tg.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(hv), thv.numpy(), rtol=1e-11, atol=1e-12)
    for program in (jax.grad(loss), gradgrad):
        assert "scatter" not in str(jax.make_jaxpr(program)(jnp.asarray(xs)))
    stacked = np.stack([_lp_x(shape, args, s) for s in range(3)])
    got = jax.vmap(lambda x: getattr(poolspec, op)(x, **args))(jnp.asarray(stacked))
    want = np.stack([_torch_op(op, args)(torch.from_numpy(s)).numpy() for s in stacked])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-13)
    if np.isfinite(args["norm_type"]):  # the card's note: forward mode works for finite norm_type
        _, tangent = jax.jvp(lambda x: getattr(poolspec, op)(x, **args), (jnp.asarray(xs),),
                             (jnp.asarray(v),))
        _, want_t = torch.func.jvp(_torch_op(op, args), (torch.from_numpy(xs),), (torch.from_numpy(v),))
        np.testing.assert_allclose(np.asarray(tangent), want_t.numpy(), rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------- Lanczos-3 without antialias (no torch)

LANCZOS = [((2, 2, 7, 9), dict(size=(12, 5), mode="lanczos")), ((1, 2, 8, 6), dict(scale_factor=1.5, mode="lanczos"))]


@pytest.mark.parametrize("shape,args", LANCZOS, ids=[str(s) for s, _ in LANCZOS])
def test_lanczos_without_antialias_gradients(jax, shape, args):
    """torch: gradcheck, gradgradcheck, deterministic; JAX: first and second derivatives equal JAX's native
    autodiff of jax.image.scale_and_translate (the independent reference), with no scatter."""
    jnp = jax.numpy
    xs, v = _x(shape), _x(shape, 1)
    fn = lambda t: poolspec.interpolate(t, **args)  # noqa: E731
    x = torch.from_numpy(xs).requires_grad_(True)
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    out = poolspec.output_shape("interpolate", shape, **args)
    scale = jnp.array([out[i + 2] / shape[i + 2] if "size" in args else args["scale_factor"] for i in range(2)])

    def ref(t):
        return jax.image.scale_and_translate(t, out, (2, 3), scale, jnp.zeros(2), "lanczos3", antialias=False)

    def derivatives(f):
        g = jax.jit(jax.grad(f))(jnp.asarray(xs))
        hv = jax.grad(lambda t: jnp.vdot(jax.grad(f)(t), jnp.asarray(v)))(jnp.asarray(xs))
        return np.asarray(g), np.asarray(hv)

    def mine(t):
        return (poolspec.interpolate(t, **args) ** 3).sum()

    for got, want in zip(derivatives(mine), derivatives(lambda t: (ref(t) ** 3).sum())):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    assert "scatter" not in str(jax.make_jaxpr(jax.grad(mine))(jnp.asarray(xs)))


def test_jax_unpool_with_traced_indices(jax):
    """Deviation max_unpool_traced_indices: under jit the indices cannot be checked; an out-of-range entry is
    dropped (it places nothing and gets gradient 0), the others are placed as usual."""
    jnp = jax.numpy
    x = jnp.asarray([[[1.0, 2.0, 3.0]]])
    idx = jnp.asarray([[[0, 9, 4]]])  # 9 is outside the output of size 6
    out = jax.jit(lambda v, i: poolspec.max_unpool1d(v, i, 2))(x, idx)
    assert np.asarray(out).tolist() == [[[1.0, 0.0, 0.0, 0.0, 3.0, 0.0]]]
    g = jax.grad(lambda v: jnp.sum(jax.jit(lambda w, i: poolspec.max_unpool1d(w, i, 2))(v, idx) * 7.0))(x)
    assert np.asarray(g).tolist() == [[[7.0, 0.0, 7.0]]]
    with pytest.raises(ValueError, match="indices contains 9"):  # concrete indices are checked
        poolspec.max_unpool1d(x, idx, 2)


# The VJP of an op linear in x (avg, adaptive avg, interpolate, max_unpool) or piecewise linear (the max pools)
# does not depend on x's values, so d<grad_x, v>/dx is zero; torch returns those zeros for the pools (its backward
# takes x), and raises for interpolate, where zeros are the right answer.
ZERO_SECOND_ORDER = CONFIGS + MAX_CONFIGS + UNPOOL_CONFIGS


@pytest.mark.parametrize("op,shape,args", ZERO_SECOND_ORDER,
                         ids=[f"{op}-{args.get('mode', '')}-{shape}" for op, shape, args in ZERO_SECOND_ORDER])
def test_torch_second_derivative_of_a_linear_vjp_is_zero(op, shape, args):
    if op.startswith("max_unpool"):
        values, idx = _unpool_operands(op, shape, args)
        x = torch.from_numpy(values).requires_grad_(True)
        it = torch.from_numpy(idx)
        fn, native = (lambda t: getattr(poolspec, op)(t, it, **args)), None
    else:
        x = torch.from_numpy(_x(shape)).requires_grad_(True)
        fn = lambda t: getattr(poolspec, op)(t, **args)  # noqa: E731
        native = None if op == "interpolate" else _torch_op(op, args)
    y = fn(x)
    g = torch.from_numpy(_x(tuple(y.shape), 1))
    v = torch.from_numpy(_x(shape if not op.startswith("max_unpool") else tuple(x.shape), 2))
    (gx,) = torch.autograd.grad(y, x, g, create_graph=True)
    (ggx,) = torch.autograd.grad((gx * v).sum(), x, create_graph=True)
    assert ggx.shape == x.shape and not ggx.any()
    (gggx,) = torch.autograd.grad(ggx.sum(), x)  # and so on, at every order
    assert not gggx.any()
    if native is not None:
        xt = x.detach().clone().requires_grad_(True)
        (tgx,) = torch.autograd.grad(native(xt), xt, g, create_graph=True)
        (tggx,) = torch.autograd.grad((tgx * v).sum(), xt)
        assert torch.equal(ggx, tggx)
    # the first order is untouched by the tie to x
    (plain,) = torch.autograd.grad(fn(x), x, g)
    assert torch.equal(gx.detach(), plain)
    # the explicit VJP too: like torch's own backward ops, it takes x, and its derivative w.r.t. x is zero
    backward = getattr(poolspec, op + "_backward")
    explicit = backward(g, x, it, **args) if op.startswith("max_unpool") else backward(g, x, **args)
    assert torch.equal(explicit.detach(), plain)
    (zero,) = torch.autograd.grad((explicit * v).sum(), x)
    assert zero.shape == x.shape and not zero.any()
