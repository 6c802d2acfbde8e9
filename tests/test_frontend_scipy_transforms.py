"""``poolspec.frontends.scipy.ndimage`` under the transforms callers put it in, against live SciPy: torch.compile
(fullgraph), torch.export, torch.func (vmap, grad, jacrev, jacfwd), and JAX's jit, vmap, grad and jvp. Values
against SciPy's function; derivatives against central differences of SciPy's own function (float64)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")

from poolspec.frontends.scipy import ndimage  # noqa: E402

# (function, options, input shape): a point where no window holds ties within the differences' step
CASES = [
    ("uniform_filter1d", {"size": 4, "origin": 1, "mode": "mirror"}, (5, 6)),
    ("uniform_filter", {"size": (3, 2), "mode": ("wrap", "constant"), "cval": 1.5}, (5, 6)),
    ("maximum_filter1d", {"size": 3, "axis": 0, "mode": "reflect"}, (5, 6)),
    ("minimum_filter", {"size": (2, 3), "mode": "nearest", "origin": (0, -1)}, (5, 6)),
    ("maximum_filter", {"footprint": np.array([[True, False, True], [False, True, False]]), "mode": "wrap"},
     (5, 6)),
    ("spline_filter1d", {"order": 3, "axis": 0, "mode": "reflect"}, (5, 6)),
    ("spline_filter", {"order": 5, "mode": "grid-wrap"}, (5, 6)),
    ("map_coordinates", {"coordinates": np.array([[0.3, 2.7, -0.4, 4.2], [1.1, 5.3, 2.6, 0.2]]), "order": 3,
                         "mode": "nearest"}, (5, 6)),
    ("zoom", {"zoom": (1.6, 0.7), "order": 3, "mode": "mirror", "grid_mode": True}, (5, 6)),
    ("shift", {"shift": (-1.3, 0.4), "order": 2, "mode": "grid-constant", "cval": 0.5}, (5, 6)),
    ("affine_transform", {"matrix": np.array([[0.9, 0.2], [-0.3, 1.1]]), "offset": (0.5, -0.25), "order": 1,
                          "mode": "reflect", "output_shape": (4, 7)}, (5, 6)),
    ("rotate", {"angle": 30.0, "order": 3, "mode": "nearest"}, (5, 6)),
]




def _scipy(name, x, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return np.asarray(getattr(ndi, name)(x, **options))


def _differences(name, options, x, cot, eps=1e-6):
    """<cot, d scipy_f / dx_i> for each i, by central differences of SciPy's own function."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = np.sum(cot * (_scipy(name, x + e, options) - _scipy(name, x - e, options)))
    return g / (2 * eps)


def _directional(name, options, x, t, eps=1e-6):
    return (_scipy(name, x + eps * t, options) - _scipy(name, x - eps * t, options)) / (2 * eps)


def _point(name, shape, options, seed=3):
    """The input, a cotangent shaped like the output, a tangent shaped like the input."""
    rng = np.random.default_rng(seed)
    out = _scipy(name, np.zeros(shape), options).shape
    return rng.standard_normal(shape), rng.standard_normal(out), rng.standard_normal(shape)


def _ids(cases):
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("name,options,shape", CASES, ids=_ids(CASES))
def test_torch_compile_fullgraph(name, options, shape):
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()  # one lambda's code compiled per case: each case its own cache (no recompile limit)
    x, cot, _ = _point(name, shape, options)
    fn = getattr(ndimage, name)
    compiled = torch.compile(lambda v: fn(v, **options), fullgraph=True)
    t = torch.from_numpy(x.copy()).requires_grad_(True)
    y = compiled(t)
    np.testing.assert_allclose(y.detach().numpy(), _scipy(name, x, options), rtol=1e-10, atol=1e-12)
    (g,) = torch.autograd.grad((y * torch.from_numpy(cot)).sum(), t)
    np.testing.assert_allclose(g.numpy(), _differences(name, options, x, cot), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,options,shape", CASES, ids=_ids(CASES))
def test_torch_export_is_one_node(name, options, shape):
    torch = pytest.importorskip("torch")
    x, _, _ = _point(name, shape, options)
    fn = getattr(ndimage, name)

    class Module(torch.nn.Module):
        def forward(self, v):
            return fn(v, **options)

    program = torch.export.export(Module(), (torch.from_numpy(x),))
    targets = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
    assert "poolspec.scipy_ndimage.default" in targets, targets
    np.testing.assert_allclose(program.module()(torch.from_numpy(x)).numpy(), _scipy(name, x, options),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,options,shape", CASES, ids=_ids(CASES))
def test_torch_func(name, options, shape):
    torch = pytest.importorskip("torch")
    from torch import func

    x, cot, t = _point(name, shape, options)
    fn = getattr(ndimage, name)
    batch = np.stack([x, t])
    got = func.vmap(lambda v: fn(v, **options))(torch.from_numpy(batch)).numpy()
    for i in range(2):
        np.testing.assert_allclose(got[i], _scipy(name, batch[i], options), rtol=1e-10, atol=1e-12)
    c = torch.from_numpy(cot)
    g = func.grad(lambda v: (fn(v, **options) * c).sum())(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(g, _differences(name, options, x, cot), rtol=1e-6, atol=1e-7)
    rev = func.jacrev(lambda v: fn(v, **options))(torch.from_numpy(x)).numpy()
    fwd = func.jacfwd(lambda v: fn(v, **options))(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.tensordot(cot, rev, cot.ndim), g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,options,shape", CASES, ids=_ids(CASES))
def test_jax_jit_vmap_grad_jvp(name, options, shape):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x, cot, t = _point(name, shape, options)
    fn = getattr(ndimage, name)
    f = jax.jit(lambda v: fn(v, **options))
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x))), _scipy(name, x, options), rtol=1e-10, atol=1e-12)
    batch = np.stack([x, t])
    got = np.asarray(jax.vmap(f)(jnp.asarray(batch)))
    for i in range(2):
        np.testing.assert_allclose(got[i], _scipy(name, batch[i], options), rtol=1e-10, atol=1e-12)
    g = np.asarray(jax.grad(lambda v: jnp.sum(f(v) * cot))(jnp.asarray(x)))
    np.testing.assert_allclose(g, _differences(name, options, x, cot), rtol=1e-6, atol=1e-7)
    _, tangent = jax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
    np.testing.assert_allclose(np.asarray(tangent), _directional(name, options, x, t), rtol=1e-6, atol=1e-7)


