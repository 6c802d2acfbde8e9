"""torchvision's roi_pool rules, restated in NumPy, against live torchvision on random configurations: the check
behind the notes of poolspec's roi_pool card (src/poolspec/families/roi_pool/card.py).

    /work/tvenv/bin/python scripts/check_roi_pool_rules.py [CONFIGS] [--out scripts/roi_pool_rules_counts.json]

Run with torch 2.14.1 + torchvision 0.29.1 (CPU); imports numpy, torch and torchvision only (no poolspec). Each
configuration draws an image (N, C, H, W) whose values include ties, NaN, -inf and values below -FLT_MAX (float64),
an output size, spatial_scale, a dtype (float64, float32 or float16) and K boxes (K = 0 included) of every kind -
inside, partly or wholly outside, degenerate (x1 = x2), negative (x2 < x1), on integer, half-integer and .5-after-
scaling coordinates, larger than the image, batch indices with a fraction - given as a (K, 5) tensor or as a list of
(L, 4) tensors, one per image. The forward, torchvision's argmax (``torch.ops.torchvision.roi_pool``) and the input
gradient (torchvision's autograd) are compared with ``forward``/``backward`` below, which follow torchvision's CPU
kernel operation by operation in the input's dtype: equality is expected bit for bit (a max selects, it does not
round). Exits 1 if any configuration differs at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torchvision
from roi_rules_common import corners, draw_config, per_image, signature
from roi_rules_common import main as common_main
from torchvision.ops import roi_pool

FLT_MAX = float(np.finfo(np.float32).max)


def _round(v, dt):
    """std::round (half away from zero) of v (in dtype dt), as an int."""
    v = dt(v)
    t = np.trunc(v)
    return int(t) + (int(np.sign(v)) if abs(v - t) >= 0.5 else 0)


def windows(box, scale, pooled, H: int, W: int, dt):
    """One roi's bins: (hstart, hend, wstart, wend) per (ph, pw), clamped to the image, in torchvision's
    arithmetic (the products and the bin size in dtype dt, the rest in int)."""
    sc = dt(scale)
    sw, sh, ew, eh = (_round(dt(dt(v) * sc), dt) for v in box[1:5])
    rw, rh = max(ew - sw + 1, 1), max(eh - sh + 1, 1)
    bh, bw = dt(dt(rh) / dt(pooled[0])), dt(dt(rw) / dt(pooled[1]))
    out = np.zeros(tuple(pooled) + (4,), np.int64)
    for ph in range(pooled[0]):
        hs = int(np.floor(dt(dt(ph) * bh))) + sh
        he = int(np.ceil(dt(dt(ph + 1) * bh))) + sh
        for pw in range(pooled[1]):
            ws = int(np.floor(dt(dt(pw) * bw))) + sw
            we = int(np.ceil(dt(dt(pw + 1) * bw))) + sw
            out[ph, pw] = [min(max(hs, 0), H), min(max(he, 0), H), min(max(ws, 0), W), min(max(we, 0), W)]
    return out


def forward(x: np.ndarray, rois: np.ndarray, scale, pooled) -> tuple[np.ndarray, np.ndarray]:
    """(output, argmax): empty bins 0 and -1; else the first cell (row-major) strictly greater than every earlier
    one, starting from T(-FLT_MAX) (NaN never wins; a window of values <= -FLT_MAX gives T(-FLT_MAX) and -1)."""
    dt = x.dtype.type
    K, (_, C, H, W) = rois.shape[0], x.shape
    out = np.zeros((K, C) + tuple(pooled), dtype=x.dtype)
    arg = np.full((K, C) + tuple(pooled), -1, np.int64)
    for k in range(K):
        b = int(rois[k, 0])  # truncation
        win = windows(rois[k], scale, pooled, H, W, dt)
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                hs, he, ws, we = win[ph, pw]
                if he <= hs or we <= ws:
                    continue
                for c in range(C):
                    m, idx = dt(-FLT_MAX), -1
                    for h in range(hs, he):
                        for w in range(ws, we):
                            if x[b, c, h, w] > m:
                                m, idx = x[b, c, h, w], h * W + w
                    out[k, c, ph, pw], arg[k, c, ph, pw] = m, idx
    return out, arg


def backward(g: np.ndarray, x_shape, rois: np.ndarray, arg: np.ndarray) -> np.ndarray:
    """grad_input: roi by roi, channel, bin, g added at the argmax (nothing for -1), in that order."""
    N, C, H, W = x_shape
    grad = np.zeros((N, C, H * W), dtype=g.dtype)
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        for c in range(C):
            for i, a in enumerate(arg[k, c].reshape(-1)):
                if a >= 0:
                    grad[b, c, a] += g[k, c].reshape(-1)[i]
    return grad.reshape(x_shape)


def _boxes(rng: np.random.Generator, K: int, N: int, H: int, W: int, scale: float) -> np.ndarray:
    """K boxes (batch index, x1, y1, x2, y2) in input coordinates (before spatial_scale) of every kind."""
    out = np.zeros((K, 5))
    for k in range(K):
        kind = rng.integers(0, 8)
        s = 1 / scale
        if kind == 6:  # negative half-integers (rounding away from zero below 0)
            a, b = np.sort(rng.integers(-9, 3, 2) + 0.5), np.sort(rng.integers(-9, 3, 2) + 0.5)
        else:  # the shared kinds (7: larger than the image)
            a, b = corners(rng, int(kind), W, H)
        batch = rng.integers(0, N) + (rng.choice([0.0, 0.25, 0.75]))  # a fraction: truncated
        # coordinates given before scaling; 1/scale may not be exact, the rounding ties are drawn at scale 1 too
        out[k] = [batch, a[0] * s, b[0] * s, a[1] * s, b[1] * s]
    return out


def _image(rng: np.random.Generator, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Values with ties (a few levels), NaN, -inf and, in float64, values below -FLT_MAX."""
    kind = rng.integers(0, 4)
    x = rng.standard_normal(shape)
    if kind == 1:
        x = np.round(x)  # many ties
    elif kind >= 2:
        pick = rng.random(shape)
        x[pick < 0.15] = np.nan
        x[(pick >= 0.15) & (pick < 0.3)] = -np.inf
        if dtype == np.float64:
            x[(pick >= 0.3) & (pick < 0.4)] = -1e300
        if kind == 3:
            x[pick < 0.8] = -np.inf  # windows of -inf only
    return x.astype(dtype)


