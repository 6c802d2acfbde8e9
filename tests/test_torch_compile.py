"""torch.compile and torch.export of a model that uses every op family in 1-d, 2-d and 3-d.

Inside a capture each op is one ``torch.library`` node (poolspec/autodiff/torch_graph.py), which inductor
decomposes into torch ops it can fuse (torch.export and the aot_eager backend keep the nodes). Held here: zero
graph breaks with ``fullgraph=True``; forward and backward equal to eager poolspec and to torch's native ops;
under inductor's decompositions no poolspec node left and no accumulating scatter in the backward;
``dynamic=True`` without recompiling when the batch size changes; the compiled backward has no scatter,
index_add or index_put; ``torch.export`` twice in one process, with a dynamic batch, through save and load.
Compile time counts: every test but one uses the ``aot_eager`` backend, and the inductor test is one graph.
"""

from __future__ import annotations

import io

import pytest

import poolspec as ps

torch = pytest.importorskip("torch")
F = torch.nn.functional

MODES = {1: ("nearest", "nearest-exact", "linear", "area"), 2: ("bilinear", "bicubic", "area", "nearest-exact"),
         3: ("trilinear", "area", "nearest")}


def _calls(lib, xs):
    """(label, output) of every family on inputs x1, x2, x3; ``lib`` is poolspec or torch.nn.functional."""
    native = lib is F
    out = []
    for n, x in enumerate(xs, 1):
        def op(name, *a, n=n, **k):
            return getattr(lib, f"{name}{n}d")(*a, **k)

        out.append((f"avg{n}", op("avg_pool", x, 2, 1, 1, ceil_mode=True, count_include_pad=False)))
        out.append((f"avg{n}-divisor", op("avg_pool", x, 3, 2, divisor_override=2) if n > 1 else None))
        out.append((f"adaptive_avg{n}", op("adaptive_avg_pool", x, 3)))
        out.append((f"max{n}", op("max_pool", x, 3, 2, 1, dilation=1, ceil_mode=True)))
        values, idx = op("max_pool", x, 2, return_indices=True)
        out.append((f"max{n}-indices", values))
        # SegNet's pattern: output_size from the input's shape (SymInts under dynamic shapes)
        out.append((f"unpool{n}", op("max_unpool", values, idx, 2, output_size=x.shape[-n:])))
        out.append((f"adaptive_max{n}", op("adaptive_max_pool", x, 3)))
        vals, ind = op("adaptive_max_pool", x, 2, return_indices=True)
        out.append((f"adaptive_max{n}-indices", vals + 0 * ind))
        out.append((f"lp{n}", op("lp_pool", x, 2.0, 2, ceil_mode=True)))
        out.append((f"lp{n}-inf", op("max_pool", x.abs(), 2) if native else op("lp_pool", x, float("inf"), 2)))
        for mode in MODES[n]:
            kw = {"align_corners": False} if mode in ("linear", "bilinear", "bicubic", "trilinear") else {}
            out.append((f"{mode}{n}", lib.interpolate(x, scale_factor=1.5, mode=mode, **kw)))
    x2 = xs[1]
    out.append(("bilinear-aa", lib.interpolate(x2, size=(3, 5), mode="bilinear", antialias=True)))
    out.append(("bicubic-aa", lib.interpolate(x2, size=(4, 3), mode="bicubic", antialias=True,
                                              align_corners=True)))
    out.append(("lanczos", None if native else lib.interpolate(x2, size=(5, 11), mode="lanczos")))
    return [(k, v) for k, v in out if v is not None]


def _model(lib):
    return lambda *xs: tuple(v for _, v in _calls(lib, xs))


def _labels():
    return [k for k, _ in _calls(ps, _inputs(2))]


def _inputs(batch, channels_last=False):
    g = torch.Generator().manual_seed(batch)
    shapes = [(batch, 3, 9), (batch, 4, 7, 8), (batch, 5, 5, 6, 7)]
    xs = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    if channels_last:
        xs[1] = xs[1].to(memory_format=torch.channels_last)
        xs[2] = xs[2].to(memory_format=torch.channels_last_3d)
    return xs


def _weights(outs):
    return [torch.linspace(-1, 2, o.numel(), dtype=o.dtype).view(o.shape) for o in outs]


