"""The scipy.ndimage spline machinery (``spline_filter1d``, ``spline_filter``, ``map_coordinates``) against live
SciPy on every installed backend: every boundary mode, orders 0-5, prefilter on and off, coordinates in and out of
range with SciPy's special points, short axes (SciPy 1.17.1's reflect prefilter aliasing), output dtypes, and the
refusals."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")

from poolspec.frontends.scipy.ndimage import _splines as spline  # noqa: E402

MODES = spline.MODES
# the aliasing in SciPy 1.17.1's _init_causal_reflect: this entry is -1/6 once fixed (upstream d2a1c1ce1f)
ALIASED = bool(ndi.spline_filter1d(np.eye(2), 2, axis=0, mode="reflect")[0, 1] != -1 / 6)
if not ALIASED:
    pytest.skip("the installed SciPy has the fixed reflect prefilter; the front-end mirrors 1.17.1",
                allow_module_level=True)


# JAX compiles, and Dask graphs, each new shape of call: there the configurations below take turns (every mode and
# order still met, each against live SciPy) to keep the file near a minute per backend
SLOW = ("jax", "dask")


def _turns(backend, configs, key, keep=2):
    """All of ``configs``, or on a slow backend ``keep`` of them chosen by ``key`` (rotating over the calls)."""
    if backend.name not in SLOW:
        return list(configs)
    return [configs[(key + i * (len(configs) // keep or 1)) % len(configs)] for i in range(keep)]


def _check(backend, want, got, scale):
    got = backend.to_numpy(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    elif want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)
    else:
        # atol: true zeros come out as rounding noise (about 1e-17) on either side
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13 * scale)


def _coords(rng, shape, points):
    rows = []
    for n in shape:
        u = rng.uniform(-2 * n - 1, 3 * n + 1, points)
        u[: points // 4] = np.round(u[: points // 4])
        u[points // 4: points // 2] = np.round(u[points // 4: points // 2]) + 0.5
        special = [0, n - 1, -0.5, n - 0.5, -1, n, 1e-16, -1e-16, n - 1 + 1e-13, -(n - 1), 2 * n - 2, -1e-14]
        u[-len(special):] = rng.permutation(special)
        rows.append(u)
    return np.stack(rows)


@pytest.mark.parametrize("mode", MODES)
def test_spline_filter1d_every_order_and_length(mode, backend):
    """Short axes take the replayed recursion (aliasing included) as one dense matmul, longer ones (beyond 160
    cells) the folded band in blocks; along the last axis and along a middle one."""
    rng = np.random.default_rng(0)
    lengths = (1, 2, 3, 5, 9, 16, 17, 41, 56, 88, 130, 161, 300)
    if backend.name in SLOW:
        lengths = (1, 2, 16, 17, 56, 161, 300)
    for length in lengths:
        x = rng.standard_normal((2, length))
        for order in range(6):
            want = ndi.spline_filter1d(x, order, axis=1, mode=mode)
            _check(backend, want, spline.spline_filter1d(backend.asarray(x), order, axis=1, mode=mode), 4.0)
    x = rng.standard_normal((3, 200, 2))
    for order in (2, 5):
        want = ndi.spline_filter1d(x, order, axis=1, mode=mode)
        _check(backend, want, spline.spline_filter1d(backend.asarray(x), order, axis=1, mode=mode), 4.0)


@pytest.mark.parametrize("mode", MODES)
def test_spline_filter_every_axis_and_output_dtype(mode, backend):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 3, 50)) * 20
    for order in (2, 3, 4, 5):
        want = ndi.spline_filter(x, order, mode=mode)
        _check(backend, want, spline.spline_filter(backend.asarray(x), order, mode=mode), 80.0)
    # each axis pass is stored in the output dtype: float32 rounded, integers truncated, per pass. Integer
    # results are compared on axes of 17 cells and more: on short axes SciPy's matrix has small denominators, so
    # integer inputs (every pass after the first) give exact integers that its recursion and our matrix may round
    # to either side before the truncation (a documented deviation)
    want = ndi.spline_filter(x, 3, output=np.float32, mode=mode)
    _check(backend, want, spline.spline_filter(backend.asarray(x), 3, output=np.float32, mode=mode), 80.0)
    xl = rng.standard_normal((18, 19, 50)) * 20
    for out in ("int32", "int16"):
        want = ndi.spline_filter(xl, 3, output=np.dtype(out), mode=mode)
        _check(backend, want, spline.spline_filter(backend.asarray(xl), 3, output=np.dtype(out), mode=mode), 80.0)
    xi = rng.integers(-50, 50, (4, 6)).astype(np.int16)
    want = ndi.spline_filter(xi, 4, mode=mode)
    _check(backend, want, spline.spline_filter(backend.asarray(xi), 4, mode=mode), 50.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", range(6))
def test_map_coordinates_every_mode_order_and_prefilter(mode, order, backend):
    rng = np.random.default_rng(2 + order)
    for shape in _turns(backend, ((7,), (1,), (5, 4), (2, 3, 16)), order + MODES.index(mode)):
        x = rng.standard_normal(shape)
        co = _coords(rng, shape, 48)
        for prefilter, cval in _turns(backend, ((True, -1.75), (False, 0.5)), order + len(shape), keep=1):
            want = ndi.map_coordinates(x, co, order=order, mode=mode, cval=cval, prefilter=prefilter)
            got = spline.map_coordinates(backend.asarray(x), backend.asarray(co), order=order, mode=mode,
                                         cval=cval, prefilter=prefilter)
            _check(backend, want, got, max(float(np.abs(x).max()), abs(cval)))


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_long_axes_and_coordinate_shapes(mode, backend):
    """Axes beyond the dense prefilter (the banded kernel, and the npad=12 pad for nearest and grid-constant);
    coordinates of any rank, given as NumPy or as integers."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 9))
    co = _coords(rng, x.shape, 60).reshape(2, 3, 4, 5)
    for order in (2, 5):
        want = ndi.map_coordinates(x, co, order=order, mode=mode, cval=0.5)
        _check(backend, want, spline.map_coordinates(backend.asarray(x), co, order=order, mode=mode, cval=0.5), 4.0)
    ci = rng.integers(-70, 70, (2, 33))
    want = ndi.map_coordinates(x, ci, order=3, mode=mode)
    _check(backend, want, spline.map_coordinates(backend.asarray(x), ci, order=3, mode=mode), 4.0)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_map_coordinates_specials(backend):
    """NaN and infinite coordinates (cval; NaN for nearest and grid-constant but at order 0); zero-weight taps
    still read (NaN spreads)."""
    x = np.arange(10.0)
    co = np.array([[np.nan, 2.0, 3.5, -0.5, 9.5, np.inf, -np.inf]])
    for mode in MODES:
        # +inf under wrap and grid-wrap: SciPy casts inf to an integer (undefined; unspecified here)
        c = co[:, :5] if mode in ("wrap", "grid-wrap") else co
        for order in (0, 1, 3):
            want = ndi.map_coordinates(x, c, order=order, mode=mode, cval=-3.0)
            got = spline.map_coordinates(backend.asarray(x), backend.asarray(c), order=order, mode=mode, cval=-3.0)
            np.testing.assert_array_equal(np.isnan(backend.to_numpy(got)), np.isnan(want), err_msg=mode)
            _check(backend, want, got, 10.0)
    xn = x.copy()
    xn[4] = np.nan
    co = np.array([[3.0, 5.0, 2.0, 6.0]])  # order 1 at 3.0 reads cell 4 with weight 0
    for order in (0, 1, 2):
        want = ndi.map_coordinates(xn, co, order=order, prefilter=False)
        got = backend.to_numpy(spline.map_coordinates(backend.asarray(xn), backend.asarray(co), order=order,
                                                      prefilter=False))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_map_coordinates_period_multiples(backend):
    """Coordinates at, beside and half way between whole multiples of each mode's period, near and far (to
    1e9 periods): the folds' quotients are exact there (XLA's division by a reciprocal once made JAX's reflect read
    cval at 2 * n * k and wrap read the last cell for the first)."""
    rng = np.random.default_rng(12)
    for n in (7, 12, 237):
        x = rng.standard_normal(n)
        for mode in MODES:
            period = {"reflect": 2 * n, "grid-mirror": 2 * n, "mirror": 2 * n - 2, "wrap": n - 1}.get(mode, n)
            k = np.concatenate([np.arange(-40, 41), rng.integers(-10**9, 10**9, 40)]).astype(np.float64) * period
            c = np.concatenate([k, k + 0.5, k - 1, k + 1, k + period / 2])[None]
            for order in _turns(backend, (0, 1, 3), n, keep=1):
                want = ndi.map_coordinates(x, c, order=order, mode=mode, cval=0.5)
                got = spline.map_coordinates(backend.asarray(x), backend.asarray(c), order=order, mode=mode,
                                             cval=0.5)
                _check(backend, want, got, 4.0)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32"])
