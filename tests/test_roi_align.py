"""roi_align against torchvision 0.29.1's stored values (the golden store, written by
scripts/generate_golden_roi_align.py in the torchvision environment) on every installed backend: forward and input
gradient, bit-identical repeats, the card's refusals, torch.compile / torch.export / vmap and JAX's transforms."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import poolspec
from poolspec.conformance import golden

CASES = [c for c in golden.cases(["roi_align"]) if c.dtype == "float64" and c.error is None]
PICK = [c for i, c in enumerate(CASES) if i % 4 == 0 or "no_rois" in c.flags or "many_rois" in c.flags]


def _call_args(case):
    return dict(case.arguments)


@pytest.mark.parametrize("case", PICK, ids=[c.name for c in PICK])
def test_forward_and_backward_match_torchvision(backend, case):
    a = case.arrays()
    x, boxes = backend.asarray(a["input"]), backend.asarray(a["boxes"])
    out = poolspec.roi_align(x, boxes, **_call_args(case))
    np.testing.assert_allclose(backend.to_numpy(out), a["output"], rtol=1e-12, atol=1e-12)
    g = backend.asarray(a["grad_output"])
    gx = poolspec.roi_align_backward(g, x, boxes, **_call_args(case))
    np.testing.assert_allclose(backend.to_numpy(gx), a["grad_input"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(backend.to_numpy(x), a["input"])  # inputs are never modified


def test_channels_last_layout_matches_torchvision(backend):
    """layout="channels_last": x (N, H, W, C) and the result (K, PH, PW, C), torchvision's values permuted."""
    case = next(c for c in CASES if "many_rois" in c.flags)
    a = case.arrays()
    last = np.ascontiguousarray(np.moveaxis(a["input"], 1, -1))
    x, boxes = backend.asarray(last), backend.asarray(a["boxes"])
    out = poolspec.roi_align(x, boxes, **_call_args(case), layout="channels_last")
    np.testing.assert_allclose(backend.to_numpy(out), np.moveaxis(a["output"], 1, -1), rtol=1e-12, atol=1e-12)
    g = backend.asarray(np.ascontiguousarray(np.moveaxis(a["grad_output"], 1, -1)))
    gx = poolspec.roi_align_backward(g, x, boxes, **_call_args(case), layout="channels_last")
    np.testing.assert_allclose(backend.to_numpy(gx), np.moveaxis(a["grad_input"], 1, -1), rtol=1e-12, atol=1e-12)


def test_gradient_is_bit_identical_over_repeats(backend):
    case = next(c for c in CASES if "many_rois" in c.flags)
    a = case.arrays()
    x, boxes, g = (backend.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    runs = [backend.to_numpy(poolspec.roi_align_backward(g, x, boxes, **_call_args(case))).tobytes()
            for _ in range(5)]
    assert len(set(runs)) == 1


def test_list_of_boxes_is_the_same_rois():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 5))
    per = [np.array([[0.5, 1.0, 3.5, 4.25], [0.0, 0.0, 5.0, 6.0]]), np.array([[1.0, 1.5, 2.0, 4.0]])]
    rois = np.concatenate([np.concatenate([np.full((len(b), 1), float(i)), b], 1) for i, b in enumerate(per)])
    np.testing.assert_array_equal(poolspec.roi_align(x, per, 2, aligned=True),
                                  poolspec.roi_align(x, rois, 2, aligned=True))
    assert poolspec.roi_align(x, [np.zeros((0, 4)), np.zeros((0, 4))], 3).shape == (0, 3, 3, 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda x, b: poolspec.roi_align(x, b[:, :4], 2), ValueError, "boxes.shape"),
    (lambda x, b: poolspec.roi_align(x[0], b, 2), ValueError, "x="),
    (lambda x, b: poolspec.roi_align(x, b, (2, -1)), ValueError, "output_size"),
    (lambda x, b: poolspec.roi_align(x, b, 2, sampling_ratio=1.5), TypeError, "sampling_ratio"),
    (lambda x, b: poolspec.roi_align(x, b, 2, aligned=1), TypeError, "aligned"),
    (lambda x, b: poolspec.roi_align(x, b, 2, spatial_scale=float("nan")), ValueError, "spatial_scale"),
    (lambda x, b: poolspec.roi_align(x, b.astype(np.float32), 2), TypeError, "boxes.dtype"),
    (lambda x, b: poolspec.roi_align(x, b + np.array([2.0, 0, 0, 0, 0]), 2), ValueError, "batch index"),
    (lambda x, b: poolspec.roi_align(x, b * np.array([1, np.nan, 1, 1, 1]), 2), ValueError, "finite"),
    (lambda x, b: poolspec.roi_align(x, [b[:, 1:3]], 2), ValueError, r"boxes\[0\].shape"),
    # torchvision refuses a grid negative on exactly one axis (an aligned roi negative by a bin or more)
    (lambda x, b: poolspec.roi_align(x, np.array([[0, 4.0, 0.0, 0.0, 3.0]]), 2, aligned=True), ValueError, "negative"),
    (lambda x, b: poolspec.roi_align_backward(np.ones((1, 2, 3, 3)), x, b, 2), ValueError, "grad_output"),
])
def test_refusals_name_the_argument(call, error, match):
    x = np.zeros((2, 2, 5, 5))
    b = np.array([[1.0, 0.0, 0.0, 3.0, 3.0]])
    with pytest.raises(error, match=match):
        call(x, b)


