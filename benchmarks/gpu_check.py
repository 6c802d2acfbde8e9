"""The GPU check: one command for a machine with an NVIDIA GPU, about 8 minutes on an H200.

    python benchmarks/gpu_check.py [--json FILE] [--skip-tests] [--skip-bench] [--jax-ops OPS]
    python benchmarks/gpu_check.py --cpu-smoke        (everything at toy size on the CPU: checks the script)

1. conformance on torch CUDA, CuPy and JAX GPU (every stored case; each backend that is importable and sees a
   GPU), failures listed by case;
2. the test suite's CuPy-parametrised tests (``pytest -k cupy``), failures listed by name;
3. every op's backward on torch CUDA 5 times, bit for bit, and under ``use_deterministic_algorithms(True)``;
4. the device benchmark (``poolspec bench --device cuda``: 13 calls against torch's CUDA kernels with kernel
   counts and host time, CuPy and JAX GPU columns), ``benchmarks/roi_align.py`` against torchvision's CUDA
   roi_align where torchvision imports, and the scipy.ndimage front-end on CuPy against cupyx.scipy.ndimage
   (values against SciPy: ``conformance/scipy_api_peers.py``; speed: ``benchmarks/scipy_ndimage.py``);
5. a summary against the targets (0 failures; torch fwd+bwd geometric mean <= 1.5, no call above 3, forward
   <= 1.2; JAX <= 1.0 its peers; CuPy forward <= 2 x torch native; every backward bit-identical).

Exit status 1 if a correctness check fails (speed is reported, never a failure). The machine needs poolspec's
dependencies; array-api-compat may come as a wheel: ``pip install --no-deps array_api_compat-*.whl``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _section(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def _gpu_backends(smoke: bool) -> list[tuple[str, str | None]]:
    """(backend, device) for each GPU backend this machine can run; on --cpu-smoke, the CPU stand-ins."""
    if smoke:
        return [("torch", "cpu"), ("jax", "cpu")]
    found: list[tuple[str, str | None]] = []
    try:
        import torch

        if torch.cuda.is_available():
            found.append(("torch", "cuda:0"))
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append(("cupy", "0"))
    except Exception:
        pass
    try:
        import jax

        if any(d.platform == "gpu" for d in jax.devices()):
            found.append(("jax", "gpu"))
    except Exception:
        pass
    return found


def conformance(backends: list[tuple[str, str | None]], ops: dict[str, list[str] | None]) -> dict[str, Any]:
    from poolspec.conformance import runner

    out = {}
    for backend, device in backends:
        try:
            report = runner.run(backend, device=device, ops=ops.get(backend))
        except Exception as e:
            out[backend] = {"error": f"{type(e).__name__}: {e}"}
            print(f"{backend}: not run ({out[backend]['error']})", flush=True)
            continue
        print(report.table(), flush=True)
        out[backend] = {"device": device, "passed": report.passed, "seconds": round(report.seconds, 1),
                        "cases": len(report.results), "failures": [f"{r.name} ({r.dtype}): {'; '.join(r.problems)}"
                                                                   for r in report.failures]}
    return out


def cupy_tests(limit_s: int) -> dict[str, Any]:
    """The CuPy-parametrised tests in a subprocess, with every failure by name."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-k", "cupy", "-rfE", "-p", "no:cacheprovider",
           "-o", "addopts=", "tests"]
    try:
        import xdist  # noqa: F401

        cmd += ["-n", str(min(8, os.cpu_count() or 1))]
    except ImportError:
        pass
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=limit_s)
        text, finished = done.stdout + done.stderr, True
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        finished = False
    failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", text, flags=re.M)))
    tail = [line for line in text.splitlines() if re.search(r"\d+ (passed|failed|skipped)", line)][-1:]
    result = {"finished": finished, "seconds": round(time.perf_counter() - start, 1), "failed": failed,
              "summary": tail[0] if tail else text[-400:]}
    print(f"cupy tests: {result['summary']} ({'finished' if finished else 'STOPPED at the time limit'})")
    for name in failed:
        print(f"FAILED {name}")
    return result


def determinism(device: str, smoke: bool) -> dict[str, Any]:
    """Every op's backward on one stored float32 case per op, scaled up to where atomics would collide:
    5 runs bit for bit, and whether it runs under ``use_deterministic_algorithms(True)``."""
    import torch

    from poolspec import registry
    from poolspec.conformance import golden
    from poolspec.conformance.families import family

    rows = []
    for name, d in registry.OPS.items():
        case = next((c for c in golden.cases([name]) if c.error is None and c.dtype == "float32"
                     and c.reference != "torch-refuses" and "grad_output" in c.arrays()), None)
        if case is None:
            continue
        row: dict[str, Any] = {"op": name, "case": case.name}
        for reps in ((1,) if smoke else (64, 1)):  # many planes: the same cells written by many GPU threads
            try:
                row.update(_repeat_backward(torch, d, family(name), case, device, reps))
                break
            except ValueError:  # the case's arguments fix the batch (affine_grid's size): as stored
                continue
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"[:200]
                break
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"rows": rows, "ok": all(r.get("bit_identical_x5") and r.get("deterministic_mode") == "runs"
                                    for r in rows)}