def test_map_coordinates_output_dtypes(dtype, backend):
    """The default output is the input's dtype; integers round half up (unsigned, negatives to 0) or half away
    from zero (signed), clipped."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-300, 300, (6, 5)).astype(dtype if dtype != "uint8" else "float64")
    if dtype == "uint8":
        x = rng.integers(0, 256, (6, 5)).astype(np.uint8)
    co = _coords(rng, x.shape, 40)
    co[:, :8] = [[0.5, 1.5, 2.5, 0.25, 4.5, 3.0, 2.0, 1.0], [0.5, 0.5, 1.5, 2.5, 3.5, 0.0, 4.0, 1.5]]
    for order in (0, 1, 3):
        for mode in ("reflect", "constant", "nearest"):
            want = ndi.map_coordinates(x, co, order=order, mode=mode, cval=1.0)
            got = spline.map_coordinates(backend.asarray(x), backend.asarray(co), order=order, mode=mode, cval=1.0)
            _check(backend, want, got, 300.0)
    want = ndi.map_coordinates(x.astype(np.float64) * 2, co, output=np.dtype(dtype))
    got = spline.map_coordinates(backend.asarray(x.astype(np.float64) * 2), co, output=np.dtype(dtype))
    _check(backend, want, got, 600.0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: spline.spline_filter1d(np.ones(4), 6), "order"),
    (lambda: spline.spline_filter(np.ones(4), 1), "order"),
    (lambda: spline.spline_filter(np.ones(4), 3, mode="edge"), "mode"),
    (lambda: spline.spline_filter1d(np.ones(4), 3, axis=1), "axis"),
    (lambda: spline.map_coordinates(np.ones((3, 3)), np.zeros((3, 2))), "coordinates"),
    (lambda: spline.map_coordinates(np.ones(3), np.zeros((1, 2), np.complex128)), "coordinates"),
    (lambda: spline.map_coordinates(np.ones(3), np.zeros((1, 2), np.float16)), "coordinates"),
    (lambda: spline.map_coordinates(np.ones(3, np.float16), np.zeros((1, 2))), "input"),
    (lambda: spline.map_coordinates(np.ones(3), np.zeros((1, 2)), order=-1), "order"),
    (lambda: spline.map_coordinates(np.ones(3), np.zeros((1, 2)), cval="a"), "cval"),
])
def test_refusals(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_plan_is_banded_beyond_the_dense_length():
    """Beyond 2w + 1 cells the prefilter reads 2w + 1 taps per output (w = 20, 27, 35, 43), and matches SciPy's
    own matrix to rounding; up to 16 cells the reflect kind replays SciPy 1.17.1's recursion exactly."""
    for order, w in spline.WIDTH.items():
        plan = spline.prefilter_plan(200, order, "mirror")
        assert plan.taps == 2 * w + 1
        got = spline.spline_filter1d(np.eye(200), order, axis=0)
        want = ndi.spline_filter1d(np.eye(200), order, axis=0)
        assert np.abs(got - want).max() < 4e-15  # rounding of entries up to 3.4
    for length in range(2, 17):
        want = ndi.spline_filter1d(np.eye(length), 5, axis=0, mode="reflect")
        np.testing.assert_allclose(spline.recursion_matrix(length, 5, "reflect"), want, rtol=0, atol=1e-14)


