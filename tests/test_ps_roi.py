"""ps_roi_align and ps_roi_pool against torchvision 0.29.1's stored values (the golden store, written by
scripts/generate_golden_roi_align.py --op ps_roi_align|ps_roi_pool in the torchvision environment) on every
installed backend: forward and input gradient, bit-identical repeats, the card's refusals, torch.compile /
torch.export / vmap / torch.func and JAX's transforms. The hand-made edge cases hold values read from torchvision
0.29.1 (scripts/check_ps_roi_rules.py checks the rules behind them on 3000 random configurations)."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec.conformance import golden

OPS = ("ps_roi_align", "ps_roi_pool")
ALL = {op: [c for c in golden.cases([op]) if c.error is None] for op in OPS}
CASES = {op: [c for c in ALL[op] if c.dtype == "float64"] for op in OPS}
PICK = [(op, c) for op in OPS for i, c in enumerate(CASES[op]) if i % 4 == 0 or "no_rois" in c.flags
        or "many_rois" in c.flags]
TOL = dict(rtol=1e-12, atol=1e-12)


def _fns(op):
    return getattr(poolspec, op), getattr(poolspec, op + "_backward")


def _close(got, want, **tol):
    np.testing.assert_allclose(got, want, equal_nan=True, **(tol or TOL))


@pytest.mark.parametrize("op, case", PICK, ids=[c.name for _, c in PICK])
def test_forward_and_backward_match_torchvision(backend, op, case):
    f, b = _fns(op)
    a = case.arrays()
    x, boxes = backend.asarray(a["input"]), backend.asarray(a["boxes"])
    out = backend.to_numpy(f(x, boxes, **case.arguments))
    _close(out, a["output"])
    zero = a["output"] == 0
    assert np.array_equal(np.signbit(out[zero]), np.signbit(a["output"][zero]))  # -0.0 bins (ps_roi_align) too
    g = backend.asarray(a["grad_output"])
    gx = b(g, x, boxes, **case.arguments)
    _close(backend.to_numpy(gx), a["grad_input"])
    np.testing.assert_array_equal(backend.to_numpy(x), a["input"])  # inputs are never modified
    np.testing.assert_array_equal(backend.to_numpy(g), a["grad_output"])


@pytest.mark.parametrize("op", OPS)
def test_every_stored_case_on_numpy(op):
    """Every stored numeric case but bfloat16 (held in float32, no NumPy dtype), within its tolerance."""
    f, b = _fns(op)
    for case in ALL[op]:
        if case.dtype == "bfloat16":
            continue
        a = case.arrays()
        out = f(a["input"], a["boxes"], **case.arguments)
        assert out.dtype == a["input"].dtype
        np.testing.assert_allclose(out, a["output"], rtol=case.rtol, atol=case.atol, equal_nan=True,
                                   err_msg=case.name)
        gx = b(a["grad_output"], a["input"], a["boxes"], **case.arguments)
        np.testing.assert_allclose(gx, a["grad_input"], rtol=case.rtol, atol=case.atol, err_msg=case.name)


@pytest.mark.parametrize("op", OPS)
def test_gradient_is_bit_identical_over_repeats(backend, op):
    _, b = _fns(op)
    case = next(c for c in CASES[op] if "many_rois" in c.flags)
    a = case.arrays()
    x, boxes, g = (backend.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    runs = {backend.to_numpy(b(g, x, boxes, **case.arguments)).tobytes() for _ in range(5)}
    assert len(runs) == 1


@pytest.mark.parametrize("op", OPS)
def test_list_of_boxes_matches_torchvision(op):
    f, _ = _fns(op)
    for case in [c for c in CASES[op] if "many_rois" in c.flags or "random" in c.flags][:6]:
        a = case.arrays()
        batch = np.trunc(a["boxes"][:, 0]).astype(int)
        order = np.argsort(batch, kind="stable")
        per = [a["boxes"][batch == n, 1:] for n in range(a["input"].shape[0])]
        _close(f(a["input"], per, **case.arguments), a["output"][order])
    assert f(np.zeros((2, 8, 4, 4)), [np.zeros((0, 4)), np.zeros((0, 4))], 2).shape == (0, 2, 2, 2)


def test_edge_rules_ps_roi_align():
    """torchvision's values: channel (c * PH + ph) * PW + pw per bin, the -0.5 shift always, NaN for a degenerate
    roi with an adaptive grid (0 / 0), -0.0 for a grid negative on one axis, the roi size never clamped."""
    x = np.arange(16.0).reshape(1, 4, 2, 2)  # channel k holds 4 k .. 4 k + 3
    assert poolspec.ps_roi_align(x, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 2, sampling_ratio=1).ravel().tolist() == \
        [0.0, 5.0, 10.0, 15.0]
    y = np.ones((1, 1, 4, 4))
    degenerate = poolspec.ps_roi_align(y, np.array([[0, 1.0, 1.0, 1.0, 3.0]]), 1)
    assert np.isnan(degenerate).all()
    negative = poolspec.ps_roi_align(y, np.array([[0, 3.0, 1.0, 1.0, 3.0]]), 1)  # x2 < x1: grid -2 x 2
    assert negative.ravel().tolist() == [0.0] and np.signbit(negative).all()
    both = poolspec.ps_roi_align(y, np.array([[0, 3.0, 3.0, 1.0, 1.0]]), 1)  # -2 x -2: +0
    assert both.ravel().tolist() == [0.0] and not np.signbit(both).any()
    assert poolspec.ps_roi_align(y, np.array([[0, 1.0, 1.0, 1.0, 3.0]]), 1, sampling_ratio=2).ravel().tolist() == \
        [1.0]  # a fixed grid samples the degenerate roi
    g = poolspec.ps_roi_align_backward(np.ones((1, 1, 1, 1)), y, np.array([[0, 1.0, 1.0, 1.0, 3.0]]), 1)
    assert not g.any()  # no sample, no gradient (and no NaN)


def test_edge_rules_ps_roi_pool():
    """torchvision's values: an average, the roi size max(end - start, 1), the forward's windows clamped to
    [0, H - 1] (never the last row or column), the backward's to [0, H] (the gradient not the forward's
    transpose there), roundf in the backward, an empty window 0."""
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    assert poolspec.ps_roi_pool(x, np.array([[0, 0.0, 0.0, 3.0, 3.0]]), 1).ravel().tolist() == [5.0]
    assert poolspec.ps_roi_pool(x, np.array([[0, 0.0, 0.0, 10.0, 10.0]]), 1).ravel().tolist() == [5.0]
    g = poolspec.ps_roi_pool_backward(np.ones((1, 1, 1, 1)), x, np.array([[0, 0.0, 0.0, 10.0, 10.0]]), 1)
    np.testing.assert_array_equal(g, np.full((1, 1, 4, 4), 1 / 16))
    g = poolspec.ps_roi_pool_backward(np.ones((1, 1, 1, 1)), x, np.array([[0, 0.0, 0.0, 3.0, 3.0]]), 1)
    np.testing.assert_array_equal(g[0, 0], np.pad(np.full((3, 3), 1 / 9), ((0, 1), (0, 1))))
    assert poolspec.ps_roi_pool(x, np.array([[0, 1.0, 1.0, 1.0, 1.0]]), 1).ravel().tolist() == [5.0]  # one cell
    assert poolspec.ps_roi_pool(x, np.array([[0, 5.0, 5.0, 9.0, 9.0]]), 1).ravel().tolist() == [0.0]  # outside
    z = np.zeros((1, 1, 6, 6))
    hair = np.array([[0, 1.5 - 1e-10, 1.5 - 1e-10, 3.5 - 1e-10, 3.5 - 1e-10]])
    g = poolspec.ps_roi_pool_backward(np.ones((1, 1, 1, 1)), z, hair, 1)  # roundf(1.4999999999) = 2
    np.testing.assert_array_equal(np.argwhere(g[0, 0]), [[2, 2], [2, 3], [3, 2], [3, 3]])
    assert poolspec.ps_roi_pool(np.arange(36.0).reshape(1, 1, 6, 6), hair, 1).ravel().tolist() == [10.5]  # round
    c = np.arange(8.0).reshape(1, 8, 1, 1) * np.ones((1, 1, 3, 3))  # channel k holds k
    out = poolspec.ps_roi_pool(c, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 2)
    assert out.ravel().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


def test_ps_roi_pool_non_finite_values_stay_in_their_windows(backend):
    """torchvision 0.29.1's values: a NaN or infinity in x or the cotangent reaches only the windows that hold it
    (the routes multiply by 0 / 1 window factors, where 0 x inf would spread NaN along rows and columns)."""
    x = np.arange(36.0).reshape(1, 1, 6, 6)
    x[0, 0, 4, 1], x[0, 0, 1, 4] = np.nan, np.inf
    b = np.array([[0, 0.0, 0.0, 2.0, 2.0], [0, 0.0, 3.0, 2.0, 5.0], [0, 3.0, 0.0, 5.0, 2.0], [0, 4.0, 4.0, 6.0, 6.0]])
    out = poolspec.ps_roi_pool(backend.asarray(x), backend.asarray(b), 1)
    _close(backend.to_numpy(out).ravel(), [3.5, np.nan, np.inf, 28.0])
    g = backend.asarray(np.array([np.inf, 1.0, -np.inf, np.nan]).reshape(4, 1, 1, 1))
    gx = poolspec.ps_roi_pool_backward(g, backend.asarray(np.zeros((1, 1, 6, 6))), backend.asarray(b), 1)
    want = np.zeros((6, 6))
    want[:2, :2], want[:2, 3:5], want[3:5, :2], want[4:, 4:] = np.inf, -np.inf, 0.25, np.nan
    _close(backend.to_numpy(gx)[0, 0], want)


@pytest.mark.parametrize("op", OPS)
def test_refusals_name_the_argument(op, monkeypatch):
    from poolspec.families.roi_align import sampling
    from poolspec.families.roi_pool import search

    def never(*args, **kwargs):
        raise AssertionError("computed before the refusal")

    monkeypatch.setattr(sampling, "_taps", never)  # refusals come before any computation
    monkeypatch.setattr(search, "_ps_windows", never)
    f, b = _fns(op)
    x = np.zeros((2, 8, 5, 5))
    r = np.array([[1.0, 0.0, 0.0, 3.0, 3.0]])
    for call, error, match in [
        (lambda: f(x[:, :6], r, 2), ValueError, "x / output_size"),
        (lambda: f(x, r, (2, 0)), ValueError, "output_size"),
        (lambda: f(x, r[:, :4], 2), ValueError, "boxes.shape"),
        (lambda: f(x[0], r, 2), ValueError, "x="),
        (lambda: f(x, r.astype(np.float32), 2), TypeError, "boxes.dtype"),
        (lambda: f(x, r + np.array([2.0, 0, 0, 0, 0]), 2), ValueError, "batch index"),
        (lambda: f(x, r * np.array([1, np.nan, 1, 1, 1]), 2), ValueError, "finite"),
        (lambda: f(x, r, 2, spatial_scale=float("inf")), ValueError, "spatial_scale"),
        (lambda: f(x, [r[:, 1:3]], 2), ValueError, r"boxes\[0\].shape"),
        (lambda: b(np.ones((1, 2, 3, 3)), x, r, 2), ValueError, "grad_output"),
        (lambda: b(np.ones((1, 2, 2, 2), np.float32), x, r, 2), TypeError, "grad_output"),
    ]:
        with pytest.raises(error, match=match):
            call()


def test_large_calls_are_chunked_with_the_same_values(monkeypatch):
    from poolspec.families.roi_align import sampling
    from poolspec.families.roi_pool import search

    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 12, 20, 17))
    b = np.array([[0, -2.0, 1.0, 19.0, 16.5], [1, 3.0, 2.0, 9.5, 7.0], [0, 0.0, 0.0, 30.0, 30.0]])
    g = rng.standard_normal((3, 2, 3, 2))
    for op, module in (("ps_roi_align", sampling), ("ps_roi_pool", search)):
        f, bw = _fns(op)
        whole, whole_g = f(x, b, (3, 2)), bw(g, x, b, (3, 2))
        for budget in (1, 4000, 40000):
            monkeypatch.setattr(module, "_CHUNK_BYTES", budget)
            np.testing.assert_allclose(f(x, b, (3, 2)), whole, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(bw(g, x, b, (3, 2)), whole_g, rtol=1e-13, atol=1e-14)
        monkeypatch.undo()


def test_half_precision():
    """ps_roi_align: float16 computed in float32, rounded once; ps_roi_pool: the box arithmetic in float16
    (torchvision's), the sums in float32 (the stored float16 cases check torchvision's values)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 8, 6, 6)).astype(np.float16)
    b = np.array([[0, 0.5, 1.0, 4.5, 5.0]], dtype=np.float16)
    want = poolspec.ps_roi_align(x.astype(np.float32), b.astype(np.float32), 2).astype(np.float16)
    out = poolspec.ps_roi_align(x, b, 2)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, want)
    assert poolspec.ps_roi_pool(x, b, 2).dtype == np.float16
    assert any(c.dtype == "float16" for c in ALL["ps_roi_pool"]) and any(c.dtype == "float16"
                                                                          for c in ALL["ps_roi_align"])


