"""scipy.ndimage's geometric transforms (``zoom``, ``shift``, ``affine_transform``, ``rotate``) and their input
gradients against live SciPy on every installed backend: every boundary mode, orders 0-5, ranks 1-3, grid_mode,
every matrix form, output shapes, reshape and axes, prefilter off, integer outputs, non-finite inputs and the
refusals. JAX and Dask run fewer, smaller configurations (each new shape compiles or builds a graph)."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")

from poolspec.frontends.scipy.ndimage import _geometry as geo  # noqa: E402
from poolspec.frontends.scipy.ndimage import _splines as spline  # noqa: E402

MODES = spline.MODES
if bool(ndi.spline_filter1d(np.eye(2), 2, axis=0, mode="reflect")[0, 1] == -1 / 6):
    pytest.skip("the installed SciPy has the fixed reflect prefilter; the front-end mirrors 1.17.1",
                allow_module_level=True)
SLOW = ("jax", "dask")  # each new shape compiles (JAX) or builds a graph (Dask): two modes per test there
MID = ("array_api_strict", "torch")


def _modes(backend, mode, *keep):
    if backend.name in SLOW and mode not in keep:
        pytest.skip("fewer modes on JAX and Dask (every mode runs on NumPy, torch and array_api_strict)")


def _check(backend, want, got, scale):
    got = backend.to_numpy(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    elif want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * scale)


def _both(backend, name, x, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # grid_mode with constant/wrap: SciPy's advice
        want = getattr(ndi, name)(x, *args, **kw)
        got = getattr(geo, name)(backend.asarray(x), *args, **kw)
    _check(backend, want, got, max(1.0, float(np.abs(x).max()), abs(kw.get("cval", 0.0))))


def _shapes(backend):
    if backend.name in SLOW:
        return ((4, 5),)
    return ((6,), (3, 4, 5)) if backend.name in MID else ((7,), (5, 6), (3, 4, 5))


def _orders(backend):
    if backend.name in SLOW:
        return (1, 3)
    return (0, 1, 2, 5) if backend.name in MID else range(6)


@pytest.mark.parametrize("mode", MODES)
def test_zoom(mode, backend):
    """Zoom below and above 1, grid_mode both ways (its own coordinate map), prefilter on and off."""
    _modes(backend, mode, "grid-constant", "mirror")
    rng = np.random.default_rng(0)
    for shape in _shapes(backend):
        x = rng.standard_normal(shape)
        for order in _orders(backend):
            for z, grid in ((0.37, False), (1.6, True), (2.0, False), (0.5, True)):
                if backend.name != "numpy" and z in (2.0, 0.5):
                    continue
                _both(backend, "zoom", x, z, order=order, mode=mode, cval=0.7, grid_mode=grid)
            _both(backend, "zoom", x, [1.3] + [0.8] * (len(shape) - 1), order=order, mode=mode, prefilter=False)


@pytest.mark.parametrize("mode", MODES)
def test_shift(mode, backend):
    _modes(backend, mode, "nearest", "wrap")
    rng = np.random.default_rng(1)
    for shape in _shapes(backend):
        x = rng.standard_normal(shape)
        for order in _orders(backend):
            for s in (-2.5, [1.25] + [-0.4] * (len(shape) - 1)):
                _both(backend, "shift", x, s, order=order, mode=mode, cval=-1.5)
            _both(backend, "shift", x, 13.7, order=order, mode=mode, prefilter=False)


@pytest.mark.parametrize("mode", MODES)
def test_long_axes(mode, backend):
    """Axes beyond the dense prefilter (banded), with the prefilter composed into the taps (output no longer than
    the input, on eager backends) and not (zoom above 1)."""
    if backend.name in SLOW + MID:
        pytest.skip("the same tables as on NumPy")
    x = np.random.default_rng(13).standard_normal((130, 3)) * 10
    for order in (2, 5):
        _both(backend, "zoom", x, (0.37, 1), order=order, mode=mode, cval=0.5)
        _both(backend, "zoom", x, (1.6, 0.7), order=order, mode=mode, cval=0.5, grid_mode=True)
        _both(backend, "shift", x, (-7.3, 0.5), order=order, mode=mode, cval=0.5)
        _both(backend, "affine_transform", x, (0.8, 1.0), (3.0, 0.2), order=order, mode=mode, cval=0.5)


@pytest.mark.parametrize("mode", MODES)
def test_affine_transform_every_matrix_form(mode, backend):
    """(nd,) diagonal (SciPy's zoom_shift path and its (k + off/m) * m rounding), (nd, nd), (nd, nd+1) and
    (nd+1, nd+1) homogeneous, and an output_shape of another size and rank."""
    _modes(backend, mode, "constant", "grid-wrap")
    rng = np.random.default_rng(2)
    for shape in _shapes(backend):
        nd = len(shape)
        x = rng.standard_normal(shape)
        mat = np.eye(nd) + 0.3 * rng.standard_normal((nd, nd))
        off = rng.standard_normal(nd) * 2
        hom = np.vstack([np.hstack([mat, off[:, None]]), np.eye(1, nd + 1, nd)])
        for order in _orders(backend):
            _both(backend, "affine_transform", x, np.diag(mat), off, order=order, mode=mode, cval=0.3)
            _both(backend, "affine_transform", x, mat, off, order=order, mode=mode, cval=0.3)
            if backend.name not in SLOW:
                _both(backend, "affine_transform", x, hom[:nd], order=order, mode=mode)
                _both(backend, "affine_transform", x, hom, order=order, mode=mode, prefilter=False)
                oshape = tuple(n + 2 for n in shape)
                _both(backend, "affine_transform", x, mat, off, output_shape=oshape, order=order, mode=mode)
                _both(backend, "affine_transform", x, np.diag(mat) * 0.5, -off, output_shape=oshape, order=order,
                      mode=mode)
    if backend.name not in SLOW:
        x = rng.standard_normal((5, 6))
        _both(backend, "affine_transform", x, rng.standard_normal((2, 1)), output_shape=(7,), order=3, mode=mode)
        _both(backend, "affine_transform", x, rng.standard_normal((2, 4)) * 0.5, output_shape=(2, 3, 2, 3),
              order=2, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_rotate(mode, backend):
    """reshape both ways, axes in either order and negative, angles at and off the octants (cephes cosdg/sindg),
    3-D inputs plane by plane (prefilter in the plane only)."""
    _modes(backend, mode, "reflect", "grid-mirror")
    rng = np.random.default_rng(3)
    x2 = rng.standard_normal((5, 7))
    x3 = rng.standard_normal((4, 5, 3))
    orders = _orders(backend)
    for order in orders:
        for angle, reshape in ((30, True), (-12.3, False), (90, True), (135, False)):
            if backend.name in SLOW and angle in (90, 135):
                continue
            _both(backend, "rotate", x2, angle, reshape=reshape, order=order, mode=mode, cval=0.25)
    for axes, angle in (((1, 0), 30), ((0, 2), 45), ((-1, 1), 200.0)):
        if backend.name in SLOW and angle != 45:
            continue
        _both(backend, "rotate", x3, angle, axes=axes, order=3, mode=mode)
    if backend.name not in SLOW:
        _both(backend, "rotate", x3, 33, axes=(2, 1), reshape=False, order=4, mode=mode, prefilter=False)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32"])
def test_output_dtypes(dtype, backend):
    """The input's dtype by default (integers rounded half up / half away from zero and clipped), or ``output``."""
    if backend.name in SLOW and dtype in ("int16", "int32"):
        pytest.skip("fewer dtypes on JAX and Dask")
    rng = np.random.default_rng(4)
    xf = rng.uniform(-40, 300, (6, 7))
    x = np.clip(xf, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype) if dtype != "float32" else \
        xf.astype(dtype)
    _both(backend, "zoom", x, 1.5, order=1)
    _both(backend, "shift", x, (0.5, -1.5), order=3, mode="nearest")
    _both(backend, "rotate", x, 30, order=2)
    _both(backend, "affine_transform", x, [[0.9, 0.2], [-0.1, 1.1]], 0.4, order=1, mode="reflect")
    _both(backend, "zoom", xf, 0.7, output=np.dtype(dtype), order=3, mode="mirror")
    _both(backend, "shift", xf, 0.5, output=np.dtype(dtype), order=1, mode="grid-wrap")


def test_zoom_one_is_a_copy_and_empty_outputs(backend):
    """SciPy's early exit (every zoom 1 with prefilter: the input as is, even at order 0 or 5) and zoom 0."""
    x = np.random.default_rng(5).standard_normal((4, 5))
    for order in (0, 5):
        _both(backend, "zoom", x, 1, order=order, mode="wrap")
        _both(backend, "zoom", x, 1.0, order=order, prefilter=False)
    _both(backend, "zoom", x, (0, 1.5), order=3)
    _both(backend, "zoom", x * 100, 1, output=np.int16)


@pytest.mark.parametrize("function", ["zoom", "shift", "rotate", "affine_transform"])
def test_nonfinite_inputs(function, backend):
    """NaN and inf spread as in SciPy, also through taps of weight 0 (which SciPy still reads)."""
    if backend.name in SLOW:
        pytest.skip("the same programs as on NumPy")
    rng = np.random.default_rng(6)
    args = {"zoom": (2.0,), "shift": (1.0,), "rotate": (30,), "affine_transform": ([1.0, 0.5], 1.0)}[function]
    for mode in MODES:
        for order in range(6):
            x = rng.standard_normal((5, 6))
            x[1, 2], x[3, 4] = np.nan, np.inf
            for prefilter in (True, False):
                want = getattr(ndi, function)(x, *args, order=order, mode=mode, prefilter=prefilter)
                got = backend.to_numpy(getattr(geo, function)(backend.asarray(x), *args, order=order, mode=mode,
                                                              prefilter=prefilter))
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-10, atol=1e-12)