COORDS = np.array([[0.3, 2.7, -0.4, 4.2], [1.1, 5.3, 2.6, 0.2]])  # 0.1 or more from every knot


def _scipy_coordinate_jacobian(x, c, options, eps=1e-6):
    """d out / d coordinates of SciPy's map_coordinates by central differences: (points, 2, points)."""
    jac = np.zeros((c.shape[1],) + c.shape)
    for j in range(c.size):
        e = np.zeros_like(c)
        e.flat[j] = eps
        jac[:, j // c.shape[1], j % c.shape[1]] = (ndi.map_coordinates(x, c + e, **options)
                                                  - ndi.map_coordinates(x, c - e, **options)) / (2 * eps)
    return jac


@pytest.mark.parametrize("mode", ["nearest", "mirror", "grid-constant", "wrap"])
def test_map_coordinates_coordinate_derivatives(mode):
    """The coordinates' Jacobian by reverse and forward mode (torch.func, JAX) against SciPy's differences, and the
    mixed second derivative d/dcoordinates of the input gradient, reverse against forward."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from torch import func

    options = {"order": 3, "mode": mode, "cval": 0.3}
    x = np.random.default_rng(5).standard_normal((5, 6))
    want = _scipy_coordinate_jacobian(x, COORDS, options)
    f = lambda c: ndimage.map_coordinates(torch.from_numpy(x), c, **options)  # noqa: E731
    c = torch.from_numpy(COORDS.copy())
    np.testing.assert_allclose(func.jacrev(f)(c).numpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(func.jacfwd(f)(c).numpy(), want, rtol=1e-6, atol=1e-7)
    g = jax.numpy.asarray
    jf = lambda c: ndimage.map_coordinates(g(x), c, **options)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jacrev(jf)(g(COORDS))), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.jacfwd(jf)(g(COORDS))), want, rtol=1e-6, atol=1e-7)
    w = np.arange(4.0)
    gx = lambda c: func.grad(lambda v: (ndimage.map_coordinates(v, c, **options) * torch.from_numpy(w)).sum())(  # noqa: E731
        torch.from_numpy(x))
    np.testing.assert_allclose(func.jacfwd(gx)(c).numpy(), func.jacrev(gx)(c).numpy(), rtol=1e-12, atol=1e-12)
    jgx = lambda c: jax.grad(lambda v: jax.numpy.sum(ndimage.map_coordinates(v, c, **options) * w))(g(x))  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jacfwd(jgx)(g(COORDS))), func.jacrev(gx)(c).numpy(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name,options,shape", CASES, ids=_ids(CASES))
def test_backward_bit_identical_over_five_repeats(name, options, shape, backend):
    """Every function's explicit backward, five times on each backend: the same bits (no accumulating scatter, no
    atomics), and the first against central differences of SciPy's function."""
    x, cot, _ = _point(name, shape, options)
    kw = {k: v for k, v in options.items() if k != "coordinates"}
    extra = (backend.asarray(options["coordinates"]),) if "coordinates" in options else ()
    back = getattr(ndimage, f"{name}_backward")
    runs = [backend.to_numpy(back(backend.asarray(cot), backend.asarray(x), *extra, **kw)) for _ in range(5)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])
    np.testing.assert_allclose(runs[0], _differences(name, options, x, cot), rtol=1e-6, atol=1e-7)
