"""The ratio benchmark: poolspec against the kernel a user would call instead, in the same run.

    python benchmarks/run.py [--backends torch,jax,numpy,torch-compile] [--repeat N] [--json FILE] [--plot FILE]
                             [--quick]
    poolspec bench ...                        (the same)

Per case (float32) and backend: the median time of poolspec and of the native peer, forward and forward plus
backward, and their ratio; then the geometric mean of the ratios per backend. Peers: torch.nn.functional on
torch (and, with ``--backends torch-compile``, both under torch.compile); jax.lax.reduce_window / jnp /
jax.image.resize under jax.jit on JAX; on NumPy the ONNX reference
evaluator (onnx.reference) for the pooling cases it has, and scikit-image's block_reduce where the semantics
coincide. Also measured: NumPy's peak allocation per call (tracemalloc) against input + output bytes, and the
log-log slope of time against size for cases 1, 8 and 11. On torch also: ordinary CNN shapes, global max pools,
tiny calls, and grid_sample (bilinear, zeros and border padding, against torch.nn.functional.grid_sample:
forward, forward plus both gradients, the input gradient's backward pass alone, and the explicit backward
function against aten's). With ``--memory``: the memory suite (``poolspec.memory``), peak memory beside time
for adversarial calls of every family, torch's peak and time for the same calls beside them. Numbers only:
nothing here asserts a speed.

    python benchmarks/run.py --grid-sample-only [--json FILE]     (the grid_sample suite alone)
    python benchmarks/run.py --memory-only [--json FILE]          (the memory suite alone)
    python benchmarks/run.py --device cuda [--json FILE]          (the device suite: poolspec.device_bench)
    python benchmarks/run.py --models [--json FILE]               (three small models: poolspec.bench_models)

The cases are in ``poolspec.bench_cases``, the runners and the families' peers in ``poolspec.bench_runners``, the
torch-only suites in ``poolspec.bench_torch``, the timing in ``poolspec.bench_timing``; this module runs them and
reads its case tables (``CASES``, ``ORDINARY``, ...) at call time, so a test may swap in smaller ones.

>>> from poolspec import bench
>>> sorted(bench.RUNNERS)
['jax', 'numpy', 'torch', 'torch-compile']
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import platform
import statistics
from typing import Any

import numpy as np

from . import bench_torch
from .bench_cases import CASES, GLOBAL_MAX, GRID_SAMPLE, ORDINARY, SCALE_CASES, TINY, BenchCase, scaled
from .bench_runners import (
    RUNNERS,
    JaxRunner,
    NumpyRunner,
    Peers,
    TorchCompileRunner,
    TorchRunner,
    forward_time,
    peers,
    reduce_window_args,
)
from .bench_timing import geomean
from .bench_timing import slope as _slope
from .bench_torch import grid_for

__all__ = ["CASES", "GLOBAL_MAX", "GRID_SAMPLE", "ORDINARY", "RUNNERS", "SCALE_CASES", "TINY", "BenchCase",
           "JaxRunner", "NumpyRunner", "Peers", "TorchCompileRunner", "TorchRunner", "environment", "forward_time",
           "grid_for", "grid_sample_suite", "memory_suite", "peers", "plot", "reduce_window_args", "run",
           "torch_extras"]


def grid_sample_suite(repeat: int, tiny_calls: int = 300) -> list[dict[str, Any]]:
    """The GRID_SAMPLE cases, poolspec against torch.nn.functional.grid_sample in the same run (2 threads,
    medians of interleaved calls; the tiny calls 1 thread, best per-call time of batches)."""
    return bench_torch.grid_sample_rows(GRID_SAMPLE, repeat, tiny_calls)


def torch_extras(repeat: int, tiny_calls: int = 300) -> dict[str, list[dict[str, Any]]]:
    """The ordinary-shape and global-max cases (2 threads, medians) and the tiny-call suite (1 thread,
    per-call seconds), poolspec and torch.nn.functional forward and forward plus backward."""
    return bench_torch.extra_rows({"ordinary": ORDINARY, "global_max": GLOBAL_MAX, "tiny": TINY}, repeat, tiny_calls)


def environment() -> dict[str, Any]:
    """The versions and the machine a result was measured with (the report's ``environment``)."""
    import poolspec

    env: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "cpus": os.cpu_count(), "poolspec": poolspec.__version__, "numpy": np.__version__}
    for name in ("torch", "jax", "onnx", "skimage"):
        if importlib.util.find_spec(name):
            env[name] = importlib.import_module(name).__version__
    if "torch" in env:
        env["torch_threads"] = importlib.import_module("torch").get_num_threads()
    return env


