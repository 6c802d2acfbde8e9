"""The ratio benchmark runs end to end on tiny shapes (numbers only: no speed is asserted here)."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

from poolspec import bench


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"max_pool2d": (1, 2, 12, 12), "avg_pool2d": (1, 2, 12, 12), "adaptive_avg_pool2d": (1, 2, 13, 13),
             "avg_pool3d": (1, 2, 4, 4, 4), "max_pool1d": (1, 2, 16), "interpolate": (1, 2, 8, 8)}
    cases = []
    for c in bench.CASES:
        args = dict(c.args)
        if "size" in args:
            args["size"] = (5, 5)
        cases.append(bench.BenchCase(c.key, c.op, small[c.op], args))
    monkeypatch.setattr(bench, "CASES", cases)
    monkeypatch.setattr(bench, "SCALE_CASES", {"1": [(1, 2, 8, 8), (1, 2, 16, 8), (1, 2, 16, 16), (1, 2, 32, 32)]})


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
def test_every_case_runs_and_is_summarised(tiny: None, backend: str, tmp_path) -> None:
    if backend != "numpy" and importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed")
    if backend == "numpy" and importlib.util.find_spec("onnx") is None:
        pytest.skip("onnx is not installed")
    results = bench.run([backend], repeat=1, scale=(backend != "jax"))
    rows = results["cases"]
    assert len(rows) == len(bench.CASES)
    summary = results["summary"][backend]
    if backend == "numpy":
        assert "speedup_vs_onnx" in rows[0] and "max_memory_ratio" in summary
        assert set(results["scale"]) == {"numpy case 1"}
    else:
        assert all(r["ratio_fwd"] > 0 and r["ratio_fwd_bwd"] > 0 for r in rows)
    if backend == "torch":  # the native peer is swept at the same sizes
        row = results["scale"]["torch case 1"]
        assert math.isfinite(row["peer_slope"]) and len(row["peer_seconds"]) == 4
        assert summary["geomean_ratio_fwd"] > 0
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    assert json.loads(path.read_text())["environment"]["cpus"]


def test_slope_of_a_power_law() -> None:
    assert bench._slope([1, 2, 4, 16], [3.0, 6.0, 12.0, 48.0]) == pytest.approx(1.0)
    assert bench._slope([1, 2, 4, 16], [1.0, 4.0, 16.0, 256.0]) == pytest.approx(2.0)


def test_plot_writes_a_png(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    rows = [{"backend": "torch", "case": c.key, "ratio_fwd": 1.0, "ratio_fwd_bwd": 1.2} for c in bench.CASES]
    bench.plot({"cases": rows}, str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_compiled_runner_times_both_sides_and_reports_compile_time(tiny: None, monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setattr(bench, "CASES", [bench.CASES[0], bench.CASES[7]])  # a max pool and bilinear
    results = bench.run(["torch-compile"], repeat=1, scale=False)
    rows = results["cases"]
    assert len(rows) == 2 and all(r["ratio_fwd"] > 0 and r["compile_mine"] > 0 for r in rows)
    assert results["summary"]["torch-compile"]["median_compile_s_peer"] > 0


def test_torch_extras_report_ordinary_global_max_and_tiny_calls(monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setattr(bench, "ORDINARY", bench.ORDINARY[-1:])
    monkeypatch.setattr(bench, "GLOBAL_MAX", bench.GLOBAL_MAX[:1])
    monkeypatch.setattr(bench, "TINY", [bench.TINY[0], bench.TINY[-1]])  # a pool and max_unpool
    out = bench.torch_extras(repeat=1, tiny_calls=2)
    assert [len(out["ordinary"]), len(out["global_max"]), len(out["tiny"])] == [1, 1, 2]
    assert all(r["ratio_fwd"] > 0 and r["ratio_fwd_bwd"] > 0 for rows in out.values() for r in rows)


def test_grid_sample_suite_reports_every_ratio(monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    small = [bench.BenchCase(c.key, c.op, (2, 3, 8, 8) if not c.args.get("tiny") else c.shape, c.args)
             for c in bench.GRID_SAMPLE]
    assert {c.args["grid"] for c in small} == {"affine", "flow"} and any(c.args.get("tiny") for c in small)
    assert {c.args["padding_mode"] for c in small} == {"zeros", "border"}
    monkeypatch.setattr(bench, "GRID_SAMPLE", small)
    for case in small:  # both sides compute the same thing on the benchmark's grids
        import poolspec

        x = torch.from_numpy(np.random.default_rng(0).standard_normal(case.shape).astype(np.float32))
        grid = bench.grid_for(torch, case)
        assert tuple(grid.shape) == case.shape[:1] + case.shape[2:] + (2,)
        kw = dict(padding_mode=case.args["padding_mode"], align_corners=False)
        torch.testing.assert_close(poolspec.grid_sample(x, grid, **kw), torch.nn.functional.grid_sample(x, grid, **kw))
    results = bench.run(["torch"], repeat=1, grid_only=True)
    rows = results["grid_sample"]
    assert [r["case"] for r in rows] == [c.key for c in small]
    for key in ("ratio_fwd", "ratio_fwd_bwd", "ratio_dx", "ratio_backward_fn"):
        assert all(r[key] > 0 and math.isfinite(r[key]) for r in rows)
        assert results["summary"]["torch"][f"grid_sample_geomean_{key}"] > 0
    assert json.loads(json.dumps(results))["grid_sample"][0]["padding"] in ("zeros", "border")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_device_suite_runs_on_cpu(tmp_path) -> None:
    """``poolspec bench --device cpu --small``: every call of the device suite (at toy sizes) runs on torch and
    JAX, agrees with the native op, and its backward repeats bit for bit (timings are reported, not checked)."""
    from poolspec import device_bench

    toy = [device_bench.DeviceCase(c.key, c.op, tuple(c.shape[:2]) + (9,) * (len(c.shape) - 2),
                                   dict(c.args, size=(5, 5)) if "size" in c.args else c.args, c.grid)
           for c in device_bench.CASES]
    rows = device_bench.torch_rows("cpu", toy, repeat=1, fused=False)
    assert [r["case"] for r in rows] == [c.key for c in device_bench.CASES]
    for r in rows:
        assert "error" not in r, r
        assert r["max_abs_diff"] < 1e-5 and r["grad_max_abs_diff"] < 1e-4, r
        assert r["poolspec_bwd_bit_identical_x5"] and r["poolspec_deterministic_mode"] == "runs", r
    s = device_bench.summary(rows)
    assert s["errors"] == [] and math.isfinite(s["geomean_fwd_bwd"])
    fused = device_bench.torch_rows("cpu", [toy[2], toy[8]], repeat=1)  # with eager fusion: two cases
    assert all("error" not in r and r["fused_bwd_bit_identical_x5"] for r in fused), fused
    assert math.isfinite(device_bench.summary(fused)["fused_geomean_fwd_bwd"])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_model_suite_runs() -> None:
    """``poolspec bench --models`` at a toy batch, eagerly: every model runs with either library's ops."""
    from poolspec import bench_models

    rows = bench_models.run(repeat=1, batch=2, modes=("eager", "eager-fused"))
    assert [r["model"] for r in rows] == ["resnet-style", "segnet-style", "spatial-transformer"]
    assert all(math.isfinite(r[f"{m}_ratio"]) and r[f"{m}_ratio"] > 0 for r in rows for m in ("eager", "eager-fused"))
