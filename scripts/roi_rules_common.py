"""What scripts/check_roi_rules.py (roi_align) and scripts/check_roi_pool_rules.py (roi_pool) share: a
configuration's image and bins (``draw_config``), the corners of the kinds of boxes both draw (``corners``), the
boxes as one (L, 4) tensor per image (``per_image``), torchvision's signature (``signature``) and the command line
(``main``). The draws are made in the order the stored counts were made with."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def draw_config(rng: np.random.Generator) -> tuple[int, int, int, int, tuple[int, int], float]:
    """A configuration's N, C, H, W, output size and spatial_scale."""
    N, C = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    pooled = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    scale = float(rng.choice([1.0, 0.5, 0.25, 2.0, 1 / 3, float(rng.uniform(0.1, 2))]))
    return N, C, H, W, pooled, scale


def corners(rng: np.random.Generator, kind: int, W: int, H: int) -> tuple[np.ndarray, np.ndarray]:
    """A box's (x1, x2) and (y1, y2) in x's cells: kinds 0 to 5 inside, on integer / half-integer corners, partly
    outside, wholly outside, degenerate (x1 = x2), negative (x2 < x1); any other larger than the image."""
    if kind == 0:  # inside, anywhere
        return np.sort(rng.uniform(0, W, 2)), np.sort(rng.uniform(0, H, 2))
    if kind == 1:  # integer / half-integer corners (roi_pool: after scaling, ties of the rounding)
        return np.sort(rng.integers(-2, 2 * W + 3, 2) / 2), np.sort(rng.integers(-2, 2 * H + 3, 2) / 2)
    if kind == 2:  # partly outside
        return np.sort(rng.uniform(-3, W + 3, 2)), np.sort(rng.uniform(-3, H + 3, 2))
    if kind == 3:  # wholly outside
        a = np.sort(rng.uniform(W + 1.5, W + 6, 2)) * rng.choice([1, -1])
        return a, np.sort(rng.uniform(-6, H + 6, 2))
    if kind == 4:  # degenerate
        v, u = rng.uniform(-1, W + 1), rng.uniform(-1, H + 1)
        return np.array([v, v]), np.array([u, u + rng.choice([0.0, 0.5])])
    if kind == 5:  # negative (x2 < x1)
        return -np.sort(-rng.uniform(-1, W + 1, 2)), -np.sort(-rng.uniform(-1, H + 1, 2))
    # larger than the image (roi_align: many adaptive samples)
    return np.array([rng.uniform(-4, 0), rng.uniform(W, 3 * W)]), np.array([rng.uniform(-4, 0),
                                                                           rng.uniform(H, 3 * H)])


def per_image(torch: Any, rois: np.ndarray, N: int) -> list[Any]:
    """The rois (integer batch indices, sorted) as one (L, 4) tensor per image, in image order."""
    return [torch.from_numpy(rois[rois[:, 0] == n, 1:].copy()) for n in range(N)]


def signature(op: Callable[..., Any]) -> list[list[object]]:
    """torchvision's ``op``'s parameters as [name, default] (default "<required>" where it has none): the reference
    for the card's arguments (tests/test_spec.py)."""
    return [[p.name, "<required>" if p.default is inspect.Parameter.empty else p.default]
            for p in inspect.signature(op).parameters.values()]


def main(doc: str, run: Callable[[int], dict], out: Path, failed: Callable[[dict], bool]) -> None:
    """The command line: CONFIGS (3000) configurations, the counts written to --out (``out``) and printed; exit 1
    where ``failed(counts)``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("configs", nargs="?", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=out)
    a = parser.parse_args()
    stats = run(a.configs)
    a.out.write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(stats, indent=1, sort_keys=True))
    sys.exit(1 if failed(stats) else 0)
