"""torchvision's ps_roi_align and ps_roi_pool rules, restated in NumPy, against live torchvision on random
configurations: the check behind the notes of poolspec's ps_roi_align and ps_roi_pool cards.

    /work/tvenv/bin/python scripts/check_ps_roi_rules.py [CONFIGS] [--out scripts/ps_roi_rules_counts.json]

Run with torch 2.14.1 + torchvision 0.29.1 (CPU); imports numpy, torch and torchvision only (no poolspec). Each
configuration draws one of the two ops, an image (N, C, H, W) whose channels are a multiple of PH * PW (or, one
time in ten, not: torchvision refuses it), an output size, spatial_scale, sampling_ratio (-1, 0 or 1..4;
ps_roi_align), a dtype (float64, float32 or float16) and K boxes (K = 0 included) of every kind - inside, partly or
wholly outside, degenerate (x1 = x2), negative (x2 < x1), on integer and half-integer (rounding-tie) coordinates,
larger than the image, a hair (1e-10) below a half-integer (where the backward's roundf of a float64 product,
rounded to float32 first, differs from the forward's round), batch indices with a fraction - given as a (K, 5)
tensor or as a list of (L, 4) tensors. The forward and the input gradient (torchvision's autograd) are compared
with ``*_forward``/``*_backward`` below, which follow torchvision's CPU kernels operation by operation in the input's
dtype (float16: every operation rounded to float16, as c10::Half does), so equality is expected bit for bit. Exits 1
if any configuration differs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torchvision
from roi_rules_common import corners, main, per_image, signature
from torchvision.ops import ps_roi_align, ps_roi_pool


def _in(pooled, k_out: int):
    """Input channel of output channel c, bin (ph, pw): (c * PH + ph) * PW + pw."""
    PH, PW = pooled
    return lambda c, ph, pw: (c * PH + ph) * PW + pw


# --- ps_roi_align -----------------------------------------------------------------------------------------------

def _align_roi(box, scale, pooled, ratio: int, dt):
    """One roi's start, bin size and grid per axis, in torchvision's arithmetic: always shifted by 0.5, the size
    never clamped, count = grid_h * grid_w (no clamp to 1)."""
    sc, half = dt(scale), dt(0.5)
    x1, y1, x2, y2 = (dt(dt(dt(v) * sc) - half) for v in box[1:5])
    h, w = dt(y2 - y1), dt(x2 - x1)
    bh, bw = dt(h / dt(pooled[0])), dt(w / dt(pooled[1]))
    gh = ratio if ratio > 0 else int(math.ceil(float(dt(h / dt(pooled[0])))))
    gw = ratio if ratio > 0 else int(math.ceil(float(dt(w / dt(pooled[1])))))
    return (y1, bh, gh), (x1, bw, gw), gh * gw


def _bilinear(y, x, H: int, W: int, dt):
    """(cells, weights) of one sample, or None where it reads 0 (y < -1, y > H, x < -1 or x > W)."""
    if not (y >= -1.0 and y <= H and x >= -1.0 and x <= W):
        return None
    y = dt(0) if y <= 0 else y
    x = dt(0) if x <= 0 else x
    yl, xl = int(y), int(x)
    if yl >= H - 1:
        yh = yl = H - 1
        y = dt(yl)
    else:
        yh = yl + 1
    if xl >= W - 1:
        xh = xl = W - 1
        x = dt(xl)
    else:
        xh = xl + 1
    ly, lx = dt(y - dt(yl)), dt(x - dt(xl))
    hy, hx = dt(dt(1) - ly), dt(dt(1) - lx)
    cells = (yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh)
    return cells, (dt(hy * hx), dt(hy * lx), dt(ly * hx), dt(ly * lx))


def _align_samples(box, scale, pooled, ratio, H, W, dt, ph: int, pw: int):
    (ys, bh, gh), (xs, bw, gw), count = _align_roi(box, scale, pooled, ratio, dt)
    hstart, wstart = dt(dt(dt(ph) * bh) + ys), dt(dt(dt(pw) * bw) + xs)
    out = []
    for iy in range(gh):
        y = dt(hstart + dt(dt(dt(iy + 0.5) * bh) / dt(gh)))
        for ix in range(gw):
            x = dt(wstart + dt(dt(dt(ix + 0.5) * bw) / dt(gw)))
            out.append(_bilinear(y, x, H, W, dt))
    return out, dt(count)


def align_forward(x: np.ndarray, rois: np.ndarray, scale, pooled, ratio) -> np.ndarray:
    dt = x.dtype.type
    (_, C, H, W), (PH, PW) = x.shape, pooled
    Co = C // (PH * PW)
    cin = _in(pooled, Co)
    out = np.zeros((rois.shape[0], Co, PH, PW), dtype=x.dtype)
    with np.errstate(all="ignore"):
        for k in range(rois.shape[0]):
            b = int(rois[k, 0])
            for c in range(Co):
                for ph in range(PH):
                    for pw in range(PW):
                        plane = x[b, cin(c, ph, pw)].reshape(-1)
                        samples, count = _align_samples(rois[k], scale, pooled, ratio, H, W, dt, ph, pw)
                        acc = dt(0)
                        for s in samples:
                            if s is None:
                                val = dt(0)
                            else:
                                (c1, c2, c3, c4), (w1, w2, w3, w4) = s
                                val = dt(dt(dt(dt(w1 * plane[c1]) + dt(w2 * plane[c2])) + dt(w3 * plane[c3]))
                                         + dt(w4 * plane[c4]))
                            acc = dt(acc + val)
                        out[k, c, ph, pw] = dt(acc / count)  # 0 / 0 (no sample on an axis): NaN
    return out


def align_backward(g: np.ndarray, x_shape, rois: np.ndarray, scale, pooled, ratio) -> np.ndarray:
    """Bin after bin (roi, out channel, ph, pw), sample after sample, tap after tap: (g * w) / count added."""
    dt = g.dtype.type
    (N, C, H, W), (PH, PW) = x_shape, pooled
    Co = C // (PH * PW)
    cin = _in(pooled, Co)
    grad = np.zeros((N, C, H * W), dtype=g.dtype)
    with np.errstate(all="ignore"):
        for k in range(rois.shape[0]):
            b = int(rois[k, 0])
            for c in range(Co):
                for ph in range(PH):
                    for pw in range(PW):
                        samples, count = _align_samples(rois[k], scale, pooled, ratio, H, W, dt, ph, pw)
                        gv = g[k, c, ph, pw]
                        for s in samples:
                            if s is None:
                                continue
                            for cell, w in zip(*s):
                                grad[b, cin(c, ph, pw), cell] = dt(grad[b, cin(c, ph, pw), cell] + dt(dt(gv * w)
                                                                                                      / count))
    return grad.reshape(x_shape)


# --- ps_roi_pool ------------------------------------------------------------------------------------------------

def _round(v, single: bool) -> int:
    """std::round (half away from zero); ``single``: roundf, the argument first rounded to float32 (the
    backward's roundf on a double product)."""
    v = float(np.float32(v)) if single else float(v)
    t = math.trunc(v)
    return t + (int(math.copysign(1, v)) if abs(v - t) >= 0.5 else 0)


def pool_windows(box, scale, pooled, H: int, W: int, dt, backward: bool, single: bool = True):
    """(hstart, hend, wstart, wend) per (ph, pw): corners round(coordinate * spatial_scale) (the backward:
    roundf), roi size max(end - start, 1), bin = size / output size in dt, start = floor(p * bin), end =
    ceil((p + 1) * bin), plus the roi's start, clamped to [0, H - 1] (forward) or [0, H] (backward)."""
    sc = dt(scale)
    sw, sh, ew, eh = (_round(dt(dt(v) * sc), backward and single) for v in box[1:5])
    rw, rh = max(ew - sw, 1), max(eh - sh, 1)
    bh, bw = dt(dt(rh) / dt(pooled[0])), dt(dt(rw) / dt(pooled[1]))
    top_h, top_w = (H, W) if backward else (H - 1, W - 1)
    out = np.zeros(tuple(pooled) + (4,), np.int64)
    for ph in range(pooled[0]):
        hs = int(np.floor(dt(dt(ph) * bh))) + sh
        he = int(np.ceil(dt(dt(ph + 1) * bh))) + sh
        for pw in range(pooled[1]):
            ws = int(np.floor(dt(dt(pw) * bw))) + sw
            we = int(np.ceil(dt(dt(pw + 1) * bw))) + sw
            out[ph, pw] = [min(max(hs, 0), top_h), min(max(he, 0), top_h), min(max(ws, 0), top_w),
                           min(max(we, 0), top_w)]
    return out


def pool_forward(x: np.ndarray, rois: np.ndarray, scale, pooled) -> np.ndarray:
    """The sum of the window (row-major, from 0) / its area; an empty window gives 0."""
    dt = x.dtype.type
    (_, C, H, W), (PH, PW) = x.shape, pooled
    Co = C // (PH * PW)
    cin = _in(pooled, Co)
    out = np.zeros((rois.shape[0], Co, PH, PW), dtype=x.dtype)
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        win = pool_windows(rois[k], scale, pooled, H, W, dt, False)
        for c in range(Co):
            for ph in range(PH):
                for pw in range(PW):
                    hs, he, ws, we = win[ph, pw]
                    if he <= hs or we <= ws:
                        continue
                    acc = dt(0)
                    for h in range(hs, he):
                        for w in range(ws, we):
                            acc = dt(acc + x[b, cin(c, ph, pw), h, w])
                    out[k, c, ph, pw] = dt(acc / dt((he - hs) * (we - ws)))
    return out


def pool_backward(g: np.ndarray, x_shape, rois: np.ndarray, scale, pooled, single: bool = True) -> np.ndarray:
    """g / area added to every cell of the backward's window (clamped to [0, H], not the forward's [0, H - 1])."""
    dt = g.dtype.type
    (N, C, H, W), (PH, PW) = x_shape, pooled
    Co = C // (PH * PW)
    cin = _in(pooled, Co)
    grad = np.zeros((N, C, H, W), dtype=g.dtype)
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        win = pool_windows(rois[k], scale, pooled, H, W, dt, True, single)
        for ph in range(PH):
            for pw in range(PW):
                hs, he, ws, we = win[ph, pw]
                if he <= hs or we <= ws:
                    continue
                for c in range(Co):
                    d = dt(g[k, c, ph, pw] / dt((he - hs) * (we - ws)))
                    grad[b, cin(c, ph, pw), hs:he, ws:we] += d
    return grad


# --- the draws --------------------------------------------------------------------------------------------------

def _boxes(rng: np.random.Generator, K: int, N: int, H: int, W: int, scale: float) -> np.ndarray:
    """K boxes (batch index, x1, y1, x2, y2) in input coordinates (before spatial_scale) of every kind: the shared
    kinds (``corners``), negative half-integers and a hair below half-integers."""
    out = np.zeros((K, 5))
    for k in range(K):
        kind = int(rng.integers(0, 9))
        s = 1 / scale
        if kind == 6:  # negative half-integers (rounding away from zero below 0)
            a, b = np.sort(rng.integers(-9, 3, 2) + 0.5), np.sort(rng.integers(-9, 3, 2) + 0.5)
        elif kind == 8:  # a hair below a half-integer (float64: round and roundf, via float32, disagree), at scale 1
            a = np.sort(rng.integers(-2, W + 2, 2) + 0.5 - 1e-10 * rng.integers(0, 2, 2))
            b = np.sort(rng.integers(-2, H + 2, 2) + 0.5 - 1e-10 * rng.integers(0, 2, 2))
            s = 1.0
        else:  # inside, corners, partly / wholly outside, degenerate, negative, larger than the image
            a, b = corners(rng, kind, W, H)
        batch = rng.integers(0, N) + rng.choice([0.0, 0.0, 0.25, 0.75])  # a fraction: truncated
        out[k] = [batch, a[0] * s, b[0] * s, a[1] * s, b[1] * s]
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (NaN where NaN, and the sign of zero)."""
    return (a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
            and np.array_equal(np.signbit(a), np.signbit(b)))


def run(count: int, seed: int = 6151) -> dict:
    rng = np.random.default_rng(seed)
    torch.set_num_threads(1)
    stats: dict = {"configurations": 0, "by_op": {}, "by_kind": {}}
    for _ in range(count):
        align = bool(rng.integers(0, 2) == 0)  # ps_roi_align, else ps_roi_pool
        op = "ps_roi_align" if align else "ps_roi_pool"
        s = stats["by_op"].setdefault(op, {"configurations": 0, "forward_bit_identical": 0,
                                           "backward_bit_identical": 0, "mismatches": 0, "refused_by_torchvision": 0,
                                           "refusals_predicted": 0, "refusals_predicted_wrongly": 0,
                                           "nan_bins": 0, "negative_zero_bins": 0})
        N = int(rng.integers(1, 4))
        H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        pooled = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        C = pooled[0] * pooled[1] * int(rng.integers(1, 3))
        divisible = rng.random() >= 0.1
        if not divisible:
            C += int(rng.integers(1, pooled[0] * pooled[1])) if pooled[0] * pooled[1] > 1 else 0
        scale = float(rng.choice([1.0, 0.5, 0.25, 2.0, 1 / 3, float(rng.uniform(0.1, 2))]))
        ratio = int(rng.choice([-1, 0, 1, 2, 3, 4]))
        dtype = (np.float64, np.float32, np.float16)[int(rng.choice(3, p=[0.4, 0.4, 0.2]))]
        K = int(rng.choice([0, 1, 2, 3, 5]))
        rois = _boxes(rng, K, N, H, W, scale).astype(dtype)
        as_list = bool(rng.integers(0, 2))
        x = rng.standard_normal((N, C, H, W)).astype(dtype)
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        if as_list:  # one (L, 4) tensor per image, in image order (the batch index then an integer)
            rois = rois[np.argsort(np.trunc(rois[:, 0]), kind="stable")]
            rois[:, 0] = np.trunc(rois[:, 0])
            boxes = per_image(torch, rois, N)
        else:
            boxes = torch.from_numpy(rois.copy())
        predicted = C % (pooled[0] * pooled[1]) != 0
        stats["configurations"] += 1
        s["configurations"] += 1
        try:
            if align:
                want = ps_roi_align(xt, boxes, pooled, spatial_scale=scale, sampling_ratio=ratio)
            else:
                want = ps_roi_pool(xt, boxes, pooled, spatial_scale=scale)
        except (ValueError, RuntimeError):
            s["refused_by_torchvision"] += 1
            s["refusals_predicted"] += int(predicted)
            continue
        s["refusals_predicted_wrongly"] += int(predicted)
        g = rng.standard_normal(tuple(want.shape)).astype(dtype)
        (want_grad,) = torch.autograd.grad(want, xt, torch.from_numpy(g)) if want.numel() else (torch.zeros_like(xt),)
        if align:
            got = align_forward(x, rois, scale, pooled, ratio)
            got_grad = align_backward(g, x.shape, rois, scale, pooled, ratio)
        else:
            got = pool_forward(x, rois, scale, pooled)
            got_grad = pool_backward(g, x.shape, rois, scale, pooled)
        w, wg = want.detach().numpy(), want_grad.numpy()
        fw, bw = _same(got, w), _same(got_grad, wg)
        s["forward_bit_identical"] += int(fw)
        s["backward_bit_identical"] += int(bw)
        s["mismatches"] += int(not (fw and bw))
        if not align and dtype == np.float64:  # where the backward's roundf decided the gradient
            s["roundf_decisive"] = s.get("roundf_decisive", 0) + int(
                not _same(pool_backward(g, x.shape, rois, scale, pooled, single=False), wg))
        s["nan_bins"] += int(np.isnan(w).sum())
        s["negative_zero_bins"] += int(((w == 0) & np.signbit(w)).sum())
        grid = "" if not align else " sampling_ratio=" + ("adaptive" if ratio <= 0 else "fixed")
        key = f"{op} {np.dtype(dtype).name} {'list' if as_list else 'tensor'}{grid}"
        stats["by_kind"][key] = stats["by_kind"].get(key, 0) + 1
    stats["rois"] = "K in {0, 1, 2, 3, 5}; boxes inside, on integer/half corners (rounding ties), partly and " \
                    "wholly outside, degenerate, negative, larger than the image, 1e-10 below half-integers; " \
                    "batch indices with fractions"
    stats["channels"] = "C a multiple of PH * PW, or (one in ten) not: torchvision refuses it"
    versions = torch.__version__.split("+")[0], torchvision.__version__.split("+")[0]
    stats["reference"] = f"torch {versions[0]} + torchvision {versions[1]} CPU"
    stats["signature"] = {f.__name__: signature(f) for f in (ps_roi_align, ps_roi_pool)}
    stats["bfloat16_refused"] = _refuses_bfloat16()
    return stats


def _refuses_bfloat16() -> dict[str, bool]:
    out = {}
    for f in (ps_roi_align, ps_roi_pool):
        try:
            f(torch.ones(1, 1, 2, 2, dtype=torch.bfloat16), torch.tensor([[0.0, 0, 0, 1, 1]]).bfloat16(), 1)
            out[f.__name__] = False
        except RuntimeError:
            out[f.__name__] = True
    return out


def _failed(stats: dict) -> bool:
    return any(s["mismatches"] or s["refusals_predicted_wrongly"] or s["refusals_predicted"] != s[
        "refused_by_torchvision"] for s in stats["by_op"].values())


if __name__ == "__main__":
    main(__doc__, run, Path(__file__).with_name("ps_roi_rules_counts.json"), _failed)
