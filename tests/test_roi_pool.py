"""roi_pool against torchvision 0.29.1's stored values (the golden store, written by
``scripts/generate_golden_roi_align.py --op roi_pool`` in the torchvision environment) on every installed backend:
forward and input gradient, the list-of-boxes form, float16 (torchvision's own half kernel), bit-identical repeats,
the card's refusals before any computation, chunking, torch's autograd to any order, torch.compile / torch.export /
vmap / torch.func, and JAX's jit (concrete and traced boxes), grad, vmap and higher orders."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec.conformance import golden

ALL = [c for c in golden.cases(["roi_pool"]) if c.error is None]
CASES = [c for c in ALL if c.dtype == "float64"]
PICK = [c for i, c in enumerate(CASES) if i % 4 == 0 or "no_rois" in c.flags or "many_rois" in c.flags
        or "empty_output" in c.flags]
TOL = dict(rtol=1e-12, atol=1e-12)


def _close(got, want):
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("case", PICK, ids=[c.name for c in PICK])
def test_forward_and_backward_match_torchvision(backend, case):
    a = case.arrays()
    x, boxes = backend.asarray(a["input"]), backend.asarray(a["boxes"])
    out = poolspec.roi_pool(x, boxes, **case.arguments)
    np.testing.assert_array_equal(backend.to_numpy(out), a["output"])  # a max selects: exact
    g = backend.asarray(a["grad_output"])
    gx = poolspec.roi_pool_backward(g, x, boxes, **case.arguments)
    _close(backend.to_numpy(gx), a["grad_input"])
    np.testing.assert_array_equal(backend.to_numpy(x), a["input"])  # inputs are never modified
    np.testing.assert_array_equal(backend.to_numpy(boxes), a["boxes"])
    np.testing.assert_array_equal(backend.to_numpy(g), a["grad_output"])


def _off_steps(case, eps=1e-3):
    """Which rois of the case have every scaled corner farther than eps from a rounding step (k + 1/2)."""
    a = case.arrays()
    v = np.abs(a["boxes"][:, 1:] * case.arguments.get("spatial_scale", 1.0))
    return (np.abs(v - np.floor(v) - 0.5) > eps).all(axis=1)


STILL = [c for c in CASES if _off_steps(c).sum() >= 1][::3]


@pytest.mark.parametrize("case", STILL, ids=[c.name for c in STILL])
def test_boxes_moved_within_a_rounding_step_give_torchvision_output(backend, case):
    """The card's box-gradient statement: the output is piecewise constant in the boxes, so moving every corner
    of a roi by less than its distance to a rounding step keeps torchvision's output (the derivative is 0 there)."""
    a = case.arrays()
    scale = case.arguments.get("spatial_scale", 1.0)
    keep = _off_steps(case)
    x = backend.asarray(a["input"])
    for sign in (-1.0, 1.0):
        moved = a["boxes"].copy()
        moved[:, 1:] += sign * 1e-6 / scale
        out = backend.to_numpy(poolspec.roi_pool(x, backend.asarray(moved), **case.arguments))
        np.testing.assert_array_equal(out[keep], a["output"][keep])


def test_every_stored_case_on_numpy():
    """Every stored numeric case (float64, float32, float16; bfloat16 is held in float32 and has no NumPy dtype):
    the output exactly, the gradient within the case's tolerance."""
    for case in ALL:
        if case.dtype == "bfloat16":
            continue
        a = case.arrays()
        out = poolspec.roi_pool(a["input"], a["boxes"], **case.arguments)
        assert out.dtype == a["input"].dtype
        np.testing.assert_array_equal(out, a["output"], err_msg=case.name)
        gx = poolspec.roi_pool_backward(a["grad_output"], a["input"], a["boxes"], **case.arguments)
        np.testing.assert_allclose(gx, a["grad_input"], rtol=case.rtol, atol=case.atol, err_msg=case.name)


def test_list_of_boxes_matches_torchvision():
    """The same rois as a list of (L, 4) arrays, one per image (batch index truncated): torchvision's rows, in the
    list's order."""
    for case in [c for c in CASES if "many_rois" in c.flags or "random" in c.flags][:8]:
        a = case.arrays()
        N = a["input"].shape[0]
        batch = np.trunc(a["boxes"][:, 0]).astype(int)
        order = np.argsort(batch, kind="stable")
        per = [a["boxes"][batch == n, 1:] for n in range(N)]
        out = poolspec.roi_pool(a["input"], per, **case.arguments)
        np.testing.assert_array_equal(out, a["output"][order], err_msg=case.name)
    x = np.zeros((2, 3, 4, 4))
    assert poolspec.roi_pool(x, [np.zeros((0, 4)), np.zeros((0, 4))], 3).shape == (0, 3, 3, 3)


