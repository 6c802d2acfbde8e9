"""Channels-last against channels-first: each op on (N, *spatial, C) with layout="channels_last" against the
same op on the (N, C, *spatial) copy, NumPy and torch (1 thread), forward and backward; medians of interleaved
runs. The cases are ``poolspec bench``'s main and ordinary cases, then a few more shapes (marked +).

    python benchmarks/layout.py [NAME...]    # only the cases whose name contains one of the NAMEs
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import poolspec
from poolspec.bench import CASES, ORDINARY, BenchCase

EXTRA = [
    BenchCase("+ max_pool2d 3x3/2 p1", "max_pool2d", (8, 64, 56, 56), dict(kernel_size=3, stride=2, padding=1)),
    BenchCase("+ adaptive_avg_pool2d -> 1", "adaptive_avg_pool2d", (8, 256, 14, 14), dict(output_size=1)),
    BenchCase("+ bilinear x2", "interpolate", (8, 32, 32, 32), dict(scale_factor=2, mode="bilinear")),
    BenchCase("+ bicubic 32 -> 48", "interpolate", (8, 32, 32, 32), dict(size=48, mode="bicubic")),
    BenchCase("+ adaptive_max_pool2d -> 7", "adaptive_max_pool2d", (8, 64, 28, 28), dict(output_size=7)),
    BenchCase("+ max_pool3d 2x2x2", "max_pool3d", (4, 32, 16, 28, 28), dict(kernel_size=2)),
]


def _median(f: Callable[[], Any], n: int = 7, budget: float = 0.05) -> float:
    """Median call time over at least ``n`` calls and ``budget`` seconds, after one warm-up call: a call of
    tens of microseconds is timed over a thousand calls, not seven."""
    f()
    times: list[float] = []
    end = time.perf_counter() + budget
    while len(times) < n or time.perf_counter() < end:
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(lib: str, case: BenchCase, rng: np.random.Generator) -> np.ndarray:
    """(last/first forward, last/first backward, forward s, backward s, torch's own channels_last/contiguous
    forward) as medians over 3 interleaved runs."""
    fwd = getattr(poolspec, case.op)
    bwd = getattr(poolspec, case.op + "_backward")
    kw = case.args
    first = rng.standard_normal(case.shape).astype(np.float32)
    last = np.ascontiguousarray(np.moveaxis(first, 1, -1))
    g1 = np.ones(tuple(fwd(first, **kw).shape), np.float32)
    g2 = np.ascontiguousarray(np.moveaxis(g1, 1, -1))
    native = None
    if lib == "torch":
        first, last, g1, g2 = (torch.from_numpy(a) for a in (first, last, g1, g2))
        memory = torch.permute(last, (0, last.ndim - 1, *range(1, last.ndim - 1)))  # channels_last memory
        op = getattr(torch.nn.functional, case.op)
        native = (lambda: op(memory, **kw), lambda: op(first, **kw))
    rows = []
    for _ in range(3):  # interleaved
        a = _median(lambda: fwd(first, **kw))
        b = _median(lambda: fwd(last, layout="channels_last", **kw))
        c = _median(lambda: bwd(g1, first, **kw))
        d = _median(lambda: bwd(g2, last, layout="channels_last", **kw))
        e = 1.0 if native is None else _median(native[0]) / _median(native[1])
        rows.append((b / a, d / c, a, c, e))
    return np.median(np.array(rows), axis=0)


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    for lib in ("numpy", "torch"):
        for case in CASES + ORDINARY + EXTRA:
            if sys.argv[1:] and not any(part in case.key for part in sys.argv[1:]):
                continue
            r = measure(lib, case, rng)
            print(f"{lib:5s} {case.key:40s} fwd {r[2] * 1e3:7.2f} ms, last/first {r[0]:.2f}; "
                  f"bwd {r[3] * 1e3:7.2f} ms, last/first {r[1]:.2f}"
                  + ("" if lib != "torch" else f"; torch's own fwd, channels_last/contiguous {r[4]:.2f}"),
                  flush=True)


if __name__ == "__main__":
    main()
