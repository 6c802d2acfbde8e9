"""poolspec's grid_sample and fractional_max_pool against live torch 2.13 on random configurations: the check
behind the rules in their cards' notes (families/grid_sample/card.py, families/fractional_max_pool/card.py).

    python scripts/check_sampling_rules.py [GRID_CONFIGS] [FRACTIONAL_CONFIGS]     (default 3000 and 2000)

grid_sample: 2-d and 3-d, every mode x padding x align_corners, float64; grids with exact dyadic ties (pixel
centres and half-pixel points land exactly under both unnormalisations), the edges -1/1 and points far
outside; forward, gradient w.r.t. x and w.r.t. the grid (torch's autograd against grid_sample_backward).
fractional_max_pool2d/3d: random sizes, kernels and outputs at torch's limits, float64 and float32, batched
and unbatched, data with ties, NaN and -inf, dyadic samples; indices and values exactly, gradients.
Exits 1 if any configuration differs (relative error above 1e-12 in float64, or any index).
"""

from __future__ import annotations

import sys

import numpy as np
import torch

import poolspec

F = torch.nn.functional


def grid_configs(count: int, rng: np.random.Generator) -> int:
    worst: dict[tuple, list[float]] = {}
    bad = 0
    for _ in range(count):
        n = 2 if rng.integers(0, 3) else 3
        mode = ("bilinear", "nearest", "bicubic")[rng.integers(0, 3 if n == 2 else 2)]
        pad = ("zeros", "border", "reflection")[rng.integers(0, 3)]
        align = bool(rng.integers(0, 2))
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        S = tuple(int(v) for v in rng.integers(1, 6, n))
        O = tuple(int(v) for v in rng.integers(1, 5, n))
        x = rng.standard_normal((N, C) + S)
        g = rng.uniform(-1.6, 1.6, (N,) + O + (n,))
        kind = rng.integers(0, 4, g.shape)
        g = np.where(kind == 0, np.round(g * 8) / 8, g)
        g = np.where(kind == 1, rng.choice([-7.3, -3.0, -1.0, 1.0, 3.0, 9.1], g.shape), g)
        xt, gt = torch.from_numpy(x).requires_grad_(), torch.from_numpy(g).requires_grad_()
        args = dict(mode=mode, padding_mode=pad, align_corners=align)
        want = F.grid_sample(xt, gt, **args)
        go = rng.standard_normal(tuple(want.shape))
        wx, wg = torch.autograd.grad(want, (xt, gt), torch.from_numpy(go))
        got = poolspec.grid_sample(x, g, **args)
        bx, bg = poolspec.grid_sample_backward(go, x, g, **args)
        errs = [float(np.max(np.abs(a - b.numpy()) / (1 + np.abs(b.numpy())))) if b.numel() else 0.0
                for a, b in ((got, want.detach()), (bx, wx), (bg, wg))]
        key = (n, mode, pad, align)
        worst[key] = [max(p, q) for p, q in zip(worst.get(key, [0.0] * 3), errs)]
        bad += max(errs) > 1e-12
    for key, errs in sorted(worst.items()):
        print(f"grid_sample {key[0]}-d {key[1]:<9}{key[2]:<11}align_corners={key[3]!s:<6} worst rel. error "
              f"forward {errs[0]:.1e}, grad_x {errs[1]:.1e}, grad_grid {errs[2]:.1e}")
    print(f"grid_sample: {count} configurations, {bad} differing")
    return bad


def fractional_configs(count: int, rng: np.random.Generator) -> int:
    bad = 0
    for trial in range(count):
        n = 2 if trial % 2 else 3
        batched = rng.random() < 0.8
        S = tuple(int(v) for v in rng.integers(2, 9 if n == 2 else 6, n))
        k = tuple(int(rng.integers(1, s + 1 - (n == 3))) for s in S)
        O = tuple(int(rng.integers(1, s - kk + 2 - (n == 3))) for s, kk in zip(S, k))
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        dt = np.float64 if rng.random() < 0.7 else np.float32
        x = (np.round(rng.standard_normal(((N,) if batched else ()) + (C,) + S) * 2) / 2).astype(dt)
        if rng.random() < 0.2:
            x[rng.random(x.shape) < 0.1] = np.nan
        u = rng.random((N if batched else 1, C, n)).astype(dt)
        if rng.random() < 0.3:
            u = np.round(u * 8) / 8
        xt = torch.from_numpy(x).requires_grad_()
        v, i = getattr(F, f"fractional_max_pool{n}d")(xt, k, output_size=O, return_indices=True,
                                                      _random_samples=torch.from_numpy(u))
        go = rng.standard_normal(tuple(v.shape)).astype(dt)
        (gx,) = torch.autograd.grad(v, xt, torch.from_numpy(go))
        pv, pi = getattr(poolspec, f"fractional_max_pool{n}d")(x, k, output_size=O, return_indices=True,
                                                              _random_samples=u)
        pg = getattr(poolspec, f"fractional_max_pool{n}d_backward")(go, x, k, output_size=O, _random_samples=u)
        tol = 1e-6 if dt == np.float32 else 1e-13
        ok = (np.array_equal(pi, i.numpy()) and np.array_equal(pv, v.detach().numpy(), equal_nan=True)
              and np.allclose(pg, gx.numpy(), rtol=tol, atol=tol))
        bad += not ok
    print(f"fractional_max_pool: {count} configurations, {bad} differing")
    return bad


def main(grid: int = 3000, fractional: int = 2000) -> int:
    rng = np.random.default_rng(0)
    return 1 if grid_configs(grid, rng) + fractional_configs(fractional, rng) else 0


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:3])))