def _run(fn, xs):
    """Outputs and the gradients of a fixed linear functional of them."""
    xs = [x.detach().clone().requires_grad_() for x in xs]
    outs = fn(*xs)
    sum((o * w).sum() for o, w in zip(outs, _weights(outs))).backward()
    return [o.detach() for o in outs], [x.grad for x in xs]


def _close(got, want, labels, rtol=1e-12, exact=False):
    for label, g, w in zip(labels, got, want):
        assert g.shape == w.shape, label
        tol = 0.0 if exact else rtol
        torch.testing.assert_close(g, w, rtol=tol, atol=tol, equal_nan=True, msg=label)


def _native(xs):
    keep = [k for k in _labels() if k != "lanczos"]
    outs, grads = _run(_model(F), xs)
    return dict(zip(keep, outs)), grads


def test_fullgraph_has_no_graph_break():
    explanation = torch._dynamo.explain(_model(ps))(*_inputs(2))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1


def test_compiled_equals_eager_and_native_with_dynamic_batch():
    torch._dynamo.reset()
    compiled = torch.compile(_model(ps), fullgraph=True, dynamic=True, backend="aot_eager")
    labels = _labels()
    with torch._dynamo.config.patch(error_on_recompile=True):
        for batch in (2, 3, 5):  # one compilation serves every batch size
            xs = _inputs(batch)
            outs, grads = _run(compiled, xs)
            eager_outs, eager_grads = _run(_model(ps), xs)
            _close(outs, eager_outs, labels, exact=True)
            # each x feeds many ops: the joint graph adds their gradients in an order of its own
            _close(grads, eager_grads, ["x1", "x2", "x3"])
            native, _ = _native(xs)
            _close([o for k, o in zip(labels, outs) if k in native], list(native.values()), list(native))


def test_compiled_backward_is_gather_only_and_deterministic():
    graphs = []

    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def record(gm, example_inputs):
        graphs.append(gm)
        return make_boxed_func(gm.forward)

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=record, bw_compiler=record)
    compiled = torch.compile(_model(ps), fullgraph=True, backend=backend)
    xs = _inputs(2)
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first = _run(compiled, xs)[1]
        second = _run(compiled, xs)[1]
    finally:
        torch.use_deterministic_algorithms(before)
    assert len(graphs) == 2  # forward and backward
    targets = {str(node.target) for node in graphs[1].graph.nodes if node.op == "call_function"}
    assert "poolspec.pool_backward.default" in targets
    assert not [t for t in targets if any(s in t for s in ("scatter", "index_add", "index_put"))], targets
    _close(first, second, ["x1", "x2", "x3"], exact=True)


def test_inductor_keeps_layouts_and_values():
    """Inductor checks every fallback node's strides against the fake implementation's: channels_last
    inputs exercise the layout rules of the cards."""
    torch._dynamo.reset()
    compiled = torch.compile(_model(ps), fullgraph=True)
    xs = _inputs(2, channels_last=True)
    outs, grads = _run(compiled, xs)
    eager_outs, eager_grads = _run(_model(ps), xs)
    labels = _labels()
    # inductor generates its own kernels from the ops' decompositions (autodiff/torch_inductor.fuse): the same
    # operations, with its own vector math (lp_pool's powers differ from eager's in the last bits)
    _close(outs, eager_outs, labels)
    for label, got, want in zip(labels, outs, eager_outs):
        assert got.stride() == want.stride(), label
    _close(grads, eager_grads, ["x1", "x2", "x3"])


def test_export_twice_dynamic_batch_and_saved():
    class Model(torch.nn.Module):
        def forward(self, x1, x2, x3):
            return _model(ps)(x1, x2, x3)

    xs = _inputs(2)
    torch.export.export(Model(), tuple(xs))
    # a second export of the same shapes once failed on plan tensors cached by the first
    program = torch.export.export(Model(), tuple(x.requires_grad_() for x in _inputs(2)))
    batch = torch.export.Dim("batch")
    dynamic = torch.export.export(Model(), tuple(xs), dynamic_shapes=({0: batch},) * 3)
    buffer = io.BytesIO()
    torch.export.save(dynamic, buffer)
    buffer.seek(0)
    loaded = torch.export.load(buffer)
    labels = _labels()
    for ys in (_inputs(2), _inputs(6)):
        want = _model(ps)(*ys)
        if ys[0].shape[0] == 2:
            _close(program.module()(*ys), want, labels, exact=True)
        _close(dynamic.module()(*ys), want, labels, exact=True)
        _close(loaded.module()(*ys), want, labels, exact=True)
    targets = {str(n.target) for n in dynamic.graph.nodes if n.op == "call_function"}
    assert {"poolspec.pool.default", "poolspec.max_pool.default"} <= targets


