"""Calls past one chunk, at real sizes, on every installed backend against torch 2.13 (float64, live).

The ops that bound their memory by working a chunk at a time (grid_sample's points, max_unpool's output cells)
take a loop whose last chunk is usually partial; the stored reference vectors are all smaller than one chunk.
A slice whose stop lies past the end of an axis is unspecified by the array API standard (array-api-strict
refuses it), so each loop is run here past one chunk and off a chunk boundary, forward and backward."""

from __future__ import annotations

import math

import numpy as np
import pytest

import poolspec
from poolspec.families.grid_sample import sampling as grid_sample_module
from poolspec.kernels import unpool

torch = pytest.importorskip("torch")
F = torch.nn.functional

GRID_MODES = [(n, mode) for n in (2, 3) for mode in ("bilinear", "nearest", "bicubic") if (n, mode) != (3, "bicubic")]
PADDINGS = ("zeros", "border", "reflection")


def _close(backend, got, want, what):
    got = backend.to_numpy(got)
    assert got.shape == want.shape, what
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(want).max())),
                               err_msg=what)


@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("n,mode", GRID_MODES, ids=[f"{n}d-{m}" for n, m in GRID_MODES])
def test_grid_sample_past_one_chunk(backend, n, mode, padding_mode):
    rng = np.random.default_rng(n * 100 + GRID_MODES.index((n, mode)) * 10 + PADDINGS.index(padding_mode))
    N, C, spatial = 2, 16, (9, 11, 7)[:n]
    plan = grid_sample_module._Plan(spatial, (1,) * (n - 1) + (1 << 40,), mode, padding_mode, False)
    step = grid_sample_module._step(plan, N, C)
    points = 2 * step + step // 3 + 1  # two whole chunks and a partial one
    out_spatial = (1,) * (n - 1) + (points,)
    assert grid_sample_module._step(grid_sample_module._Plan(spatial, out_spatial, mode, padding_mode, False),
                                    N, C) < points
    x = rng.standard_normal((N, C) + spatial)
    grid = rng.uniform(-1.3, 1.3, (N,) + out_spatial + (n,))
    go = rng.standard_normal((N, C) + out_spatial)
    args = dict(mode=mode, padding_mode=padding_mode, align_corners=False)
    xt, gt = torch.from_numpy(x).requires_grad_(), torch.from_numpy(grid).requires_grad_()
    want = F.grid_sample(xt, gt, **args)
    want_gx, want_gg = torch.autograd.grad(want, (xt, gt), torch.from_numpy(go))

    xb, gb = backend.asarray(x), backend.asarray(grid)
    _close(backend, poolspec.grid_sample(xb, gb, **args), want.detach().numpy(), "forward")
    gx, gg = poolspec.grid_sample_backward(backend.asarray(go), xb, gb, **args)
    _close(backend, gx, want_gx.numpy(), "grad_input")
    _close(backend, gg, want_gg.numpy(), "grad_grid")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_past_one_chunk(backend, n):
    rng = np.random.default_rng(n)
    spatial = {1: (3000,), 2: (70, 60), 3: (20, 18, 16)}[n]
    lead = (3, -(-unpool._CHUNK_CELLS // (3 * math.prod(spatial))) + 1)
    assert math.prod(lead) * math.prod(spatial) > unpool._CHUNK_CELLS
    assert (math.prod(lead) * math.prod(spatial)) % unpool._CHUNK_CELLS
    x = rng.standard_normal(lead + spatial)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
    unpool_t = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[n - 1]
    y, idx = pool(torch.from_numpy(x), 2, return_indices=True)
    yt = y.clone().requires_grad_()
    want = unpool_t(yt, idx, 2, output_size=spatial)
    go = rng.standard_normal(tuple(want.shape))
    (want_g,) = torch.autograd.grad(want, yt, torch.from_numpy(go))

    ours = getattr(poolspec, f"max_unpool{n}d")
    back = getattr(poolspec, f"max_unpool{n}d_backward")
    yb, ib = backend.asarray(y.numpy()), backend.asarray(idx.numpy())
    _close(backend, ours(yb, ib, 2, output_size=spatial), want.detach().numpy(), "forward")
    _close(backend, back(backend.asarray(go), yb, ib, 2, output_size=spatial), want_g.numpy(), "backward")