def test_half_precision_is_float32_rounded_once():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float16)
    b = np.array([[0, 0.5, 1.0, 4.5, 5.0]], dtype=np.float16)
    want = poolspec.roi_align(x.astype(np.float32), b.astype(np.float32), 3).astype(np.float16)
    out = poolspec.roi_align(x, b, 3)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, want)


def test_large_calls_are_chunked_with_the_same_values(monkeypatch):
    from poolspec.families.roi_align import sampling

    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 20, 17))
    b = np.array([[0, -2.0, 1.0, 19.0, 16.5], [1, 3.0, 2.0, 9.5, 7.0], [0, 0.0, 0.0, 30.0, 30.0]])
    g = rng.standard_normal((3, 3, 3, 2))
    whole, whole_g = poolspec.roi_align(x, b, (3, 2)), poolspec.roi_align_backward(g, x, b, (3, 2))
    for budget in (1, 4000, 40000):  # sample rows, bin rows and rois per chunk
        monkeypatch.setattr(sampling, "_CHUNK_BYTES", budget)
        np.testing.assert_allclose(poolspec.roi_align(x, b, (3, 2)), whole, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(poolspec.roi_align_backward(g, x, b, (3, 2)), whole_g, rtol=1e-13, atol=1e-14)


def _torch_case():
    case = next(c for c in CASES if "many_rois" in c.flags and c.arguments["sampling_ratio"] <= 0)
    return case, case.arrays()


def test_torch_autograd_any_order_compile_export_vmap():
    torch = pytest.importorskip("torch")
    case, a = _torch_case()
    kw = _call_args(case)
    x, b = torch.from_numpy(a["input"]).requires_grad_(True), torch.from_numpy(a["boxes"])
    g, v = torch.from_numpy(a["grad_output"]).requires_grad_(True), torch.from_numpy(a["grad_input_cotangent"])
    out = poolspec.roi_align(x, b, **kw)
    (gx,) = torch.autograd.grad(out, x, g, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), a["grad_input"], rtol=1e-12, atol=1e-12)
    (ggo,) = torch.autograd.grad((gx * v).sum(), g)  # the backward's transpose: the op itself
    np.testing.assert_allclose(ggo.numpy(), a["grad_grad_output"], rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda t: poolspec.roi_align(t, b[:3], **kw), (x.detach()[:, :1].clone()
                                                                                    .requires_grad_(True),))
    compiled = torch.compile(lambda t, bb: poolspec.roi_align(t, bb, **kw), fullgraph=True, backend="aot_eager",
                             dynamic=True)
    xs = x.detach().clone().requires_grad_(True)
    y = compiled(xs, b)
    np.testing.assert_allclose(y.detach().numpy(), a["output"], rtol=1e-12, atol=1e-12)
    y.backward(g.detach())
    np.testing.assert_allclose(xs.grad.numpy(), a["grad_input"], rtol=1e-12, atol=1e-12)

    class M(torch.nn.Module):
        def forward(self, t, bb):
            return poolspec.roi_align(t, bb, **kw)

    program = torch.export.export(M(), (x.detach(), b))
    assert "poolspec.roi_align.default" in {str(n.target) for n in program.graph.nodes}
    np.testing.assert_allclose(program.module()(x.detach(), b).numpy(), a["output"], rtol=1e-12, atol=1e-12)
    batch = torch.stack([x.detach(), 2 * x.detach()])
    want = torch.stack([poolspec.roi_align(t, b, **kw) for t in batch])
    torch.testing.assert_close(torch.func.vmap(lambda t: poolspec.roi_align(t, b, **kw))(batch), want)
    vc = torch.compile(torch.func.vmap(lambda t: poolspec.roi_align(t, b, **kw)), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(vc(batch), want)


def test_jax_jit_grad_vmap():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    case, a = _torch_case()
    kw = _call_args(case)
    x, b, g = (jnp.asarray(a[k]) for k in ("input", "boxes", "grad_output"))
    f = jax.jit(lambda t: poolspec.roi_align(t, b, **kw))  # concrete boxes: the adaptive grid is read once
    np.testing.assert_allclose(np.asarray(f(x)), a["output"], rtol=1e-12, atol=1e-12)
    gx = jax.grad(lambda t: jnp.vdot(poolspec.roi_align(t, b, **kw), g))(x)
    np.testing.assert_allclose(np.asarray(gx), a["grad_input"], rtol=1e-12, atol=1e-12)
    batch = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda t: poolspec.roi_align(t, b, **kw))(batch)),
                               np.stack([a["output"], 2 * a["output"]]), rtol=1e-12, atol=1e-12)
    fixed = dict(kw, sampling_ratio=2)  # a positive ratio works with traced boxes too
    traced = jax.jit(lambda t, bb: poolspec.roi_align(t, bb, **fixed))(x, b)
    np.testing.assert_allclose(np.asarray(traced), np.asarray(poolspec.roi_align(x, b, **fixed)), rtol=1e-13)
    with pytest.raises(ValueError, match="sampling_ratio"):
        jax.jit(lambda t, bb: poolspec.roi_align(t, bb, **kw))(x, b)


