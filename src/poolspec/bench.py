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
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .registry import op as record


@dataclass(frozen=True)
class BenchCase:
    key: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)


CASES = [
    BenchCase("1 max_pool2d 3x3/2 p1 (ResNet stem)", "max_pool2d", (8, 64, 112, 112),
              dict(kernel_size=3, stride=2, padding=1)),
    BenchCase("2 avg_pool2d 2x2/2", "avg_pool2d", (32, 64, 56, 56), dict(kernel_size=2, stride=2)),
    BenchCase("3 avg_pool2d 3x3/1 p1 excl. pad", "avg_pool2d", (8, 256, 28, 28),
              dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    BenchCase("4 adaptive_avg_pool2d -> 1", "adaptive_avg_pool2d", (32, 512, 7, 7), dict(output_size=1)),
    BenchCase("5 adaptive_avg_pool2d 13 -> 7", "adaptive_avg_pool2d", (8, 256, 13, 13), dict(output_size=7)),
    BenchCase("6 avg_pool3d 2x2x2", "avg_pool3d", (4, 32, 16, 32, 32), dict(kernel_size=2)),
    BenchCase("7 max_pool1d 3/2", "max_pool1d", (32, 128, 1024), dict(kernel_size=3, stride=2)),
    BenchCase("8 bilinear x2", "interpolate", (8, 64, 56, 56), dict(scale_factor=2, mode="bilinear",
                                                                      align_corners=False)),
    BenchCase("9 nearest x2", "interpolate", (8, 64, 56, 56), dict(scale_factor=2, mode="nearest")),
    BenchCase("10 bicubic AA 224 -> 160", "interpolate", (8, 3, 224, 224), dict(size=(160, 160), mode="bicubic",
                                                                               antialias=True)),
    BenchCase("11 bilinear 512 -> 1024", "interpolate", (1, 3, 512, 512), dict(size=(1024, 1024), mode="bilinear",
                                                                              align_corners=False)),
]
# four sizes per case at 1x, 2x, 4x and 16x the elements of the benchmark case (spatial sizes grow). They
# straddle the L3 and glibc's 32 MiB mmap threshold, past which every fresh buffer pays its page faults on
# every call, so the native peer's slope at the same sizes is printed beside poolspec's.
SCALE_CASES = {"1": [(8, 64, 112, 112), (8, 64, 224, 112), (8, 64, 224, 224), (8, 64, 448, 448)],
               "8": [(8, 64, 56, 56), (8, 64, 112, 56), (8, 64, 112, 112), (8, 64, 224, 224)],
               "11": [(1, 3, 512, 512), (1, 3, 1024, 512), (1, 3, 1024, 1024), (1, 3, 2048, 2048)]}


# Where the main cases do not look (issue 16): global and near-global max pools, whose backward must not grow
# with the window, and tiny calls, where the per-call overhead is the whole cost. torch only, in the same run.
GLOBAL_MAX = [
    BenchCase("adaptive_max_pool2d -> 1", "adaptive_max_pool2d", (4, 64, 32, 32), dict(output_size=1)),
    BenchCase("max_pool2d 32 (global)", "max_pool2d", (4, 64, 32, 32), dict(kernel_size=32)),
    BenchCase("adaptive_max_pool3d -> 1", "adaptive_max_pool3d", (2, 32, 8, 16, 16), dict(output_size=1)),
    BenchCase("adaptive_max_pool1d -> 1 (PointNet)", "adaptive_max_pool1d", (16, 128, 256), dict(output_size=1)),
    BenchCase("adaptive_max_pool2d 28 -> 7", "adaptive_max_pool2d", (8, 64, 28, 28), dict(output_size=7)),
]
# Ordinary CNN shapes beyond the main cases, several per family (issue 16): stride-equals-kernel max pools with
# their backward, ragged adaptive windows, downscales with and without align_corners, 1-d and 3-d.
ORDINARY = [
    BenchCase("max_pool2d 2x2/2 (VGG)", "max_pool2d", (8, 128, 56, 56), dict(kernel_size=2)),
    BenchCase("max_pool2d 2x2/2 small", "max_pool2d", (16, 64, 32, 32), dict(kernel_size=2)),
    BenchCase("max_pool2d 3x3/2 ceil (GoogLeNet)", "max_pool2d", (8, 192, 27, 27),
              dict(kernel_size=3, stride=2, ceil_mode=True)),
    BenchCase("max_pool3d 2x2x2", "max_pool3d", (2, 32, 16, 28, 28), dict(kernel_size=2)),
    BenchCase("max_pool1d 2/2", "max_pool1d", (32, 128, 1024), dict(kernel_size=2)),
    BenchCase("avg_pool2d 7x7 (ResNet head)", "avg_pool2d", (16, 512, 7, 7), dict(kernel_size=7)),
    BenchCase("avg_pool1d 4/4", "avg_pool1d", (32, 128, 512), dict(kernel_size=4)),
    BenchCase("avg_pool3d 3x3x3/1 p1", "avg_pool3d", (2, 16, 16, 28, 28), dict(kernel_size=3, stride=1, padding=1)),
    BenchCase("adaptive_avg_pool2d 13 -> 6 (AlexNet)", "adaptive_avg_pool2d", (8, 256, 13, 13), dict(output_size=6)),
    BenchCase("adaptive_avg_pool2d 33 -> 6 (PSP)", "adaptive_avg_pool2d", (4, 256, 33, 33), dict(output_size=6)),
    BenchCase("adaptive_avg_pool1d 100 -> 32", "adaptive_avg_pool1d", (16, 256, 100), dict(output_size=32)),
    BenchCase("adaptive_max_pool2d 14 -> 5", "adaptive_max_pool2d", (8, 128, 14, 14), dict(output_size=5)),
    BenchCase("lp_pool2d p2 3x3/2", "lp_pool2d", (8, 64, 56, 56), dict(norm_type=2, kernel_size=3, stride=2)),
    BenchCase("bilinear 64 -> 45 align_corners", "interpolate", (8, 64, 64, 64),
              dict(size=(45, 45), mode="bilinear", align_corners=True)),
    BenchCase("bilinear x2 align_corners (FPN)", "interpolate", (4, 256, 32, 32),
              dict(scale_factor=2, mode="bilinear", align_corners=True)),
    BenchCase("nearest x0.5", "interpolate", (8, 64, 64, 64), dict(scale_factor=0.5, mode="nearest")),
    BenchCase("bicubic x2", "interpolate", (4, 3, 128, 128), dict(scale_factor=2, mode="bicubic")),
    BenchCase("trilinear x2", "interpolate", (2, 16, 16, 16, 16), dict(scale_factor=2, mode="trilinear")),
    BenchCase("area 64 -> 24", "interpolate", (8, 64, 64, 64), dict(size=(24, 24), mode="area")),
]
TINY = [
    BenchCase("max_pool2d 1x1x4x4 k2", "max_pool2d", (1, 1, 4, 4), dict(kernel_size=2)),
    BenchCase("avg_pool2d 1x1x4x4 k2", "avg_pool2d", (1, 1, 4, 4), dict(kernel_size=2)),
    BenchCase("bilinear 1x1x4x4 x2", "interpolate", (1, 1, 4, 4), dict(scale_factor=2, mode="bilinear")),
    BenchCase("adaptive_avg_pool2d 1x8x7x7 -> 1", "adaptive_avg_pool2d", (1, 8, 7, 7), dict(output_size=1)),
    BenchCase("adaptive_max_pool2d 1x8x7x7 -> 1", "adaptive_max_pool2d", (1, 8, 7, 7), dict(output_size=1)),
    BenchCase("lp_pool2d 1x1x4x4 p2 k2", "lp_pool2d", (1, 1, 4, 4), dict(norm_type=2, kernel_size=2)),
    BenchCase("max_pool1d 1x4x8 k2", "max_pool1d", (1, 4, 8), dict(kernel_size=2)),
    BenchCase("avg_pool3d 1x1x4x4x4 k2", "avg_pool3d", (1, 1, 4, 4, 4), dict(kernel_size=2)),
    BenchCase("max_unpool2d 1x1x2x2 k2", "max_unpool2d", (1, 1, 4, 4), dict(kernel_size=2)),
]


# grid_sample (2-d bilinear, align_corners=False), torch only: an image warped by a small random rotation and
# scale (affine_grid), by a flow field (identity plus a random displacement of about 1.6 pixels), and one tiny
# call. Per case: the forward, the forward plus the gradients w.r.t. x and the grid, the backward pass of the
# input gradient alone (the deterministic sort-and-sum against torch's serial CPU kernel), and the explicit
# backward function (both gradients) against aten's grid_sampler_2d_backward.
GRID_SAMPLE = [
    BenchCase("grid_sample affine zeros", "grid_sample", (8, 32, 64, 64), dict(grid="affine", padding_mode="zeros")),
    BenchCase("grid_sample affine border", "grid_sample", (8, 32, 64, 64), dict(grid="affine", padding_mode="border")),
    BenchCase("grid_sample flow zeros", "grid_sample", (8, 32, 64, 64), dict(grid="flow", padding_mode="zeros")),
    BenchCase("grid_sample flow border", "grid_sample", (8, 32, 64, 64), dict(grid="flow", padding_mode="border")),
    BenchCase("grid_sample 1x1x4x4 affine zeros (tiny)", "grid_sample", (1, 1, 4, 4),
              dict(grid="affine", padding_mode="zeros", tiny=True)),
    BenchCase("grid_sample 1x1x4x4 affine border (tiny)", "grid_sample", (1, 1, 4, 4),
              dict(grid="affine", padding_mode="border", tiny=True)),
]
_PADDING_CODES = {"zeros": 0, "border": 1, "reflection": 2}  # aten's grid_sampler padding enum


def grid_for(torch: Any, case: BenchCase, dtype: Any = None) -> Any:
    """The case's sampling grid (N, H, W, 2), seeded: affine_grid of a random rotation within +-0.2 rad,
    scale within 0.9..1.1 and shift within +-0.1, or the identity plus a flow of standard deviation 0.05."""
    N, _, H, W = case.shape
    rng = np.random.default_rng(2)
    angle, scale = rng.uniform(-0.2, 0.2, N), rng.uniform(0.9, 1.1, N)
    theta = np.zeros((N, 2, 3))
    theta[:, 0, 0], theta[:, 0, 1] = scale * np.cos(angle), -scale * np.sin(angle)
    theta[:, 1, 0], theta[:, 1, 1] = scale * np.sin(angle), scale * np.cos(angle)
    theta[:, :, 2] = rng.uniform(-0.1, 0.1, (N, 2))
    if case.args["grid"] == "flow":
        theta = np.broadcast_to(np.eye(2, 3), (N, 2, 3))
    dtype = dtype or torch.float32
    grid = torch.nn.functional.affine_grid(torch.from_numpy(np.ascontiguousarray(theta)).to(dtype), (N, 1, H, W),
                                           align_corners=False)
    if case.args["grid"] == "flow":
        grid = grid + torch.from_numpy(0.05 * rng.standard_normal((N, H, W, 2))).to(dtype)
    return grid.contiguous()


def _grid_calls(torch: Any, x: Any, grid: Any, gy: Any, kw: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """Per side (mine, peer): fwd, fwd+bwd (gradients w.r.t. x and grid), dx (the backward pass of the input
    gradient alone, on a retained graph whose grid is no leaf) and fn (the explicit backward functions)."""
    import poolspec

    calls: dict[str, Callable[[], Any]] = {}
    for side, fn in (("mine", poolspec.grid_sample), ("peer", torch.nn.functional.grid_sample)):
        def fwd(fn: Any = fn) -> Any:
            return fn(x, grid, **kw)

        def fwd_bwd(fn: Any = fn) -> Any:
            xr, gr = x.detach().requires_grad_(True), grid.detach().requires_grad_(True)
            return torch.autograd.grad(fn(xr, gr, **kw), (xr, gr), gy)

        xr = x.detach().requires_grad_(True)
        y = fn(xr, grid, **kw)

        def dx(y: Any = y, xr: Any = xr) -> Any:
            return torch.autograd.grad(y, xr, gy, retain_graph=True)[0]

        calls[f"fwd_{side}"], calls[f"bwd_{side}"], calls[f"dx_{side}"] = fwd, fwd_bwd, dx
    code = _PADDING_CODES[kw["padding_mode"]]
    calls["fn_mine"] = lambda: poolspec.grid_sample_backward(gy, x, grid, **kw)
    calls["fn_peer"] = lambda: torch.ops.aten.grid_sampler_2d_backward(gy, x, grid, 0, code, False, [True, True])
    return calls


def grid_sample_suite(repeat: int, tiny_calls: int = 300) -> list[dict[str, Any]]:
    """The GRID_SAMPLE cases, poolspec against torch.nn.functional.grid_sample in the same run (2 threads,
    medians of interleaved calls; the tiny calls 1 thread, best per-call time of batches)."""
    import torch

    rows = []
    threads = torch.get_num_threads()
    for case in GRID_SAMPLE:
        tiny = bool(case.args.get("tiny"))
        torch.set_num_threads(1 if tiny else 2)
        x = torch.from_numpy(np.random.default_rng(1).standard_normal(case.shape).astype(np.float32))
        gy = torch.from_numpy(np.random.default_rng(3).standard_normal(case.shape).astype(np.float32))
        kw = dict(mode="bilinear", padding_mode=case.args["padding_mode"], align_corners=False)
        calls = _grid_calls(torch, x, grid_for(torch, case), gy, kw)
        times = {}
        for key in ("fwd", "bwd", "dx", "fn"):
            mine, peer = calls[f"{key}_mine"], calls[f"{key}_peer"]
            if tiny:
                times[f"{key}_mine"], times[f"{key}_peer"] = _per_call(mine, tiny_calls), _per_call(peer, tiny_calls)
            else:
                times[f"{key}_mine"], times[f"{key}_peer"] = _paired_times(mine, peer, repeat)
        row = {"case": case.key, "shape": list(case.shape), "grid": case.args["grid"], "padding": kw["padding_mode"],
               "tiny": tiny, "dtype": "float32", **times,
               "ratio_fwd": times["fwd_mine"] / times["fwd_peer"],
               "ratio_fwd_bwd": times["bwd_mine"] / times["bwd_peer"],
               "ratio_dx": times["dx_mine"] / times["dx_peer"],
               "ratio_backward_fn": times["fn_mine"] / times["fn_peer"]}
        rows.append(row)
        unit, scale = ("us", 1e6) if tiny else ("ms", 1e3)
        print(f"torch  grid_sample {case.key:<40} fwd {times['fwd_mine'] * scale:8.2f} {unit} vs "
              f"{times['fwd_peer'] * scale:7.2f} {unit} ratio {row['ratio_fwd']:6.2f}   fwd+bwd "
              f"{times['bwd_mine'] * scale:8.2f} vs {times['bwd_peer'] * scale:7.2f} ratio {row['ratio_fwd_bwd']:6.2f}"
              f"   input grad (backward only) {times['dx_mine'] * scale:8.2f} vs {times['dx_peer'] * scale:7.2f} "
              f"ratio {row['ratio_dx']:6.2f}   grid_sample_backward {times['fn_mine'] * scale:8.2f} vs "
              f"{times['fn_peer'] * scale:7.2f} ratio {row['ratio_backward_fn']:6.2f}", flush=True)
    torch.set_num_threads(threads)
    return rows


def _grid_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    for key in ("ratio_fwd", "ratio_fwd_bwd", "ratio_dx", "ratio_backward_fn"):
        vals = [r[key] for r in rows]
        out[f"grid_sample_geomean_{key}"] = math.exp(sum(math.log(v) for v in vals) / len(vals))
        out[f"grid_sample_max_{key}"] = max(vals)
    return out


def _torch_calls(torch: Any, fn: Callable[[Any], Any], x: Any, gy: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``fn`` on ``x`` forward, and forward plus the gradient w.r.t. a fresh leaf for cotangent ``gy``."""

    def fwd_bwd() -> Any:
        xr = x.detach().requires_grad_(True)
        return torch.autograd.grad(fn(xr), xr, gy)[0]

    return (lambda: fn(x)), fwd_bwd


def _per_call(fn: Callable[[], Any], calls: int) -> float:
    """Best of five batches of ``calls`` calls, per call: the steady per-call cost, timer overhead amortised."""
    fn()
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def torch_extras(repeat: int, tiny_calls: int = 300) -> dict[str, list[dict[str, Any]]]:
    """The ordinary-shape and global-max cases (2 threads, medians) and the tiny-call suite (1 thread,
    per-call seconds), poolspec and torch.nn.functional forward and forward plus backward."""
    import torch

    import poolspec

    out: dict[str, list[dict[str, Any]]] = {"ordinary": [], "global_max": [], "tiny": []}
    threads = torch.get_num_threads()
    for suite, cases in (("ordinary", ORDINARY), ("global_max", GLOBAL_MAX), ("tiny", TINY)):
        torch.set_num_threads(1 if suite == "tiny" else 2)
        for case in cases:
            x = torch.from_numpy(np.random.default_rng(1).standard_normal(case.shape).astype(np.float32))
            if record(case.op).takes_indices:  # unpool the values and indices of a max pool of x
                pool = getattr(torch.nn.functional, f"max_pool{record(case.op).fixed_rank}d")
                x, idx = pool(x, 2, return_indices=True)
                ours, theirs = getattr(poolspec, case.op), getattr(torch.nn.functional, case.op)
                mine = lambda t, i=idx, f=ours, **a: f(t, i, **a)  # noqa: E731
                peer = lambda t, i=idx, f=theirs, **a: f(t, i, **a)  # noqa: E731
            else:
                mine, peer = getattr(poolspec, case.op), getattr(torch.nn.functional, case.op)
            gy = torch.ones_like(peer(x, **case.args))
            (fwd_mine, bwd_mine), (fwd_peer, bwd_peer) = (
                _torch_calls(torch, functools.partial(f, **case.args), x, gy) for f in (mine, peer))
            if suite == "tiny":
                times = [_per_call(f, tiny_calls) for f in (fwd_mine, fwd_peer, bwd_mine, bwd_peer)]
            else:
                times = [*_paired_times(fwd_mine, fwd_peer, repeat), *_paired_times(bwd_mine, bwd_peer, repeat)]
            row = {"case": case.key, "fwd_mine": times[0], "fwd_peer": times[1], "bwd_mine": times[2],
                   "bwd_peer": times[3], "ratio_fwd": times[0] / times[1], "ratio_fwd_bwd": times[2] / times[3]}
            out[suite].append(row)
            unit, scale = ("us", 1e6) if suite == "tiny" else ("ms", 1e3)
            print(f"torch  {suite:<10} {case.key:<36} fwd {times[0] * scale:8.2f} {unit} vs {times[1] * scale:7.2f} "
                  f"{unit} ratio {row['ratio_fwd']:6.2f}   fwd+bwd {times[2] * scale:8.2f} {unit} vs "
                  f"{times[3] * scale:7.2f} {unit} ratio {row['ratio_fwd_bwd']:6.2f}", flush=True)
    torch.set_num_threads(threads)
    return out


def forward_time(name: str, case: BenchCase, repeat: int) -> tuple[float, float | None]:
    """Median times of poolspec's forward alone and of the native peer's (None on NumPy, whose reference
    evaluator would take minutes at these sizes) on one backend: the scale sweep."""
    import poolspec

    fn = getattr(poolspec, case.op)
    x = np.random.default_rng(1).standard_normal(case.shape).astype(np.float32)
    if name == "torch":
        import torch

        t = torch.from_numpy(x)
        peer = TorchRunner().peer(case)[1]
        return _paired_times(lambda: fn(t, **case.args), lambda: peer(t), repeat, 10.0)
    if name == "jax":
        import jax

        a = jax.numpy.asarray(x)
        f, g = jax.jit(lambda a: fn(a, **case.args)), jax.jit(JaxRunner().peer(case)[1])
        return _paired_times(lambda: f(a).block_until_ready(), lambda: g(a).block_until_ready(), repeat, 10.0)
    return _median_time(lambda: fn(x, **case.args), repeat, 5.0), None


def _median_time(fn: Callable[[], Any], repeat: int, budget: float = 2.0) -> float:
    """Median wall time of ``fn`` after one warm-up call (compilation, caches), at most ``budget`` seconds."""
    return _median_times((fn,), repeat, budget)[0]


def _paired_times(mine: Callable[[], Any], peer: Callable[[], Any], repeat: int,
                  budget: float = 4.0) -> tuple[float, float]:
    """Median times of two functions measured alternately, so that a slow spell of the machine falls on
    both rather than on one side of the ratio."""
    a, b = _median_times((mine, peer), repeat, budget)
    return a, b


def _median_times(fns: tuple[Callable[[], Any], ...], repeat: int, budget: float) -> list[float]:
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


def _scaled(case: BenchCase, shape: tuple[int, ...]) -> BenchCase:
    args = dict(case.args)
    if "size" in args:  # a resize to twice the input's size
        args["size"] = tuple(2 * s for s in shape[2:])
    return BenchCase(case.key, case.op, shape, args)


# ---------------------------------------------------------------------------------------------------- torch

class TorchRunner:
    name = "torch"

    def __init__(self) -> None:
        self.torch = importlib.import_module("torch")
        self.torch.set_num_threads(2)
        self.F = self.torch.nn.functional

    def peer(self, case: BenchCase) -> tuple[str, Callable[..., Any]]:
        fn = getattr(self.F, case.op)
        return f"torch.nn.functional.{case.op}", lambda x: fn(x, **case.args)

    def prepare(self, case: BenchCase) -> tuple[Any, Any]:
        g = np.random.default_rng(1)
        x = self.torch.from_numpy(g.standard_normal(case.shape).astype(np.float32))
        return x, None

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        torch = self.torch
        x, _ = self.prepare(case)
        _, peer = self.peer(case)
        mine = getattr(poolspec, case.op)
        args = case.args
        gy = torch.ones_like(peer(x))
        fwd_m, bwd_m = _torch_calls(torch, lambda t: mine(t, **args), x, gy)
        fwd_p, bwd_p = _torch_calls(torch, peer, x, gy)
        fwd_mine, fwd_peer = _paired_times(fwd_m, fwd_p, repeat)
        bwd_mine, bwd_peer = _paired_times(bwd_m, bwd_p, repeat)
        return {"fwd_mine": fwd_mine, "fwd_peer": fwd_peer, "bwd_mine": bwd_mine, "bwd_peer": bwd_peer}


class TorchCompileRunner(TorchRunner):
    """Both sides under ``torch.compile(fullgraph=True)`` (inductor), compiled once per case and direction
    before timing; the compile times are reported too. poolspec's op is one opaque node per call there
    (autodiff/torch_graph.py), so this measures its kernels plus the node's dispatch, against inductor's
    generated code for the native op."""

    name = "torch-compile"

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        torch = self.torch
        x, _ = self.prepare(case)
        native = getattr(self.F, case.op)
        mine = getattr(poolspec, case.op)
        args = case.args
        gy = torch.ones_like(native(x, **args))
        out: dict[str, float] = {}

        def build(fn: Callable[..., Any], label: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
            torch._dynamo.reset()
            calls = _torch_calls(torch, torch.compile(lambda t: fn(t, **args), fullgraph=True), x, gy)
            start = time.perf_counter()
            for call in calls:  # compiles the forward and the backward graphs
                call()
            out[f"compile_{label}"] = time.perf_counter() - start
            return calls

        fwd_mine, bwd_mine = build(mine, "mine")
        fwd_peer, bwd_peer = build(native, "peer")
        out["fwd_mine"], out["fwd_peer"] = _paired_times(fwd_mine, fwd_peer, repeat)
        out["bwd_mine"], out["bwd_peer"] = _paired_times(bwd_mine, bwd_peer, repeat)
        return out


# ------------------------------------------------------------------------------------------------------ JAX

def reduce_window_args(case: BenchCase) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    a, n = case.args, len(case.shape) - 2
    k, s, p = a["kernel_size"], a.get("stride") or a["kernel_size"], a.get("padding", 0)
    return (1, 1) + (k,) * n, (1, 1) + (s,) * n, ((0, 0), (0, 0)) + ((p, p),) * n


@dataclass(frozen=True)
class Peers:
    """A family's benchmark peers, declared in its folder (``families/<family>/bench.py``'s ``PEERS``): JAX's
    nearest equivalent (jitted beside poolspec on JAX), the ONNX operator the reference evaluator runs on NumPy
    (and whether it takes count_include_pad), and the scikit-image reductions whose semantics coincide."""

    jax: Callable[[Any, BenchCase], tuple[str, Callable[..., Any]]] | None = None
    onnx: tuple[str, bool] | None = None
    global_mean: bool = False  # a mean over the whole plane at output size 1 (GlobalAveragePool, block_reduce)
    block_mean: bool = False  # block_reduce(np.mean) where the windows tile the plane


@functools.cache
def peers(family: str) -> Peers:
    """The peers family ``family`` declares (none where its folder has no ``bench.py``)."""
    name = f"poolspec.families.{family}.bench"
    return importlib.import_module(name).PEERS if importlib.util.find_spec(name) is not None else Peers()


class JaxRunner:
    name = "jax"

    def __init__(self) -> None:
        self.jax = importlib.import_module("jax")
        self.jnp = importlib.import_module("jax.numpy")

    def peer(self, case: BenchCase) -> tuple[str, Callable[..., Any]]:
        make = peers(record(case.op).family).jax
        if make is None:
            raise KeyError(case.op)
        return make(self.jax, case)

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        jax, jnp = self.jax, self.jnp
        x = jnp.asarray(np.random.default_rng(1).standard_normal(case.shape).astype(np.float32))
        _, peer = self.peer(case)
        args = case.args

        def mine(t: Any) -> Any:
            return getattr(poolspec, case.op)(t, **args)

        fwd, bwd = {}, {}
        for tag, fn in (("mine", mine), ("peer", peer)):
            f = jax.jit(fn)
            fwd[tag] = lambda f=f: f(x).block_until_ready()
            gy = jnp.ones(f(x).shape, x.dtype)

            def fwd_bwd(t: Any, cot: Any, fn: Callable[..., Any] = fn) -> Any:
                y, pull = jax.vjp(fn, t)
                return y, pull(cot)[0]

            # the cotangent is an argument: a closed-over constant would let XLA fold a linear backward
            b = jax.jit(fwd_bwd)
            bwd[tag] = lambda b=b, gy=gy: jax.block_until_ready(b(x, gy))
        out = dict(zip(("fwd_mine", "fwd_peer"), _paired_times(fwd["mine"], fwd["peer"], repeat)))
        out.update(zip(("bwd_mine", "bwd_peer"), _paired_times(bwd["mine"], bwd["peer"], repeat)))
        return out


# ---------------------------------------------------------------------------------------------------- NumPy

class NumpyRunner:
    name = "numpy"

    def __init__(self) -> None:
        self.onnx = importlib.import_module("onnx") if importlib.util.find_spec("onnx") else None
        self.skimage = importlib.util.find_spec("skimage") is not None

    def _onnx(self, case: BenchCase) -> Callable[..., Any] | None:
        if self.onnx is None:
            return None
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        a, n, family = case.args, len(case.shape) - 2, record(case.op).family
        onnx = peers(family).onnx
        if onnx is not None:
            k, s, p = a["kernel_size"], a.get("stride") or a["kernel_size"], a.get("padding", 0)
            attrs: dict[str, Any] = dict(kernel_shape=[k] * n, strides=[s] * n, pads=[p] * (2 * n))
            name, counts = onnx
            if counts:
                attrs["count_include_pad"] = int(a.get("count_include_pad", True))
            node = helper.make_node(name, ["x"], ["y"], **attrs)
        elif peers(family).global_mean and a["output_size"] == 1:
            node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
        else:
            return None
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        session = ReferenceEvaluator(model)
        def call(x: Any) -> Any:
            return session.run(None, {"x": x})[0]  # type: ignore[index]  # one output

        return call

    def _block_reduce(self, case: BenchCase) -> Callable[..., Any] | None:
        if not self.skimage:
            return None
        from skimage.measure import block_reduce  # type: ignore[import-not-found]  # optional peer

        a, n, family = case.args, len(case.shape) - 2, record(case.op).family
        tiles = peers(family).block_mean and (a.get("stride") in (None, a["kernel_size"])) and \
            not a.get("padding") and all(L % a["kernel_size"] == 0 for L in case.shape[2:])
        if tiles:
            block = (1, 1) + (a["kernel_size"],) * n
            return lambda x: block_reduce(x, block, np.mean)
        if peers(family).global_mean and a["output_size"] == 1:
            return lambda x: block_reduce(x, (1, 1) + case.shape[2:], np.mean)
        return None

    def timings(self, case: BenchCase, repeat: int) -> dict[str, Any]:
        import poolspec

        x = np.random.default_rng(1).standard_normal(case.shape).astype(np.float32)
        mine = getattr(poolspec, case.op)
        out: dict[str, Any] = {"fwd_mine": _median_time(lambda: mine(x, **case.args), repeat)}
        y = mine(x, **case.args)
        g = np.ones_like(y)
        out["bwd_mine"] = _median_time(lambda: poolspec.__dict__[case.op + "_backward"](g, x, **case.args), repeat)
        onnx_fn = self._onnx(case)
        if onnx_fn is not None:
            out["fwd_onnx"] = _median_time(lambda: onnx_fn(x), 1, budget=0)
            np.testing.assert_allclose(onnx_fn(x), y, rtol=1e-4, atol=1e-5)  # the same op
        block = self._block_reduce(case)
        if block is not None:
            out["fwd_skimage"] = _median_time(lambda: block(x), repeat)
            np.testing.assert_allclose(block(x), y, rtol=1e-4, atol=1e-5)
        tracemalloc.start()
        y = mine(x, **case.args)
        peak_fwd = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        poolspec.__dict__[case.op + "_backward"](g, x, **case.args)
        peak_bwd = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        io = x.nbytes + y.nbytes
        out["memory_ratio_fwd"] = peak_fwd / io
        out["memory_ratio_bwd"] = peak_bwd / io
        return out


RUNNERS: dict[str, Any] = {"torch": TorchRunner, "jax": JaxRunner, "numpy": NumpyRunner,
                           "torch-compile": TorchCompileRunner}


def _slope(sizes: list[int], times: list[float]) -> float:
    lx, ly = np.log(np.asarray(sizes, float)), np.log(np.asarray(times, float))
    return float(np.polyfit(lx, ly, 1)[0])


def environment() -> dict[str, Any]:
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
    results: dict[str, Any] = {"environment": environment(), "cases": [], "scale": {}, "summary": {}}
    if grid_only:  # the grid_sample suite alone (torch)
        results["grid_sample"] = rows = grid_sample_suite(repeat)
        results["summary"]["torch"] = summary = _grid_summary(rows)
        print("torch grid_sample: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items()), flush=True)
        return results
    chosen = [] if not cases else CASES[:3] if quick else CASES
    for name in backends:
        runner = RUNNERS[name]()
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
            results["cases"].append(row)
            print(_line(row), flush=True)
        rows = [r for r in results["cases"] if r["backend"] == name]
        summary = {}
        for key in ("ratio_fwd", "ratio_fwd_bwd"):
            vals = [r[key] for r in rows if key in r]
            if vals:
                summary[f"geomean_{key}"] = math.exp(sum(math.log(v) for v in vals) / len(vals))
                summary[f"max_{key}"] = max(vals)
        if any("speedup_vs_onnx" in r for r in rows):
            summary["min_speedup_vs_onnx"] = min(r["speedup_vs_onnx"] for r in rows if "speedup_vs_onnx" in r)
        if any("memory_ratio_fwd" in r for r in rows):
            summary["max_memory_ratio"] = max(max(r["memory_ratio_fwd"], r["memory_ratio_bwd"]) for r in rows)
        if any("compile_mine" in r for r in rows):
            summary["median_compile_s_mine"] = statistics.median(r["compile_mine"] for r in rows)
            summary["median_compile_s_peer"] = statistics.median(r["compile_peer"] for r in rows)
        results["summary"][name] = summary
        print(f"{name}: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items()), flush=True)
        if name == "torch" and not quick and cases:
            extras = torch_extras(repeat)
            results.update(extras)
            for suite, rows_ in extras.items():
                for key in ("ratio_fwd", "ratio_fwd_bwd"):
                    summary[f"{suite}_geomean_{key}"] = math.exp(
                        sum(math.log(r[key]) for r in rows_) / len(rows_))
                    summary[f"{suite}_max_{key}"] = max(r[key] for r in rows_)
                    summary[f"{suite}_min_{key}"] = min(r[key] for r in rows_)
            print(f"{name} extras: " + ", ".join(f"{k} = {v:.3g}" for k, v in summary.items() if "_" in k
                                                 and k.split("_")[0] in ("tiny", "global", "ordinary")), flush=True)
            results["grid_sample"] = grid_rows = grid_sample_suite(repeat)
            grid_summary = _grid_summary(grid_rows)
            summary.update(grid_summary)
            print(f"{name} grid_sample: " + ", ".join(f"{k} = {v:.3g}" for k, v in grid_summary.items()), flush=True)
        if scale and not quick and name in ("torch", "jax", "numpy"):
            for key, shapes in SCALE_CASES.items():
                case = next(c for c in CASES if c.key.startswith(key + " "))
                times = [forward_time(name, _scaled(case, s), max(2 * repeat, 11)) for s in shapes]
                sizes = [math.prod(s) for s in shapes]
                mine = [t[0] for t in times]
                row = {"elements": sizes, "seconds": mine, "slope": _slope(sizes, mine)}
                line = f"{name} case {key}: time vs elements slope {row['slope']:.3f} " \
                       f"({', '.join(f'{t * 1e3:.2f} ms' for t in mine)})"
                if times[0][1] is not None:
                    peer = [t[1] for t in times]
                    row.update(peer_seconds=peer, peer_slope=_slope(sizes, peer))
                    line += f"; native peer {row['peer_slope']:.3f} ({', '.join(f'{t * 1e3:.2f} ms' for t in peer)})"
                results["scale"][f"{name} case {key}"] = row
                print(line, flush=True)
    return results


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
