"""The device benchmark: poolspec on an accelerator against the native kernels on the same device.

    poolspec bench --device cuda [--json FILE] [--repeat N]
    poolspec bench --device cpu --small          (the same suite at 1/16 of the elements, to check it runs)

Per call (float32, the 13 calls of the GPU report in docs/GPU.md): on torch at ``--device``, poolspec's forward
and forward+backward against torch.nn.functional on the same tensors (medians, synchronised), the kernel
launches and summed kernel time of each (torch.profiler, CUDA only), the host time per call (no sync: what the
GPU waits for), the largest difference from the native op, and whether 5 repeated backward passes are bit
identical on each side; the same with eager fusion on (``poolspec.set_eager_fusion``: first-call cost,
times, host time, bit-identity). Then which backward passes run under ``torch.use_deterministic_algorithms(True)``.
Columns beside it: poolspec on CuPy (where CuPy sees a GPU) against torch native and cupyx.scipy.ndimage
where it has the op, and jitted poolspec on JAX's default device against lax.reduce_window and
jax.image.resize. Numbers only: nothing here asserts a speed.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bench_cases import BenchCase
from .bench_timing import geomean, torch_calls
from .registry import op as record


@dataclass(frozen=True)
class DeviceCase(BenchCase):
    """A device-suite call: a BenchCase whose input is followed by a sampling grid where ``grid``."""

    grid: bool = False  # grid_sample: a grid of the input's spatial size, in [-1.1, 1.1]


CASES = [
    DeviceCase("max_pool2d k3 s2 p1", "max_pool2d", (32, 64, 112, 112), dict(kernel_size=3, stride=2, padding=1)),
    DeviceCase("max_pool2d k2 s2", "max_pool2d", (32, 128, 56, 56), dict(kernel_size=2, stride=2)),
    DeviceCase("avg_pool2d k3 s1 p1 cip=False", "avg_pool2d", (32, 64, 56, 56),
               dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    DeviceCase("adaptive_avg_pool2d 13->7", "adaptive_avg_pool2d", (32, 256, 13, 13), dict(output_size=7)),
    DeviceCase("adaptive_avg_pool2d ->1", "adaptive_avg_pool2d", (32, 512, 14, 14), dict(output_size=1)),
    DeviceCase("adaptive_max_pool2d ->1", "adaptive_max_pool2d", (32, 512, 14, 14), dict(output_size=1)),
    DeviceCase("max_pool3d k2 s2", "max_pool3d", (8, 32, 16, 32, 32), dict(kernel_size=2, stride=2)),
    DeviceCase("lp_pool2d p=2 k2", "lp_pool2d", (32, 64, 56, 56), dict(norm_type=2.0, kernel_size=2)),
    DeviceCase("bilinear x2", "interpolate", (16, 64, 64, 64),
               dict(scale_factor=2, mode="bilinear", align_corners=False)),
    DeviceCase("nearest x2", "interpolate", (16, 64, 64, 64), dict(scale_factor=2, mode="nearest")),
    DeviceCase("bicubic antialias 256->128", "interpolate", (8, 3, 256, 256),
               dict(size=(128, 128), mode="bicubic", antialias=True)),
    DeviceCase("trilinear x2", "interpolate", (4, 16, 16, 32, 32), dict(scale_factor=2, mode="trilinear")),
    DeviceCase("grid_sample bilinear zeros", "grid_sample", (16, 32, 64, 64),
               dict(mode="bilinear", padding_mode="zeros", align_corners=False), grid=True),
]


def small(case: DeviceCase) -> DeviceCase:
    """The case at about 1/16 of its elements (batch and channels quartered): for a run on CPU."""
    shape = tuple(max(1, v // 4) if i < 2 else v for i, v in enumerate(case.shape))
    return DeviceCase(case.key, case.op, shape, case.args, case.grid)


def _host_inputs(case: DeviceCase) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {"x": rng.standard_normal(case.shape).astype(np.float32)}
    if case.grid:
        n = len(case.shape) - 2
        out["grid"] = (rng.random(case.shape[:1] + case.shape[2:] + (n,)) * 2.2 - 1.1).astype(np.float32)
    return out


def _median(fn: Callable[[], Any], sync: Callable[[], None], repeat: int, wait: bool = True) -> float:
    """Median time per call after a warm-up; ``wait=False``: the host's time alone, the device waited for
    only at the end (what the device waits for when the host is the bottleneck)."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        if wait:
            sync()
        times.append(time.perf_counter() - t)
    sync()
    return statistics.median(times)


