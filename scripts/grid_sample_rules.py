"""torch 2.13's grid_sample (2-d) rules, written out in NumPy and checked against live torch on random
configurations: groundwork for issue 17 (grid_sample / affine_grid), whose card will carry these rules.

    python scripts/grid_sample_rules.py [N]      # N random configurations (default 3000); needs torch

The rules (torch's GridSampler.h, restated; every one is exercised by the configurations below):

1. Unnormalise x in [-1, 1] to a pixel coordinate: align_corners=True: (x + 1) / 2 * (size - 1);
   False: ((x + 1) * size - 1) / 2 (so -1 and 1 are the outer edges of the edge pixels).
2. Padding, applied to the coordinate before interpolating (bilinear, nearest):
   - zeros: none; taps outside [0, size) read 0.
   - border: clip to [0, size - 1].
   - reflection: reflect about [0, size - 1] (align_corners=True) or [-0.5, size - 0.5] (False) by the
     doubled-bounds rule (|x - lo| folded by fmod over the span, odd folds mirrored), then clip to
     [0, size - 1]; a size-1 axis reflects to 0.
3. bilinear: the four neighbours floor(x) and floor(x) + 1 with weights (1 - t, t) per axis.
4. nearest: round half to even (nearbyint), then the in-bounds test.
5. bicubic: the unnormalised coordinate is NOT padded; its 4x4 taps floor(x) - 1 .. floor(x) + 2 use the
   cubic convolution with A = -0.75, and the padding rule is applied to each tap's integer coordinate
   (zeros: out-of-range taps read 0).
"""

from __future__ import annotations

import sys

import numpy as np


def unnormalize(c: np.ndarray, size: int, align: bool) -> np.ndarray:
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def reflect(c: np.ndarray, twice_low: int, twice_high: int) -> np.ndarray:
    if twice_low == twice_high:
        return np.zeros_like(c)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = np.abs(c - lo)
    extra, flips = np.fmod(c, span), np.floor(c / span)
    return np.where(flips % 2 == 0, extra + lo, span - extra + lo)


def pad(c: np.ndarray, size: int, mode: str, align: bool) -> np.ndarray:
    if mode == "border":
        return np.clip(c, 0, size - 1)
    if mode == "reflection":
        c = reflect(c, 0, 2 * (size - 1)) if align else reflect(c, -1, 2 * size - 1)
        return np.clip(c, 0, size - 1)
    return c


def read(img: np.ndarray, iy: np.ndarray, ix: np.ndarray) -> np.ndarray:
    """img (C, H, W) at integer coordinates (any shape), 0 outside."""
    H, W = img.shape[1:]
    inside = (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
    v = img[:, np.clip(iy, 0, H - 1), np.clip(ix, 0, W - 1)]
    return np.where(inside, v, 0.0)


def cubic(t: np.ndarray, A: float = -0.75) -> list[np.ndarray]:
    def near(x: np.ndarray) -> np.ndarray:
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(x: np.ndarray, grid: np.ndarray, mode: str, padding_mode: str, align: bool) -> np.ndarray:
    """x (N, C, H, W), grid (N, Ho, Wo, 2) with (x, y) last, float64."""
    N, C, H, W = x.shape
    out = np.zeros((N, C) + grid.shape[1:3])
    for n in range(N):
        gx = unnormalize(grid[n, ..., 0], W, align)
        gy = unnormalize(grid[n, ..., 1], H, align)
        if mode == "bicubic":
            x0, y0 = np.floor(gx), np.floor(gy)
            wx, wy = cubic(gx - x0), cubic(gy - y0)
            acc = 0.0
            for i in range(4):
                for j in range(4):
                    tx = pad(x0 - 1 + j, W, padding_mode, align)
                    ty = pad(y0 - 1 + i, H, padding_mode, align)
                    acc = acc + read(x[n], ty.astype(np.int64), tx.astype(np.int64)) * wy[i] * wx[j]
            out[n] = acc
            continue
        gx, gy = pad(gx, W, padding_mode, align), pad(gy, H, padding_mode, align)
        if mode == "nearest":
            out[n] = read(x[n], np.rint(gy).astype(np.int64), np.rint(gx).astype(np.int64))
            continue
        x0, y0 = np.floor(gx), np.floor(gy)
        tx, ty = gx - x0, gy - y0
        x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
        out[n] = (read(x[n], y0, x0) * (1 - tx) * (1 - ty) + read(x[n], y0, x0 + 1) * tx * (1 - ty)
                  + read(x[n], y0 + 1, x0) * (1 - tx) * ty + read(x[n], y0 + 1, x0 + 1) * tx * ty)
    return out


def random_grid(rng: np.random.Generator, shape: tuple[int, ...], H: int, W: int, align: bool) -> np.ndarray:
    """Uniform points in and around [-1, 1], pixel centres, half-pixel ties, the edges, far outside."""
    g = rng.uniform(-1.6, 1.6, shape)
    kind = rng.integers(0, 6, shape)
    for axis, size in ((0, W), (1, H)):
        centres = (np.arange(size) * 2 / (size - 1) - 1) if (align and size > 1) else \
            ((2 * np.arange(size) + 1) / size - 1)
        ties = centres + (1 / (size - 1) if (align and size > 1) else 1 / size)  # midway between centres
        pick = rng.integers(0, size, shape[:-1])
        g[..., axis] = np.where(kind[..., axis] == 1, centres[pick], g[..., axis])
        g[..., axis] = np.where(kind[..., axis] == 2, ties[pick], g[..., axis])
    g = np.where(kind == 3, rng.choice([-1.0, 1.0], shape), g)
    g = np.where(kind == 4, rng.choice([-7.3, -3.0, 3.0, 9.1], shape), g)
    return g


def main(count: int = 3000) -> int:
    import torch

    rng = np.random.default_rng(0)
    worst: dict[tuple[str, str, bool], float] = {}
    seen = {"half-pixel ties": 0, "pixel centres": 0, "outside the image": 0}
    for _ in range(count):
        mode = ("bilinear", "nearest", "bicubic")[rng.integers(0, 3)]
        padding_mode = ("zeros", "border", "reflection")[rng.integers(0, 3)]
        align = bool(rng.integers(0, 2))
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        H, W = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        Ho, Wo = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        x = rng.standard_normal((N, C, H, W))
        grid = random_grid(rng, (N, Ho, Wo, 2), H, W, align)
        want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=mode,
                                               padding_mode=padding_mode, align_corners=align).numpy()
        got = grid_sample(x, grid, mode, padding_mode, align)
        for axis, size in ((0, W), (1, H)):
            c = unnormalize(grid[..., axis], size, align)
            seen["half-pixel ties"] += int(np.sum(c - np.floor(c) == 0.5))
            seen["pixel centres"] += int(np.sum(c == np.floor(c)))
            seen["outside the image"] += int(np.sum((c < -0.5) | (c > size - 0.5)))
        err = float(np.max(np.abs(got - want) / (1 + np.abs(want)))) if want.size else 0.0
        key = (mode, padding_mode, align)
        worst[key] = max(worst.get(key, 0.0), err)
    bad = 0
    for key, err in sorted(worst.items()):
        flag = "" if err < 1e-12 else "   <-- differs"
        bad += bool(flag)
        print(f"{key[0]:<9}{key[1]:<11}align_corners={key[2]!s:<6} worst rel. error {err:.2e}{flag}")
    print(f"{count} random configurations, {len(worst)} mode/padding/align combinations, {bad} differing; "
          "coordinates: " + ", ".join(f"{v} {k}" for k, v in seen.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000))
