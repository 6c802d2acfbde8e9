"""The few-operation paths a GPU takes (torch CUDA, CuPy), run on the CPU (``bench_counts.as_on_a_gpu``) under the
transforms GPU users put them in: ``torch.compile(fullgraph=True)`` with inductor, torch.func's vmap, jacrev and
jvp, each forward and backward against torch's own op under the same transform (the stored cases run on these
paths in tests/test_conformance.py), and the paths taken really being the few-operation ones."""

from __future__ import annotations

import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional

from poolspec.bench_counts import as_on_a_gpu, count_torch  # noqa: E402

CALLS = [
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
    ("adaptive_max_pool2d", dict(output_size=(4, 3))),
    ("adaptive_avg_pool2d", dict(output_size=(4, 3))),
    ("lp_pool2d", dict(norm_type=2.0, kernel_size=2)),
    ("interpolate", dict(scale_factor=1.5, mode="bicubic", align_corners=False)),
    ("interpolate", dict(size=(5, 4), mode="bilinear", antialias=True)),
]
IDS = [f"{op}-{'-'.join(map(str, a.values()))}" for op, a in CALLS]


def _x(seed=0, shape=(2, 3, 9, 8)):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op, args", CALLS, ids=IDS)
def test_gpu_paths_compile_fullgraph_with_inductor(op, args):
    x = _x()
    go = _x(1, tuple(getattr(F, op)(x, **args).shape))

    def run(lib, fn):
        t = x.clone().requires_grad_(True)
        y = fn(lambda a: getattr(lib, op)(a, **args), t)
        return y, torch.autograd.grad(y, t, go)[0]

    torch._dynamo.reset()
    with as_on_a_gpu():
        ours = run(poolspec, lambda f, t: torch.compile(f, fullgraph=True)(t))
    want = run(F, lambda f, t: f(t))
    _close(ours[0], want[0])
    _close(ours[1], want[1])


@pytest.mark.parametrize("op, args", CALLS, ids=IDS)
def test_gpu_paths_under_torch_func(op, args):
    x = _x(2, (3, 9, 8))  # one sample: vmap adds the batch
    xs = torch.stack([x, 2 * x])
    v = _x(3, tuple(x.shape))

    def per_sample(lib, t):
        return getattr(lib, op)(t[None], **args)[0].sum()

    with as_on_a_gpu():
        ours = (torch.func.vmap(torch.func.grad(lambda t: per_sample(poolspec, t)))(xs),
                torch.func.jacrev(lambda t: getattr(poolspec, op)(t[None], **args))(x),
                torch.func.jvp(lambda t: getattr(poolspec, op)(t[None], **args), (x,), (v,))[1])
    want = (torch.func.vmap(torch.func.grad(lambda t: per_sample(F, t)))(xs),
            torch.func.jacrev(lambda t: getattr(F, op)(t[None], **args))(x),
            torch.func.jvp(lambda t: getattr(F, op)(t[None], **args), (x,), (v,))[1])
    for a, b in zip(ours, want):
        _close(a, b)


def test_the_gpu_paths_take_fewer_operations():
    """The switch changes the path: bilinear x2 on the CPU is many strided passes, on the GPU paths one gather
    and one sum per axis."""
    x = torch.randn(2, 8, 32, 32)

    def call():
        return poolspec.interpolate(x, scale_factor=2, mode="bilinear")

    cpu, _ = count_torch(call, warm=True)
    with as_on_a_gpu():
        gpu, _ = count_torch(call, warm=True)
        torch.testing.assert_close(call(), F.interpolate(x, scale_factor=2, mode="bilinear"))
    assert gpu <= 16 < cpu, (gpu, cpu)