def run(count: int, seed: int = 4077) -> dict:
    rng = np.random.default_rng(seed)
    torch.set_num_threads(1)
    stats = {"configurations": 0, "forward_bit_identical": 0, "argmax_identical": 0, "backward_bit_identical": 0,
             "mismatches": 0, "by_kind": {}, "refused_by_torchvision": 0}
    kinds = stats["by_kind"]
    for _ in range(count):
        N, C, H, W, pooled, scale = draw_config(rng)
        dtype = (np.float64, np.float32, np.float16)[int(rng.choice(3, p=[0.4, 0.4, 0.2]))]
        K = int(rng.choice([0, 1, 2, 3, 5, 8]))
        rois = _boxes(rng, K, N, H, W, scale).astype(dtype)
        as_list = bool(rng.integers(0, 2))
        x = _image(rng, (N, C, H, W), dtype)
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        if as_list:  # the same rois as one (L, 4) tensor per image, in image order (batch index now an integer)
            rois = rois[np.argsort(np.trunc(rois[:, 0]), kind="stable")]
            rois[:, 0] = np.trunc(rois[:, 0])
            boxes = per_image(torch, rois, N)
        else:
            boxes = torch.from_numpy(rois.copy())
        stats["configurations"] += 1
        try:
            want = roi_pool(xt, boxes, pooled, spatial_scale=scale)
        except (ValueError, RuntimeError):
            stats["refused_by_torchvision"] += 1
            continue
        rt = torch.from_numpy(rois.copy())
        _, want_arg = torch.ops.torchvision.roi_pool(xt.detach(), rt, scale, pooled[0], pooled[1])
        g = rng.standard_normal(tuple(want.shape)).astype(dtype)
        (want_grad,) = torch.autograd.grad(want, xt, torch.from_numpy(g)) if want.numel() else (torch.zeros_like(xt),)
        got, arg = forward(x, rois, scale, pooled)
        got_grad = backward(g, x.shape, rois, arg)
        fw = np.array_equal(got, want.detach().numpy(), equal_nan=True)
        am = np.array_equal(arg, want_arg.numpy().astype(np.int64))
        bw = np.array_equal(got_grad, want_grad.numpy(), equal_nan=True)
        stats["forward_bit_identical"] += int(fw)
        stats["argmax_identical"] += int(am)
        stats["backward_bit_identical"] += int(bw)
        stats["mismatches"] += int(not (fw and am and bw))
        form = "list" if as_list else "tensor"
        key = f"{np.dtype(dtype).name} {form}"
        kinds[key] = kinds.get(key, 0) + 1
    stats["rois"] = "K in {0, 1, 2, 3, 5, 8}; boxes inside, on integer/half corners (rounding ties), partly and " \
                    "wholly outside, degenerate, negative, larger than the image; batch indices with fractions"
    stats["values"] = "normal draws; rounded (ties); NaN, -inf and (float64) -1e300 sprinkled; windows of -inf only"
    versions = torch.__version__.split("+")[0], torchvision.__version__.split("+")[0]
    stats["reference"] = f"torch {versions[0]} + torchvision {versions[1]} CPU"
    stats["signature"] = signature(roi_pool)
    stats["bfloat16_refused"] = _refuses_bfloat16()
    return stats


def _refuses_bfloat16() -> bool:
    try:
        roi_pool(torch.ones(1, 1, 2, 2, dtype=torch.bfloat16), torch.tensor([[0.0, 0, 0, 1, 1]]).bfloat16(), 1)
    except RuntimeError:
        return True
    return False


def main() -> None:
    common_main(__doc__, run, Path(__file__).with_name("roi_pool_rules_counts.json"),
                lambda s: bool(s["mismatches"] or s["refused_by_torchvision"]))


if __name__ == "__main__":
    main()