def _torch_case(op):
    case = next(c for c in CASES[op] if "many_rois" in c.flags)
    return case, case.arrays()


@pytest.mark.parametrize("op", OPS)
def test_torch_autograd_any_order_compile_export_vmap(op):
    torch = pytest.importorskip("torch")
    f, bw = _fns(op)
    case, a = _torch_case(op)
    kw = dict(case.arguments)
    x, b = torch.from_numpy(a["input"]).requires_grad_(True), torch.from_numpy(a["boxes"])
    g, v = torch.from_numpy(a["grad_output"]).requires_grad_(True), torch.from_numpy(a["grad_input_cotangent"])
    out = f(x, b, **kw)
    (gx,) = torch.autograd.grad(out, x, g, create_graph=True)
    _close(gx.detach().numpy(), a["grad_input"])
    (ggo,) = torch.autograd.grad((gx * v).sum(), g)  # the transpose of torchvision's backward
    _close(ggo.numpy(), a["grad_grad_output"])
    compiled = torch.compile(lambda t, bb: f(t, bb, **kw), fullgraph=True, backend="aot_eager", dynamic=True)
    xs = x.detach().clone().requires_grad_(True)
    y = compiled(xs, b)
    _close(y.detach().numpy(), a["output"])
    y.backward(g.detach())
    _close(xs.grad.numpy(), a["grad_input"])
    gg = g.detach().clone().requires_grad_(True)  # the backward node's derivative: the select node
    gx2 = torch.compile(lambda gv, t, bb: bw(gv, t, bb, **kw), fullgraph=True, backend="aot_eager")(
        gg, x.detach(), b)
    _close(gx2.detach().numpy(), a["grad_input"])
    _close(torch.autograd.grad((gx2 * v).sum(), gg)[0].numpy(), a["grad_grad_output"])

    class M(torch.nn.Module):
        def forward(self, t, bb):
            return f(t, bb, **kw)

    program = torch.export.export(M(), (x.detach(), b))
    assert f"poolspec.{op}.default" in {str(n.target) for n in program.graph.nodes}
    _close(program.module()(x.detach(), b).numpy(), a["output"])
    batch = torch.stack([x.detach(), 2 * x.detach()])
    want = torch.stack([f(t, b, **kw) for t in batch])
    torch.testing.assert_close(torch.func.vmap(lambda t: f(t, b, **kw))(batch), want, equal_nan=True)
    vc = torch.compile(torch.func.vmap(lambda t: f(t, b, **kw)), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(vc(batch), want, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
def test_torch_func_and_forward_mode(op):
    """torch.func's grad, jvp, jacrev and jacfwd and forward-mode AD: the gradient is torchvision's, and the
    tangent of a call the transpose of its backward applied to the tangent (the op itself for ps_roi_align's
    sampled bins; for ps_roi_pool the backward's windows)."""
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as fwAD

    f, _ = _fns(op)
    case, a = _torch_case(op)
    kw = dict(case.arguments)
    x, b, g = (torch.from_numpy(a[k]) for k in ("input", "boxes", "grad_output"))
    gx = torch.func.grad(lambda t: torch.nansum(f(t, b, **kw) * g))(x)
    _close(gx.numpy(), a["grad_input"])
    v = torch.from_numpy(a["grad_input_cotangent"])
    gv = torch.from_numpy(a["grad_output"])
    _, tangent = torch.func.jvp(lambda t: f(t, b, **kw), (x,), (v,))
    # <tangent, g> = <v, grad(g)>: the tangent is the transpose of the stored gradient's map
    want = float((torch.from_numpy(a["grad_input"]) * v).sum())
    assert abs(float(torch.nansum(tangent * gv)) - want) <= 1e-10 * max(1.0, abs(want))
    with fwAD.dual_level():
        dual = f(fwAD.make_dual(x, v), b, **kw)
        torch.testing.assert_close(fwAD.unpack_dual(dual).tangent, tangent, rtol=1e-12, atol=1e-12)
    small = x[:1, :4, :6, :6].clone()
    boxes = torch.tensor([[0, 0.5, 1.0, 5.5, 5.0]], dtype=x.dtype)
    jr = torch.func.jacrev(lambda t: f(t, boxes, 2))(small)
    jf = torch.func.jacfwd(lambda t: f(t, boxes, 2))(small)
    torch.testing.assert_close(jr, jf, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", OPS)
def test_jax_jit_grad_vmap(op):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    f, _ = _fns(op)
    case, a = _torch_case(op)
    kw = dict(case.arguments)
    x, b, g = (jnp.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    _close(np.asarray(jax.jit(lambda t: f(t, b, **kw))(x)), a["output"])
    gx = jax.grad(lambda t: jnp.nansum(f(t, b, **kw) * g))(x)
    _close(np.asarray(gx), a["grad_input"])
    v = jnp.asarray(a["grad_input_cotangent"])
    _, vjp = jax.vjp(lambda gg: poolspec.__dict__[op + "_backward"](gg, x, b, **kw), g)
    _close(np.asarray(vjp(v)[0]), a["grad_grad_output"])
    batch = jnp.stack([x, 2 * x])
    _close(np.asarray(jax.vmap(lambda t: f(t, b, **kw))(batch)), np.stack([a["output"], 2 * a["output"]]))
    fixed = dict(kw, sampling_ratio=2) if op == "ps_roi_align" else kw  # traced boxes: a fixed grid or the frame
    traced = jax.jit(lambda t, bb: f(t, bb, **fixed))(x, b)
    _close(np.asarray(traced), np.asarray(f(x, b, **fixed)), rtol=1e-13, atol=1e-13)
    small = x[:1, :4, :6, :6]
    boxes = jnp.asarray([[0, 0.5, 1.0, 5.5, 5.0]])
    fn = lambda t: f(t, boxes, 2)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jacfwd(fn)(small)), np.asarray(jax.jacrev(fn)(small)), rtol=1e-12,
                               atol=1e-12)