def _host_time(fn: Callable[[], Any], sync: Callable[[], None]) -> float:
    return _median(fn, sync, 20, wait=False)


def _kernels(torch: Any, fn: Callable[[], Any]) -> tuple[int, float] | None:
    """CUDA kernels launched by one call and their summed time (ms); None off CUDA."""
    if not torch.cuda.is_available():
        return None
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as p:
        fn()
        torch.cuda.synchronize()
    found = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(found), sum(e.device_time for e in found) / 1e3


def torch_rows(device: str, cases: list[DeviceCase], repeat: int, fused: bool = True) -> list[dict[str, Any]]:
    import torch

    cuda = torch.device(device).type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    rows = []
    for case in cases:
        row: dict[str, Any] = {"case": case.key, "shape": list(case.shape)}
        try:
            row.update(_torch_case(torch, device, case, repeat, sync, fused))
        except Exception as e:  # report and go on: one failing call must not hide the others
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _torch_case(torch: Any, device: str, case: DeviceCase, repeat: int, sync: Callable[[], None],
                fused: bool) -> dict[str, Any]:
    import poolspec

    from .bench_counts import count_torch

    host = _host_inputs(case)
    x = torch.from_numpy(host["x"]).to(device)
    extra = [torch.from_numpy(host["grid"]).to(device)] if case.grid else []
    row: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    for who, lib in (("poolspec", poolspec), ("native", torch.nn.functional)):
        fn = getattr(lib, case.op)
        y = fn(x, *extra, **case.args)
        gy = torch.from_numpy(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)).to(device)
        fwd, fwd_bwd = torch_calls(torch, fn, x, gy, *extra, **case.args)
        calls[who] = (fwd, fwd_bwd)
        if who == "poolspec":
            calls["gy"] = gy
        row[f"{who}_fwd_ms"] = _median(fwd, sync, repeat) * 1e3
        row[f"{who}_fwd_bwd_ms"] = _median(fwd_bwd, sync, repeat) * 1e3
        row[f"{who}_host_ms"] = _host_time(fwd, sync) * 1e3
        for tag, f in (("fwd", fwd), ("fwd_bwd", fwd_bwd)):
            # aten calls per call (a dispatch mode; bench_counts' measure), beside the kernels they launch
            row[f"{who}_{tag}_dispatches"] = count_torch(f, warm=True)[0]
            k = _kernels(torch, f)
            if k is not None:
                row[f"{who}_{tag}_kernels"], row[f"{who}_{tag}_kernel_ms"] = k
        first = fwd_bwd()
        row[f"{who}_bwd_bit_identical_x5"] = all(torch.equal(first, fwd_bwd()) for _ in range(5))
    # the same calls with eager fusion (poolspec.set_eager_fusion): compiled once per key, then timed
    before = poolspec.set_eager_fusion(True)
    try:
        if not fused:
            raise _Skip
        fwd, fwd_bwd = torch_calls(torch, poolspec_fn(case), x, calls["gy"], *extra, **case.args)
        start = time.perf_counter()
        fwd(), fwd_bwd()
        sync()
        row["fused_first_call_s"] = time.perf_counter() - start
        row["fused_fwd_ms"] = _median(fwd, sync, repeat) * 1e3
        row["fused_fwd_bwd_ms"] = _median(fwd_bwd, sync, repeat) * 1e3
        row["fused_host_ms"] = _host_time(fwd, sync) * 1e3
        first = fwd_bwd()
        row["fused_bwd_bit_identical_x5"] = all(torch.equal(first, fwd_bwd()) for _ in range(5))
        row["ratio_fused_fwd"] = row["fused_fwd_ms"] / row["native_fwd_ms"]
        row["ratio_fused_fwd_bwd"] = row["fused_fwd_bwd_ms"] / row["native_fwd_bwd_ms"]
    except _Skip:
        pass
    finally:
        poolspec.set_eager_fusion(before)
    ours, theirs = calls["poolspec"], calls["native"]
    row["max_abs_diff"] = float((ours[0]().double() - theirs[0]().double()).abs().max())
    row["grad_max_abs_diff"] = float((ours[1]().double() - theirs[1]().double()).abs().max())
    row["ratio_fwd"] = row["poolspec_fwd_ms"] / row["native_fwd_ms"]
    row["ratio_fwd_bwd"] = row["poolspec_fwd_bwd_ms"] / row["native_fwd_bwd_ms"]
    torch.use_deterministic_algorithms(True)
    try:
        for who in ("poolspec", "native"):
            try:
                calls[who][1]()
                row[f"{who}_deterministic_mode"] = "runs"
            except RuntimeError as e:
                row[f"{who}_deterministic_mode"] = "raises: " + str(e).splitlines()[0][:100]
    finally:
        torch.use_deterministic_algorithms(False)
    return row


