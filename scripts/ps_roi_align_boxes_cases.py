"""Reference cases of ps_roi_align's gradient w.r.t. the boxes, which torchvision does not give: central finite
differences of live torchvision's ps_roi_align forward in float64 (eps 1e-6 per coordinate, of sum(g * output)).
A configuration is kept only away from the rules' steps (a tap's floor, the image's edges, an adaptive grid's
ceil): where, for every coordinate, the two one-sided differences agree (within 1e-7 relative) and the output is
finite. Random calls: boxes inside, partly and wholly outside the image, small and negative, larger than the
image; sampling_ratio -1, 0, 1, 2; spatial_scale 1 or 0.5. No value comes from poolspec.

    /work/tvenv/bin/python scripts/ps_roi_align_boxes_cases.py   # torch 2.14.1 + torchvision 0.29.1

Writes tests/data/ps_roi_align_boxes.npz and .json; tests/test_roi_align.py replays them on every backend (beside
roi_align's box-gradient tests).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torchvision
from torchvision.ops import ps_roi_align

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "ps_roi_align_boxes"
CASES, EPS = 24, 1e-6


def _boxes(rng: np.random.Generator, K: int, N: int, H: int, W: int, scale: float) -> np.ndarray:
    out = np.zeros((K, 5))
    out[:, 0] = rng.integers(0, N, K)
    for k in range(K):
        kind = rng.choice(["inside", "edges", "outside", "small", "negative", "large"])
        for a, L in ((1, W), (2, H)):
            if kind == "inside":
                lo = rng.uniform(0.5, L - 1)
                hi = rng.uniform(lo + 0.3, L + 0.5)
            elif kind == "edges":
                lo, hi = rng.uniform(-1.5, 1.5), rng.uniform(L - 1.5, L + 1.5)
            elif kind == "outside":
                lo = rng.uniform(-4, -2) if rng.random() < 0.5 else rng.uniform(L + 1.6, L + 3)
                hi = lo + rng.uniform(0.3, 1.2)
            elif kind == "small":
                lo = rng.uniform(0, L)
                hi = lo + rng.uniform(0.05, 0.4)
            elif kind == "negative":
                lo = rng.uniform(1, L)
                hi = lo - rng.uniform(0.1, 1.5)
            else:
                lo, hi = rng.uniform(-3, 0), rng.uniform(L, L + 3)
            out[k, a], out[k, a + 2] = lo / scale, hi / scale
    return out


def _objective(x: torch.Tensor, boxes: np.ndarray, g: torch.Tensor, kw: dict) -> float:
    return float((ps_roi_align(x, torch.tensor(boxes), **kw) * g).sum())


def main() -> int:
    rng = np.random.default_rng(11)
    cases, arrays = [], {}
    while len(cases) < CASES:
        N, H, W = int(rng.integers(1, 3)), int(rng.integers(2, 9)), int(rng.integers(2, 9))
        size = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        C, K = int(rng.integers(1, 3)), int(rng.integers(1, 5))
        scale = float(rng.choice([1.0, 0.5]))
        kw = dict(output_size=size, spatial_scale=scale, sampling_ratio=int(rng.choice([-1, 0, 1, 2])))
        x = rng.standard_normal((N, C * size[0] * size[1], H, W))
        boxes = _boxes(rng, K, N, H, W, scale)
        xt = torch.tensor(x)
        out = ps_roi_align(xt, torch.tensor(boxes), **kw)
        if not torch.isfinite(out).all():
            continue
        g = rng.standard_normal(tuple(out.shape))
        gt = torch.tensor(g)
        mid = _objective(xt, boxes, gt, kw)
        grad, steady = np.zeros_like(boxes), True
        for k, j in np.ndindex(K, 4):
            e = np.zeros_like(boxes)
            e[k, j + 1] = EPS
            up, down = _objective(xt, boxes + e, gt, kw), _objective(xt, boxes - e, gt, kw)
            if abs((up - mid) - (mid - down)) > 1e-7 * max(1.0, abs(up - mid), abs(mid - down)):
                steady = False  # a step between boxes - eps and boxes + eps
                break
            grad[k, j + 1] = (up - down) / (2 * EPS)
        if not steady:
            continue
        i = len(cases)
        arrays.update({f"{i}/x": x, f"{i}/boxes": boxes, f"{i}/grad_output": g, f"{i}/grad_boxes": grad})
        cases.append(dict(kw, output_size=list(size)))
    np.savez_compressed(OUT.with_suffix(".npz"), **arrays)
    version = f"torchvision {torchvision.__version__} (torch {torch.__version__}, CPU)"
    OUT.with_suffix(".json").write_text(json.dumps({"version": version, "eps": EPS, "cases": cases}, indent=1)
                                        + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
