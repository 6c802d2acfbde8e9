"""torch's memory format: a channels_last input gives the output layout torch's own op gives, per family and
rank (torch keeps channels_last where its kernels follow suggest_memory_format(), and not elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec._calls import _channels_last_strides

torch = pytest.importorskip("torch")
F = torch.nn.functional

CL = {4: torch.channels_last, 5: torch.channels_last_3d}
IDX2 = F.max_pool2d(torch.randn(2, 3, 8, 10, dtype=torch.float64), 2, return_indices=True)[1]
IDX3 = F.max_pool3d(torch.randn(2, 3, 4, 6, 8, dtype=torch.float64), 2, return_indices=True)[1]

# (name, input shape, call(functions, x)) with functions = torch.nn.functional or poolspec
CALLS = [
    ("avg_pool2d", (2, 3, 8, 10), lambda f, x: f.avg_pool2d(x, 3, 2, 1)),
    ("avg_pool3d", (2, 3, 4, 6, 8), lambda f, x: f.avg_pool3d(x, 2)),
    ("adaptive_avg_pool2d", (2, 3, 8, 10), lambda f, x: f.adaptive_avg_pool2d(x, (3, 4))),
    ("adaptive_avg_pool2d-to-1", (2, 3, 8, 10), lambda f, x: f.adaptive_avg_pool2d(x, 1)),
    ("adaptive_avg_pool3d", (2, 3, 4, 6, 8), lambda f, x: f.adaptive_avg_pool3d(x, 3)),
    ("max_pool2d", (2, 3, 8, 10), lambda f, x: f.max_pool2d(x, 3, 2, 1)),
    ("max_pool2d-indices", (2, 3, 8, 10), lambda f, x: f.max_pool2d(x, 2, return_indices=True)),
    ("max_pool3d", (2, 3, 4, 6, 8), lambda f, x: f.max_pool3d(x, 2)),
    ("max_pool3d-indices", (2, 3, 4, 6, 8), lambda f, x: f.max_pool3d(x, 2, return_indices=True)),
    ("adaptive_max_pool2d", (2, 3, 8, 10), lambda f, x: f.adaptive_max_pool2d(x, (3, 4), True)),
    ("adaptive_max_pool3d", (2, 3, 4, 6, 8), lambda f, x: f.adaptive_max_pool3d(x, 3, True)),
    ("max_unpool2d", (2, 3, 4, 5), lambda f, x: f.max_unpool2d(x, IDX2, 2)),
    ("max_unpool3d", (2, 3, 2, 3, 4), lambda f, x: f.max_unpool3d(x, IDX3, 2)),
    ("lp_pool2d", (2, 3, 8, 10), lambda f, x: f.lp_pool2d(x, 2.0, 2)),
    ("lp_pool2d-inf", (2, 3, 8, 10), lambda f, x: f.lp_pool2d(x, float("inf"), 2)),
    ("lp_pool3d", (2, 3, 4, 6, 8), lambda f, x: f.lp_pool3d(x, 2.0, 2)),
    ("lp_pool3d-inf", (2, 3, 4, 6, 8), lambda f, x: f.lp_pool3d(x, float("inf"), 2)),
] + [(f"interpolate-{mode}{'-aa' if aa else ''}", (2, 3, 8, 10),
      lambda f, x, mode=mode, aa=aa: f.interpolate(x, size=(5, 13), mode=mode, antialias=aa))
     for mode, aa in (("nearest", False), ("nearest-exact", False), ("bilinear", False), ("bicubic", False),
                      ("area", False), ("bilinear", True), ("bicubic", True))
     ] + [(f"interpolate-{mode}-3d", (2, 3, 4, 6, 8),
           lambda f, x, mode=mode: f.interpolate(x, size=(3, 7, 5), mode=mode))
          for mode in ("nearest", "nearest-exact", "trilinear", "area")]


def _layout(t: torch.Tensor) -> tuple[bool, bool, tuple[int, ...]]:
    """Contiguity in either format, and the strides of the non-trivial axes (size-1 strides are free)."""
    return (t.is_contiguous(), t.is_contiguous(memory_format=CL[t.ndim]) if t.ndim in CL else False,
            tuple(s for s, n in zip(t.stride(), t.shape) if n > 1))


@pytest.mark.parametrize("name, shape, call", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("requires_grad", [False, True], ids=["no-grad", "grad"])
def test_channels_last_input_gives_torchs_output_layout(name, shape, call, requires_grad):
    host = torch.from_numpy(np.abs(np.random.default_rng(0).standard_normal(shape)) + 0.1)
    for x in (host.contiguous(memory_format=CL[len(shape)]), host):
        x = x.clone().requires_grad_(requires_grad)
        want, got = call(F, x.detach()), call(poolspec, x)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got, strict=True):
            assert _layout(g) == _layout(w), (name, x.stride(), g.stride(), w.stride())
            torch.testing.assert_close(g.detach(), w, rtol=1e-12, atol=1e-12)
        if requires_grad:  # the gradient still flows, whatever the layout
            native = call(F, x)
            (gx,) = torch.autograd.grad(got[0].sum(), x)
            (wx,) = torch.autograd.grad((native[0] if isinstance(native, tuple) else native).sum(), x)
            torch.testing.assert_close(gx, wx, rtol=1e-12, atol=1e-12)


def test_channels_last_rule_is_torchs():
    """The stride test behind keep_layout agrees with torch's own suggest_memory_format on permuted, sliced,
    expanded and size-1 layouts."""
    from torch._prims_common import suggest_memory_format

    rng = np.random.default_rng(0)
    for _ in range(2000):
        ndim = int(rng.integers(4, 6))
        shape = tuple(int(rng.integers(1, 4)) for _ in range(ndim))
        t = torch.empty(shape).permute(*rng.permutation(ndim).tolist())
        if rng.random() < 0.3:
            t = t[tuple(slice(None, None, int(rng.integers(1, 3))) for _ in range(ndim))]
        if rng.random() < 0.1:
            t = t.expand(*t.shape)[(slice(None),) * ndim]
        want = suggest_memory_format(t) in (torch.channels_last, torch.channels_last_3d)
        assert _channels_last_strides(tuple(t.shape), t.stride()) == want, (t.shape, t.stride())