@pytest.mark.parametrize("name", ["avg_pool2d", "max_pool2d", "adaptive_max_pool1d", "lp_pool3d", "interpolate",
                                  "max_unpool2d"])
def test_explicit_backward_compiles_and_differentiates(name):
    """The explicit VJPs in a graph, and (linear in grad_output) their own gradient w.r.t. it."""
    g = torch.Generator().manual_seed(7)
    if name == "max_unpool2d":
        x = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=g)
        values, idx = ps.max_pool2d(x, 2, return_indices=True)
        primal, args = values, {"kernel_size": 2}
        def fn(gout, p):
            return ps.max_unpool2d_backward(gout, p, idx, **args)
        grad_output = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=g)
    else:
        args = {"avg_pool2d": {"kernel_size": 3, "stride": 2, "padding": 1},
                "max_pool2d": {"kernel_size": 3, "stride": 1, "dilation": 2},
                "adaptive_max_pool1d": {"output_size": 4},
                "lp_pool3d": {"norm_type": 3.0, "kernel_size": 2},
                "interpolate": {"size": (9, 4), "mode": "bicubic", "align_corners": True}}[name]
        shape = {"adaptive_max_pool1d": (2, 3, 11), "lp_pool3d": (2, 2, 4, 5, 4)}.get(name, (2, 3, 7, 6))
        primal = torch.rand(shape, dtype=torch.float64, generator=g) + 0.1  # lp: no NaN from odd powers
        grad_output = torch.randn(getattr(ps, name)(primal, **args).shape, dtype=torch.float64, generator=g)
        def fn(gout, p):
            return getattr(ps, f"{name}_backward")(gout, p, **args)
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    want = fn(grad_output, primal)
    _close([compiled(grad_output, primal)], [want], [name], exact=True)
    if name == "lp_pool3d":
        return  # nonlinear in grad_output's partner: no derivative inside a capture (said by its error)
    w = torch.randn(want.shape, dtype=torch.float64, generator=g)
    gc = grad_output.clone().requires_grad_()
    (compiled(gc, primal) * w).sum().backward()
    ge = grad_output.clone().requires_grad_()
    (fn(ge, primal) * w).sum().backward()
    _close([gc.grad], [ge.grad], [name], exact=True)


def test_bad_arguments_fail_at_trace_time_naming_the_rule():
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: ps.avg_pool2d(x, 2, padding=2), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match="padding"):
        compiled(torch.ones(1, 1, 6, 6))
    compiled = torch.compile(lambda x: ps.interpolate(x, size=4, mode="cubic"), fullgraph=True,
                             backend="aot_eager")
    with pytest.raises(Exception, match="mode"):
        compiled(torch.ones(1, 1, 6))