def test_torch_func_and_forward_mode():
    """torch.func's grad, jacrev, jacfwd, jvp and forward-mode AD: the gradient is torchvision's, and the
    tangents are the op on the tangent (roi_align is linear in x)."""
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as fwAD

    case, a = _torch_case()
    kw = _call_args(case)
    x, b, g = (torch.from_numpy(a[k]) for k in ("input", "boxes", "grad_output"))
    gx = torch.func.grad(lambda t: (poolspec.roi_align(t, b, **kw) * g).sum())(x)
    np.testing.assert_allclose(gx.numpy(), a["grad_input"], rtol=1e-12, atol=1e-12)
    v = torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(1))
    want = poolspec.roi_align(v, b, **kw)
    _, tangent = torch.func.jvp(lambda t: poolspec.roi_align(t, b, **kw), (x,), (v,))
    torch.testing.assert_close(tangent, want, rtol=1e-12, atol=1e-12)
    with fwAD.dual_level():
        dual = poolspec.roi_align(fwAD.make_dual(x, v), b, **kw)
        torch.testing.assert_close(fwAD.unpack_dual(dual).tangent, want, rtol=1e-12, atol=1e-12)
    small = x[:1, :2, :6, :6].clone()
    boxes = torch.tensor([[0, 0.5, 1.0, 4.5, 5.0]], dtype=x.dtype)
    jr = torch.func.jacrev(lambda t: poolspec.roi_align(t, boxes, 2, sampling_ratio=-1))(small)
    jf = torch.func.jacfwd(lambda t: poolspec.roi_align(t, boxes, 2, sampling_ratio=-1))(small)
    torch.testing.assert_close(jr, jf, rtol=1e-12, atol=1e-12)


def test_jax_forward_mode_and_higher_orders():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    case, a = _torch_case()
    kw = _call_args(case)
    x, b = jnp.asarray(a["input"]), jnp.asarray(a["boxes"])
    v = jnp.asarray(np.random.default_rng(1).standard_normal(a["input"].shape))
    want = np.asarray(poolspec.roi_align(v, b, **kw))
    _, tangent = jax.jvp(lambda t: poolspec.roi_align(t, b, **kw), (x,), (v,))
    np.testing.assert_allclose(np.asarray(tangent), want, rtol=1e-12, atol=1e-12)
    _, linear = jax.linearize(lambda t: poolspec.roi_align(t, b, **kw), x)
    np.testing.assert_allclose(np.asarray(linear(v)), want, rtol=1e-12, atol=1e-12)
    small, boxes = x[:1, :2, :6, :6], jnp.asarray([[0, 0.5, 1.0, 4.5, 5.0]])
    fn = lambda t: poolspec.roi_align(t, boxes, 2, sampling_ratio=2)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jacfwd(fn)(small)), np.asarray(jax.jacrev(fn)(small)), rtol=1e-12,
                               atol=1e-12)
    hess = jax.hessian(lambda t: jnp.sum(fn(t) ** 2))(small)
    jac = np.asarray(jax.jacrev(fn)(small)).reshape(-1, small.size)
    np.testing.assert_allclose(np.asarray(hess).reshape(small.size, small.size), 2 * jac.T @ jac, rtol=1e-10,
                               atol=1e-12)


