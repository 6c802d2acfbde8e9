"""The conformance suite, the shipped reference vectors and the exports.

The vectors come from torch (scripts/generate_golden.py); these tests check that they are reproducible, cover the
catalogue's rules, pass on every installed backend, catch a wrong implementation, and export in formats that
load back (and, for Burn, compile).
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import poolspec
from poolspec import conformance
from poolspec.conformance import golden
from poolspec.conformance.backends import Backend as ConformanceBackend
from poolspec.conformance.runner import case_phases, poolspec_implementation, run_case
from poolspec.export import export, load_json

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = golden.golden_dir()


# ------------------------------------------------------------------------------------------ the stored vectors

def test_golden_vectors_are_compact_and_shipped():
    files = sorted(p.name for p in GOLDEN.iterdir())
    assert "manifest.json" in files
    total = sum(p.stat().st_size for p in GOLDEN.iterdir())
    assert total <= 24 * 2**20, total  # stored uncompressed for stable bytes; the wheel's zip compresses them
    assert max(p.stat().st_size for p in GOLDEN.iterdir()) < 5 * 2**20
    text = (ROOT / "pyproject.toml").read_text()
    assert '"data/golden/*"' in text  # package data: in the wheel


# What a regeneration must reproduce exactly: the manifest, the file and member layout, every integer array
# (indices) and the seeded arrays the generator draws itself (inputs and cotangents). torch's computed values
# (outputs and derivatives) may move in their last bits with the CPU: its vectorised kernels (Sleef's pow in
# lp_pool, the antialias and Lanczos weight sums) take a different path on AVX2 and AVX-512, and even one
# machine does not always reproduce its own antialias sums (the order of a vector reduction follows buffer
# alignment). Measured against the stored vectors on AMD EPYC (AVX-512) under ATEN_CPU_CAPABILITY=avx512, avx2
# and default, the largest move was 7.4 ulps of the case's scale (below); the bound is 64 of them, for a margin.
# Anything larger - a wrong stored value, a changed rule - fails.
EXACT = ("input", "indices", "output_indices", "grad_output", "grad_input_cotangent")
ULP_BOUND = 64
# the precision the reference is computed in (half precision in float32, rounded once)
_COMPUTE_EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-23, "bfloat16": 2.0**-23}


def _storage_spacing(a: np.ndarray, dtype: str) -> np.ndarray:
    """One ulp of each stored value in its case's dtype (bfloat16 is stored in float32: 16 bits fewer)."""
    if dtype == "float16":
        return np.spacing(np.abs(a).astype(np.float16)).astype(np.float64)
    return np.spacing(np.abs(a).astype(np.float32)).astype(np.float64) * 2.0**16


def golden_differences(stored: dict[str, np.ndarray], fresh: dict[str, np.ndarray],
                       dtypes: dict[str, str]) -> list[str]:
    """What ``fresh`` (one regenerated store) gets wrong against ``stored``: members, dtypes and shapes must
    match, the arrays in EXACT and every non-float array bit for bit, NaN and infinities in place, and each
    other value within ULP_BOUND ulps of its case's scale (the largest finite magnitude among the case's
    stored arrays), plus one ulp of its own for half precision, which rounds once from float32."""
    if list(stored) != list(fresh):
        return [f"members differ: {sorted(set(stored) ^ set(fresh))[:5]}"]
    scale: dict[str, float] = {}
    for key, a in stored.items():
        if a.dtype.kind == "f":
            finite = np.abs(a[np.isfinite(a)])
            case = key.rsplit("/", 1)[0]
            scale[case] = max(scale.get(case, 0.0), float(finite.max()) if finite.size else 0.0)
    wrong = []
    for key, a in stored.items():
        b = fresh[key]
        case, member = key.rsplit("/", 1)
        if a.dtype != b.dtype or a.shape != b.shape:
            wrong.append(f"{key}: {b.dtype}{b.shape}, stored {a.dtype}{a.shape}")
        elif member in EXACT or a.dtype.kind != "f":
            if a.tobytes() != b.tobytes():
                wrong.append(f"{key}: not bit for bit")
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            finite = np.isfinite(a64)
            if not (np.array_equal(np.isnan(a64), np.isnan(b64)) and
                    np.array_equal(a64[~finite & ~np.isnan(a64)], b64[~finite & ~np.isnan(a64)])):
                wrong.append(f"{key}: NaN or infinities moved")
                continue
            dtype = dtypes[case]
            bound = ULP_BOUND * _COMPUTE_EPS[dtype] * scale[case]
            if dtype in ("float16", "bfloat16"):
                bound = bound + _storage_spacing(a64[finite], dtype)
            excess = np.abs(a64[finite] - b64[finite]) - bound
            if excess.size and excess.max() > 0:
                at = int(np.argmax(excess))
                wrong.append(f"{key}: {b64[finite][at]!r} against stored {a64[finite][at]!r}, beyond "
                             f"{ULP_BOUND} ulps of the case's scale {scale[case]:.3g}")
    return wrong


