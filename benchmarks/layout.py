"""Channels-last against channels-first: each op on (N, H, W, C) with layout="channels_last" against the same op
on the (N, C, H, W) copy, NumPy and torch (1 thread), forward and backward; medians of interleaved runs.

    python benchmarks/layout.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import poolspec

CASES: list[tuple[str, tuple[int, ...], Callable[..., Any], Callable[..., Any]]] = [
    ("max_pool2d 3x3/2 p1", (8, 64, 56, 56), lambda a, **k: poolspec.max_pool2d(a, 3, 2, 1, **k),
     lambda g, a, **k: poolspec.max_pool2d_backward(g, a, 3, 2, 1, **k)),
    ("avg_pool2d 2x2", (8, 64, 56, 56), lambda a, **k: poolspec.avg_pool2d(a, 2, **k),
     lambda g, a, **k: poolspec.avg_pool2d_backward(g, a, 2, **k)),
    ("adaptive_avg_pool2d -> 1", (8, 256, 14, 14), lambda a, **k: poolspec.adaptive_avg_pool2d(a, 1, **k),
     lambda g, a, **k: poolspec.adaptive_avg_pool2d_backward(g, a, 1, **k)),
    ("interpolate bilinear x2", (8, 32, 32, 32),
     lambda a, **k: poolspec.interpolate(a, scale_factor=2, mode="bilinear", **k),
     lambda g, a, **k: poolspec.interpolate_backward(g, a, scale_factor=2, mode="bilinear", **k)),
]


def _median(f: Callable[[], Any], n: int = 7) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    for lib in ("numpy", "torch"):
        for name, shape, fwd, bwd in CASES:
            first = rng.standard_normal(shape).astype(np.float32)
            last = np.ascontiguousarray(np.moveaxis(first, 1, -1))
            g1 = np.ones(tuple(fwd(first).shape), np.float32)
            g2 = np.ascontiguousarray(np.moveaxis(g1, 1, -1))
            if lib == "torch":
                first, last, g1, g2 = (torch.from_numpy(a) for a in (first, last, g1, g2))
            rows = []
            for _ in range(3):  # interleaved
                a = _median(lambda: fwd(first))  # noqa: B023
                b = _median(lambda: fwd(last, layout="channels_last"))  # noqa: B023
                c = _median(lambda: bwd(g1, first))  # noqa: B023
                d = _median(lambda: bwd(g2, last, layout="channels_last"))  # noqa: B023
                rows.append((b / a, d / c, a, c))
            r = np.median(np.array(rows), axis=0)
            print(f"{lib:5s} {name:26s} fwd {r[2] * 1e3:7.2f} ms, last/first {r[0]:.2f}; "
                  f"bwd {r[3] * 1e3:7.2f} ms, last/first {r[1]:.2f}")


if __name__ == "__main__":
    main()