def _repeat_backward(torch: Any, d: Any, fam: Any, case: Any, device: str, reps: int) -> dict[str, Any]:
    a = case.arrays()

    def big(arr: np.ndarray) -> Any:
        t = torch.from_numpy(np.ascontiguousarray(arr))
        t = t.repeat((reps,) + (1,) * (t.ndim - 1)) if t.ndim >= 3 else t
        return (t.float() if t.is_floating_point() else t).to(device)

    arrays = {p: big(a[p]) for p in fam.ports if p in a}
    args = dict(case.arguments)
    y, idx = fam.forward(d.forward, args, arrays)
    g = torch.randn(y.shape, device=device)
    runs = [fam.backward(d.backward, g, args, arrays, idx, True) for _ in range(5)]
    same = all(all(torch.equal(p, q) for p, q in zip(runs[0], r)) for r in runs[1:])
    torch.use_deterministic_algorithms(True)
    try:
        fam.backward(d.backward, g, args, arrays, idx, True)
        mode = "runs"
    except RuntimeError as e:
        mode = "raises: " + str(e).splitlines()[0][:80]
    finally:
        torch.use_deterministic_algorithms(False)
    return {"planes_x": reps, "bit_identical_x5": same, "deterministic_mode": mode}


def roi_align_bench(device: str, smoke: bool) -> dict[str, Any]:
    """benchmarks/roi_align.py's Mask R-CNN-like call on the GPU, torchvision's CUDA kernel the peer (its
    backward is atomic; poolspec's is bit-identical): skipped where torchvision does not import."""
    script = os.path.join(ROOT, "benchmarks", "roi_align.py")
    cmd = [sys.executable, script, "--device", device, "--repeat", "3" if smoke else "10"]
    cmd += ["--small"] if smoke else []
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print(done.stdout[-3000:], done.stderr[-1000:], flush=True)
    return {"returncode": done.returncode, "table": done.stdout}


def scipy_cupyx(smoke: bool) -> dict[str, Any]:
    """poolspec's scipy.ndimage front-end on CuPy against cupyx.scipy.ndimage, both against SciPy on the front-end
    check's random configurations (conformance/scipy_api_peers.py), and the speed script with cupyx the peer."""
    found: dict[str, Any] = {}
    peers = os.path.join(ROOT, "conformance", "scipy_api_peers.py")
    done = subprocess.run([sys.executable, peers, "--peer", "cupyx.scipy.ndimage", "--configs", "20" if smoke else
                           "300"], capture_output=True, text=True, timeout=1200)
    print(done.stdout[-3000:], done.stderr[-1000:], flush=True)
    found["peers"] = {"returncode": done.returncode, "out": done.stdout[-3000:]}
    bench = os.path.join(ROOT, "benchmarks", "scipy_ndimage.py")
    if os.path.exists(bench):
        done = subprocess.run([sys.executable, bench, "--backend", "cupy"] + (["--small"] if smoke else []),
                              capture_output=True, text=True, timeout=1200)
        print(done.stdout[-3000:], done.stderr[-1000:], flush=True)
        found["bench"] = {"returncode": done.returncode, "table": done.stdout}
    return found


