"""torchvision's roi_align rules, restated in NumPy, against live torchvision on random configurations: the check
behind the notes of poolspec's roi_align card (src/poolspec/families/roi_align/card.py).

    /work/tvenv/bin/python scripts/check_roi_rules.py [CONFIGS] [--out scripts/roi_rules_counts.json]

Run with torch 2.14.1 + torchvision 0.29.1 (CPU); imports numpy, torch and torchvision only (no poolspec). Each
configuration draws an image (N, C, H, W), an output size, spatial_scale, sampling_ratio (-1, 0 or 1..4), aligned,
a dtype (float64 or float32) and K boxes (K = 0 included) of every kind - inside, partly or wholly outside,
degenerate (x1 = x2), negative (x2 < x1), on integer and half-integer coordinates, larger than the image - given
as a (K, 5) tensor or as a list of (L, 4) tensors, one per image. The forward and the input gradient (torchvision's
autograd) are compared with ``forward``/``backward`` below, which follow torchvision's CPU kernel operation by
operation in the input's dtype; so equality is expected bit for bit, and the counts say how many differ at all and
by how much. Exits 1 if any configuration differs beyond 4 ulps of its scale.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torchvision
from roi_rules_common import corners, draw_config, per_image, signature
from roi_rules_common import main as common_main
from torchvision.ops import roi_align


def _axis(start, bin_size, grid: int, pooled: int, size: int, dt):
    """Per output index p and sample i of one axis: the low and high taps, their weights and validity, as
    torchvision's pre_calc_for_bilinear_interpolate computes them (in the dtype ``dt``)."""
    p = np.arange(pooled).astype(dt)[:, None]
    i = (np.arange(grid) + 0.5).astype(dt)[None, :]  # static_cast<T>(i + .5f)
    c = (start + p * bin_size) + (i * bin_size) / dt(grid)
    valid = ~((c < -1.0) | (c > size))  # a sample with y < -1 or y > H reads 0
    c = np.where(c <= 0, dt(0), c)
    low = np.floor(c).astype(np.int64)  # (int)y for y >= 0
    top = low >= size - 1
    low = np.where(top, size - 1, low)
    high = np.where(top, size - 1, low + 1)
    c = np.where(top, low.astype(dt), c)
    lw = (c - low.astype(dt)).astype(dt)
    hw = (dt(1) - lw).astype(dt)
    return low, high, lw, hw, valid


def _roi(box, scale, pooled, ratio: int, aligned: bool, dt):
    """One roi's start, bin size and sample grid per axis (y, x) and its count, in torchvision's arithmetic."""
    off = dt(0.5) if aligned else dt(0)
    sc = dt(scale)
    x1, y1, x2, y2 = (dt(dt(v) * sc) - off for v in box[1:5])
    h, w = dt(y2 - y1), dt(x2 - x1)
    if not aligned:
        h, w = max(h, dt(1)), max(w, dt(1))
    bh, bw = dt(h / dt(pooled[0])), dt(w / dt(pooled[1]))
    gh = ratio if ratio > 0 else int(math.ceil(dt(h / dt(pooled[0]))))
    gw = ratio if ratio > 0 else int(math.ceil(dt(w / dt(pooled[1]))))
    return (y1, bh, gh), (x1, bw, gw), max(gh * gw, 1), gh * gw