def test_zero_diagonal_matrix():
    """A 1-D matrix with a zero entry: SciPy's off / m is inf or NaN, so the coordinate is NaN (cval under constant,
    NaN under nearest and grid-constant; SciPy crashes in the other modes, here cval)."""
    x = np.random.default_rng(7).standard_normal((5, 6))
    for mode in ("constant", "nearest", "grid-constant"):
        for order in (0, 1, 3):
            for off in (0.0, 1.0):
                want = ndi.affine_transform(x, [0.0, 1.0], off, order=order, mode=mode, cval=0.5)
                got = geo.affine_transform(x, [0.0, 1.0], off, order=order, mode=mode, cval=0.5)
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-12)
    got = geo.affine_transform(x, [0.0, 1.0], 1.0, order=1, mode="reflect", cval=0.5)
    assert np.all(got == 0.5)


def test_cosdg_sindg_are_cephes():
    special = pytest.importorskip("scipy.special")
    angles = np.concatenate([np.random.default_rng(8).uniform(-800, 800, 3000), np.arange(-720, 721, 7.5), [-0.0]])
    for a in angles:
        assert geo.cosdg(a) == special.cosdg(a) and geo.sindg(a) == special.sindg(a), a


def test_grid_mode_warning():
    with pytest.warns(UserWarning, match="grid-constant"):
        geo.zoom(np.ones((3, 3)), 2, grid_mode=True)


