"""``poolspec.frontends.scipy.ndimage``'s window filters against live SciPy on every installed backend: every
boundary mode, origins, axes, footprints, dtypes; SciPy's refusals; and the gradients (torch autograd, jax.grad)
against central differences of SciPy's own functions in float64, bit-identical over repeats. The B-spline exports:
the public names, one call each on every backend, and the transforms their cards claim."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")

from poolspec.frontends.scipy import ndimage  # noqa: E402

MODES = ("reflect", "grid-mirror", "mirror", "nearest", "wrap", "grid-wrap", "constant", "grid-constant")
ONE_D = ("uniform_filter1d", "maximum_filter1d", "minimum_filter1d")
N_D = ("uniform_filter", "maximum_filter", "minimum_filter")


def _tol(want: np.ndarray, x: np.ndarray) -> dict[str, float]:
    scale = float(np.abs(x.astype(np.float64)).max(initial=1.0))
    if want.dtype == np.float32:
        return {"rtol": 1e-5, "atol": 1e-6 * scale}
    return {"rtol": 1e-10, "atol": 1e-12 * scale}


def _same(backend, name, x, **options):
    want = getattr(ndi, name)(x, **options)
    got = backend.to_numpy(getattr(ndimage, name)(backend.asarray(x), **options))
    assert got.dtype == want.dtype, (name, options, got.dtype, want.dtype)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {options}")
    else:
        np.testing.assert_allclose(got, want, err_msg=f"{name} {options}", **_tol(want, x))


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("mode", MODES)
def test_one_d_every_mode_size_and_origin(name, mode, backend):
    """Sizes from 1 to past twice the line (extensions repeat periodically), every valid origin."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5))
    for size in (1, 2, 3, 4, 5, 8, 13):
        for origin in range(-(size // 2), (size - 1) // 2 + 1, max(1, size // 3)):
            _same(backend, name, x, size=size, mode=mode, cval=0.75, origin=origin)
    _same(backend, name, rng.standard_normal((3, 1, 2)), size=4, axis=1, mode=mode)  # a line of one cell


@pytest.mark.parametrize("name", N_D)
def test_n_d_sizes_origins_modes_and_axes(name, backend):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 6))
    _same(backend, name, x, size=3)
    _same(backend, name, x, size=(2, 1, 5), origin=(-1, 0, 2), mode=("wrap", "nearest", "constant"), cval=-2.0)
    _same(backend, name, x, size=(4, 3), axes=(2, -3), origin=(1, -1), mode="mirror")
    _same(backend, name, x, size=2, axes=1, mode="grid-constant", cval=9.0)
    _same(backend, name, x, size=(0, 1, 1))  # every axis skipped: a copy
    _same(backend, name, rng.standard_normal(7).astype(np.float32), size=4, origin=-2)