def run(backends: list[str], repeat: int = 11, quick: bool = False, scale: bool = True,
        cases: bool = True, grid_only: bool = False) -> dict[str, Any]:
    """The report: per backend its case rows and summary, on torch (unless ``quick``) the extra suites, and the
    scale sweep; ``grid_only``: the grid_sample suite alone (torch)."""
    results: dict[str, Any] = {"environment": environment(), "cases": [], "scale": {}, "summary": {}}
    if grid_only:
        results["grid_sample"] = rows = grid_sample_suite(repeat)
        results["summary"]["torch"] = summary = bench_torch.grid_summary(rows)
        print("torch grid_sample: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items()), flush=True)
        return results
    chosen = [] if not cases else CASES[:3] if quick else CASES
    for name in backends:
        results["cases"].extend(_case_rows(name, chosen, repeat))
        results["summary"][name] = summary = _summary([r for r in results["cases"] if r["backend"] == name])
        print(f"{name}: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items()), flush=True)
        if name == "torch" and not quick and cases:
            results.update(_torch_suites(summary, repeat))
        if scale and not quick and name in ("torch", "jax", "numpy"):
            results["scale"].update(_scale_sweep(name, repeat))
    return results


def _case_rows(name: str, chosen: list[BenchCase], repeat: int) -> list[dict[str, Any]]:
    """Backend ``name``'s row per case: the times and their ratios, each printed as it is measured."""
    runner = RUNNERS[name]()
    rows = []
    for case in chosen:
        peer = runner.peer(case)[0] if hasattr(runner, "peer") else "onnx.reference / skimage"
        t = runner.timings(case, repeat)
        row = {"backend": name, "case": case.key, "peer": peer, **t}
        if "fwd_peer" in t:
            row["ratio_fwd"] = t["fwd_mine"] / t["fwd_peer"]
            row["ratio_fwd_bwd"] = t["bwd_mine"] / t["bwd_peer"]
        if "fwd_onnx" in t:
            row["speedup_vs_onnx"] = t["fwd_onnx"] / t["fwd_mine"]
        if "fwd_skimage" in t:
            row["ratio_vs_skimage"] = t["fwd_mine"] / t["fwd_skimage"]
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """One backend's rows in a few numbers: the ratios' geometric mean and worst, NumPy's ONNX speed-up and
    memory ratio, torch.compile's median compile times."""
    summary = {}
    for key in ("ratio_fwd", "ratio_fwd_bwd"):
        vals = [r[key] for r in rows if key in r]
        if vals:
            summary[f"geomean_{key}"] = geomean(vals)
            summary[f"max_{key}"] = max(vals)
    if any("speedup_vs_onnx" in r for r in rows):
        summary["min_speedup_vs_onnx"] = min(r["speedup_vs_onnx"] for r in rows if "speedup_vs_onnx" in r)
    if any("memory_ratio_fwd" in r for r in rows):
        summary["max_memory_ratio"] = max(max(r["memory_ratio_fwd"], r["memory_ratio_bwd"]) for r in rows)
    if any("compile_mine" in r for r in rows):
        summary["median_compile_s_mine"] = statistics.median(r["compile_mine"] for r in rows)
        summary["median_compile_s_peer"] = statistics.median(r["compile_peer"] for r in rows)
    return summary


def _torch_suites(summary: dict[str, float], repeat: int) -> dict[str, Any]:
    """The extra torch suites and grid_sample, their figures added to torch's ``summary``."""
    extras: dict[str, Any] = dict(torch_extras(repeat))
    for suite, rows in extras.items():
        for key in ("ratio_fwd", "ratio_fwd_bwd"):
            summary[f"{suite}_geomean_{key}"] = geomean([r[key] for r in rows])
            summary[f"{suite}_max_{key}"] = max(r[key] for r in rows)
            summary[f"{suite}_min_{key}"] = min(r[key] for r in rows)
    print("torch extras: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items() if "_" in k
                                       and k.split("_")[0] in ("tiny", "global", "ordinary")), flush=True)
    extras["grid_sample"] = grid_rows = grid_sample_suite(repeat)
    grid_summary = bench_torch.grid_summary(grid_rows)
    summary.update(grid_summary)
    print("torch grid_sample: " + ", ".join(f"{k} = {v:.3g}" for k, v in grid_summary.items()), flush=True)
    return extras


def _scale_sweep(name: str, repeat: int) -> dict[str, dict[str, Any]]:
    """Per SCALE_CASES entry, the forward time against the elements and its log-log slope, the native peer's
    beside it where the backend has one."""
    out: dict[str, dict[str, Any]] = {}
    for key, shapes in SCALE_CASES.items():
        case = next(c for c in CASES if c.key.startswith(key + " "))
        times = [forward_time(name, scaled(case, s), max(2 * repeat, 11)) for s in shapes]
        sizes = [math.prod(s) for s in shapes]
        mine = [t[0] for t in times]
        row: dict[str, Any] = {"elements": sizes, "seconds": mine, "slope": _slope(sizes, mine)}
        line = f"{name} case {key}: time vs elements slope {row['slope']:.3f} " \
               f"({', '.join(f'{t * 1e3:.2f} ms' for t in mine)})"
        if times[0][1] is not None:
            peer = [p for _, p in times if p is not None]  # a backend has a peer at every size or none
            row.update(peer_seconds=peer, peer_slope=_slope(sizes, peer))
            line += f"; native peer {row['peer_slope']:.3f} ({', '.join(f'{t * 1e3:.2f} ms' for t in peer)})"
        out[f"{name} case {key}"] = row
        print(line, flush=True)
    return out


def memory_suite(torch: bool, repeat: int = 3, keys: list[str] | None = None) -> list[dict[str, Any]]:
    """poolspec's peak (NumPy, tracemalloc) and times on the memory suite's adversarial calls, each in a process
    of its own; with ``torch``, torch's own op and poolspec on torch tensors (peak RSS above the inputs)."""
    from . import memory

    rows = []
    for key in keys or [c.key for c in memory.CASES]:
        for backend in ("numpy",) + (("poolspec-torch", "poolspec-autograd", "torch") if torch else ()):
            rows.append(memory.measure(key, backend, repeat))
    print(memory.table(rows), flush=True)
    return rows


def _line(row: dict[str, Any]) -> str:
    parts = [f"{row['backend']:<6} {row['case']:<34}"]
    if "ratio_fwd" in row:
        parts.append(f"fwd {row['fwd_mine'] * 1e3:8.2f} ms vs {row['fwd_peer'] * 1e3:8.2f} ms  "
                     f"ratio {row['ratio_fwd']:5.2f}   fwd+bwd {row['bwd_mine'] * 1e3:8.2f} ms vs "
                     f"{row['bwd_peer'] * 1e3:8.2f} ms  ratio {row['ratio_fwd_bwd']:5.2f}")
    else:
        parts.append(f"fwd {row['fwd_mine'] * 1e3:8.2f} ms  bwd {row['bwd_mine'] * 1e3:8.2f} ms")
        if "speedup_vs_onnx" in row:
            parts.append(f"onnx.reference {row['fwd_onnx'] * 1e3:9.1f} ms ({row['speedup_vs_onnx']:.0f}x faster)")
        if "ratio_vs_skimage" in row:
            parts.append(f"skimage {row['fwd_skimage'] * 1e3:7.2f} ms (ratio {row['ratio_vs_skimage']:.2f})")
        parts.append(f"peak/(in+out) {max(row['memory_ratio_fwd'], row['memory_ratio_bwd']):.2f}")
    return "  ".join(parts)


def plot(results: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["cases"] if "ratio_fwd" in r]
    backends = sorted({r["backend"] for r in rows})
    cases = [c.key for c in CASES if any(r["case"] == c.key for r in rows)]
    sweep = results.get("scale") or {}
    fig, axes = plt.subplots(1, 2 if sweep else 1, figsize=(18 if sweep else 12, 5), squeeze=False,
                             gridspec_kw={"width_ratios": [2, 1] if sweep else [1]})
    ax = axes[0][0]
    width = 0.8 / (2 * max(1, len(backends)))
    for b_i, b in enumerate(backends):
        for k_i, key in enumerate(("ratio_fwd", "ratio_fwd_bwd")):
            vals = [next((r[key] for r in rows if r["backend"] == b and r["case"] == c), np.nan) for c in cases]
            offset = (2 * b_i + k_i) * width
            ax.bar(np.arange(len(cases)) + offset, vals, width, label=f"{b} {'fwd' if k_i == 0 else 'fwd+bwd'}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.5, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xticks(np.arange(len(cases)) + 0.4 - width / 2)
    ax.set_xticklabels([c.split(" ")[0] for c in cases])
    ax.set_ylabel("poolspec time / native time")
    ax.set_title("poolspec vs native kernels (float32; lower is faster)")
    ax.legend()
    if sweep:  # time against elements, log-log: poolspec solid, the native peer dashed at the same sizes
        sx = axes[0][1]
        for i, (name, row) in enumerate(sorted(sweep.items())):
            color = f"C{i}"
            sx.loglog(row["elements"], row["seconds"], "o-", color=color,
                      label=f"{name} (slope {row['slope']:.2f})")
            if "peer_seconds" in row:
                sx.loglog(row["elements"], row["peer_seconds"], "x--", color=color,
                          label=f"  native peer (slope {row['peer_slope']:.2f})")
        sx.set_xlabel("elements")
        sx.set_ylabel("forward seconds")
        sx.set_title("time against size")
        sx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
