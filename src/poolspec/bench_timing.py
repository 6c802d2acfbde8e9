"""How the benchmarks time a call and reduce the times (``poolspec.bench``, ``poolspec.device_bench``).

>>> from poolspec.bench_timing import geomean, slope
>>> round(geomean([0.5, 2.0]), 6), round(slope([1, 2, 4], [3.0, 6.0, 12.0]), 6)
(1.0, 1.0)
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def median_time(fn: Callable[[], Any], repeat: int, budget: float = 2.0) -> float:
    """Median wall time of ``fn`` after one warm-up call (compilation, caches), at most ``budget`` seconds."""
    return median_times((fn,), repeat, budget)[0]


def paired_times(mine: Callable[[], Any], peer: Callable[[], Any], repeat: int,
                 budget: float = 4.0) -> tuple[float, float]:
    """Median times of two functions measured alternately, so that a slow spell of the machine falls on
    both rather than on one side of the ratio."""
    a, b = median_times((mine, peer), repeat, budget)
    return a, b


def median_times(fns: tuple[Callable[[], Any], ...], repeat: int, budget: float) -> list[float]:
    """Per function, the median of ``repeat`` calls taken in turn (at least 3 rounds, then as many as
    ``budget`` seconds allow), after one warm-up call each."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    start = time.perf_counter()
    while len(times[0]) < repeat and (len(times[0]) < 3 or time.perf_counter() - start < budget):
        for fn, out in zip(fns, times):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return [statistics.median(t) for t in times]


def per_call(fn: Callable[[], Any], calls: int) -> float:
    """Best of five batches of ``calls`` calls, per call: the steady per-call cost, timer overhead amortised."""
    fn()
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def torch_calls(torch: Any, fn: Callable[..., Any], x: Any, gy: Any, *extra: Any,
                **args: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``fn(x, *extra, **args)`` forward, and forward plus the gradient w.r.t. a fresh leaf ``x`` for
    cotangent ``gy`` (the other inputs are no leaves)."""

    def fwd() -> Any:
        return fn(x, *extra, **args)

    def fwd_bwd() -> Any:
        xr = x.detach().requires_grad_(True)
        return torch.autograd.grad(fn(xr, *extra, **args), xr, gy)[0]

    return fwd, fwd_bwd


def geomean(values: Sequence[float]) -> float:
    """The geometric mean of ratios (NaN for none)."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def slope(sizes: Sequence[float], times: Sequence[float]) -> float:
    """The log-log slope of time against size: 1 for a linear cost, 2 for a quadratic one."""
    lx, ly = np.log(np.asarray(sizes, float)), np.log(np.asarray(times, float))
    return float(np.polyfit(lx, ly, 1)[0])
