"""``poolspec.set_eager_fusion(True)``: eager torch calls run as cached compiled programs built from the ops'
graph nodes. Held here: values and gradients as the plain eager path, one program per key (a second call
compiles nothing), and the plain path where a program cannot serve (torch.func, array arguments)."""

from __future__ import annotations

import pytest

import poolspec as ps

torch = pytest.importorskip("torch")


@pytest.fixture
def fused():
    before = ps.set_eager_fusion(True)
    yield
    ps.set_eager_fusion(before)


def _grads(fn, *xs):
    xs = [x.detach().clone().requires_grad_() for x in xs]
    out = fn(*xs)
    out = out[0] if isinstance(out, tuple) else out
    out.backward(torch.linspace(-1, 2, out.numel(), dtype=out.dtype).view(out.shape))
    return out.detach(), [x.grad for x in xs]


def _model(x, grid):
    a, idx = ps.max_pool2d(x, 2, return_indices=True)
    b = ps.max_unpool2d(a, idx, 2, output_size=x.shape[-2:])
    c = ps.interpolate(ps.avg_pool2d(b, 3, 1, 1, count_include_pad=False), scale_factor=1.5, mode="bilinear")
    return c.sum() + ps.grid_sample(x, grid, align_corners=False).sum() + ps.adaptive_max_pool2d(x, 3).sum()


def test_fused_calls_equal_plain_ones_and_compile_once(fused):
    from poolspec.autodiff import torch_fused

    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 8, 10, dtype=torch.float64, generator=g)
    grid = torch.rand(2, 5, 6, 2, dtype=torch.float64, generator=g) * 2 - 1
    got = _grads(_model, x, grid)
    programs = len(torch_fused._PROGRAMS)
    assert programs > 0
    again = _grads(_model, x, grid)
    assert len(torch_fused._PROGRAMS) == programs  # the same keys: no new program
    ps.set_eager_fusion(False)
    want = _grads(_model, x, grid)
    for a, b in zip([got[0], *got[1]], [want[0], *want[1]]):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    for a, b in zip(got[1], again[1]):
        assert torch.equal(a, b)  # the compiled backward repeats bit for bit


def test_plain_path_where_a_program_cannot_serve(fused):
    from poolspec.autodiff import torch_fused

    x = torch.randn(3, 2, 6, 6, dtype=torch.float64)
    before = len(torch_fused._PROGRAMS)
    samples = torch.rand(2, 2, 2, dtype=torch.float64)
    got = ps.fractional_max_pool2d(x[:2], 2, output_size=3, _random_samples=samples)  # an array argument
    vm = torch.func.vmap(lambda t: ps.avg_pool2d(t, 2))(x)  # torch.func
    assert len(torch_fused._PROGRAMS) == before
    ps.set_eager_fusion(False)
    torch.testing.assert_close(got, ps.fractional_max_pool2d(x[:2], 2, output_size=3, _random_samples=samples))
    torch.testing.assert_close(vm, torch.func.vmap(lambda t: ps.avg_pool2d(t, 2))(x))