def test_vmap_inside_compile():
    """torch.func.vmap traced by Dynamo meets each node's vmap rule (the vmapped dimension joins the batch);
    values and gradients equal torch's native ops under the same transform. (torch.func.grad inside a
    capture is not supported for torch.library ops by torch 2.13, whose generated autograd.Function lacks
    setup_context; eagerly every torch.func transform works, test_torch_func.py.)"""

    def per_sample(lib, x):
        values, idx = lib.max_pool2d(x, 2, return_indices=True)
        return (lib.max_unpool2d(values, idx, 2, output_size=x.shape[-2:]) + 0.5 * x,
                lib.avg_pool2d(x, 3, 1, 1), lib.interpolate(x, size=(4, 9), mode="bicubic"),
                lib.adaptive_max_pool2d(x[0], 3), lib.lp_pool2d(x, 2, 2) + lib.adaptive_avg_pool2d(x, 3))

    x = torch.randn(2, 3, 4, 7, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    torch._dynamo.reset()
    for dims in (0, 1):
        compiled = torch.compile(torch.func.vmap(lambda t: per_sample(ps, t), in_dims=dims), fullgraph=True,
                                 backend="aot_eager")
        outs, grads = _run(compiled, [x])
        want, want_grads = _run(torch.func.vmap(lambda t: per_sample(F, t), in_dims=dims), [x])
        _close(outs, want, ["unpool", "avg", "bicubic", "adaptive_max", "lp+adaptive_avg"])
        _close(grads, want_grads, ["x"])


def test_saved_program_runs_in_a_fresh_process(tmp_path):
    """The nodes carry their op and arguments: loading needs poolspec's op library and nothing else."""
    import subprocess
    import sys

    class Model(torch.nn.Module):
        def forward(self, x):
            y, idx = ps.max_pool2d(x, 2, return_indices=True)
            return ps.interpolate(ps.max_unpool2d(y, idx, 2), size=(5, 3), mode="bicubic", antialias=True)

    x = torch.randn(2, 3, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    torch.export.save(torch.export.export(Model(), (x,)), tmp_path / "model.pt2")
    torch.save({"x": x, "want": Model()(x)}, tmp_path / "io.pt")
    script = ("import sys, torch, poolspec.autodiff.torch_graph\n"
              "program = torch.export.load(sys.argv[1])\n"
              "io = torch.load(sys.argv[2])\n"
              "assert 'torch.nn.functional' not in str(program.graph)\n"
              "assert torch.equal(program.module()(io['x']), io['want'])\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "model.pt2"), str(tmp_path / "io.pt")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


# --- grid_sample, affine_grid, fractional_max_pool: nodes of their own (poolspec::grid_sample, ...) -------

def _sampling_inputs(batch):
    g = torch.Generator().manual_seed(batch)
    x = torch.randn(batch, 3, 5, 7, dtype=torch.float64, generator=g)
    grid = torch.rand(batch, 4, 6, 2, dtype=torch.float64, generator=g) * 2.4 - 1.2
    theta = torch.eye(2, 3, dtype=torch.float64) + 0.3 * torch.randn(batch, 2, 3, dtype=torch.float64, generator=g)
    v = torch.randn(batch, 2, 4, 5, 6, dtype=torch.float64, generator=g)
    theta3 = torch.eye(3, 4, dtype=torch.float64) + 0.2 * torch.randn(batch, 3, 4, dtype=torch.float64, generator=g)
    return [x, grid, theta, v, theta3]


def _sampling(lib, x, grid, theta, v, theta3):
    """A spatial transformer (affine_grid at x's size, a SymInt batch under dynamic shapes), grid_sample
    bilinear, bicubic and nearest in 2-d, and a 3-d transformer."""
    warped = lib.grid_sample(x, lib.affine_grid(theta, x.shape, align_corners=False), align_corners=False)
    return (warped,
            lib.grid_sample(x, grid, padding_mode="border", align_corners=False),
            lib.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=True),
            lib.grid_sample(x, grid, mode="nearest", padding_mode="zeros", align_corners=False),
            lib.grid_sample(v, lib.affine_grid(theta3, (v.shape[0], 2, 3, 4, 2), align_corners=True),
                            padding_mode="reflection", align_corners=True))


SAMPLING = ["transformer", "bilinear", "bicubic", "nearest", "transformer3d"]


def test_sampling_compiled_dynamic_equals_native():
    """Forward and the gradients w.r.t. x, grid and theta, compiled with a dynamic batch (no recompile),
    equal torch's native ops compiled (with static shapes: torch 2.13's affine_grid backward fails under
    dynamic shapes, "SymIntArrayRef expected to contain only concrete integers")."""
    torch._dynamo.reset()
    ours = torch.compile(lambda *a: _sampling(ps, *a), fullgraph=True, dynamic=True, backend="aot_eager")
    native = torch.compile(lambda *a: _sampling(F, *a), fullgraph=True, dynamic=False, backend="aot_eager")
    for batch in (8, 9):  # sizes no other dimension has (duck sizing would tie them to specialised ones)
        inputs = _sampling_inputs(batch)
        with torch._dynamo.config.patch(error_on_recompile=batch > 8):
            outs, grads = _run(ours, inputs)
        want, want_grads = _run(native, inputs)
        _close(outs, want, SAMPLING)
        _close(grads, want_grads, ["x", "grid", "theta", "v", "theta3"])


def test_sampling_export_dynamic_batch_and_saved():
    class Model(torch.nn.Module):
        def forward(self, x, grid, theta, samples):
            warped = ps.grid_sample(x, ps.affine_grid(theta, x.shape), padding_mode="border")
            values, idx = ps.fractional_max_pool2d(x, 2, output_size=(3, 4), return_indices=True,
                                                   _random_samples=samples)
            return warped, ps.grid_sample(x, grid, mode="bicubic"), values, idx

    def inputs(batch):
        x, grid, theta = _sampling_inputs(batch)[:3]
        return x, grid, theta, torch.rand(batch, 3, 2, dtype=torch.float64, generator=torch.Generator())

    batch = torch.export.Dim("batch")
    program = torch.export.export(Model(), inputs(2), dynamic_shapes=({0: batch},) * 4)
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    loaded = torch.export.load(buffer)
    labels = ["transformer", "bicubic", "fractional", "indices"]
    for batch in (2, 6):
        xs = inputs(batch)
        want = Model()(*xs)
        _close(program.module()(*xs), want, labels, exact=True)
        _close(loaded.module()(*xs), want, labels, exact=True)
    targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert {"poolspec.grid_sample.default", "poolspec.affine_grid.default",
            "poolspec.fractional_max_pool.default"} <= targets


def test_fractional_compiled_equals_native():
    """Given samples: values, indices and the input gradient equal torch's and eager poolspec's (2-d and 3-d,
    dynamic batch; eager torch: its fractional_max_pool3d_backward has no fake kernel for a compiled
    reference); drawn in the graph: torch.rand, so torch.manual_seed gives torch's windows."""
    def model(lib, x, v, s2, s3):
        a, ia = lib.fractional_max_pool2d(x, 2, output_size=(3, 4), return_indices=True, _random_samples=s2)
        b = lib.fractional_max_pool3d(v, (2, 1, 2), output_ratio=(0.5, 0.5, 0.5), _random_samples=s3)
        return a, ia, b

    def run(fn, x, v, s2, s3):
        return _run(lambda x, v: fn(x, v, s2, s3), [x, v])  # the samples: no gradient

    torch._dynamo.reset()
    ours = torch.compile(lambda *a: model(ps, *a), fullgraph=True, dynamic=True, backend="aot_eager")
    for batch in (8, 9):
        x, _, _, v, _ = _sampling_inputs(batch)
        g = torch.Generator().manual_seed(batch)
        samples = [torch.rand(batch, c, n, dtype=torch.float64, generator=g) for c, n in ((3, 2), (2, 3))]
        with torch._dynamo.config.patch(error_on_recompile=batch > 8):
            outs, grads = run(ours, x, v, *samples)
        want, want_grads = run(lambda *a: model(F, *a), x, v, *samples)
        _close(outs, want, ["values2d", "indices2d", "values3d"], exact=True)
        _close(grads, want_grads, ["x", "v"])  # shared winners: sums in an order of their own
        _close(grads, run(lambda *a: model(ps, *a), x, v, *samples)[1], ["x", "v"], exact=True)
    drawn = torch.compile(lambda x: ps.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5)), fullgraph=True,
                          backend="aot_eager")
    x = _sampling_inputs(2)[0]
    torch.manual_seed(11)
    got = drawn(x)
    torch.manual_seed(11)
    _close([got], [F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5))], ["drawn"], exact=True)