@pytest.mark.parametrize("name", ["maximum_filter", "minimum_filter"])
def test_footprints(name, backend):
    """A non-full footprint (SciPy's where-chain over its taps in row-major order), an all-True one (the
    separable path), footprints over some axes with their origins, and ties."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4, 6))
    fp = np.array([[True, False, True], [False, True, True]])
    _same(backend, name, x, footprint=fp, axes=(0, 2), mode="reflect")
    _same(backend, name, x, footprint=fp, axes=(2, 0), origin=(1, -1), mode="constant", cval=0.5)
    _same(backend, name, x, footprint=np.ones((2, 3, 2), bool), mode="wrap", origin=(0, 1, -1))
    _same(backend, name, x, footprint=rng.random((3, 2, 3)) < 0.5, origin=(-1, 0, 1), mode="mirror")
    _same(backend, name, np.round(x * 2), footprint=rng.random((4, 4, 4)) < 0.6, mode="nearest")
    with pytest.warns(UserWarning, match="ignoring size"):
        ndimage.maximum_filter(backend.asarray(x), size=3, footprint=fp, axes=(0, 1))


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_integer_inputs_and_outputs(name, backend):
    """Integer inputs keep their dtype (the uniform filter truncates each axis pass toward zero); an integer
    output of a float input is truncated; float32 is rounded after each axis."""
    rng = np.random.default_rng(3)
    xi = rng.integers(-50, 50, (4, 7)).astype(np.int16)
    xu = rng.integers(0, 255, (4, 7)).astype(np.uint8)
    xf = rng.standard_normal((4, 7)) * 10
    size = {"size": 3} if name.endswith("1d") else {"size": (2, 3)}
    _same(backend, name, xi, **size, mode="constant", cval=7.0)
    _same(backend, name, xu, **size)
    _same(backend, name, xf, **size, output=np.int32)
    _same(backend, name, xf, **size, output="float32")
    _same(backend, name, xf.astype(np.float32), **size, mode="nearest")


BAD = [
    ("uniform_filter1d", {"size": 0}, "size", ValueError),
    ("uniform_filter1d", {"size": 2.0}, "size", TypeError),
    ("uniform_filter1d", {"size": 3, "origin": 2}, "origin", ValueError),
    ("maximum_filter1d", {"size": 4, "origin": -3}, "origin", ValueError),
    ("minimum_filter1d", {"size": 3, "axis": 2}, "axis", ValueError),
    ("uniform_filter1d", {"size": 3, "mode": "edge"}, "mode", ValueError),
    ("uniform_filter", {"size": (3, 3, 3)}, "size", ValueError),
    ("uniform_filter", {"size": 3, "origin": (0, 2)}, "origin", ValueError),
    ("uniform_filter", {"size": 3, "axes": (0, 0)}, "axes", ValueError),
    ("uniform_filter", {"size": 3, "axes": (0, 2)}, "axes", ValueError),
    ("uniform_filter", {"size": 3, "mode": ("reflect",)}, "mode", ValueError),
    ("uniform_filter", {"size": 3, "cval": 1j}, "cval", TypeError),
    ("maximum_filter", {}, "size", ValueError),
    ("maximum_filter", {"footprint": np.zeros((2, 2), bool)}, "footprint", ValueError),
    ("maximum_filter", {"footprint": np.eye(2, dtype=bool), "origin": 1}, "origin", ValueError),
    ("minimum_filter", {"footprint": np.eye(2, dtype=bool), "mode": ["reflect", "wrap"]}, "mode", ValueError),
    ("minimum_filter", {"footprint": np.eye(2, dtype=bool), "axes": 0}, "footprint", ValueError),
    ("maximum_filter", {"size": 3, "output": "bool"}, "output", TypeError),
]


@pytest.mark.parametrize("name,options,argument,kind", BAD)
def test_refusals_mirror_scipys(name, options, argument, kind, backend):
    """What SciPy refuses (RuntimeError, ValueError, TypeError, AxisError) is refused with a ValueError or
    TypeError naming the argument, before any computation."""
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(Exception), warnings.catch_warnings():  # noqa: B017  SciPy's own types vary
        warnings.simplefilter("ignore")
        getattr(ndi, name)(x, **options)
    with pytest.raises(kind, match=f"{name}: {argument}="):
        getattr(ndimage, name)(backend.asarray(x), **options)


def test_refusals_of_dtypes(backend):
    x = np.arange(6.0)
    if backend.supports("float16"):
        with pytest.raises(TypeError, match="input="):
            ndimage.uniform_filter(backend.asarray(x, "float16"))
    with pytest.raises(ValueError, match="cval="):
        ndimage.maximum_filter1d(backend.asarray(x.astype(np.uint8)), 3, mode="constant", cval=-1.0)


# ------------------------------------------------------------------------------------------------- gradients

GRAD_CASES = [
    ("uniform_filter1d", {"size": 4, "origin": 1, "mode": "mirror"}),
    ("uniform_filter", {"size": (3, 2), "mode": ("wrap", "constant"), "cval": 1.5}),
    ("maximum_filter1d", {"size": 3, "axis": 0, "mode": "reflect"}),
    ("minimum_filter", {"size": (2, 3), "mode": "nearest", "origin": (0, -1)}),
    ("maximum_filter", {"footprint": np.array([[True, False, True], [False, True, False]]), "mode": "wrap"}),
    ("minimum_filter", {"footprint": np.array([[True, True], [True, False]]), "mode": "constant", "cval": 0.25}),
]


def _central_differences(name, options, x, cot, eps=1e-6):
    """<cot, d scipy_f / dx_i> for each i, by central differences of SciPy's own function."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = np.sum(cot * (getattr(ndi, name)(x + e, **options) - getattr(ndi, name)(x - e, **options)))
    return g / (2 * eps)


def _point(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((5, 6)), rng.standard_normal((5, 6))  # distinct values: no ties within eps


@pytest.mark.parametrize("name,options", GRAD_CASES)
def test_torch_gradients_against_scipy_differences(name, options):
    torch = pytest.importorskip("torch")
    x, cot = _point(4)
    want = _central_differences(name, options, x, cot)
    grads = []
    for _ in range(5):
        t = torch.from_numpy(x.copy()).requires_grad_(True)
        (g,) = torch.autograd.grad((getattr(ndimage, name)(t, **options) * torch.from_numpy(cot)).sum(), t)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], want, rtol=1e-6, atol=1e-7)
    for g in grads[1:]:
        assert np.array_equal(g, grads[0])