def _jacobian(fn, shape):
    """SciPy's own map as a matrix (columns: the responses to unit inputs, less the response to zero)."""
    n = int(np.prod(shape))
    base = np.ravel(fn(np.zeros(shape)))
    return np.stack([np.ravel(fn(np.eye(n)[j].reshape(shape))) - base for j in range(n)], axis=1)


@pytest.mark.parametrize("mode", MODES)
def test_spline_filter_backward_is_scipys_transpose(mode, backend):
    rng = np.random.default_rng(5)
    for shape, order in (((3, 18), 2), ((5, 4), 5), ((44,), 3), ((2, 3, 2), 4)):
        g = rng.standard_normal(shape)
        want = (_jacobian(partial(ndi.spline_filter, order=order, mode=mode), shape).T @ g.ravel()).reshape(shape)
        got = spline.spline_filter_backward(backend.asarray(g), backend.asarray(np.zeros(shape)), order, mode=mode)
        _check(backend, want, got, 10.0)
        want = (_jacobian(partial(ndi.spline_filter1d, order=order, axis=0, mode=mode), shape).T
                @ g.ravel()).reshape(shape)
        got = spline.spline_filter1d_backward(backend.asarray(g), backend.asarray(np.zeros(shape)), order, axis=0,
                                              mode=mode)
        _check(backend, want, got, 10.0)


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_backward_is_scipys_transpose(mode, backend):
    """Against SciPy's Jacobian w.r.t. the input, and bit-identical over repeats (routed by sorting, no
    scatter-add)."""
    rng = np.random.default_rng(6)
    configs = ((0, True), (1, True), (2, True), (3, False), (5, True))
    for s, shape in enumerate(((6,), (3, 4), (2, 3, 2))):
        co = _coords(rng, shape, 36)
        g = rng.standard_normal(36)
        for order, prefilter in _turns(backend, configs, MODES.index(mode) + s, keep=1):
            jac = _jacobian(partial(ndi.map_coordinates, coordinates=co, order=order, mode=mode, cval=0.5,
                                    prefilter=prefilter), shape)
            want = (jac.T @ g).reshape(shape)
            args = (backend.asarray(g), backend.asarray(np.zeros(shape)), backend.asarray(co))
            got = spline.map_coordinates_backward(*args, order=order, mode=mode, cval=0.5, prefilter=prefilter)
            _check(backend, want, got, 10.0)
            again = spline.map_coordinates_backward(*args, order=order, mode=mode, cval=0.5, prefilter=prefilter)
            np.testing.assert_array_equal(backend.to_numpy(again), backend.to_numpy(got))


