"""Peak memory of adversarial but legal calls: every op's forward and backward stays within a fixed multiple
of the arrays it is handed and gives back.

    python -m poolspec.memory [--cases KEY;...] [--torch] [--repeat N] [--json FILE]

Each case is one call per family that a table-per-(output, tap) or per-(input, covering window) formulation
would blow up: large and dilated windows, global windows on large planes, stride-1 large windows, dense
sampling grids, large fractional windows, extreme up- and down-sampling. A case runs in a process of its own
(so no earlier call's caches or heap count) under an address-space limit (so a regression raises MemoryError
instead of meeting the OOM killer): inputs are made, then, with ``tracemalloc`` tracing every NumPy
allocation, the forward and the explicit backward run once, cold (plans built inside the measurement). The
peak must stay within ``LIMIT_FACTOR`` x (input + output + other array ports) + ``LIMIT_SLACK``: the arrays
the forward takes and returns (x, grid, indices, samples, values, winners), their gradients and the
cotangent are all counted inside the peak. ``--torch`` adds torch's own op on the same call (its peak resident
set above the inputs, forward and autograd backward, where Linux can reset the high-water mark) and poolspec
on torch tensors (explicit forward and backward, and through torch autograd), for comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .registry import op as record

# the bound every case must keep: peak <= LIMIT_FACTOR * (input + output + other array ports) + LIMIT_SLACK
LIMIT_FACTOR = 8
LIMIT_SLACK = 32 << 20
# address space a case's process may take (a table of output x input cells asks for far more)
ADDRESS_LIMIT = 6 << 30


@dataclass(frozen=True)
class MemoryCase:
    key: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    ports: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)  # other array inputs' shapes
    dtype: str = "float32"
    flags: tuple[str, ...] = ()  # the catalogue's flags that steer a family's input synthesis (roi_align's boxes)


def _maxpool(key: str, n: int, shape: tuple[int, ...], **args: Any) -> MemoryCase:
    return MemoryCase(key, f"max_pool{n}d", shape, args)


CASES = [
    # max_pool: dilated and large windows (the covering-window tables grow with output x input), global and
    # stride-1 windows
    _maxpool("max_pool2d k(60,80) s10 p(10,20) d10", 2, (1, 1, 1000, 1000), kernel_size=(60, 80), stride=10,
             padding=(10, 20), dilation=10),
    _maxpool("max_pool2d k(60,80) s10 p(10,20)", 2, (1, 1, 1000, 1000), kernel_size=(60, 80), stride=10,
             padding=(10, 20)),
    _maxpool("max_pool2d k41 s7 p20 d2", 2, (1, 2, 600, 600), kernel_size=41, stride=7, padding=20, dilation=2),
    _maxpool("max_pool2d k31 s1", 2, (1, 1, 1000, 1000), kernel_size=31, stride=1),
    _maxpool("max_pool2d k1000 (global)", 2, (1, 1, 1000, 1000), kernel_size=1000),
    _maxpool("max_pool2d k(999,998) s1 ceil", 2, (1, 1, 1000, 1000), kernel_size=(999, 998), stride=1,
             ceil_mode=True),
    _maxpool("max_pool1d k5001 s1 p2500", 1, (1, 2, 200000), kernel_size=5001, stride=1, padding=2500),
    _maxpool("max_pool3d k9 d2", 3, (1, 1, 100, 100, 100), kernel_size=9, dilation=2),
    _maxpool("max_pool3d k20 s3 p10", 3, (1, 1, 96, 96, 96), kernel_size=20, stride=3, padding=10),
    # adaptive max: ragged windows against evenly dividing ones, windows smaller than a cell (O > L)
    MemoryCase("adaptive_max_pool2d 300x300 -> (299,7)", "adaptive_max_pool2d", (1, 1, 300, 300),
               dict(output_size=(299, 7))),
    MemoryCase("adaptive_max_pool2d 1000x1000 -> (999,3)", "adaptive_max_pool2d", (1, 1, 1000, 1000),
               dict(output_size=(999, 3))),
    MemoryCase("adaptive_max_pool2d 7x9 -> 700x900", "adaptive_max_pool2d", (1, 2, 7, 9),
               dict(output_size=(700, 900))),
    MemoryCase("adaptive_max_pool3d 100^3 -> (99,5,51)", "adaptive_max_pool3d", (1, 1, 100, 100, 100),
               dict(output_size=(99, 5, 51))),
    MemoryCase("adaptive_max_pool3d 16 planes 32^3 -> 31^3", "adaptive_max_pool3d", (1, 16, 32, 32, 32),
               dict(output_size=31)),
    # avg and lp: the same windows through the linear kernels (and lp's inf norm through the max kernels)
    MemoryCase("avg_pool2d k(60,80) s10 p(10,20)", "avg_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=(60, 80), stride=10, padding=(10, 20))),
    MemoryCase("avg_pool2d k101 s1 p50 excl. pad", "avg_pool2d", (1, 2, 600, 600),
               dict(kernel_size=101, stride=1, padding=50, count_include_pad=False)),
    MemoryCase("avg_pool3d k31 s1", "avg_pool3d", (1, 1, 96, 96, 96), dict(kernel_size=31, stride=1)),
    MemoryCase("avg_pool2d k(60,80) s10 p(10,20) d10 excl. pad", "avg_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=(60, 80), stride=10, padding=(10, 20), dilation=10, count_include_pad=False)),
    MemoryCase("avg_pool2d float16 k(60,80) s10 p(10,20)", "avg_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=(60, 80), stride=10, padding=(10, 20)), dtype="float16"),
    MemoryCase("adaptive_avg_pool2d 1000x1000 -> (999,3)", "adaptive_avg_pool2d", (1, 1, 1000, 1000),
               dict(output_size=(999, 3))),
    MemoryCase("adaptive_avg_pool2d 8x8 -> 1000x1000", "adaptive_avg_pool2d", (1, 1, 8, 8),
               dict(output_size=(1000, 1000))),
    MemoryCase("lp_pool2d p2 k(60,80) s10", "lp_pool2d", (1, 1, 1000, 1000),
               dict(norm_type=2.0, kernel_size=(60, 80), stride=10)),
    MemoryCase("lp_pool2d p=inf k31 s1", "lp_pool2d", (1, 1, 1000, 1000),
               dict(norm_type=math.inf, kernel_size=31, stride=1)),
    # max_unpool: a large output from a small input
    MemoryCase("max_unpool2d k16 64x64 -> 1024x1024", "max_unpool2d", (1, 1, 1024, 1024),
               dict(kernel_size=16, indices="pool")),
    MemoryCase("max_unpool3d k2 -> 128^3", "max_unpool3d", (1, 1, 128, 128, 128), dict(kernel_size=2, indices="pool")),
    # interpolate: extreme down- and upsampling in every family of taps
    MemoryCase("interpolate bilinear antialias 3000^2 -> 7^2", "interpolate", (1, 1, 3000, 3000),
               dict(size=(7, 7), mode="bilinear", antialias=True)),
    MemoryCase("interpolate bicubic antialias 2000^2 -> (3,5)", "interpolate", (1, 1, 2000, 2000),
               dict(size=(3, 5), mode="bicubic", antialias=True)),
    MemoryCase("interpolate lanczos antialias 2000^2 -> 11^2", "interpolate", (1, 1, 2000, 2000),
               dict(size=(11, 11), mode="lanczos", antialias=True)),
    MemoryCase("interpolate area 3000^2 -> (3,5)", "interpolate", (1, 1, 3000, 3000), dict(size=(3, 5), mode="area")),
    MemoryCase("interpolate nearest 8^2 -> 2000^2", "interpolate", (1, 1, 8, 8), dict(size=(2000, 2000),
                                                                                      mode="nearest")),
    MemoryCase("interpolate bicubic 16^2 -> 1500^2", "interpolate", (1, 1, 16, 16),
               dict(size=(1500, 1500), mode="bicubic", align_corners=True)),
    MemoryCase("interpolate trilinear 6^3 -> 160^3", "interpolate", (1, 1, 6, 6, 6),
               dict(size=(160, 160, 160), mode="trilinear")),
    # grid_sample: dense grids, every mode; affine_grid: a large grid from a tiny theta
    MemoryCase("grid_sample bicubic 500^2, grid 700^2", "grid_sample", (1, 2, 500, 500),
               dict(mode="bicubic", padding_mode="zeros", align_corners=False), {"grid": (1, 700, 700, 2)}),
    MemoryCase("grid_sample bilinear reflection 1000^2, grid 1000^2", "grid_sample", (1, 1, 1000, 1000),
               dict(mode="bilinear", padding_mode="reflection", align_corners=True), {"grid": (1, 1000, 1000, 2)}),
    MemoryCase("grid_sample nearest border 300^2, grid 1200^2", "grid_sample", (1, 3, 300, 300),
               dict(mode="nearest", padding_mode="border", align_corners=False), {"grid": (1, 1200, 1200, 2)}),
    MemoryCase("grid_sample 3-d bilinear 64^3, grid 80^3", "grid_sample", (1, 2, 64, 64, 64),
               dict(mode="bilinear", padding_mode="zeros", align_corners=False), {"grid": (1, 80, 80, 80, 3)}),
    MemoryCase("grid_sample float16 bicubic 500^2, grid 700^2", "grid_sample", (1, 2, 500, 500),
               dict(mode="bicubic", padding_mode="border", align_corners=True), {"grid": (1, 700, 700, 2)},
               dtype="float16"),
    MemoryCase("max_pool2d float16 k(60,80) s10 p(10,20) d10", "max_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=(60, 80), stride=10, padding=(10, 20), dilation=10), dtype="float16"),
    MemoryCase("interpolate float16 bicubic antialias 2000^2 -> (3,5)", "interpolate", (1, 1, 2000, 2000),
               dict(size=(3, 5), mode="bicubic", antialias=True), dtype="float16"),
    MemoryCase("affine_grid 2000^2", "affine_grid", (1, 2, 3), dict(size=(1, 1, 2000, 2000), align_corners=False)),
    # fractional max pooling: windows of many cells
    MemoryCase("fractional_max_pool2d k40 -> 50^2", "fractional_max_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=40, output_size=50), {"samples": (1, 1, 2)}),
    MemoryCase("fractional_max_pool2d k100 -> 300^2", "fractional_max_pool2d", (1, 1, 1000, 1000),
               dict(kernel_size=100, output_size=300), {"samples": (1, 1, 2)}),
    MemoryCase("fractional_max_pool3d k16 -> 40^3", "fractional_max_pool3d", (1, 1, 100, 100, 100),
               dict(kernel_size=16, output_size=40), {"samples": (1, 1, 3)}),
    # a detector's many boxes on a large map, and boxes past the whole map with adaptive sampling (thousands of
    # samples per bin: fewer boxes and channels, the same chunks)
    MemoryCase("roi_align 256x400^2, 1000 boxes -> 7x7 s2", "roi_align", (1, 256, 400, 400),
               dict(output_size=7, spatial_scale=1.0, sampling_ratio=2, aligned=True), {"boxes": (1000, 5)},
               flags=("boxes_mixed", "aligned")),
    MemoryCase("roi_align 256x400^2, 1000 boxes -> 14x14 s2", "roi_align", (1, 256, 400, 400),
               dict(output_size=14, spatial_scale=1.0, sampling_ratio=2, aligned=False), {"boxes": (1000, 5)},
               flags=("boxes_mixed",)),
    MemoryCase("roi_align 16x400^2, whole-map boxes -> 7x7 adaptive", "roi_align", (1, 16, 400, 400),
               dict(output_size=7, spatial_scale=1.0, sampling_ratio=0, aligned=False), {"boxes": (8, 5)},
               flags=("boxes_large",)),
    MemoryCase("roi_align 16x400^2, whole-map boxes -> 14x14 adaptive", "roi_align", (1, 16, 400, 400),
               dict(output_size=14, spatial_scale=1.0, sampling_ratio=0, aligned=True), {"boxes": (8, 5)},
               flags=("boxes_large", "aligned")),
    # roi_pool searches a bounded frame of window cells per bin, or (windows of many cells, off JAX) range-maximum
    # tables a chunk of channels at a time: many boxes, and boxes past the whole map
    MemoryCase("roi_pool 16x400^2, 64 boxes -> 7x7", "roi_pool", (1, 16, 400, 400),
               dict(output_size=7, spatial_scale=1.0), {"boxes": (64, 5)}, flags=("boxes_mixed",)),
    MemoryCase("roi_pool 16x400^2, whole-map boxes -> 14x14", "roi_pool", (1, 16, 400, 400),
               dict(output_size=14, spatial_scale=1.0), {"boxes": (8, 5)}, flags=("boxes_large",)),
    MemoryCase("roi_pool 256x400^2, 1000 boxes -> 7x7", "roi_pool", (1, 256, 400, 400),
               dict(output_size=7, spatial_scale=1.0), {"boxes": (1000, 5)}, flags=("boxes_mixed",)),
    MemoryCase("roi_pool 256x400^2, 1000 whole-map boxes -> 14x14", "roi_pool", (1, 256, 400, 400),
               dict(output_size=14, spatial_scale=1.0), {"boxes": (1000, 5)}, flags=("boxes_large",)),
    # position-sensitive: each bin reads its own channel (245 = 5 x 7 x 7)
    MemoryCase("ps_roi_align 245x400^2, 1000 boxes -> 7x7 s2", "ps_roi_align", (1, 245, 400, 400),
               dict(output_size=7, spatial_scale=1.0, sampling_ratio=2), {"boxes": (1000, 5)},
               flags=("boxes_mixed",)),
    MemoryCase("ps_roi_pool 49x400^2, 1000 boxes -> 7x7", "ps_roi_pool", (1, 49, 400, 400),
               dict(output_size=7, spatial_scale=1.0), {"boxes": (1000, 5)}, flags=("boxes_mixed",)),
]

# scipy.ndimage front-end calls (op: the function's dotted name; ports: the other array inputs' shapes)
CASES += [
    MemoryCase("scipy maximum_filter size 31, 1000^2 float64", "scipy.ndimage.maximum_filter", (1000, 1000),
               dict(size=31), dtype="float64"),
    MemoryCase("scipy spline_filter order 5, 2048^2 float64", "scipy.ndimage.spline_filter", (2048, 2048),
               dict(order=5), dtype="float64"),
    MemoryCase("scipy map_coordinates order 3, 2048^2, 1M points", "scipy.ndimage.map_coordinates", (2048, 2048),
               dict(order=3), dict(coordinates=(2, 1_000_000)), dtype="float64"),
    MemoryCase("scipy zoom x0.37 order 5, 2048^2 float64", "scipy.ndimage.zoom", (2048, 2048),
               dict(zoom=0.37, order=5), dtype="float64"),
    MemoryCase("scipy rotate 30 deg order 3, 256^3 float64", "scipy.ndimage.rotate", (256, 256, 256),
               dict(angle=30.0, order=3, reshape=False), dtype="float64"),
]

BY_KEY = {c.key: c for c in CASES}

_FRONTEND = {  # the front-end's forward and explicit backward (w.r.t. the input)
    "scipy.ndimage.maximum_filter": ("poolspec.frontends.scipy.ndimage", "maximum_filter"),
    "scipy.ndimage.spline_filter": ("poolspec.frontends.scipy.ndimage._splines", "spline_filter"),
    "scipy.ndimage.map_coordinates": ("poolspec.frontends.scipy.ndimage._splines", "map_coordinates"),
    "scipy.ndimage.zoom": ("poolspec.frontends.scipy.ndimage", "zoom"),
    "scipy.ndimage.rotate": ("poolspec.frontends.scipy.ndimage", "rotate"),
}


def measure_frontend(case: MemoryCase, repeat: int = 0) -> dict[str, Any]:
    """A front-end case on NumPy, as :func:`measure_numpy`: one cold forward + explicit backward, traced."""
    import importlib

    module = importlib.import_module(_FRONTEND[case.op][0])
    fwd = getattr(module, _FRONTEND[case.op][1])
    bwd = getattr(module, _FRONTEND[case.op][1] + "_backward")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(case.shape).astype(case.dtype)
    ports = {k: rng.uniform(-2.0, max(case.shape) + 2.0, v) for k, v in case.ports.items()}

    def once() -> tuple[Any, Any, float, float]:
        t0 = time.perf_counter()
        y = fwd(x, *ports.values(), **case.args)
        t1 = time.perf_counter()
        g = rng.standard_normal(y.shape).astype(y.dtype)
        grad = bwd(g, x, *ports.values(), **case.args)
        return y, grad, t1 - t0, time.perf_counter() - t1

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        rss0 = _reset_rss_peak()
        y, grad, t_fwd, t_bwd = once()
        peak = tracemalloc.get_traced_memory()[1] - start
        rss = _rss_peak() - rss0
    finally:
        tracemalloc.stop()
    base = x.nbytes + sum(a.nbytes for a in ports.values()) + _nbytes(y)
    out = dict(key=case.key, backend="numpy", base=base, limit=limit(base), peak=peak, rss=rss,
               cold_forward=t_fwd, cold_backward=t_bwd)
    del y, grad
    if repeat:
        times = [once()[2:] for _ in range(repeat)]
        out["forward"] = statistics.median(t[0] for t in times)
        out["backward"] = statistics.median(t[1] for t in times)
    return out


def _golden(case: MemoryCase) -> Any:
    from .conformance.catalogue import GoldenCase

    return GoldenCase(f"memory-{case.op}", case.op, case.shape, case.args, ("memory",) + case.flags, case.dtype,
                      ports=case.ports)


def _call_arguments(case: MemoryCase) -> dict[str, Any]:
    return {k: v for k, v in case.args.items() if k not in record(case.op).arrays}


def _inputs(case: MemoryCase) -> dict[str, np.ndarray]:
    from .conformance.catalogue import inputs

    return inputs(_golden(case))


def _nbytes(a: Any) -> int:
    from .kernels.blocks import nbytes

    return 0 if a is None else nbytes(a)


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_rss_peak() -> int:
    """Start a fresh resident-set high-water mark (Linux: clear_refs 5) and return the resident set now."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        pass
    now = _status("VmRSS")
    return now if now is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_peak() -> int:
    peak = _status("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def limit(base: int) -> int:
    """The peak a call with ``base`` bytes of ports may reach."""
    return LIMIT_FACTOR * base + LIMIT_SLACK


def measure_numpy(case: MemoryCase, repeat: int = 0) -> dict[str, Any]:
    """poolspec on NumPy, in this process: the traced peak of one cold forward + backward, and (``repeat``)
    the median time of warm ones."""
    import poolspec

    from .conformance.families import family

    fam = family(case.op)
    args = _call_arguments(case)
    arrays = _inputs(case)
    fwd, bwd = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")
    rng = np.random.default_rng(0)

    def once() -> tuple[Any, Any, Any, float, float]:
        t0 = time.perf_counter()
        y, idx = fam.forward(fwd, args, arrays)
        t1 = time.perf_counter()
        g = rng.standard_normal(y.shape).astype(y.dtype)
        grads = fam.backward(bwd, g, args, arrays, idx, True)
        t2 = time.perf_counter()
        return y, idx, grads, t1 - t0, t2 - t1

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        rss0 = _reset_rss_peak()
        y, idx, grads, t_fwd, t_bwd = once()
        peak = tracemalloc.get_traced_memory()[1] - start
        rss = _rss_peak() - rss0
    finally:
        tracemalloc.stop()
    base = sum(_nbytes(a) for a in arrays.values()) + _nbytes(y) + _nbytes(idx)
    out = dict(key=case.key, backend="numpy", base=base, limit=limit(base), peak=peak, rss=rss,
               cold_forward=t_fwd, cold_backward=t_bwd)
    del y, idx, grads
    if repeat:
        times = [once()[3:] for _ in range(repeat)]
        out["forward"] = statistics.median(t[0] for t in times)
        out["backward"] = statistics.median(t[1] for t in times)
    return out


def measure_jax(case: MemoryCase) -> dict[str, Any]:
    """poolspec on JAX: the temporaries XLA allocates for one jitted forward + explicit backward of the case
    (``memory_analysis`` of the compiled CPU program), beside the bound of :func:`limit`."""
    import jax
    import jax.numpy as jnp

    import poolspec

    from .conformance.families import family

    fam = family(case.op)
    args = _call_arguments(case)
    arrays = {k: jnp.asarray(v) for k, v in _inputs(case).items()}
    fwd, bwd = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")

    def both(*values: Any) -> Any:
        named = dict(zip(arrays, values))
        y, idx = fam.forward(fwd, args, named)
        return y, idx, fam.backward(bwd, jnp.ones_like(y), args, named, idx, True)

    compiled = jax.jit(both).lower(*arrays.values()).compile()
    out = jax.eval_shape(both, *arrays.values())
    y, idx = out[0], out[1]
    base = sum(_nbytes(a) for a in arrays.values()) + _nbytes(y) + (0 if idx is None else _nbytes(idx))
    analysis = compiled.memory_analysis()
    if analysis is None:
        raise RuntimeError("this JAX backend reports no memory analysis of compiled programs")
    temp = analysis.temp_size_in_bytes
    return dict(key=case.key, backend="jax", base=base, limit=limit(base), peak=temp)


def _torch_call(case: MemoryCase, which: str, repeat: int) -> dict[str, Any]:
    """torch's own op (``which="torch"``: forward, then autograd), poolspec's through torch autograd
    (``"poolspec-autograd"``) or poolspec's explicit forward and backward on torch tensors
    (``"poolspec-torch"``): the peak RSS above the inputs, and warm median times."""
    import torch

    import poolspec

    from .conformance.families import family

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    fam = family(case.op)
    args = _call_arguments(case)
    arrays = {k: torch.from_numpy(v) for k, v in _inputs(case).items()}
    g_rng = np.random.default_rng(0)
    if which in ("torch", "poolspec-autograd"):
        import torch.nn.functional as F

        fwd = getattr(F, case.op) if which == "torch" else getattr(poolspec, case.op)
        wrt = [p for p in fam.differentiable]

        def once() -> tuple[float, float]:
            tracked = {p: (a.detach().requires_grad_(True) if p in wrt else a) for p, a in arrays.items()}
            t0 = time.perf_counter()
            y, _ = fam.forward(fwd, args, tracked)
            t1 = time.perf_counter()
            g = torch.from_numpy(g_rng.standard_normal(tuple(y.shape))).to(y.dtype)
            torch.autograd.grad(y, [tracked[p] for p in wrt], g)
            return t1 - t0, time.perf_counter() - t1
    else:
        fwd, bwd = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")

        def once() -> tuple[float, float]:
            t0 = time.perf_counter()
            y, idx = fam.forward(fwd, args, arrays)
            t1 = time.perf_counter()
            g = torch.from_numpy(g_rng.standard_normal(tuple(y.shape))).to(y.dtype)
            fam.backward(bwd, g, args, arrays, idx, True)
            return t1 - t0, time.perf_counter() - t1

    rss0 = _reset_rss_peak()
    cold = once()
    out = dict(key=case.key, backend=which, rss=_rss_peak() - rss0, cold_forward=cold[0], cold_backward=cold[1])
    if repeat:
        times = [once() for _ in range(repeat)]
        out["forward"] = statistics.median(t[0] for t in times)
        out["backward"] = statistics.median(t[1] for t in times)
    return out


def run_case(key: str, backend: str = "numpy", repeat: int = 0) -> dict[str, Any]:
    """One case in this process (see :func:`measure`)."""
    case = BY_KEY[key]
    try:
        if case.op in _FRONTEND:
            if backend != "numpy":
                return dict(key=key, backend=backend, error="front-end cases are measured on NumPy only")
            return measure_frontend(case, repeat)
        if backend == "numpy":
            return measure_numpy(case, repeat)
        if backend == "jax":
            return measure_jax(case)
        return _torch_call(case, backend, repeat)
    except MemoryError as e:
        return dict(key=key, backend=backend, error=f"MemoryError: {str(e)[:200]}")


def measure(key: str, backend: str = "numpy", repeat: int = 0, timeout: float = 600,
            gpu_paths: bool = False) -> dict[str, Any]:
    """One case in a fresh process with at most ``ADDRESS_LIMIT`` bytes of address space; ``gpu_paths``: on the
    paths a GPU takes (``POOLSPEC_AS_ON_A_GPU=1``), whose gathers and tables are bounded by the same rule."""
    cmd = [sys.executable, "-m", "poolspec.memory", "--one", key, "--backend", backend, "--repeat", str(repeat)]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
               POOLSPEC_AS_ON_A_GPU="1" if gpu_paths else "0")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return dict(key=key, backend=backend, error=f"exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def _mb(b: float | None) -> str:
    return "-" if b is None else f"{b / 2**20:,.1f}"


def _s(t: float | None) -> str:
    return "-" if t is None else f"{t:.3f}"


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table: per case poolspec's peak against its limit, times, and torch's where measured."""
    by = {(r["key"], r["backend"]): r for r in rows}
    torch_cols = any(r["backend"] != "numpy" for r in rows)
    head = "| call | in + out MB | limit MB | peak MB | peak / (in + out) | fwd s | bwd s |"
    if torch_cols:
        head += (" poolspec-torch RSS MB | fwd s | bwd s | poolspec-autograd RSS MB | fwd s | bwd s |"
                 " torch RSS MB | fwd s | bwd s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for case in CASES:
        r = by.get((case.key, "numpy"))
        if r is None:
            continue
        if "error" in r:
            line = f"| {case.key} | | | {r['error'][:60]} | | | |"
        else:
            line = (f"| {case.key} | {_mb(r['base'])} | {_mb(r['limit'])} | {_mb(r['peak'])} | "
                    f"{r['peak'] / r['base']:.1f} | {_s(r.get('forward', r['cold_forward']))} | "
                    f"{_s(r.get('backward', r['cold_backward']))} |")
        if torch_cols:
            for b in ("poolspec-torch", "poolspec-autograd", "torch"):
                t = by.get((case.key, b), {})
                line += (f" {t.get('error', _mb(t.get('rss')))[:40]} | {_s(t.get('forward'))} | "
                         f"{_s(t.get('backward'))} |")
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolspec.memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", help="case keys, separated by ';' (keys hold commas), or any part of a key that "
                                   "picks cases out (default: all)")
    p.add_argument("--torch", action="store_true", help="also torch's own op and poolspec on torch tensors")
    p.add_argument("--repeat", type=int, default=3, help="warm calls timed per case (median)")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--backend", default="numpy", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))
        print(json.dumps(run_case(a.one, a.backend, a.repeat)))
        return 0
    keys = [c.key for c in CASES]
    if a.cases:
        wanted = [w.strip() for w in a.cases.split(";") if w.strip()]
        unknown = [w for w in wanted if not any(w in k for k in keys)]
        if unknown:
            p.error(f"no case matches {unknown}; known: {keys}")
        keys = [k for k in keys if any(w == k or w in k for w in wanted)]
    rows = []
    for key in keys:
        for backend in ("numpy",) + (("poolspec-torch", "poolspec-autograd", "torch") if a.torch else ()):
            row = measure(key, backend, a.repeat)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(table(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    bad = [r for r in rows if r["backend"] == "numpy" and ("error" in r or r["peak"] > r["limit"])]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