@pytest.mark.parametrize("name,options", GRAD_CASES)
def test_jax_gradients_against_scipy_differences(name, options):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x, cot = _point(5)
    want = _central_differences(name, options, x, cot)
    loss = jax.jit(jax.grad(lambda v: jnp.sum(getattr(ndimage, name)(v, **options) * cot)))
    grads = [np.asarray(loss(jnp.asarray(x))) for _ in range(5)]
    np.testing.assert_allclose(grads[0], want, rtol=1e-6, atol=1e-7)
    for g in grads[1:]:
        assert np.array_equal(g, grads[0])


@pytest.mark.parametrize("minimum", [False, True])
def test_tied_maxima_send_the_whole_cotangent_to_the_first_tap(minimum):
    """At ties SciPy's value is the first tap's (strictly greater replaces): the gradient goes whole to that tap,
    never split between equal taps; the reference is the first extreme of each window (NumPy's argmax)."""
    torch = pytest.importorskip("torch")
    x = np.array([1.0, 3.0, 3.0, 0.0, 3.0, 2.0, 2.0])
    name = "minimum_filter1d" if minimum else "maximum_filter1d"
    size = 3
    padded = np.pad(x, (1, 1), mode="symmetric")  # reflect, origin 0: output i reads padded[i:i+3]
    want = np.zeros(x.size + 2)
    for i in range(x.size):
        w = padded[i:i + size]
        want[i + int(np.argmin(w) if minimum else np.argmax(w))] += 1.0
    fold = np.pad(np.arange(x.size), (1, 1), mode="symmetric")  # the input cell each padded cell reads
    want_x = np.zeros(x.size)
    for p, q in enumerate(fold):
        want_x[q] += want[p]
    t = torch.from_numpy(x).requires_grad_(True)
    (g,) = torch.autograd.grad(getattr(ndimage, name)(t, size).sum(), t)
    np.testing.assert_array_equal(g.numpy(), want_x)
    np.testing.assert_array_equal(getattr(ndimage, name)(x, size), getattr(ndi, name)(x, size))


@pytest.mark.parametrize("name,options", GRAD_CASES)
def test_explicit_backward_against_scipy_differences(name, options, backend):
    """``*_backward`` (for arrays without autodiff) on every backend: SciPy's central differences, bit-identical
    repeats; on torch, equal to autograd of the forward."""
    x, cot = _point(6)
    want = _central_differences(name, options, x, cot)
    backward = getattr(ndimage, f"{name}_backward")
    grads = [backend.to_numpy(backward(backend.asarray(cot), backend.asarray(x), **options)) for _ in range(5)]
    np.testing.assert_allclose(grads[0], want, rtol=1e-6, atol=1e-7)
    for g in grads[1:]:
        assert np.array_equal(g, grads[0])
    if backend.name == "torch":
        import torch

        t = torch.from_numpy(x.copy()).requires_grad_(True)
        (g,) = torch.autograd.grad((getattr(ndimage, name)(t, **options) * torch.from_numpy(cot)).sum(), t)
        np.testing.assert_allclose(grads[0], g.numpy(), rtol=1e-13, atol=1e-13)


def test_explicit_backward_at_ties_and_wide_windows(backend):
    """Ties (the first tap takes the whole cotangent) and windows longer than the line (the mode's copies fold
    back), against torch autograd of the forward where torch is installed, else against the rule by hand."""
    x = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    cot = np.arange(10.0).reshape(2, 5) - 4
    got = backend.to_numpy(ndimage.maximum_filter1d_backward(backend.asarray(cot), backend.asarray(x), 2))
    # size 2, reflect: output i reads (x[i-1], x[i]) with x[-1] = x[0]; the first of equal taps wins
    want = np.array([[-4.0, -3.0 + -2.0, -1.0, 0.0, 0.0], [1.0 + 2.0, 3.0, 4.0, 5.0, 0.0]])
    np.testing.assert_array_equal(got, want)
    torch = pytest.importorskip("torch")
    for mode in MODES:
        for name, size in (("uniform_filter1d", 12), ("minimum_filter1d", 11), ("maximum_filter1d", 9)):
            g = backend.to_numpy(getattr(ndimage, f"{name}_backward")(backend.asarray(cot), backend.asarray(x),
                                                                       size, mode=mode, cval=2.0))
            t = torch.from_numpy(x.copy()).requires_grad_(True)
            out = getattr(ndimage, name)(t, size, mode=mode, cval=2.0)
            (w,) = torch.autograd.grad((out * torch.from_numpy(cot)).sum(), t)
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-13, atol=1e-13, err_msg=f"{name} {mode}")