def _taps(x_shape, box, scale, pooled, ratio, aligned, dt):
    """The roi's (bins, samples, 4) cells and weights in torchvision's order (ph, pw, iy, ix; taps 1..4), weights
    0 for invalid samples, and the forward and backward counts."""
    H, W = x_shape[2:]
    (ys, bh, gh), (xs, bw, gw), count, bcount = _roi(box, scale, pooled, ratio, aligned, dt)
    PH, PW = pooled
    gh, gw = max(gh, 0), max(gw, 0)
    yl, yh, ly, hy, vy = _axis(ys, bh, gh, PH, H, dt)
    xl, xh, lx, hx, vx = _axis(xs, bw, gw, PW, W, dt)
    # (PH, PW, gh, gw)
    Y = lambda a: a[:, None, :, None]  # noqa: E731
    X = lambda a: a[None, :, None, :]  # noqa: E731
    valid = Y(vy) & X(vx)
    w = [Y(hy) * X(hx), Y(hy) * X(lx), Y(ly) * X(hx), Y(ly) * X(lx)]
    cells = [Y(yl) * W + X(xl), Y(yl) * W + X(xh), Y(yh) * W + X(xl), Y(yh) * W + X(xh)]
    w = np.stack([np.where(valid, a, dt(0)).astype(dt) for a in w], -1).reshape(PH * PW, gh * gw, 4)
    cells = np.stack([np.where(valid, a, 0) for a in cells], -1).reshape(PH * PW, gh * gw, 4)
    valid = np.broadcast_to(valid[..., None], valid.shape + (4,)).reshape(PH * PW, gh * gw, 4)
    return cells, w, valid, count, bcount


def refuses(rois: np.ndarray, scale, pooled, ratio: int, aligned: bool, dt) -> bool:
    """Whether torchvision refuses the call: an roi whose sample grid is negative on exactly one axis (an aligned
    roi negative by at least one bin, sampling_ratio <= 0) sizes its std::vector of samples negatively."""
    for box in rois:
        (_, _, gh), (_, _, gw), _, _ = _roi(box, scale, pooled, ratio, aligned, dt.type if hasattr(dt, "type") else dt)
        if gh * gw * pooled[0] * pooled[1] < 0:
            return True
    return False


def forward(x: np.ndarray, rois: np.ndarray, scale, pooled, ratio, aligned) -> np.ndarray:
    dt = x.dtype.type
    K, (_, C, H, W) = rois.shape[0], x.shape
    out = np.zeros((K, C) + tuple(pooled), dtype=x.dtype)
    for k in range(K):
        b = int(rois[k, 0])
        cells, w, _, count, _ = _taps(x.shape, rois[k], scale, pooled, ratio, aligned, dt)
        planes = x[b].reshape(C, H * W)
        acc = np.zeros((C, cells.shape[0]), dtype=x.dtype)
        for s in range(cells.shape[1]):  # output_val += w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4, sample by sample
            v = planes[:, cells[:, s, :]]  # (C, bins, 4)
            t = w[None, :, s, 0] * v[..., 0] + w[None, :, s, 1] * v[..., 1]
            t = t + w[None, :, s, 2] * v[..., 2]
            t = t + w[None, :, s, 3] * v[..., 3]
            acc = acc + t
        out[k] = (acc / dt(count)).reshape((C,) + tuple(pooled))
    return out


def backward(g: np.ndarray, x_shape, rois: np.ndarray, scale, pooled, ratio, aligned) -> np.ndarray:
    """grad_input: roi by roi, bin by bin, sample by sample, tap by tap, g * w / count added (count = gh * gw)."""
    dt = g.dtype.type
    N, C, H, W = x_shape
    grad = np.zeros((N, C, H * W), dtype=g.dtype)
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        cells, w, valid, _, count = _taps(x_shape, rois[k], scale, pooled, ratio, aligned, dt)
        gk = g[k].reshape(C, -1)  # (C, bins)
        vals = (gk[:, :, None, None] * w[None]) / dt(count) if count else np.zeros((C,) + w.shape, g.dtype)
        order = valid.reshape(-1)
        flat = cells.reshape(-1)[order]
        for c in range(C):
            np.add.at(grad[b, c], flat, vals[c].reshape(-1)[order])  # in index order, one add at a time
    return grad.reshape(x_shape)


def _boxes(rng: np.random.Generator, K: int, N: int, H: int, W: int, scale: float) -> np.ndarray:
    """K boxes (batch index, x1, y1, x2, y2) in input coordinates (before spatial_scale) of every kind."""
    out = np.zeros((K, 5))
    for k in range(K):
        kind = rng.integers(0, 7)
        s = 1 / scale
        a, b = corners(rng, int(kind), W, H)
        out[k] = [rng.integers(0, N), a[0] * s, b[0] * s, a[1] * s, b[1] * s]
    return out