def test_spline_filter_autograd_torch():
    """torch autograd through the prefilter's tap tables equals the explicit backward (and SciPy's transpose)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = torch.tensor(rng.standard_normal((4, 19)), requires_grad=True)
    g = rng.standard_normal((4, 19))
    spline.spline_filter(x, 3, mode="reflect").backward(torch.tensor(g))
    want = (_jacobian(lambda v: ndi.spline_filter(v, 3, mode="reflect"), (4, 19)).T @ g.ravel()).reshape(4, 19)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-13)


def test_spline_filter_grad_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(8)
    g = rng.standard_normal((5, 3))
    got = jax.grad(lambda v: jnp.sum(spline.spline_filter1d(v, 4, axis=0, mode="grid-wrap") * g))(
        jnp.asarray(rng.standard_normal((5, 3))))
    want = (_jacobian(lambda v: ndi.spline_filter1d(v, 4, axis=0, mode="grid-wrap"), (5, 3)).T
            @ g.ravel()).reshape(5, 3)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("mode", ["nearest", "reflect", "grid-constant", "wrap"])
def test_map_coordinates_autodiff_torch(mode):
    """torch autograd w.r.t. the input: SciPy's transpose, to every order (gradcheck, gradgradcheck), and
    bit-identical over repeats."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    co, g = _coords(rng, (4, 5), 30), rng.standard_normal(30)
    fn = partial(ndi.map_coordinates, coordinates=co, order=3, mode=mode, cval=0.7)
    want = (_jacobian(fn, (4, 5)).T @ g).reshape(4, 5)
    grads = []
    for _ in range(2):
        x = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
        spline.map_coordinates(x, torch.tensor(co), order=3, mode=mode, cval=0.7).backward(torch.tensor(g))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], want, rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(grads[0], grads[1])
    x = torch.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    f = partial(spline.map_coordinates, coordinates=torch.tensor(co), order=3, mode=mode, cval=0.7)
    assert torch.autograd.gradcheck(f, (x,)) and torch.autograd.gradgradcheck(f, (x,))