def _load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {key: archive[key] for key in archive.files}


def test_golden_vectors_regenerate(tmp_path):
    """scripts/generate_golden.py with this torch rewrites the manifest byte for byte, every input, index and
    cotangent bit for bit, and every computed value within the stated bound."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")  # the Lanczos reference
    manifest = golden.manifest()
    if torch.__version__.split("+")[0] != manifest["torch_version"]:
        pytest.skip(f"the vectors are torch {manifest['torch_version']}'s")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_golden.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    stored = sorted(p.name for p in GOLDEN.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == stored
    assert (tmp_path / golden.MANIFEST).read_bytes() == (GOLDEN / golden.MANIFEST).read_bytes()
    dtypes = {c["id"]: c["dtype"] for c in manifest["cases"]}
    wrong = []
    for name in stored:
        if name.endswith(".npz"):
            wrong += golden_differences(_load(GOLDEN / name), _load(tmp_path / name), dtypes)
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("store, key", [("lp_pool2d.npz", "lp_pool2d-g007/output"),
                                        ("interpolate-bicubic.npz", None), ("avg_pool1d.npz", None)])
def test_regeneration_check_catches_what_exceeds_its_bound(store, key):
    """The regeneration check lets a one-ulp move pass and catches 1e-9, or any change to an exact array."""
    stored = _load(GOLDEN / store)
    dtypes = {c["id"]: c["dtype"] for c in golden.manifest()["cases"]}
    if key is None:  # the first float64 output
        key = next(k for k, a in stored.items() if k.endswith("/output") and a.dtype == np.float64 and a.size)
    a = stored[key]
    at = int(np.argmax(np.abs(a)))
    assert golden_differences(stored, dict(stored), dtypes) == []
    for planted, caught in ((np.nextafter(a.flat[at], np.inf), False), (a.flat[at] + 1e-9, True)):
        fresh = dict(stored, **{key: a.copy()})
        fresh[key].flat[at] = planted
        assert bool(golden_differences(stored, fresh, dtypes)) == caught, (key, planted)
    source = key.rsplit("/", 1)[0] + "/input"
    fresh = dict(stored, **{source: stored[source].copy()})
    fresh[source].flat[0] = np.nextafter(fresh[source].flat[0], np.inf)
    assert golden_differences(stored, fresh, dtypes) == [f"{source}: not bit for bit"]


# ------------------------------------------------------------------------------------------------- the runner

# On the slow backends (one JAX compilation, or one large Dask graph, per call) the whole run is the CLI's
# (`poolspec conformance --backend jax`); here they run a spread of ops in full, and every phase of every op
# on one stored case (test_every_phase_of_every_op_runs_on_every_backend).
SUBSETS = {"jax": ["adaptive_avg_pool1d", "max_unpool1d", "lp_pool1d"],
           "dask": ["avg_pool1d", "adaptive_max_pool1d", "max_unpool2d", "lp_pool2d"]}


def test_conformance_passes_on_every_backend(backend):
    ops = SUBSETS.get(backend.name)
    report = conformance.run(backend.name, ops=ops)
    assert report.passed, report.table()
    run = [r for r in report.results if r.status == "pass"]
    assert len(run) >= 0.5 * len(report.results)
    if backend.name in ("torch", "jax"):  # second order through autodiff was checked
        assert any("grad_grad_output" in r.checks for r in run)
    assert any("bit-identical repeat" in r.checks for r in run)
    assert any("raises" in r.checks for r in run)


def test_conformance_passes_on_the_paths_a_gpu_takes(backend):
    """The few-operation paths that torch CUDA and CuPy take (one gather over every tap, one reduction: what the
    op counts of poolspec.bench_counts measure), run here on the CPU arrays of NumPy and torch: every stored
    case within its tolerances and bit-identical run to run, as the CPU paths."""
    from poolspec import _compat
    from poolspec.bench_counts import as_on_a_gpu

    with as_on_a_gpu():
        if not _compat.launch_bound(backend.asarray(np.zeros(1))):
            pytest.skip(f"{backend.name} has no GPU paths")
        report = conformance.run(backend.name)
    assert report.passed, report.table()
    assert sum(r.status == "pass" for r in report.results) >= 0.9 * len(report.results)


def _a_case_per_phase() -> list[golden.Golden]:
    """For each op and each phase it has (forward, backward, double-backward), the first stored case with
    that phase, preferring a call that returns (not an error case) and float64: one case can stand for several
    phases."""
    chosen: dict[tuple[str, str], golden.Golden] = {}

    def rank(c: golden.Golden) -> tuple[bool, bool]:
        return c.error is not None, c.dtype != "float64"

    for case in golden.cases():
        for phase in case_phases(case):
            have = chosen.get((case.op, phase))
            if have is None or rank(case) < rank(have):
                chosen[(case.op, phase)] = case
    return list({c.name: c for c in chosen.values()}.values())


def test_every_phase_of_every_op_runs_on_every_backend(backend):
    """A whole phase of an op cannot fail unseen on any backend (second order under JAX's jit once did, for
    every max pool): each op's forward, backward and (with autodiff: torch, JAX) second order, on a stored case
    each, whatever subset the full run above takes."""
    impl = poolspec_implementation()
    bk = ConformanceBackend(backend.name)
    cases = _a_case_per_phase()
    assert {c.op for c in cases} == {c.op for c in golden.cases()}
    failed, checks = [], {}
    for case in cases:
        result = run_case(bk, impl, case)
        if result.status != "pass":
            failed.append(f"{result.id} {result.status}: " + "; ".join(result.problems[:3]))
        checks.setdefault(case.op, set()).update(result.checks)
    assert not failed, "\n".join(failed)
    for case in cases:
        phases = case_phases(case)
        assert "namespace/dtype/device" in checks[case.op], case.op
        if "backward" in phases:
            assert "bit-identical repeat" in checks[case.op], case.op
        if "double-backward" in phases and bk.autodiff:
            assert "grad_grad_output" in checks[case.op], case.op


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "poolspec", *args], capture_output=True, text=True, timeout=600,
                          **kwargs)


def test_cli_conformance_numpy_needs_no_torch(tmp_path):
    out = tmp_path / "report.json"
    code = ("import sys; from poolspec.cli import main; "
            f"rc = main(['conformance', '--backend', 'numpy', '--json', {str(out)!r}]); "
            "assert 'torch' not in sys.modules and 'jax' not in sys.modules, 'a backend was imported'; "
            "sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "avg_pool2d" in proc.stdout and "total" in proc.stdout
    assert "[" in proc.stderr  # the progress lines
    report = json.loads(out.read_text())
    assert report["passed"] and report["backend"] == "numpy"
    assert sum(row["cases"] for row in report["per_op"].values()) == len(golden.cases())


def test_cli_conformance_errors():
    assert _cli("conformance", "--ops", "avg_pool9d").returncode == 2
    assert _cli("conformance", "--backend", "tensorflow").returncode == 2
    assert _cli("conformance", "--ops", "avg_pool1d", "--jobs", "0").returncode == 2


def test_cases_in_threads_report_what_one_thread_does():
    """--jobs runs cases in threads (the default on JAX): same results, in catalogue order."""
    ops = ["max_pool2d", "interpolate"]
    one, two = (conformance.run("numpy", ops=ops, jobs=j) for j in (1, 2))
    assert [r.name for r in two.results] == [c.name for c in golden.cases(ops)]
    assert [(r.name, r.status, r.checks, r.max_abs) for r in one.results] == \
        [(r.name, r.status, r.checks, r.max_abs) for r in two.results]


WRONG = '''
"""avg_pool that ignores count_include_pad (always counts the padding), everything else right."""
import poolspec


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return poolspec.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, True, divisor_override)
'''

RIGHT = '''
"""A correct avg_pool2d by delegation, with no explicit backward (autodiff is used where there is one)."""
import poolspec


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return poolspec.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
'''


@pytest.fixture
def impl_modules(tmp_path, monkeypatch):
    (tmp_path / "wrong_avg.py").write_text(WRONG)
    (tmp_path / "right_avg.py").write_text(RIGHT)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_wrong_implementation_fails(impl_modules):
    import os

    env = {**os.environ, "PYTHONPATH": str(impl_modules)}
    bad = _cli("conformance", "--impl", "wrong_avg", "--ops", "avg_pool2d", "--quiet", env=env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAIL avg_pool2d" in bad.stdout
    good = _cli("conformance", "--impl", "right_avg", "--ops", "avg_pool2d", "--quiet", env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    wrong = importlib.import_module("wrong_avg")
    report = conformance.check(wrong.avg_pool2d, "avg_pool2d", "numpy")
    assert not report.passed
    failed = {r.name for r in report.failures}
    excluding = {c.name for c in golden.cases(["avg_pool2d"]) if c.arguments.get("count_include_pad") is False}
    assert failed and failed <= excluding  # exactly the rule it breaks, and only there
    torch = pytest.importorskip("torch")
    assert torch is not None
    right = importlib.import_module("right_avg")
    assert conformance.check(right.avg_pool2d, "avg_pool2d", "torch").passed  # backward by torch autograd


def test_not_expressible_calls_are_neither_passed_nor_failed():
    """A peer adapter raises NotExpressible for an argument its API lacks (the whole case is "inexpressible"),
    or from its backward only (the forward is still judged, the gradient noted as beyond it)."""
    import poolspec

    def avg(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        if divisor_override is not None:
            raise conformance.NotExpressible("no divisor_override")
        return poolspec.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)

    def avg_backward(g, x, **arguments):
        raise conformance.NotExpressible("no gradient")

    impl = conformance.Implementation("partial", lambda op: avg, lambda op: avg_backward)
    report = conformance.run("numpy", ops=["avg_pool1d"], implementation=impl)
    by_name = {r.name: r for r in report.results}
    seen = set()
    for case in golden.cases(["avg_pool1d"]):
        r = by_name[case.name]
        if case.dtype == "bfloat16":
            assert r.status == "skip"
        elif "dilation" in case.arguments:  # poolspec's extension, beyond a signature without it
            assert r.status == "inexpressible" and "no dilation" in r.problems[0], r
        elif case.arguments.get("divisor_override") is not None:
            assert r.status == "inexpressible" and "no divisor_override" in r.problems[0], r
        else:
            assert r.status == "pass", r
            backward = case.error is None and "grad_output" in case.files
            assert any("backward not expressible" in n for n in r.notes) == backward, r
        seen.add(r.status)
    assert seen == {"skip", "inexpressible", "pass"} and report.passed
    assert "n/expr" in report.table()


# ------------------------------------------------------------------------------------------------------ exports

def _check_manifest(manifest: dict, fmt: str, dtype: str) -> None:
    assert {"poolspec_version", "torch_version", "cases"} <= set(manifest)
    assert manifest["format"] == fmt and manifest["dtype"] == dtype
    for entry in manifest["cases"]:
        for key in ("id", "op", "arguments", "dtype", "rtol", "atol", "cotangent", "flags", "files"):
            assert key in entry, key
        assert entry["dtype"] == dtype
        assert entry["cotangent"] in ("ones", "seeded random")
        assert hasattr(__import__("torch.nn.functional").nn.functional, entry["op"]) if _has_torch() else True


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("fmt", ["npz", "safetensors", "json"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_export_loads_back(tmp_path, fmt, dtype):
    ops = ["max_pool2d", "interpolate", "lp_pool1d"]
    manifest = export(tmp_path, ops=ops, fmt=fmt, dtype=dtype)
    _check_manifest(manifest, fmt, dtype)
    by_id = {c.name: c for c in golden.cases(ops)}
    assert len(manifest["cases"]) == len([c for c in by_id.values() if c.dtype == dtype]) > 20
    for entry in manifest["cases"]:
        stored = {("indices" if k == "output_indices" else k): v for k, v in by_id[entry["id"]].arrays().items()}
        path = tmp_path / entry["files"][0]
        if fmt == "npz":
            with np.load(path) as f:
                loaded = {k: f[k] for k in f.files}
        elif fmt == "safetensors":
            st = pytest.importorskip("safetensors.numpy")
            loaded = st.load_file(str(path))
        else:
            loaded = load_json(path)
        assert set(loaded) == set(stored), entry["id"]
        for k in stored:
            assert _same(loaded[k], stored[k]), (entry["id"], k)
        assert entry["shapes"]["input"] == list(stored["input"].shape)


def test_export_uses_size_where_it_is_the_same_call(tmp_path):
    torch = pytest.importorskip("torch")
    manifest = export(tmp_path, ops=["interpolate"], fmt="json")
    kinds = {e["size_equivalent"] for e in manifest["cases"]}
    assert kinds == {True, False}
    checked = 0
    for entry in manifest["cases"]:
        if entry.get("error") or not entry["size_equivalent"] or "scale_factor" not in entry["torch_arguments"]:
            continue
        args = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["arguments"].items()}
        assert "scale_factor" not in args and "size" in args
        x = torch.from_numpy(load_json(tmp_path / entry["files"][0])["input"])
        if entry["dtype"] != "float64" or entry["reference"] != "torch":
            continue
        want = load_json(tmp_path / entry["files"][0])["output"]
        got = torch.nn.functional.interpolate(x, **args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=entry["id"])
        checked += 1
    assert checked > 50


def test_export_burn_compiles_against_a_stub(tmp_path):
    manifest = export(tmp_path / "out", fmt="burn", dtype="float32")
    _check_manifest(manifest, "burn", "float32")
    files = sorted((tmp_path / "out" / "burn").glob("*.rs"))
    assert {f.stem for f in files} >= {"avg_pool2d", "max_pool2d", "adaptive_avg_pool2d", "interpolate"}
    text = (tmp_path / "out" / "burn" / "interpolate.rs").read_text()
    assert "with_align_corners(" in text and "TestTensor::<4>::from_floats(" in text and "Tolerance::rel_abs(" in text
    assert "max_pool2d_with_indices(" in (tmp_path / "out" / "burn" / "max_pool2d.rs").read_text()
    text = (tmp_path / "out" / "burn" / "grid_sample.rs").read_text()
    assert ".grid_sample_2d(grid, GridSampleOptions::new(InterpolateMode::Nearest)" in text
    assert "GridSamplePaddingMode::Reflection" in text and "InterpolateMode::Bilinear" in text
    assert text.count("#[ignore") == text.count("fn ") // 2 and "grid_grad" in text  # backward: vectors, ignored
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed")
    stub = ROOT / "tests" / "data" / "burn_stub"
    build = tmp_path / "build"
    build.mkdir()
    harness = (stub / "harness.rs").read_text() + "".join(f'#[path = "{f}"]\nmod {f.stem};\n' for f in files)
    (build / "harness.rs").write_text(harness)
    lib = build / "libburn_tensor.rlib"
    subprocess.run([rustc, "--edition", "2021", "--crate-type", "rlib", "--crate-name", "burn_tensor",
                    str(stub / "burn_tensor.rs"), "-o", str(lib)], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([rustc, "--edition", "2021", "--test", str(build / "harness.rs"), "--extern",
                           f"burn_tensor={lib}", "-o", str(build / "tests")], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    listed = subprocess.run([str(build / "tests"), "--list"], capture_output=True, text=True, check=True).stdout
    assert listed.count(": test") == sum(t.count("#[test]") for t in (f.read_text() for f in files)) > 50


def test_export_cli_and_errors(tmp_path):
    proc = _cli("export", "--ops", "avg_pool1d", "--format", "npz", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert all((tmp_path / e["files"][0]).exists() for e in manifest["cases"])
    assert _cli("export", "--ops", "nope", "--out", str(tmp_path)).returncode == 2
    with pytest.raises(ValueError, match="fmt"):
        export(tmp_path, fmt="onnx")


def test_ulp_and_tolerance_reporting():
    report = conformance.run("numpy", ops=["avg_pool1d"])
    table = report.table()
    assert "max ulp" in table and "avg_pool1d" in table
    row = report.per_op()["avg_pool1d"]
    assert row["failed"] == 0 and row["passed"] + row["skipped"] == row["cases"]
    assert math.isfinite(row["max_ulp"]) and row["max_abs"] < 1e-3


def test_catalogue_exercises_every_argument_of_every_card():
    """The catalogue is derived from the cards: every option a card lists takes a non-default value in some
    stored numeric case of that op."""
    cases = [c for c in golden.cases() if c.error is None]
    for card in poolspec.spec.cards():
        mine = [c for c in cases if c.op == card.name]
        assert mine, card.name
        for arg in card.arguments:
            if arg.is_array or arg.name == "return_indices":  # the runner always asks for the indices
                continue
            if arg.name == "layout":  # the stored vectors are channels-first; test_layout.py replays them channels-last
                continue
            values = [c.arguments[arg.name] for c in mine if arg.name in c.arguments]
            if arg.required:
                assert values, (card.name, arg.name)
                continue
            default = arg.default
            assert any(v != default and v is not None for v in values) or (default is None and values), \
                (card.name, arg.name)


def test_cli_version_and_help_on_every_option(capsys) -> None:
    import argparse

    from poolspec import __version__
    from poolspec.cli import main, parser

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"poolspec {__version__}"
    top = parser()
    subs = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subs.choices.items():
        if name == "bench":  # its own parser: poolspec.cli.bench_main
            continue
        for action in sub._actions:
            assert action.help, f"poolspec {name} {action.option_strings or action.dest}: no help text"