@pytest.mark.parametrize("name", ["grid_sample", "affine_grid", "fractional_max_pool2d"])
def test_sampling_backward_compiles_and_differentiates(name):
    """The explicit backward functions in a graph, equal to eager, and their gradient w.r.t. grad_output
    (linear in it) equal to eager autograd's; w.r.t. the primal inputs it says it is not available."""
    x, grid, theta = _sampling_inputs(2)[:3]
    if name == "grid_sample":
        primals, kw = (x, grid), {"mode": "bicubic", "padding_mode": "border", "align_corners": False}
    elif name == "affine_grid":
        primals, kw = (theta,), {"size": (2, 3, 4, 5), "align_corners": True}
    else:
        samples = torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
        primals, kw = (x,), {"kernel_size": (2, 3), "output_size": 3, "_random_samples": samples}
    out = getattr(ps, name)(*primals, **kw)
    grad_output = torch.randn(out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))

    def fn(gout, *p):
        res = getattr(ps, f"{name}_backward")(gout, *p, **kw)
        return res if isinstance(res, tuple) else (res,)

    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    want = fn(grad_output, *primals)
    _close(compiled(grad_output, *primals), want, ["backward"] * 2, exact=True)
    ws = [torch.randn(w.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) for w in want]
    grads = []
    for f in (compiled, fn):
        gout = grad_output.clone().requires_grad_()
        sum((o * w).sum() for o, w in zip(f(gout, *primals), ws)).backward()
        grads.append(gout.grad)
    _close(grads[:1], grads[1:], [name])
    if name == "grid_sample":
        with pytest.raises(Exception, match="w.r.t. x and grid"):  # at compile time: AOT traces the backward
            sum(o.sum() for o in compiled(grad_output.clone().requires_grad_(), x.clone().requires_grad_(),
                                          grid)).backward()