# ---------------------------------------------------------------------------------------------- B-spline exports
# the numbers of every mode and order are tests/test_frontend_scipy_spline.py's; these check the public names (they
# are poolspec's, not the mirrored SciPy's) and the transforms their cards claim, against SciPy

SPLINE_CALLS = [
    ("spline_filter1d", {"order": 4, "axis": 0, "mode": "reflect"}),  # a short reflect axis: 1.17.1's aliasing
    ("spline_filter", {"order": 3, "mode": "grid-wrap"}),
    ("map_coordinates", {"order": 3, "mode": "nearest"}),  # the npad = 12 prefilter
    ("map_coordinates", {"order": 2, "mode": "constant", "cval": 0.5, "prefilter": False}),
]


def _spline_problem(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 6))
    coords = np.stack([rng.uniform(-1.5, 6.0, 9), rng.uniform(-1.5, 7.0, 9)])
    return x, coords, rng.standard_normal((9,)), rng.standard_normal((5, 6))


def _spline_args(name, coords):
    return (coords,) if name == "map_coordinates" else ()


def _jacobian_t(name, options, x, coords, cot):
    """<cot, d scipy_f / dx_i>: SciPy's function is affine in the input, so its basis responses are exact."""
    f = lambda v: getattr(ndi, name)(v, *_spline_args(name, coords), **options)  # noqa: E731
    base, g = f(np.zeros_like(x)), np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = 1.0
        g.flat[i] = np.sum(cot * (f(e) - base))
    return g


def test_spline_functions_are_poolspecs_and_listed():
    import inspect

    from poolspec.frontends.scipy.ndimage import _splines

    for name in ("spline_filter1d", "spline_filter", "map_coordinates"):
        for n in (name, f"{name}_backward"):
            fn = getattr(ndimage, n)
            assert n in ndimage.__all__ and fn.__module__ == "poolspec.frontends.scipy.ndimage", n
            assert inspect.signature(fn) == inspect.signature(getattr(_splines, n)), n
        assert list(inspect.signature(getattr(ndimage, name)).parameters) == list(
                inspect.signature(getattr(ndi, name)).parameters), name