def test_edge_rules():
    """The card's rules on hand-made cases: rounding half away from zero, ties to the first maximum, NaN never
    wins, windows of -inf and below -FLT_MAX give T(-FLT_MAX), empty bins 0, degenerate rois one cell."""
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    assert poolspec.roi_pool(x, np.array([[0, 0.5, 0.5, 2.5, 2.5]]), 2).ravel().tolist() == [10, 11, 14, 15]
    assert poolspec.roi_pool(x, np.array([[0, -0.5, -0.5, 1.5, 1.5]]), 3).ravel().tolist() == [0, 1, 2, 4, 5, 6, 8,
                                                                                                9, 10]
    assert poolspec.roi_pool(x, np.array([[0, 3.0, 3.0, 1.0, 1.0]]), 2).ravel().tolist() == [15] * 4
    assert poolspec.roi_pool(x, np.array([[0, 10.0, 10.0, 12.0, 12.0]]), 2).ravel().tolist() == [0] * 4
    ties = np.ones((1, 1, 3, 3))
    g = poolspec.roi_pool_backward(np.ones((1, 1, 1, 1)), ties, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1)
    assert np.flatnonzero(g).tolist() == [0]  # the first maximum in row-major order
    nan = np.array([[[[np.nan, 1.0], [2.0, np.nan]]]])
    assert poolspec.roi_pool(nan, np.array([[0, 0.0, 0.0, 1.0, 1.0]]), 1).ravel().tolist() == [2.0]
    flt_max = -float(np.finfo(np.float32).max)
    for v in (-np.inf, np.nan, -1e300):
        low = np.full((1, 1, 2, 2), v)
        box = np.array([[0, 0.0, 0.0, 1.0, 1.0]])
        assert poolspec.roi_pool(low, box, 1).ravel().tolist() == [flt_max]
        assert not poolspec.roi_pool_backward(np.ones((1, 1, 1, 1)), low, box, 1).any()
    half = poolspec.roi_pool(np.full((1, 1, 2, 2), -np.inf, np.float16), np.array([[0, 0, 0, 1, 1]], np.float16), 1)
    assert half.dtype == np.float16 and half.ravel().tolist() == [-np.inf]  # float16's T(-FLT_MAX)


@pytest.mark.parametrize("route", ["tables", "frame"])
def test_both_searches_match_torchvision(backend, route, monkeypatch):
    """Every stored case (ties, NaN, -inf and cells below -FLT_MAX among them) through each search: the
    range-maximum tables (the CPU's route for windows of many cells; here for every window, a channel at a time)
    and the frame search (the route of small windows, of JAX and of traced boxes; here for every window)."""
    from poolspec.families.roi_pool import search

    if route == "tables":
        monkeypatch.setattr(search, "_TABLE_FRAME", 0)
        monkeypatch.setattr(search, "_TABLE_BYTES", 1)
    else:
        monkeypatch.setattr(search, "_TABLE_FRAME", 1 << 40)
    if backend.name == "jax":
        pytest.skip("JAX searches the frame whatever the windows (one program for any boxes): the tests above")
    for case in PICK + [c for c in ALL if c.dtype == "float32"][::3]:
        a = case.arrays()
        x, boxes = backend.asarray(a["input"]), backend.asarray(a["boxes"])
        out = poolspec.roi_pool(x, boxes, **case.arguments)
        np.testing.assert_array_equal(backend.to_numpy(out), a["output"], err_msg=case.name)
        gx = poolspec.roi_pool_backward(backend.asarray(a["grad_output"]), x, boxes, **case.arguments)
        np.testing.assert_allclose(backend.to_numpy(gx), a["grad_input"], rtol=case.rtol, atol=case.atol,
                                   err_msg=case.name)