class _Skip(Exception):
    pass


def poolspec_fn(case: DeviceCase) -> Callable[..., Any]:
    import poolspec

    return getattr(poolspec, case.op)


def cupy_rows(cases: list[DeviceCase], repeat: int) -> list[dict[str, Any]]:
    """poolspec on CuPy against torch native on the same GPU, and cupyx.scipy.ndimage where it has the op."""
    cupy = importlib.import_module("cupy")  # optional: no stubs for the type checker
    ndi = importlib.import_module("cupyx.scipy.ndimage")
    torch = _torch_or_none()

    def sync() -> None:
        cupy.cuda.Device().synchronize()

    rows = []
    for case in cases:
        row: dict[str, Any] = {"case": case.key}
        try:
            row.update(_cupy_case(cupy, ndi, torch, case, repeat, sync))
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        print(json.dumps({"cupy": row}), flush=True)
    return rows


def _cupy_case(cupy: Any, ndi: Any, torch: Any, case: DeviceCase, repeat: int,
               sync: Callable[[], None]) -> dict[str, Any]:
    import poolspec

    host = _host_inputs(case)
    x = cupy.asarray(host["x"])
    extra = [cupy.asarray(host["grid"])] if case.grid else []
    fn, bw = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")
    y = fn(x, *extra, **case.args)
    gy = cupy.ones_like(y)

    def backward() -> Any:
        g = bw(gy, x, *extra, **case.args)
        return g[0] if isinstance(g, tuple) else g

    row: dict[str, Any] = {"poolspec_fwd_ms": _median(lambda: fn(x, *extra, **case.args), sync, repeat) * 1e3,
                           "poolspec_bwd_ms": _median(backward, sync, repeat) * 1e3}
    first = backward()
    row["poolspec_bwd_bit_identical_x5"] = all(bool(cupy.array_equal(first, backward())) for _ in range(5))
    if torch is not None and torch.cuda.is_available():
        xt = torch.from_numpy(host["x"]).cuda()
        et = [torch.from_numpy(host["grid"]).cuda()] if case.grid else []
        native = getattr(torch.nn.functional, case.op)
        row["torch_native_fwd_ms"] = _median(lambda: native(xt, *et, **case.args), torch.cuda.synchronize,
                                             repeat) * 1e3
        row["ratio_fwd_vs_torch"] = row["poolspec_fwd_ms"] / row["torch_native_fwd_ms"]
        want = native(xt, *et, **case.args).cpu().numpy()
        row["max_abs_diff_vs_torch"] = float(np.abs(cupy.asnumpy(y) - want).max())
    peer = _cupyx_peer(ndi, case)
    if peer is not None:
        row["cupyx_peer"] = peer[0]
        row["cupyx_fwd_ms"] = _median(lambda: peer[1](x), sync, repeat) * 1e3
    return row