def test_sampling_vmap_inside_compile():
    """torch.func.vmap traced by Dynamo meets the nodes' vmap rules; equal (values and gradients) to torch's
    native ops called per sample (not under vmap: torch 2.13's grid_sample batching rule returns the wrong
    shape when x and grid are vmapped at different dimensions, as here)."""

    def per_sample(lib, x):
        grid = torch.stack([x[:, 0, :, :4], x[:, 1, :, 2:6]], -1).tanh() * 1.1
        theta = x[:, 2, :2, :3] + torch.eye(2, 3, dtype=x.dtype)
        samples = x[:, :, 0, :2].sigmoid() * 0.9
        return (lib.grid_sample(x, grid, padding_mode="reflection", align_corners=False),
                lib.grid_sample(x, lib.affine_grid(theta, (x.shape[0], 1, 3, 4), align_corners=False),
                                mode="bicubic", align_corners=False),
                lib.fractional_max_pool2d(x, 2, output_size=(2, 3), _random_samples=samples.detach()))

    x = torch.randn(2, 3, 4, 5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    torch._dynamo.reset()
    compiled = torch.compile(torch.func.vmap(lambda t: per_sample(ps, t), in_dims=1), fullgraph=True,
                             backend="aot_eager")
    outs, grads = _run(compiled, [x])
    want, want_grads = _run(lambda t: [torch.stack(o) for o in zip(*(per_sample(F, t[:, i]) for i in range(3)))],
                            [x])
    _close(outs, want, ["grid_sample", "transformer", "fractional"])
    _close(grads, want_grads, ["x"])


def test_inductor_sees_through_every_node():
    """Under inductor's decompositions every poolspec node (pooling, unpooling, interpolation, grid_sample,
    affine_grid, fractional pooling; forward and explicit backward) becomes torch ops that inductor can fuse,
    but max_unpool and the routed ops' VJP (kept: their eager kernels are faster); the backward graph has no
    scatter, index_add or index_put (the gathering backward, deterministic), values match eager poolspec and
    the backward repeats bit for bit."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._inductor.decomposition import select_decomp_table

    from poolspec.autodiff import torch_graph

    assert torch_graph.FUSED, "fusion is on by default"
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return make_boxed_func(gm.forward)

    _, grid, theta, v, theta3 = _sampling_inputs(2)
    samples = torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))

    def model(x1, x2, x3, grid, theta, v, theta3):
        x = x2[:, :3]  # (2, 3, 7, 8): grid_sample's and the fractional pool's input
        frac = ps.fractional_max_pool2d(x, 2, output_size=(3, 4), _random_samples=samples)
        return _model(ps)(x1, x2, x3) + (frac,) + _sampling(ps, x, grid, theta, v, theta3)

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=record, bw_compiler=record, decompositions=select_decomp_table())
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    xs = _inputs(2) + [grid, theta, v, theta3]
    outs, first = _run(compiled, xs)
    second = _run(compiled, xs)[1]
    assert len(graphs) == 2
    for gm in graphs:
        targets = {str(node.target) for node in gm.graph.nodes if node.op == "call_function"}
        # kept on purpose: max_unpool and its VJP, fractional pooling's VJP (faster eagerly, see
        # torch_inductor.fuse and registry.fused_vjp)
        kept = {"poolspec.route_backward.default", "poolspec.unpool.default"}
        assert not [t for t in targets if t.startswith("poolspec.") and t not in kept], targets
    assert "poolspec.route_backward.default" in {str(n.target) for n in graphs[1].graph.nodes}
    # slice_scatter writes one slice, each cell once: deterministic by construction
    bw = {str(node.target) for node in graphs[1].graph.nodes if node.op == "call_function"} - {
        "aten.slice_scatter.default", "aten.select_scatter.default"}
    assert not [t for t in bw if any(s in t for s in ("scatter", "index_add", "index_put"))], bw
    names = ["x1", "x2", "x3", "grid", "theta", "v", "theta3"]
    _close(first, second, names, exact=True)
    eager_outs, eager_grads = _run(model, xs)
    _close(outs, eager_outs, [str(i) for i in range(len(outs))])
    _close(first, eager_grads, names)