def test_gradient_is_bit_identical_over_repeats(backend):
    case = next(c for c in CASES if "many_rois" in c.flags)
    a = case.arrays()
    x, boxes, g = (backend.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    runs = [backend.to_numpy(poolspec.roi_pool_backward(g, x, boxes, **case.arguments)).tobytes() for _ in range(5)]
    assert len(set(runs)) == 1


def test_channels_last_layout_matches_torchvision(backend):
    case = next(c for c in CASES if "many_rois" in c.flags)
    a = case.arrays()
    last = np.ascontiguousarray(np.moveaxis(a["input"], 1, -1))
    x, boxes = backend.asarray(last), backend.asarray(a["boxes"])
    out = poolspec.roi_pool(x, boxes, **case.arguments, layout="channels_last")
    np.testing.assert_array_equal(backend.to_numpy(out), np.moveaxis(a["output"], 1, -1))
    g = backend.asarray(np.ascontiguousarray(np.moveaxis(a["grad_output"], 1, -1)))
    gx = poolspec.roi_pool_backward(g, x, boxes, **case.arguments, layout="channels_last")
    _close(backend.to_numpy(gx), np.moveaxis(a["grad_input"], 1, -1))


@pytest.mark.parametrize("call, error, match", [
    (lambda x, b: poolspec.roi_pool(x, b[:, :4], 2), ValueError, "boxes.shape"),
    (lambda x, b: poolspec.roi_pool(x[0], b, 2), ValueError, "x="),
    (lambda x, b: poolspec.roi_pool(x, b, (2, -1)), ValueError, "output_size"),
    (lambda x, b: poolspec.roi_pool(x, b, 2.0), TypeError, "output_size"),
    (lambda x, b: poolspec.roi_pool(x, b, 2, spatial_scale=float("nan")), ValueError, "spatial_scale"),
    (lambda x, b: poolspec.roi_pool(x, b, 2, spatial_scale="1"), TypeError, "spatial_scale"),
    (lambda x, b: poolspec.roi_pool(x, b.astype(np.float32), 2), TypeError, "boxes.dtype"),
    (lambda x, b: poolspec.roi_pool(x, b + np.array([2.0, 0, 0, 0, 0]), 2), ValueError, "batch index"),
    (lambda x, b: poolspec.roi_pool(x, b - np.array([2.0, 0, 0, 0, 0]), 2), ValueError, "batch index"),
    (lambda x, b: poolspec.roi_pool(x, b * np.array([1, np.nan, 1, 1, 1]), 2), ValueError, "finite"),
    (lambda x, b: poolspec.roi_pool(x, b + np.array([0, 0, 0, 1e12, 0]), 2), ValueError, "2\\^29"),
    (lambda x, b: poolspec.roi_pool(x, [b[:, 1:3]], 2), ValueError, r"boxes\[0\].shape"),
    (lambda x, b: poolspec.roi_pool(x, b, 2, layout="nhwc"), ValueError, "layout"),
    (lambda x, b: poolspec.roi_pool(x.astype(np.int64), b.astype(np.int64), 2), TypeError, "dtype"),
    (lambda x, b: poolspec.roi_pool_backward(np.ones((1, 2, 3, 3)), x, b, 2), ValueError, "grad_output"),
    (lambda x, b: poolspec.roi_pool_backward(np.ones((1, 2, 2, 2), np.float32), x, b, 2), TypeError,
     "grad_output"),
])
def test_refusals_name_the_argument(call, error, match, monkeypatch):
    from poolspec.families.roi_pool import search

    def never(*args, **kwargs):
        raise AssertionError("computed before the refusal")

    monkeypatch.setattr(search, "search", never)  # refusals come before any computation
    x = np.zeros((2, 2, 5, 5))
    b = np.array([[1.0, 0.0, 0.0, 3.0, 3.0]])
    with pytest.raises(error, match=match):
        call(x, b)


def test_large_calls_are_chunked_with_the_same_values(monkeypatch):
    from poolspec.families.roi_pool import search

    rng = np.random.default_rng(2)
    x = np.round(rng.standard_normal((2, 3, 20, 17)) * 2)
    b = np.array([[0, -2.0, 1.0, 19.0, 16.5], [1, 3.0, 2.0, 9.5, 7.0], [0, 0.0, 0.0, 30.0, 30.0]])
    g = rng.standard_normal((3, 3, 3, 2))
    whole, whole_g = poolspec.roi_pool(x, b, (3, 2)), poolspec.roi_pool_backward(g, x, b, (3, 2))
    monkeypatch.setattr(search, "_TABLE_BYTES", 1)  # the tables and the gradient's route a channel at a time
    np.testing.assert_array_equal(poolspec.roi_pool(x, b, (3, 2)), whole)
    np.testing.assert_array_equal(poolspec.roi_pool_backward(g, x, b, (3, 2)), whole_g)
    monkeypatch.setattr(search, "_TABLE_FRAME", 1 << 40)  # the frame search, its bins a chunk at a time
    for budget in (1, 4000, 40000):  # one bin, a few bins, whole rois per chunk
        monkeypatch.setattr(search, "_CHUNK_BYTES", budget)
        np.testing.assert_array_equal(poolspec.roi_pool(x, b, (3, 2)), whole)
        np.testing.assert_array_equal(poolspec.roi_pool_backward(g, x, b, (3, 2)), whole_g)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    # JAX: the chunks in one lax.map (traced boxes, the 20 x 17 frame: 2 of the 27 bins a chunk, the last padded)
    monkeypatch.setattr(search, "_CHUNK_BYTES", 70000)
    want = poolspec.roi_pool(x, b, (3, 3))
    traced = jax.jit(lambda t, bb: poolspec.roi_pool(t, bb, (3, 3)))(jax.numpy.asarray(x), jax.numpy.asarray(b))
    np.testing.assert_array_equal(np.asarray(traced), want)
    g3 = rng.standard_normal(want.shape)
    got = poolspec.roi_pool_backward(jax.numpy.asarray(g3), jax.numpy.asarray(x), jax.numpy.asarray(b), (3, 3))
    np.testing.assert_array_equal(np.asarray(got), poolspec.roi_pool_backward(g3, x, b, (3, 3)))


def _torch_case():
    case = next(c for c in CASES if "many_rois" in c.flags)
    return case, case.arrays()


def test_torch_autograd_any_order_compile_export_vmap():
    torch = pytest.importorskip("torch")
    case, a = _torch_case()
    kw = dict(case.arguments)
    x, b = torch.from_numpy(a["input"]).requires_grad_(True), torch.from_numpy(a["boxes"])
    g, v = torch.from_numpy(a["grad_output"]).requires_grad_(True), torch.from_numpy(a["grad_input_cotangent"])
    out = poolspec.roi_pool(x, b, **kw)
    (gx,) = torch.autograd.grad(out, x, g, create_graph=True)
    _close(gx.detach().numpy(), a["grad_input"])
    (ggo,) = torch.autograd.grad((gx * v).sum(), g)  # the backward's transpose: v read at the winners
    _close(ggo.numpy(), a["grad_grad_output"])
    # distinct values: no tie moves under gradcheck's perturbation
    xs = torch.from_numpy(np.random.default_rng(3).permutation(2 * 1 * 9 * 8).reshape(2, 1, 9, 8) / 7.0)
    bs = torch.tensor([[0, 0.5, 1.0, 6.5, 7.0], [1, 2.0, 0.0, 8.0, 5.5], [0, -1.0, -1.0, 20.0, 3.0]], dtype=xs.dtype)
    fn = lambda t: poolspec.roi_pool(t, bs, (2, 3))  # noqa: E731
    assert torch.autograd.gradcheck(fn, (xs.clone().requires_grad_(True),))
    assert torch.autograd.gradgradcheck(fn, (xs.clone().requires_grad_(True),))
    compiled = torch.compile(lambda t, bb: poolspec.roi_pool(t, bb, **kw), fullgraph=True, backend="aot_eager",
                             dynamic=True)
    xc = x.detach().clone().requires_grad_(True)
    y = compiled(xc, b)
    np.testing.assert_array_equal(y.detach().numpy(), a["output"])
    y.backward(g.detach())
    _close(xc.grad.numpy(), a["grad_input"])

    class M(torch.nn.Module):
        def forward(self, t, bb):
            return poolspec.roi_pool(t, bb, **kw)

    program = torch.export.export(M(), (x.detach(), b))
    assert "poolspec.roi_pool.default" in {str(n.target) for n in program.graph.nodes}
    np.testing.assert_array_equal(program.module()(x.detach(), b).numpy(), a["output"])
    batch = torch.stack([x.detach(), 2 * x.detach()])
    want = torch.stack([poolspec.roi_pool(t, b, **kw) for t in batch])
    torch.testing.assert_close(torch.func.vmap(lambda t: poolspec.roi_pool(t, b, **kw))(batch), want)
    vc = torch.compile(torch.func.vmap(lambda t: poolspec.roi_pool(t, b, **kw)), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(vc(batch), want)


def test_torch_compiled_second_order():
    """Under torch.compile the backward's derivative w.r.t. its cotangent is the select node."""
    torch = pytest.importorskip("torch")
    case, a = _torch_case()
    kw = dict(case.arguments)
    x, b = torch.from_numpy(a["input"]), torch.from_numpy(a["boxes"])
    g, v = torch.from_numpy(a["grad_output"]).requires_grad_(True), torch.from_numpy(a["grad_input_cotangent"])
    compiled = torch.compile(lambda gg, t, bb: poolspec.roi_pool_backward(gg, t, bb, **kw), fullgraph=True,
                             backend="aot_eager")
    gx = compiled(g, x, b)
    _close(gx.detach().numpy(), a["grad_input"])
    (ggo,) = torch.autograd.grad((gx * v).sum(), g)
    _close(ggo.numpy(), a["grad_grad_output"])


def test_torch_func_and_forward_mode():
    """torch.func's grad, jvp, jacrev and jacfwd and forward-mode AD: the gradient is torchvision's, and the tangent
    for v is v read at torchvision's argmax (its stored grad_grad_output)."""
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as fwAD

    case, a = _torch_case()
    kw = dict(case.arguments)
    x, b, g = (torch.from_numpy(a[k]) for k in ("input", "boxes", "grad_output"))
    gx = torch.func.grad(lambda t: (poolspec.roi_pool(t, b, **kw) * g).sum())(x)
    _close(gx.numpy(), a["grad_input"])
    v = torch.from_numpy(a["grad_input_cotangent"])
    _, tangent = torch.func.jvp(lambda t: poolspec.roi_pool(t, b, **kw), (x,), (v,))
    _close(tangent.numpy(), a["grad_grad_output"])
    with fwAD.dual_level():
        dual = poolspec.roi_pool(fwAD.make_dual(x, v), b, **kw)
        _close(fwAD.unpack_dual(dual).tangent.numpy(), a["grad_grad_output"])
    small = x[:1, :2, :6, :6].clone()
    boxes = torch.tensor([[0, 0.5, 1.0, 4.5, 5.0]], dtype=x.dtype)
    jr = torch.func.jacrev(lambda t: poolspec.roi_pool(t, boxes, 2))(small)
    jf = torch.func.jacfwd(lambda t: poolspec.roi_pool(t, boxes, 2))(small)
    torch.testing.assert_close(jr, jf, rtol=0, atol=0)


def test_jax_jit_grad_vmap():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    case, a = _torch_case()
    kw = dict(case.arguments)
    x, b, g = (jnp.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    f = jax.jit(lambda t: poolspec.roi_pool(t, b, **kw))  # concrete boxes: the window frame read once
    np.testing.assert_array_equal(np.asarray(f(x)), a["output"])
    gx = jax.grad(lambda t: jnp.vdot(poolspec.roi_pool(t, b, **kw), g))(x)
    _close(np.asarray(gx), a["grad_input"])
    batch = jnp.stack([x, 2 * x])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda t: poolspec.roi_pool(t, b, **kw))(batch)),
                                  np.stack([a["output"], 2 * a["output"]]))
    # traced boxes: the whole image is every bin's frame
    traced = jax.jit(lambda t, bb: poolspec.roi_pool(t, bb, **kw))(x, b)
    np.testing.assert_array_equal(np.asarray(traced), a["output"])
    tg = jax.jit(jax.grad(lambda t, bb: jnp.vdot(poolspec.roi_pool(t, bb, **kw), g)))(x, b)
    _close(np.asarray(tg), a["grad_input"])
    # forward mode: the tangent for v is v read at torchvision's argmax (its stored grad_grad_output)
    _, tangent = jax.jvp(lambda t: poolspec.roi_pool(t, b, **kw), (x,), (jnp.asarray(a["grad_input_cotangent"]),))
    _close(np.asarray(tangent), a["grad_grad_output"])


def test_jax_forward_mode_and_higher_orders():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(4)
    small = jnp.asarray(rng.permutation(72).reshape(1, 2, 6, 6) / 5.0)
    boxes = jnp.asarray([[0, 0.5, 1.0, 4.5, 5.0]])
    fn = lambda t: poolspec.roi_pool(t, boxes, 2)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(jax.jacfwd(fn)(small)), np.asarray(jax.jacrev(fn)(small)))
    hess = jax.hessian(lambda t: jnp.sum(fn(t) ** 2))(small)
    jac = np.asarray(jax.jacrev(fn)(small)).reshape(-1, small.size)
    np.testing.assert_allclose(np.asarray(hess).reshape(small.size, small.size), 2 * jac.T @ jac, rtol=1e-12,
                               atol=1e-12)