@pytest.mark.parametrize("name,options", SPLINE_CALLS)
def test_spline_exports_against_scipy(name, options, backend):
    x, coords, _, _ = _spline_problem(7)
    extra = _spline_args(name, coords)
    want = getattr(ndi, name)(x, *extra, **options)
    got = backend.to_numpy(getattr(ndimage, name)(backend.asarray(x), *[backend.asarray(c) for c in extra],
                                                  **options))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    cot = np.ones_like(want)
    grad = backend.to_numpy(getattr(ndimage, f"{name}_backward")(
        backend.asarray(cot), backend.asarray(x), *[backend.asarray(c) for c in extra], **options))
    np.testing.assert_allclose(grad, _jacobian_t(name, options, x, coords, cot), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,options", SPLINE_CALLS)
def test_spline_torch_transforms_the_cards_claim(name, options):
    """autograd (second order: the VJP is linear, its own gradient the forward's linear part), torch.func.grad,
    vmap and jvp: SciPy's values and Jacobian (jacrev on the spline filters only: map_coordinates' Function pair
    has no vmap rule, its card says so)."""
    torch = pytest.importorskip("torch")
    from poolspec.spec import frontend_card

    x, coords, cot_map, t = _spline_problem(8)
    extra = [torch.from_numpy(c) for c in _spline_args(name, coords)]
    cot = cot_map if name == "map_coordinates" else np.random.default_rng(9).standard_normal(x.shape)
    f = lambda v: getattr(ndimage, name)(v, *extra, **options)  # noqa: E731
    loss = lambda v: (f(v) * torch.from_numpy(cot)).sum()  # noqa: E731
    want = _jacobian_t(name, options, x, coords, cot)
    claimed = frontend_card(f"scipy.ndimage.{name}").gradient.torch
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    (g,) = torch.autograd.grad(loss(xt), xt, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    if g.requires_grad:  # linear in the input: the second derivative is zero (or the gradient a constant)
        (gg,) = torch.autograd.grad((g * torch.from_numpy(t)).sum(), xt, allow_unused=True)
        assert gg is None or float(gg.abs().max()) == 0.0
    assert {"torch.func.grad", "torch.func.vmap", "torch.func.jvp"} <= set(claimed)
    np.testing.assert_allclose(torch.func.grad(loss)(xt.detach()).numpy(), want, rtol=1e-10, atol=1e-12)
    batched = torch.func.vmap(f)(torch.stack([xt.detach(), 2 * xt.detach()]))
    for b, v in zip(batched, (x, 2 * x)):
        np.testing.assert_allclose(b.numpy(), getattr(ndi, name)(v, *_spline_args(name, coords), **options),
                                   rtol=1e-10, atol=1e-12)
    _, tangent = torch.func.jvp(f, (xt.detach(),), (torch.from_numpy(t),))
    np.testing.assert_allclose(float((tangent * torch.from_numpy(cot)).sum()), float(np.sum(want * t)), rtol=1e-10)
    if "torch.func.jacrev" in claimed:
        np.testing.assert_allclose(torch.func.jacrev(loss)(xt.detach()).numpy(), want, rtol=1e-10, atol=1e-12)
    else:
        assert name == "map_coordinates"


@pytest.mark.parametrize("name,options", SPLINE_CALLS)
def test_spline_jax_transforms_the_cards_claim(name, options):
    """jit, grad, grad-of-grad, vmap and jacrev against SciPy; jvp and jacfwd where claimed (not map_coordinates:
    a custom_vjp)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from poolspec.spec import frontend_card

    x, coords, cot_map, t = _spline_problem(10)
    extra = [jnp.asarray(c) for c in _spline_args(name, coords)]
    cot = cot_map if name == "map_coordinates" else np.random.default_rng(11).standard_normal(x.shape)
    f = lambda v: getattr(ndimage, name)(v, *extra, **options)  # noqa: E731
    loss = lambda v: jnp.sum(f(v) * cot)  # noqa: E731
    want = _jacobian_t(name, options, x, coords, cot)
    claimed = set(frontend_card(f"scipy.ndimage.{name}").gradient.jax)
    assert {"jit", "grad", "grad-of-grad", "vmap", "jacrev"} <= claimed
    xj = jnp.asarray(x)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(xj)), getattr(ndi, name)(x, *_spline_args(name, coords),
                                                                               **options), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(xj)), want, rtol=1e-10, atol=1e-12)
    second = jax.grad(lambda v: jnp.sum(jax.grad(loss)(v) * t))(xj)
    assert float(jnp.abs(second).max()) == 0.0  # linear in the input
    batched = jax.vmap(f)(jnp.stack([xj, 2 * xj]))
    np.testing.assert_allclose(np.asarray(batched[1]), getattr(ndi, name)(2 * x, *_spline_args(name, coords),
                                                                           **options), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jacrev(loss)(xj)), want, rtol=1e-10, atol=1e-12)
    if "jvp" in claimed:
        _, tangent = jax.jvp(f, (xj,), (jnp.asarray(t),))
        np.testing.assert_allclose(float(jnp.sum(tangent * cot)), float(np.sum(want * t)), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(jax.jacfwd(loss)(xj)), want, rtol=1e-10, atol=1e-12)
    else:
        assert name == "map_coordinates"


def test_map_coordinates_coordinate_gradient_first_order():
    """The coordinates' gradient its card claims (first order, torch and JAX) against central differences of
    SciPy, points away from the knots."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((5, 6))
    coords = np.stack([rng.uniform(0.1, 3.9, 7), rng.uniform(-0.9, 5.9, 7)])
    coords = np.floor(coords * 2) / 2 + 0.05 + 0.4 * rng.random(coords.shape)  # 0.05 from the (half-)knots
    cot = rng.standard_normal(7)
    options = {"order": 3, "mode": "mirror"}
    h, want = 1e-6, np.zeros_like(coords)
    for i in range(coords.size):
        e = np.zeros_like(coords)
        e.flat[i] = h
        want.flat[i] = np.sum(cot * (ndi.map_coordinates(x, coords + e, **options)
                                     - ndi.map_coordinates(x, coords - e, **options))) / (2 * h)
    c = torch.from_numpy(coords.copy()).requires_grad_(True)
    (gt,) = torch.autograd.grad((ndimage.map_coordinates(torch.from_numpy(x), c, **options)
                                 * torch.from_numpy(cot)).sum(), c)
    gj = jax.grad(lambda v: jax.numpy.sum(ndimage.map_coordinates(jax.numpy.asarray(x), v, **options) * cot))(
        jax.numpy.asarray(coords))
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(gt.numpy(), want, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(np.asarray(gj), want, rtol=0, atol=1e-7 * scale)
