"""Host time of tiny calls, where the work is nothing and the overhead everything: poolspec against torch's own
op on torch CPU (one thread), forward and forward+backward, interleaved medians; and where poolspec's time goes
(torch's profiler: the share spent inside aten operations, the rest being Python around them - resolving the
call, plans, autograd binding).

    python benchmarks/host_time.py
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

import poolspec

CASES: list[tuple[str, tuple[int, ...], dict[str, Any]]] = [
    ("max_pool2d", (1, 1, 4, 4), {"kernel_size": 2}),
    ("avg_pool2d", (1, 1, 4, 4), {"kernel_size": 2}),
    ("adaptive_max_pool2d", (1, 8, 5, 5), {"output_size": 2}),
    ("adaptive_avg_pool2d", (1, 8, 5, 5), {"output_size": 2}),
    ("interpolate", (1, 1, 4, 4), {"scale_factor": 2, "mode": "bilinear"}),
    ("interpolate", (1, 1, 4, 4), {"scale_factor": 2, "mode": "nearest"}),
    ("interpolate", (1, 1, 4, 4), {"scale_factor": 2, "mode": "bicubic"}),
    ("interpolate", (1, 1, 8, 8), {"scale_factor": 0.5, "mode": "bilinear", "antialias": True}),
    ("max_pool1d", (1, 2, 8), {"kernel_size": 3, "stride": 2}),
    ("avg_pool3d", (1, 1, 4, 4, 4), {"kernel_size": 2}),
    ("max_pool3d", (1, 1, 4, 4, 4), {"kernel_size": 2}),
    ("lp_pool2d", (1, 1, 4, 4), {"norm_type": 2.0, "kernel_size": 2}),
    ("adaptive_max_pool3d", (1, 2, 4, 4, 4), {"output_size": 1}),
]


def _median(fn: Any, n: int = 301) -> float:
    for _ in range(30):
        fn()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[n // 2] * 1e6


def _calls(lib: Any, op: str, x: torch.Tensor, args: dict[str, Any]) -> tuple[Any, Any]:
    fn = getattr(lib, op)

    def forward() -> Any:
        return fn(x, **args)

    def both() -> Any:
        t = x.detach().requires_grad_(True)
        y = fn(t, **args)
        y = y[0] if isinstance(y, tuple) else y
        return torch.autograd.grad(y, t, torch.ones_like(y))

    return forward, both


def _aten_share(fn: Any) -> float:
    """The share of ``fn``'s time spent inside aten operations (self time of the aten:: events)."""
    from torch.profiler import profile

    for _ in range(30):
        fn()
    with profile() as prof:
        start = time.perf_counter()
        for _ in range(200):
            fn()
        total = time.perf_counter() - start
    aten = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key.startswith("aten::")) / 1e6
    return min(1.0, aten / total)


def main() -> None:
    torch.set_num_threads(1)
    print("| call | forward: poolspec / torch (us) | x | fwd+bwd: poolspec / torch (us) | x | in aten ops |")
    print("|---|---|---|---|---|---|")
    ratios_f, ratios_b = [], []
    for op, shape, args in CASES:
        x = torch.randn(shape)
        pf, pb = _calls(poolspec, op, x, args)
        nf, nb = _calls(torch.nn.functional, op, x, args)
        # interleaved: each pair measured back to back, twice, the lower median kept
        tf = [(_median(pf), _median(nf)) for _ in range(2)]
        tb = [(_median(pb), _median(nb)) for _ in range(2)]
        (f1, f2), (b1, b2) = min(tf), min(tb)
        ratios_f.append(f1 / f2)
        ratios_b.append(b1 / b2)
        label = f"{op} {'x'.join(map(str, shape))} " + ", ".join(f"{k}={v}" for k, v in args.items())
        print(f"| {label} | {f1:.1f} / {f2:.1f} | {f1 / f2:.1f} | {b1:.1f} / {b2:.1f} | {b1 / b2:.1f} | "
              f"{_aten_share(pb):.0%} |")
    geo = [math.exp(sum(map(math.log, r)) / len(r)) for r in (ratios_f, ratios_b)]
    print(f"\ngeometric mean: forward {geo[0]:.1f}x, forward+backward {geo[1]:.1f}x native "
          f"(torch {torch.__version__}, one thread)")


if __name__ == "__main__":
    main()