def targets(found: dict[str, Any]) -> list[str]:
    """The acceptance lines, each marked met or not (speed lines are reported, not enforced)."""
    lines = []
    for backend, rep in found.get("conformance", {}).items():
        lines.append(f"[{'met' if rep.get('passed') else 'NOT met'}] conformance on {backend}: "
                     f"{len(rep.get('failures', [])) if 'failures' in rep else rep.get('error')} failures")
    if "cupy_tests" in found:
        t = found["cupy_tests"]
        lines.append(f"[{'met' if t['finished'] and not t['failed'] else 'NOT met'}] CuPy tests: {t['summary']}")
    if "determinism" in found:
        lines.append(f"[{'met' if found['determinism']['ok'] else 'NOT met'}] every op's backward bit-identical "
                     "x5 and running in deterministic mode")
    bench = found.get("bench", {})
    s = bench.get("torch_summary")
    if s:
        ok = s["geomean_fwd_bwd"] <= 1.5 and s["worst_fwd_bwd"] <= 3 and s["geomean_fwd"] <= 1.2
        lines.append(f"[{'met' if ok else 'NOT met'}] torch {bench['device']}: fwd+bwd geomean "
                     f"{s['geomean_fwd_bwd']:.2f} (<= 1.5), worst {s['worst_fwd_bwd']:.2f} (<= 3), fwd geomean "
                     f"{s['geomean_fwd']:.2f} (<= 1.2); not bit-identical: poolspec "
                     f"{s['poolspec_bwd_not_bit_identical'] or 'none'}, "
                     f"native {s['native_bwd_not_bit_identical'] or 'none'}")
    if s:
        ok = s["fused_geomean_fwd_bwd"] <= 1.5 and s["fused_worst_fwd_bwd"] <= 3 and s["fused_geomean_fwd"] <= 1.2
        lines.append(f"[{'met' if ok else 'NOT met'}] torch {bench['device']} with eager fusion: fwd+bwd geomean "
                     f"{s['fused_geomean_fwd_bwd']:.2f} (<= 1.5), worst {s['fused_worst_fwd_bwd']:.2f} (<= 3), "
                     f"fwd geomean {s['fused_geomean_fwd']:.2f} (<= 1.2); not bit-identical: "
                     f"{s['fused_bwd_not_bit_identical'] or 'none'}")
    j = bench.get("jax_summary")
    if j:
        ok = j["geomean_fwd"] <= 1.0 and j["geomean_fwd_bwd"] <= 1.0
        lines.append(f"[{'met' if ok else 'NOT met'}] JAX: fwd {j['geomean_fwd']:.2f}, fwd+bwd "
                     f"{j['geomean_fwd_bwd']:.2f} of its peers (<= 1.0)")
    c = bench.get("cupy_summary")
    if c:
        ok = c["geomean_fwd_vs_torch_native"] <= 2
        lines.append(f"[{'met' if ok else 'NOT met'}] CuPy fwd {c['geomean_fwd_vs_torch_native']:.2f} x torch "
                     "native (<= 2)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="toy sizes on the CPU: checks that the script runs")
    parser.add_argument("--skip-tests", action="store_true", help="no CuPy-parametrised pytest run")
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--jax-ops", default=None, help="comma-separated ops for the JAX conformance run (time)")
    parser.add_argument("--tests-limit", type=int, default=240, help="seconds for the CuPy tests")
    parser.add_argument("--json", default=None, help="write every result to this file")
    a = parser.parse_args()
    smoke = a.cpu_smoke
    found: dict[str, Any] = {}
    import poolspec

    versions = {"poolspec": poolspec.__version__}
    for mod in ("torch", "cupy", "jax", "array_api_compat"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            versions[mod] = None
    found["versions"] = versions
    print("versions: " + json.dumps(versions), flush=True)
    backends = _gpu_backends(smoke)
    if not backends:
        print("no GPU backend sees a GPU: nothing to check (use --cpu-smoke to check the script)")
        return 1
    ops: dict[str, list[str] | None] = {"jax": a.jax_ops.split(",") if a.jax_ops else None}
    if smoke:
        ops = {"torch": ["max_pool2d", "grid_sample"], "jax": ["avg_pool1d"]}
    _section("conformance on the GPU backends")
    found["conformance"] = conformance(backends, ops)
    torch_device = next((d for b, d in backends if b == "torch"), None)
    if not a.skip_tests and not smoke and any(b == "cupy" for b, _ in backends):
        _section("the CuPy-parametrised tests")
        found["cupy_tests"] = cupy_tests(a.tests_limit)
    if torch_device is not None:
        _section(f"determinism of every op's backward on torch {torch_device}")
        found["determinism"] = determinism(torch_device, smoke)
    if not a.skip_bench and torch_device is not None:
        _section(f"device benchmark (torch {torch_device}, CuPy, JAX)")
        from poolspec import device_bench

        found["bench"] = device_bench.run(torch_device, repeat=3 if smoke else 20, reduced=smoke)
        _section(f"roi_align against torchvision on torch {torch_device} (where torchvision imports)")
        found["roi_align"] = roi_align_bench(torch_device, smoke)
    if not a.skip_bench and any(b == "cupy" for b, _ in backends):
        _section("scipy.ndimage on CuPy against cupyx.scipy.ndimage")
        found["scipy_cupyx"] = scipy_cupyx(smoke)
    _section("targets")
    lines = targets(found)
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(found, f, indent=1, default=str)
    correct = all(r.get("passed") for r in found["conformance"].values()) \
        and not found.get("cupy_tests", {}).get("failed") and found.get("determinism", {"ok": True})["ok"]
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