x4 = np.ones((4, 4))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: geo.zoom(x4, 2, order=6), "order"),
    (lambda: geo.zoom(x4, 2, mode="edge"), "mode"),
    (lambda: geo.zoom(x4, (2, 2, 2)), "zoom"),
    (lambda: geo.zoom(x4, -1), "zoom"),
    (lambda: geo.zoom(x4, "a"), "zoom"),
    (lambda: geo.zoom(x4, 2, grid_mode=1), "grid_mode"),
    (lambda: geo.zoom(np.ones(3, np.float16), 2), "input"),
    (lambda: geo.zoom(np.ones(3, np.complex128), 2), "input"),
    (lambda: geo.zoom(np.float64(1.0), 2), "input"),
    (lambda: geo.zoom(x4, 2, output=np.empty((8, 8))), "output"),
    (lambda: geo.shift(x4, [1, 2, 3]), "shift"),
    (lambda: geo.shift(x4, np.nan), "shift"),
    (lambda: geo.shift(x4, 1, cval="a"), "cval"),
    (lambda: geo.shift(x4, 1, prefilter="yes"), "prefilter"),
    (lambda: geo.affine_transform(x4, np.ones((2, 2, 2))), "matrix"),
    (lambda: geo.affine_transform(x4, np.ones((3, 2))), "matrix"),
    (lambda: geo.affine_transform(x4, np.ones((2, 3)), output_shape=(4, 4, 4)), "matrix"),
    (lambda: geo.affine_transform(x4, np.ones((3, 3))), "matrix"),
    (lambda: geo.affine_transform(x4, np.eye(2), [1, 2, 3]), "offset"),
    (lambda: geo.affine_transform(x4, np.eye(2), output_shape=(4, -1)), "output_shape"),
    (lambda: geo.affine_transform(x4, [1.0, 1.0], output_shape=(4,)), "output_shape"),
    (lambda: geo.affine_transform(x4, [[1.0, np.inf], [0, 1]]), "matrix"),
    (lambda: geo.rotate(np.ones(4), 30), "input"),
    (lambda: geo.rotate(x4, 30, axes=(0, 1, 2)), "axes"),
    (lambda: geo.rotate(x4, 30, axes=(0.5, 1)), "axes"),
    (lambda: geo.rotate(x4, 30, axes=(0, 2)), "axes"),
    (lambda: geo.rotate(x4, 30, axes=(1, 1)), "axes"),
    (lambda: geo.rotate(x4, np.inf), "angle"),
    (lambda: geo.zoom_backward(np.ones((3, 3)), x4, 2), "grad_output"),
    (lambda: geo.shift_backward(np.ones((4, 4)), x4.astype(np.int32), 1), "input"),
])
def test_refusals(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


@pytest.mark.parametrize(("function", "args"), [
    ("zoom", (0.0,)), ("shift", ([1, 2, 3],)), ("affine_transform", (np.ones((2, 2, 2)),)),
    ("affine_transform", (np.ones((3, 2)),)), ("rotate", (30, (0, 2)))])
def test_scipy_refuses_these_too(function, args):
    """The refusals above that are not definitions of undefined cases: SciPy refuses them as well."""
    if function == "zoom":
        assert ndi.zoom(x4, *args).size == 0 and geo.zoom(x4, *args).size == 0
        return
    with pytest.raises((ValueError, RuntimeError)):
        getattr(ndi, function)(x4, *args)


# -------------------------------------------------------------------------------------------------- backward


def _jacobian(fn, shape):
    n = int(np.prod(shape))
    base = np.ravel(fn(np.zeros(shape)))
    return np.stack([np.ravel(fn(np.eye(n)[j].reshape(shape))) - base for j in range(n)], axis=1)


def _apply(module, function, args, opts, v):
    return getattr(module, function)(v, *args, **opts)


def _weighted(jnp, run, w, v):
    return jnp.sum(run(v) * w)


def _backward_cases(backend):
    cases = [("zoom", (4, 5), (1.7,), {"grid_mode": True}), ("shift", (6,), (-1.3,), {}),
             ("affine_transform", (3, 4), (np.array([[0.9, 0.3], [-0.2, 1.1]]), (0.4, -0.7)), {}),
             ("rotate", (4, 5), (30,), {})]
    if backend.name not in SLOW:
        cases += [("zoom", (3, 4, 2), ((0.6, 1.5, 2.0),), {}),
                  ("affine_transform", (5, 4), (np.array([1.3, 0.7]), (0.4, -0.7)), {"output_shape": (6, 3)}),
                  ("rotate", (3, 4, 2), (-40,), {"axes": (0, 2), "reshape": False})]
    return cases


@pytest.mark.parametrize("mode", MODES)
def test_backward_is_scipys_transpose(mode, backend):
    """The explicit VJPs against SciPy's Jacobian w.r.t. the input, and bit-identical over repeats."""
    _modes(backend, mode, "nearest")
    rng = np.random.default_rng(9)
    orders = ((3, True),) if backend.name in SLOW else ((0, True), (1, True), (3, False), (4, True))
    for function, shape, args, kw in _backward_cases(backend):
        for order, prefilter in orders:
            opts = dict(kw, order=order, mode=mode, cval=0.5, prefilter=prefilter)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                jac = _jacobian(partial(_apply, ndi, function, args, opts), shape)
            g = rng.standard_normal(jac.shape[0])
            oshape = getattr(ndi, function)(np.zeros(shape), *args, **opts).shape
            want = (jac.T @ g).reshape(shape)
            back = getattr(geo, function + "_backward")
            call = partial(back, backend.asarray(g.reshape(oshape)), backend.asarray(np.zeros(shape)), *args, **opts)
            got = call()
            _check(backend, want, got, 10.0)
            np.testing.assert_array_equal(backend.to_numpy(call()), backend.to_numpy(got))


def test_autograd_torch():
    """torch autograd w.r.t. the input equals SciPy's transpose; gradcheck and gradgradcheck (every order)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    for function, shape, args, kw in _backward_cases(type("B", (), {"name": "torch"})()):
        opts = dict(kw, order=3, mode="mirror", cval=0.5)
        jac = _jacobian(partial(_apply, ndi, function, args, opts), shape)
        g = rng.standard_normal(jac.shape[0])
        x = torch.tensor(rng.standard_normal(shape), requires_grad=True)
        y = getattr(geo, function)(x, *args, **opts)
        y.backward(torch.tensor(g.reshape(tuple(y.shape))))
        np.testing.assert_allclose(x.grad.numpy(), (jac.T @ g).reshape(shape), rtol=1e-10, atol=1e-12)
        if len(shape) == 2:
            f2 = partial(_apply, geo, function, args, dict(opts, cval=0.0))
            v = torch.tensor(rng.standard_normal(shape), requires_grad=True)
            assert torch.autograd.gradcheck(f2, (v,)) and torch.autograd.gradgradcheck(f2, (v,))


def test_grad_jax():
    """jax.grad (and under jit) w.r.t. the input equals SciPy's transpose."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(11)
    for function, shape, args, kw in _backward_cases(type("B", (), {"name": "jax"})())[::3]:
        opts = dict(kw, order=3, mode="reflect", cval=0.5)
        jac = _jacobian(partial(_apply, ndi, function, args, opts), shape)
        g = rng.standard_normal(jac.shape[0])
        oshape = getattr(ndi, function)(np.zeros(shape), *args, **opts).shape
        weights = jnp.asarray(g.reshape(oshape))
        f = jax.grad(partial(_weighted, jnp, partial(_apply, geo, function, args, opts), weights))
        got = f(jnp.asarray(rng.standard_normal(shape)))
        np.testing.assert_allclose(np.asarray(got), (jac.T @ g).reshape(shape), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["constant", "reflect", "grid-wrap", "nearest"])
def test_parameter_gradients(mode):
    """The gradient w.r.t. shift (torch tensor or traced JAX value) and w.r.t. matrix and offset, through
    map_coordinates' coordinate gradient, against central differences of SciPy; the values stay SciPy's."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(12)
    x, g = rng.standard_normal((5, 6)), rng.standard_normal((5, 6))
    h = 1e-6

    def central(fn, p):
        return np.array([(fn(p + h * e) - fn(p - h * e)) / (2 * h) for e in np.eye(p.size)]).reshape(p.shape)

    s, mat, off = np.array([0.37, -1.21]), np.array([[0.9, 0.2], [-0.15, 1.1]]), np.array([0.31, -0.77])
    opts = dict(order=3, mode=mode, cval=0.4)
    want_s = central(lambda v: np.sum(ndi.shift(x, v, **opts) * g), s)
    want_m = central(lambda v: np.sum(ndi.affine_transform(x, v.reshape(2, 2), off, **opts) * g), mat.ravel())
    want_o = central(lambda v: np.sum(ndi.affine_transform(x, mat, v, **opts) * g), off)
    st = torch.tensor(s, requires_grad=True)
    y = geo.shift(torch.tensor(x), st, **opts)
    np.testing.assert_allclose(y.detach().numpy(), ndi.shift(x, s, **opts), rtol=1e-10, atol=1e-12)
    (y * torch.tensor(g)).sum().backward()
    mt, ot = torch.tensor(mat, requires_grad=True), torch.tensor(off, requires_grad=True)
    (geo.affine_transform(torch.tensor(x), mt, ot, **opts) * torch.tensor(g)).sum().backward()
    gs = jax.grad(lambda v: jnp.sum(geo.shift(jnp.asarray(x), v, **opts) * g))(jnp.asarray(s))
    gm, go = jax.grad(lambda a, b: jnp.sum(geo.affine_transform(jnp.asarray(x), a, b, **opts) * g),
                      argnums=(0, 1))(jnp.asarray(mat), jnp.asarray(off))
    for got, want in ((st.grad.numpy(), want_s), (np.asarray(gs), want_s), (mt.grad.numpy(), want_m.reshape(2, 2)),
                      (np.asarray(gm), want_m.reshape(2, 2)), (ot.grad.numpy(), want_o), (np.asarray(go), want_o)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())


def test_jax_jit_and_vmap():
    """jax.jit and jax.vmap of the separable and the gathered transforms match SciPy per batch element (a script
    also checked vmap of grad for all four)."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    xs = np.random.default_rng(14).standard_normal((2, 5, 6))
    mat = np.array([[0.9, 0.2], [-0.15, 1.1]])
    for function, args in (("zoom", (1.7,)), ("affine_transform", (mat, (0.3, 0.1)))):
        run = partial(_apply, geo, function, args, {"mode": "nearest"})
        want = np.stack([getattr(ndi, function)(x, *args, mode="nearest") for x in xs])
        np.testing.assert_allclose(np.asarray(jax.jit(run)(jnp.asarray(xs[0]))), want[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(jax.vmap(run)(jnp.asarray(xs))), want, rtol=1e-10, atol=1e-12)
