"""The GPU check, one prepared script for a machine with an NVIDIA GPU (about 8 minutes):

    python benchmarks/gpu_check.py [--skip-bench]

1. poolspec's conformance suite on torch CUDA, CuPy and JAX GPU (each backend that is importable and sees a GPU);
2. bit-identical repeated backward for every op on torch CUDA (three runs, compared bit for bit);
3. which of torch's native CUDA backward kernels raise under ``torch.use_deterministic_algorithms(True)``,
   and that poolspec's backward for the same call does not;
4. the benchmark suite against torch CUDA (ratios, as ``benchmarks/run.py`` prints them on CPU).

It prints a report and exits 1 if a conformance run fails or a poolspec backward is not bit-identical or raises.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import numpy as np


def _section(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def conformance() -> bool:
    from poolspec.conformance import runner

    ok = True
    for backend, device in (("torch", "cuda"), ("cupy", None), ("jax", "gpu")):
        try:
            report = runner.run(backend, device=device)
        except Exception as e:  # backend missing or no GPU for it
            print(f"{backend}: not run ({type(e).__name__}: {e})")
            continue
        print(f"{backend} ({device or 'default device'}): {'PASS' if report.passed else 'FAIL'} "
              f"in {report.seconds:.0f} s")
        print(report.table())
        ok &= report.passed
    return ok


# (op, input shape, arguments) for the determinism checks: one call per op, sizes where atomics collide
CALLS = [
    ("avg_pool2d", (8, 32, 64, 64), dict(kernel_size=3, stride=1, padding=1)),
    ("adaptive_avg_pool2d", (8, 32, 61, 61), dict(output_size=7)),
    ("max_pool2d", (8, 32, 64, 64), dict(kernel_size=3, stride=2, padding=1)),
    ("adaptive_max_pool2d", (8, 32, 61, 61), dict(output_size=7)),
    ("lp_pool2d", (8, 32, 64, 64), dict(norm_type=2.0, kernel_size=2)),
    ("interpolate", (8, 32, 32, 32), dict(scale_factor=2, mode="bilinear")),
    ("interpolate", (8, 32, 32, 32), dict(scale_factor=2, mode="bicubic")),
    ("interpolate", (8, 32, 64, 64), dict(size=(37, 41), mode="bilinear", antialias=True)),
    ("interpolate", (8, 32, 64, 64), dict(size=(37, 41), mode="area")),
]


def determinism() -> bool:
    import torch

    import poolspec

    ok = True
    F = torch.nn.functional
    for op, shape, args in CALLS:
        x = torch.randn(shape, device="cuda", dtype=torch.float32)
        y = getattr(poolspec, op)(x, **args)
        g = torch.randn_like(y)
        runs = [getattr(poolspec, op + "_backward")(g, x, **args) for _ in range(3)]
        same = all(torch.equal(runs[0], r) for r in runs[1:])
        ok &= same
        torch.use_deterministic_algorithms(True)
        try:
            xr = x.clone().requires_grad_(True)
            torch.autograd.grad(getattr(F, op)(xr, **args), xr, g)
            native = "runs"
        except RuntimeError as e:
            native = f"RAISES ({str(e).splitlines()[0][:70]})"
        try:
            xr = x.clone().requires_grad_(True)
            torch.autograd.grad(getattr(poolspec, op)(xr, **args), xr, g)
            mine = "runs"
        except RuntimeError as e:
            mine, ok = f"RAISES ({e})", False
        finally:
            torch.use_deterministic_algorithms(False)
        print(f"{op:<22}{str(args):<58} poolspec x3 bit-identical: {same}; torch native under "
              f"deterministic mode: {native}; poolspec: {mine}")
    return ok


def bench() -> None:
    import torch

    import poolspec
    from poolspec.bench import CASES

    F = torch.nn.functional

    def median(fn: Any) -> float:
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    def one(case: Any) -> tuple[float, float, float, float]:
        x = torch.randn(case.shape, device="cuda")
        mine, peer = getattr(poolspec, case.op), getattr(F, case.op)
        gy = torch.ones_like(peer(x, **case.args))

        def fb(fn: Any) -> Any:
            xr = x.detach().requires_grad_(True)
            return torch.autograd.grad(fn(xr, **case.args), xr, gy)

        return (median(lambda: mine(x, **case.args)), median(lambda: peer(x, **case.args)),
                median(lambda: fb(mine)), median(lambda: fb(peer)))

    ratios = []
    for case in CASES:
        t = one(case)
        ratios.append((t[0] / t[1], t[2] / t[3]))
        print(f"{case.key:<36} fwd {t[0] * 1e3:7.3f} ms vs {t[1] * 1e3:7.3f} ms ({t[0] / t[1]:5.2f})  "
              f"fwd+bwd {t[2] * 1e3:7.3f} ms vs {t[3] * 1e3:7.3f} ms ({t[2] / t[3]:5.2f})", flush=True)
    geo = np.exp(np.log(np.asarray(ratios)).mean(axis=0))
    print(f"geometric mean: forward {geo[0]:.2f}, forward+backward {geo[1]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-bench", action="store_true")
    a = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 1
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    _section("conformance on the GPU backends")
    ok = conformance()
    _section("determinism of the backward passes")
    ok &= determinism()
    if not a.skip_bench:
        _section("benchmark against torch CUDA")
        bench()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