def _box_configs(n: int, seed: int):
    """Random calls with boxes of every kind off the quarter grid (away from the rules' steps), aligned both ways,
    adaptive and fixed sampling ratios."""
    from poolspec.families.roi_align.conformance import _KINDS, _boxes

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        N, C, H, W = (int(rng.integers(a, b)) for a, b in ((1, 3), (1, 4), (2, 10), (2, 10)))
        K, size = int(rng.integers(1, 5)), (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        aligned, scale = bool(rng.random() < 0.5), float(rng.choice([1.0, 0.5]))
        kw = dict(spatial_scale=scale, sampling_ratio=int(rng.choice([-1, 0, 1, 2])), aligned=aligned)
        boxes = _boxes(rng, tuple(k for k in _KINDS if k != "negative"), K, N, H, W, scale, aligned)
        boxes[:, 1:] += rng.uniform(-0.1, 0.1, (K, 4))
        out.append((rng.standard_normal((N, C, H, W)), boxes, rng.standard_normal((K, C) + size), size, kw))
    return out


def test_boxes_gradient_matches_finite_differences(backend):
    """roi_align_boxes_backward against central differences of the forward (torchvision's numbers, checked
    above): the derivative of what torchvision computes, which torchvision itself does not give."""
    for x, boxes, g, size, kw in _box_configs(6 if backend.name in ("numpy", "torch") else 2, 3):
        got = backend.to_numpy(poolspec.roi_align_boxes_backward(backend.asarray(g), backend.asarray(x),
                                                                backend.asarray(boxes), size, **kw))
        want = np.zeros_like(boxes)
        for k, j in np.ndindex(boxes.shape[0], 4):
            e = np.zeros_like(boxes)
            e[k, j + 1] = 1e-7
            want[k, j + 1] = float(np.sum((poolspec.roi_align(x, boxes + e, size, **kw)
                                           - poolspec.roi_align(x, boxes - e, size, **kw)) * g)) / 2e-7
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert got.dtype == boxes.dtype and not got[:, 0].any()


def test_boxes_gradient_is_torchs_and_jaxs_autodiff():
    """torch autograd (eager and under torch.compile, whose node calls the explicit backward) and jax.grad give
    roi_align_boxes_backward's values; repeated calls give its bits; a list of boxes gets a list back."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for x, boxes, g, size, kw in _box_configs(12, 4):
        want = poolspec.roi_align_boxes_backward(g, x, boxes, size, **kw)
        assert len({poolspec.roi_align_boxes_backward(g, x, boxes, size, **kw).tobytes() for _ in range(5)}) == 1
        b = torch.tensor(boxes, requires_grad=True)

        def f(b, x=x, size=size, kw=kw):
            return poolspec.roi_align(torch.tensor(x), b, size, **kw)

        y = f(b)
        got = torch.autograd.grad(y, b, torch.tensor(g))[0] if y.requires_grad else torch.zeros_like(b)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
        if kw["sampling_ratio"] > 0:
            jg = jax.grad(lambda b, x=x, g=g, size=size, kw=kw: (poolspec.roi_align(jax.numpy.asarray(x), b, size, **kw)
                                                                  * g).sum())(jax.numpy.asarray(boxes))
            np.testing.assert_allclose(np.asarray(jg), want, rtol=1e-10, atol=1e-12)
    x, boxes, g, size, kw = _box_configs(1, 5)[0]
    b = torch.tensor(boxes, requires_grad=True)
    compiled = torch.compile(lambda b: poolspec.roi_align(torch.tensor(x), b, size, **kw), fullgraph=True,
                             backend="aot_eager")
    y = compiled(b)
    np.testing.assert_allclose(torch.autograd.grad(y, b, torch.tensor(g))[0].numpy(),
                               poolspec.roi_align_boxes_backward(g, x, boxes, size, **kw), rtol=1e-12, atol=1e-12)
    per = [boxes[boxes[:, 0] == i, 1:] for i in range(x.shape[0])]
    listed = poolspec.roi_align_boxes_backward(g[np.argsort(boxes[:, 0], kind="stable")], x, per, size, **kw)
    assert isinstance(listed, list) and [p.shape for p in listed] == [p.shape for p in per]


# ps_roi_align's box gradient: central differences of live torchvision's ps_roi_align (float64, away from the
# steps), written by scripts/ps_roi_align_boxes_cases.py in the torchvision environment
PS_BOXES = Path(__file__).resolve().parent / "data" / "ps_roi_align_boxes"


def _ps_box_cases():
    meta = json.loads(PS_BOXES.with_suffix(".json").read_text())
    assert meta["version"].startswith("torchvision 0.29.1")
    arrays = np.load(PS_BOXES.with_suffix(".npz"))
    return [(arrays[f"{i}/x"], arrays[f"{i}/boxes"], arrays[f"{i}/grad_output"], arrays[f"{i}/grad_boxes"],
             dict(kw, output_size=tuple(kw["output_size"]))) for i, kw in enumerate(meta["cases"])]


def test_ps_boxes_gradient_matches_torchvisions_differences(backend):
    """ps_roi_align_boxes_backward against central differences of torchvision's ps_roi_align (which gives no box
    gradient itself); bit-identical over repeats; the batch index gets 0."""
    cases = _ps_box_cases()
    assert sum(bool(np.abs(want).max() > 0.1) for *_, want, _ in cases) >= len(cases) - 4  # not all zeros
    for x, boxes, g, want, kw in cases if backend.name in ("numpy", "torch") else cases[::3]:
        args = (backend.asarray(g), backend.asarray(x), backend.asarray(boxes))
        runs = [backend.to_numpy(poolspec.ps_roi_align_boxes_backward(*args, **kw)) for _ in range(5)]
        assert len({r.tobytes() for r in runs}) == 1
        np.testing.assert_allclose(runs[0], want, rtol=1e-6, atol=1e-8)
        assert runs[0].dtype == boxes.dtype and not runs[0][:, 0].any()


def test_ps_boxes_gradient_is_torchs_and_jaxs_autodiff():
    """torch autograd (eager, and under torch.compile through the boxes' node), jax.grad (fixed grids: traced boxes)
    give torchvision's differences, as ps_roi_align_boxes_backward; a list of boxes gets a list back; a wrong
    cotangent is refused."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    cases = _ps_box_cases()
    for x, boxes, g, want, kw in cases:
        b = torch.tensor(boxes, requires_grad=True)
        y = poolspec.ps_roi_align(torch.tensor(x), b, **kw)
        got = torch.autograd.grad(y, b, torch.tensor(g))[0] if y.requires_grad else torch.zeros_like(b)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)
        if kw["sampling_ratio"] > 0:
            jg = jax.grad(lambda bb, x=x, g=g, kw=kw: (poolspec.ps_roi_align(jax.numpy.asarray(x), bb, **kw)
                                                       * g).sum())(jax.numpy.asarray(boxes))
            np.testing.assert_allclose(np.asarray(jg), want, rtol=1e-6, atol=1e-8)
    x, boxes, g, want, kw = next(c for c in cases if c[1].shape[0] > 1 and np.abs(c[3]).max() > 0.1)
    xt, b = torch.tensor(x, requires_grad=True), torch.tensor(boxes, requires_grad=True)
    compiled = torch.compile(lambda t, bb: poolspec.ps_roi_align(t, bb, **kw), fullgraph=True, backend="aot_eager")
    gx, gb = torch.autograd.grad(compiled(xt, b), (xt, b), torch.tensor(g))
    np.testing.assert_allclose(gb.numpy(), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb.numpy(), poolspec.ps_roi_align_boxes_backward(g, x, boxes, **kw), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(gx.numpy(), poolspec.ps_roi_align_backward(g, x, boxes, **kw), rtol=1e-12, atol=1e-12)
    per = [boxes[np.trunc(boxes[:, 0]) == i, 1:] for i in range(x.shape[0])]
    order = np.argsort(np.trunc(boxes[:, 0]), kind="stable")
    listed = poolspec.ps_roi_align_boxes_backward(g[order], x, per, **kw)
    assert isinstance(listed, list) and [p.shape for p in listed] == [p.shape for p in per]
    np.testing.assert_allclose(np.concatenate(listed), want[order, 1:], rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="grad_output"):
        poolspec.ps_roi_align_boxes_backward(g[:, :, :1], x, boxes, **kw)


def test_regression_cases_name_their_upstream_report():
    """The 512-roi cases (torchvision's MPS backward over-accumulated at that count, vision PR #9510): aligned both
    ways, on one image, each stored with the report."""
    entries = [e for e in golden.manifest()["cases"] if e["op"] == "roi_align" and "rois_512" in e["flags"]]
    assert {e["arguments"]["aligned"] for e in entries} == {False, True}
    for e in entries:
        assert "regression" in e["flags"] and any("pytorch/vision/pull/9510" in u for u in e["upstream"])
        a = golden.cases(["roi_align"])[[c.name for c in golden.cases(["roi_align"])].index(e["id"])].arrays()
        assert a["boxes"].shape == (512, 5) and set(a["boxes"][:, 0]) == {0.0} and "grad_input" in a
