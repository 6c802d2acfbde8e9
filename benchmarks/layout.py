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
    ("interpolate nearest x2", (8, 32, 32, 32),
     lambda a, **k: poolspec.interpolate(a, scale_factor=2, mode="nearest", **k),
     lambda g, a, **k: poolspec.interpolate_backward(g, a, scale_factor=2, mode="nearest", **k)),
    ("interpolate bicubic 32->48", (8, 32, 32, 32),
     lambda a, **k: poolspec.interpolate(a, size=48, mode="bicubic", **k),
     lambda g, a, **k: poolspec.interpolate_backward(g, a, size=48, mode="bicubic", **k)),
    ("adaptive_max_pool2d -> 7", (8, 64, 28, 28), lambda a, **k: poolspec.adaptive_max_pool2d(a, 7, **k),
     lambda g, a, **k: poolspec.adaptive_max_pool2d_backward(g, a, 7, **k)),
    ("lp_pool2d p2 2x2", (8, 64, 56, 56), lambda a, **k: poolspec.lp_pool2d(a, 2, 2, **k),
     lambda g, a, **k: poolspec.lp_pool2d_backward(g, a, 2, 2, **k)),
    ("max_pool3d 2x2x2", (4, 32, 16, 28, 28), lambda a, **k: poolspec.max_pool3d(a, 2, **k),
     lambda g, a, **k: poolspec.max_pool3d_backward(g, a, 2, **k)),
    ("avg_pool3d 2x2x2", (4, 32, 16, 28, 28), lambda a, **k: poolspec.avg_pool3d(a, 2, **k),
     lambda g, a, **k: poolspec.avg_pool3d_backward(g, a, 2, **k)),
]


F = torch.nn.functional
# torch's own forward, for its channels_last-memory / contiguous ratio in the same run
NATIVE: dict[str, Callable[[Any], Any]] = {
    "max_pool2d 3x3/2 p1": lambda a: F.max_pool2d(a, 3, 2, 1),
    "avg_pool2d 2x2": lambda a: F.avg_pool2d(a, 2),
    "adaptive_avg_pool2d -> 1": lambda a: F.adaptive_avg_pool2d(a, 1),
    "interpolate bilinear x2": lambda a: F.interpolate(a, scale_factor=2, mode="bilinear"),
    "interpolate nearest x2": lambda a: F.interpolate(a, scale_factor=2, mode="nearest"),
    "interpolate bicubic 32->48": lambda a: F.interpolate(a, size=48, mode="bicubic"),
    "adaptive_max_pool2d -> 7": lambda a: F.adaptive_max_pool2d(a, 7),
    "lp_pool2d p2 2x2": lambda a: F.lp_pool2d(a, 2, 2),
    "max_pool3d 2x2x2": lambda a: F.max_pool3d(a, 2),
    "avg_pool3d 2x2x2": lambda a: F.avg_pool3d(a, 2),
}


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
            native = NATIVE[name] if lib == "torch" else None
            memory = None if native is None else torch.permute(last, (0, last.ndim - 1, *range(1, last.ndim - 1)))
            for _ in range(3):  # interleaved
                a = _median(lambda: fwd(first))  # noqa: B023
                b = _median(lambda: fwd(last, layout="channels_last"))  # noqa: B023
                c = _median(lambda: bwd(g1, first))  # noqa: B023
                d = _median(lambda: bwd(g2, last, layout="channels_last"))  # noqa: B023
                e = 1.0 if native is None else _median(lambda: native(memory)) / _median(lambda: native(first))  # noqa: B023
                rows.append((b / a, d / c, a, c, e))
            r = np.median(np.array(rows), axis=0)
            print(f"{lib:5s} {name:26s} fwd {r[2] * 1e3:7.2f} ms, last/first {r[0]:.2f}; "
                  f"bwd {r[3] * 1e3:7.2f} ms, last/first {r[1]:.2f}"
                  + ("" if native is None else f"; torch's own fwd, channels_last/contiguous {r[4]:.2f}"))


if __name__ == "__main__":
    main()