def _ulps(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference in units of the last place of the array's scale (0 when equal)."""
    if a.size == 0:
        return 0.0
    if np.array_equal(a, b):
        return 0.0
    scale = max(float(np.max(np.abs(b))), float(np.finfo(b.dtype).tiny))
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) / (np.finfo(b.dtype).eps * scale)


def run(count: int, seed: int = 2029) -> dict:
    rng = np.random.default_rng(seed)
    torch.set_num_threads(1)
    stats = {"configurations": 0, "forward_bit_identical": 0, "backward_bit_identical": 0, "worst_forward_ulps": 0.0,
             "worst_backward_ulps": 0.0, "differing_beyond_4_ulps": 0, "by_kind": {},
             "refused_by_torchvision": 0, "refusals_predicted": 0, "refusals_predicted_wrongly": 0}
    kinds = stats["by_kind"]
    for _ in range(count):
        N, C, H, W, pooled, scale = draw_config(rng)
        ratio = int(rng.choice([-1, 0, 1, 2, 3, 4]))
        aligned = bool(rng.integers(0, 2))
        dtype = (np.float64, np.float32)[int(rng.integers(0, 2))]
        K = int(rng.choice([0, 1, 2, 3, 5, 8]))
        rois = _boxes(rng, K, N, H, W, scale).astype(dtype)
        as_list = bool(rng.integers(0, 2))
        x = rng.standard_normal((N, C, H, W)).astype(dtype)
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        if as_list:  # the same rois as one (L, 4) tensor per image, in image order
            rois = rois[np.argsort(rois[:, 0], kind="stable")]
            boxes = per_image(torch, rois, N)
        else:
            boxes = torch.from_numpy(rois.copy())
        refused = refuses(rois, scale, pooled, ratio, aligned, dtype)
        try:
            want = roi_align(xt, boxes, pooled, spatial_scale=scale, sampling_ratio=ratio, aligned=aligned)
        except (ValueError, RuntimeError):
            stats["configurations"] += 1
            stats["refused_by_torchvision"] += 1
            stats["refusals_predicted"] += int(refused)
            continue
        stats["refusals_predicted_wrongly"] += int(refused)
        g = rng.standard_normal(tuple(want.shape)).astype(dtype)
        (want_grad,) = torch.autograd.grad(want, xt, torch.from_numpy(g)) if want.numel() else (torch.zeros_like(xt),)
        got = forward(x, rois, scale, pooled, ratio, aligned)
        got_grad = backward(g, x.shape, rois, scale, pooled, ratio, aligned)
        fw, bw = _ulps(got, want.detach().numpy()), _ulps(got_grad, want_grad.numpy())
        stats["configurations"] += 1
        stats["forward_bit_identical"] += int(np.array_equal(got, want.detach().numpy()))
        stats["backward_bit_identical"] += int(np.array_equal(got_grad, want_grad.numpy()))
        stats["worst_forward_ulps"] = max(stats["worst_forward_ulps"], fw)
        stats["worst_backward_ulps"] = max(stats["worst_backward_ulps"], bw)
        stats["differing_beyond_4_ulps"] += int(not max(fw, bw) <= 4)
        form, grid = "list" if as_list else "tensor", "adaptive" if ratio <= 0 else "fixed"
        key = f"{np.dtype(dtype).name} {form} sampling_ratio={grid} aligned={aligned}"
        kinds[key] = kinds.get(key, 0) + 1
    stats["rois"] = "K in {0, 1, 2, 3, 5, 8}; boxes inside, on integer/half corners, partly and wholly outside, "\
                    "degenerate, negative, larger than the image"
    versions = torch.__version__.split("+")[0], torchvision.__version__.split("+")[0]
    stats["reference"] = f"torch {versions[0]} + torchvision {versions[1]} CPU"
    stats["signature"] = signature(roi_align)
    return stats


def main() -> None:
    common_main(__doc__, run, Path(__file__).with_name("roi_rules_counts.json"),
                lambda s: bool(s["differing_beyond_4_ulps"] or s["refusals_predicted_wrongly"]
                             or s["refusals_predicted"] != s["refused_by_torchvision"]))


if __name__ == "__main__":
    main()