def test_map_coordinates_grad_jax():
    """jax.grad and grad of grad w.r.t. the input (custom_vjp pair), against SciPy's Jacobian."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(10)
    co, g = _coords(rng, (3, 6), 24), rng.standard_normal(24)
    jac = _jacobian(partial(ndi.map_coordinates, coordinates=co, order=4, mode="mirror", cval=2.0), (3, 6))
    c = jnp.asarray(co)
    got = jax.grad(lambda v: jnp.sum(spline.map_coordinates(v, c, order=4, mode="mirror", cval=2.0) * g))(
        jnp.asarray(rng.standard_normal((3, 6))))
    np.testing.assert_allclose(np.asarray(got), (jac.T @ g).reshape(3, 6), rtol=1e-10, atol=1e-13)
    hess = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(
        (spline.map_coordinates(u, c, order=4, mode="mirror") * g) ** 2))(v)))(jnp.ones((3, 6)))
    jg = jac * g[:, None]
    np.testing.assert_allclose(np.asarray(hess), 2 * (jg.T @ jg).sum(axis=0).reshape(3, 6), rtol=1e-10, atol=1e-12)


def _weighted_sum(fn, g):
    return lambda c: (fn(c) * g).sum()


def _off_knots(rng, shape, points):
    # away from the knots (integers, half-integers) and so from the mirror points, where SciPy's map has kinks
    co = np.stack([rng.uniform(-n - 2, 2 * n + 2, points) for n in shape])
    frac = co - np.floor(co)
    return np.where(np.minimum(np.abs(frac - 0.5), np.minimum(frac, 1 - frac)) < 0.02, co + 0.1, co)


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_coordinate_gradient(mode):
    """The gradient w.r.t. the coordinates (torch autograd and jax.grad) against central differences of SciPy."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(13)
    for shape, order, prefilter in (((7,), 3, True), ((4, 5), 2, True), ((3, 2, 4), 5, False), ((6, 3), 1, True)):
        x, co, g = rng.standard_normal(shape), _off_knots(rng, shape, 16), rng.standard_normal(16)

        f = _weighted_sum(partial(ndi.map_coordinates, x, order=order, mode=mode, prefilter=prefilter, cval=0.4), g)

        h, want = 1e-6, np.zeros_like(co)
        for i in np.ndindex(co.shape):
            e = np.zeros_like(co)
            e[i] = h
            want[i] = (f(co + e) - f(co - e)) / (2 * h)
        c = torch.tensor(co, requires_grad=True)
        out = spline.map_coordinates(torch.tensor(x), c, order=order, mode=mode, prefilter=prefilter, cval=0.4)
        (out * torch.tensor(g)).sum().backward()
        got = jax.grad(_weighted_sum(partial(spline.map_coordinates, jnp.asarray(x), order=order, mode=mode,
                                             prefilter=prefilter, cval=0.4), g))(jnp.asarray(co))
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(c.grad.numpy(), want, rtol=0, atol=1e-6 * scale)
        np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-6 * scale)


def test_points_in_blocks(backend, monkeypatch):
    """Points gathered (forward) and routed (backward: into the cells in place, where the array is writable) a
    block at a time give SciPy's values and transpose."""
    monkeypatch.setattr(spline, "_TAPS_PER_BLOCK", 40)
    rng = np.random.default_rng(14)
    x, co, g = rng.standard_normal((5, 6)), _coords(rng, (5, 6), 50), rng.standard_normal(50)
    for order, mode in ((1, "constant"), (3, "grid-constant"), (2, "nearest")):
        fn = partial(ndi.map_coordinates, coordinates=co, order=order, mode=mode, cval=0.5)
        got = spline.map_coordinates(backend.asarray(x), backend.asarray(co), order=order, mode=mode, cval=0.5)
        _check(backend, fn(x), got, 4.0)
        want = (_jacobian(fn, (5, 6)).T @ g).reshape(5, 6)
        got = spline.map_coordinates_backward(backend.asarray(g), backend.asarray(x), backend.asarray(co),
                                              order=order, mode=mode, cval=0.5)
        _check(backend, want, got, 10.0)
