"""The ratio benchmark's torch-only suites (``poolspec.bench``): ordinary CNN shapes, global max pools, tiny
calls, and grid_sample with its gradients and explicit backward, each against torch's own op in the same run.

>>> import torch
>>> from poolspec.bench_cases import GRID_SAMPLE
>>> from poolspec.bench_torch import grid_for
>>> tuple(grid_for(torch, GRID_SAMPLE[-1]).shape)
(1, 4, 4, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .bench_cases import BenchCase
from .bench_timing import geomean, paired_times, per_call, torch_calls
from .registry import op as record

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


def grid_sample_rows(cases: Sequence[BenchCase], repeat: int, tiny_calls: int = 300) -> list[dict[str, Any]]:
    """The grid_sample cases, poolspec against torch.nn.functional.grid_sample in the same run (2 threads,
    medians of interleaved calls; the tiny calls 1 thread, best per-call time of batches)."""
    import torch

    rows = []
    threads = torch.get_num_threads()
    for case in cases:
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
                times[f"{key}_mine"], times[f"{key}_peer"] = per_call(mine, tiny_calls), per_call(peer, tiny_calls)
            else:
                times[f"{key}_mine"], times[f"{key}_peer"] = paired_times(mine, peer, repeat)
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


def grid_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The geometric mean and the worst of each of the grid_sample rows' four ratios."""
    out = {}
    for key in ("ratio_fwd", "ratio_fwd_bwd", "ratio_dx", "ratio_backward_fn"):
        vals = [r[key] for r in rows]
        out[f"grid_sample_geomean_{key}"] = geomean(vals)
        out[f"grid_sample_max_{key}"] = max(vals)
    return out


def extra_rows(suites: dict[str, Sequence[BenchCase]], repeat: int,
               tiny_calls: int = 300) -> dict[str, list[dict[str, Any]]]:
    """Per suite, poolspec and torch.nn.functional forward and forward plus backward: the "tiny" suite on 1
    thread in per-call seconds (``per_call``), the others on 2 threads in medians of paired calls."""
    import torch

    import poolspec

    out: dict[str, list[dict[str, Any]]] = {suite: [] for suite in suites}
    threads = torch.get_num_threads()
    for suite, cases in suites.items():
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
            (fwd_mine, bwd_mine), (fwd_peer, bwd_peer) = (torch_calls(torch, f, x, gy, **case.args)
                                                          for f in (mine, peer))
            if suite == "tiny":
                times = [per_call(f, tiny_calls) for f in (fwd_mine, fwd_peer, bwd_mine, bwd_peer)]
            else:
                times = [*paired_times(fwd_mine, fwd_peer, repeat), *paired_times(bwd_mine, bwd_peer, repeat)]
            row = {"case": case.key, "fwd_mine": times[0], "fwd_peer": times[1], "bwd_mine": times[2],
                   "bwd_peer": times[3], "ratio_fwd": times[0] / times[1], "ratio_fwd_bwd": times[2] / times[3]}
            out[suite].append(row)
            unit, scale = ("us", 1e6) if suite == "tiny" else ("ms", 1e3)
            print(f"torch  {suite:<10} {case.key:<36} fwd {times[0] * scale:8.2f} {unit} vs {times[1] * scale:7.2f} "
                  f"{unit} ratio {row['ratio_fwd']:6.2f}   fwd+bwd {times[2] * scale:8.2f} {unit} vs "
                  f"{times[3] * scale:7.2f} {unit} ratio {row['ratio_fwd_bwd']:6.2f}", flush=True)
    torch.set_num_threads(threads)
    return out