def _cupyx_max(ndi: Any, case: DeviceCase) -> tuple[str, Callable[[Any], Any]] | None:
    a, n = case.args, len(case.shape) - 2
    k = a["kernel_size"]
    if a.get("padding", 0) != 0 or k != a.get("stride") or not isinstance(k, int):
        return None  # tiling windows only: a filter plus a strided read
    return (f"maximum_filter size {k} + strided read",
            lambda x: ndi.maximum_filter(x, size=(1, 1) + (k,) * n, origin=(0, 0) + (-(k // 2),) * n)[
                (..., *(slice(None, None, k),) * n)])


def _cupyx_zoom(ndi: Any, case: DeviceCase) -> tuple[str, Callable[[Any], Any]] | None:
    a, n = case.args, len(case.shape) - 2
    order = {"nearest": 0, "bilinear": 1, "trilinear": 1}.get(a.get("mode", ""))
    if order is None or not isinstance(a.get("scale_factor"), int):
        return None
    f = a["scale_factor"]
    if order == 0:
        return "zoom order=0", lambda x: ndi.zoom(x, (1, 1) + (f,) * n, order=0)
    # half-pixel centres and edge clamping: torch's align_corners=False
    return ("zoom order=1 grid_mode=True mode=nearest",
            lambda x: ndi.zoom(x, (1, 1) + (f,) * n, order=1, grid_mode=True, mode="nearest"))


# cupyx.scipy.ndimage's nearest equivalent, keyed by the registry's family
_CUPYX_PEERS: dict[str, Callable[[Any, DeviceCase], tuple[str, Callable[[Any], Any]] | None]] = {
    "max_pool": _cupyx_max, "interpolate": _cupyx_zoom,
}


def _cupyx_peer(ndi: Any, case: DeviceCase) -> tuple[str, Callable[[Any], Any]] | None:
    make = _CUPYX_PEERS.get(record(case.op).family)
    return None if make is None else make(ndi, case)


def jax_rows(cases: list[DeviceCase], repeat: int) -> list[dict[str, Any]]:
    """Jitted poolspec on JAX's default device against the JAX peers of ``poolspec.bench`` (lax.reduce_window,
    jnp.mean, jax.image.resize), forward and forward plus vjp."""
    import jax

    import poolspec

    from .bench_runners import JaxRunner, peers

    runner = JaxRunner()
    rows = []
    for case in cases:
        if peers(record(case.op).family).jax is None or case.grid:
            continue
        row: dict[str, Any] = {"case": case.key, "device": str(jax.devices()[0])}
        try:
            row["peer"] = runner.peer(case)[0]
            t = runner.timings(case, repeat)
            row.update({k: v * 1e3 for k, v in t.items()})
            row["ratio_fwd"] = t["fwd_mine"] / t["fwd_peer"]
            row["ratio_fwd_bwd"] = t["bwd_mine"] / t["bwd_peer"]
            x = jax.numpy.asarray(_host_inputs(case)["x"])
            mine = jax.jit(functools.partial(getattr(poolspec, case.op), **case.args))
            # the peer is the nearest equivalent, not always the same rule (see its name)
            row["max_abs_diff_vs_peer"] = float(jax.numpy.abs(mine(x) - jax.jit(runner.peer(case)[1])(x)).max())
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        print(json.dumps({"jax": row}), flush=True)
    return rows


def _torch_or_none() -> Any:
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch


def _cupy_usable() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        cupy = importlib.import_module("cupy")
        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except Exception:
        return False


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "ratio_fwd" in r]
    return {"calls": len(rows), "errors": [r["case"] for r in rows if "error" in r],
            "geomean_fwd": geomean([r["ratio_fwd"] for r in ok]),
            "geomean_fwd_bwd": geomean([r["ratio_fwd_bwd"] for r in ok]),
            "worst_fwd_bwd": max((r["ratio_fwd_bwd"] for r in ok), default=math.nan),
            "fused_geomean_fwd": geomean([r["ratio_fused_fwd"] for r in ok if "ratio_fused_fwd" in r]),
            "fused_geomean_fwd_bwd": geomean([r["ratio_fused_fwd_bwd"] for r in ok if "ratio_fused_fwd" in r]),
            "fused_worst_fwd_bwd": max((r["ratio_fused_fwd_bwd"] for r in ok if "ratio_fused_fwd" in r),
                                       default=math.nan),
            "fused_bwd_not_bit_identical": [r["case"] for r in ok if r.get("fused_bwd_bit_identical_x5") is False],
            "poolspec_bwd_not_bit_identical": [r["case"] for r in ok if not r["poolspec_bwd_bit_identical_x5"]],
            "native_bwd_not_bit_identical": [r["case"] for r in ok if not r["native_bwd_bit_identical_x5"]]}


def run(device: str, repeat: int = 20, reduced: bool = False) -> dict[str, Any]:
    cases = [small(c) for c in CASES] if reduced else CASES
    results: dict[str, Any] = {"device": device, "reduced": reduced}
    if _torch_or_none() is not None:
        results["torch"] = rows = torch_rows(device, cases, repeat)
        results["torch_summary"] = s = summary(rows)
        print("torch " + device + ": " + json.dumps(s), flush=True)
    if device.startswith("cuda") and _cupy_usable():
        results["cupy"] = cupy = cupy_rows(cases, repeat)
        ratios = [r["ratio_fwd_vs_torch"] for r in cupy if "ratio_fwd_vs_torch" in r]
        results["cupy_summary"] = {"geomean_fwd_vs_torch_native": geomean(ratios),
                                   "errors": [r["case"] for r in cupy if "error" in r]}
        print("cupy: " + json.dumps(results["cupy_summary"]), flush=True)
    if importlib.util.find_spec("jax") is not None:
        results["jax"] = jrows = jax_rows(cases, repeat)
        results["jax_summary"] = {"geomean_fwd": geomean([r["ratio_fwd"] for r in jrows if "ratio_fwd" in r]),
                                  "geomean_fwd_bwd": geomean([r["ratio_fwd_bwd"] for r in jrows
                                                               if "ratio_fwd_bwd" in r])}
        print("jax: " + json.dumps(results["jax_summary"]), flush=True)
    return results
