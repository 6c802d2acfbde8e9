"""The conformance paths (``poolspec.conformance.paths``) on a small sample, against the stored torch 2.13
references: torch.nn.functional through torch.compile (the inductor path peer), poolspec's own JAX ops through
jax.jit, the export to onnxruntime where onnxscript and onnxruntime are installed; the statuses agree with the
committed path-peer results; and the options that choose a path are checked."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from poolspec.conformance import golden, paths
from poolspec.conformance.families import families
from poolspec.conformance.runner import poolspec_implementation, run_case

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_JAX = importlib.util.find_spec("jax") is not None
HAS_ORT = not paths.PATHS["export-ort"].missing()


def _first_cases(per_family: int) -> list[golden.Golden]:
    """The first ``per_family`` non-error cases of each family's first op, in the path peers' sample order."""
    out = []
    for fam in families():
        picked = [c for c in paths.sample(golden.cases([fam.ops[0]]), per_family + 1) if c.error is None]
        out += picked[:per_family]
    return out


def _stored(peer: str) -> dict[str, str]:
    path = RESULTS / f"{peer}.json"
    if not path.exists():
        return {}
    return {c["id"]: c["status"] for c in json.loads(path.read_text(encoding="utf-8"))["cases"]}


# torch.compile (inductor) gives avg_pool2d's ceil-mode window of one in-input cell half its gradient with
# count_include_pad=True (MATRIX.md, the inductor peer's findings): the path must be seen failing there
INDUCTOR_BUG = "avg_pool2d-g000"


def _torch_cases() -> list[golden.Golden]:
    """Per family, the first case the committed inductor results pass (drawn, as the peer's sample is, from the
    cases torch's eager call passes; torchvision's roi ops are not in torch.nn.functional), and the bug's case."""
    stored = _stored("inductor")
    out = []
    for fam in families():
        name = next((n for n, status in stored.items() if status == "pass" and any(
            n.startswith(op + "-") for op in fam.ops)), None)
        if name is not None:
            out.append(next(c for c in golden.cases([name.split("-", 1)[0]]) if c.name == name))
    return out + [c for c in golden.cases(["avg_pool2d"]) if c.name == INDUCTOR_BUG]


TORCH_CASES = _torch_cases()


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
@pytest.mark.parametrize("case", TORCH_CASES, ids=lambda c: c.name)
def test_inductor_path(case: golden.Golden) -> None:
    from poolspec.conformance.backends import Backend

    bk = Backend("torch")
    eager = run_case(bk, paths.torch_eager(), case, paths.PATHS["compile"].phases)
    assert eager.status == "pass", eager.problems  # the sample is of cases torch's eager call passes
    result = run_case(bk, paths.torch_peer("inductor"), case, paths.PATHS["compile"].phases)
    if case.name == INDUCTOR_BUG:
        assert result.status == "fail" and result.problems[0].startswith("grad_input"), result.problems
        assert "output" in result.checks and "grad_input" in result.checks
    else:
        assert result.status == "pass", result.problems
    stored = _stored("inductor").get(case.name)
    assert stored in (None, result.status), f"results/inductor.json has {stored}"


# poolspec under jax.jit: every family traces, except two rules poolspec documents as needing concrete values
JIT_EXPECTED_FAIL = {
    "roi_align": "an adaptive sampling_ratio (<= 0) reads the boxes' values",
}


@pytest.mark.skipif(not HAS_JAX, reason="jax not installed")
@pytest.mark.parametrize("case", _first_cases(1), ids=lambda c: c.name)
def test_jit_path(case: golden.Golden) -> None:
    from poolspec.conformance.backends import Backend

    result = run_case(Backend("jax"), paths.wrap(poolspec_implementation(), "jit"), case)
    if case.op in JIT_EXPECTED_FAIL:
        assert result.status == "fail" and "trace" in result.problems[0], result.problems
    else:
        assert result.status == "pass", result.problems
        assert "grad_grad_output" in result.checks or "grad_output" not in case.files or \
            "grad_grad_output" not in case.files


@pytest.mark.skipif(not HAS_ORT, reason="export-ort needs onnxscript and onnxruntime (not test dependencies)")
@pytest.mark.parametrize("name", ["grid_sample-g000", "max_pool2d-g001"])
def test_export_ort_path(name: str) -> None:
    from poolspec.conformance.backends import Backend

    case = next(c for c in golden.cases([name.rsplit("-", 1)[0]]) if c.name == name)
    result = run_case(Backend("torch"), paths.torch_peer("export-ort"), case, ("forward",))
    assert result.status == "pass", result.problems


def test_paths_refuse_what_they_cannot_run() -> None:
    with pytest.raises(ValueError, match="unknown path 'tensorrt'; choose one of compile"):
        paths.get("tensorrt")
    with pytest.raises(ValueError, match="unknown path peer"):
        paths.torch_peer("tvm")
    assert paths.PATHS["compile"].phases == ("forward", "backward")  # torch.compile has no double backward
    assert paths.PATHS["export-ort"].phases == ("forward",)


def _pytest(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-c", str(tmp_path / "pytest.ini"), "-p", "no:cacheprovider",
                           "-q", *args], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_pytest_path_option_is_checked(tmp_path: Path) -> None:
    code, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-path", "tensorrt")
    assert code == 4 and "--poolspec-path='tensorrt': unknown path 'tensorrt'" in out, out
    code, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-path", "compile",
                        "--poolspec-backend", "numpy")
    assert code == 4 and "runs on torch arrays, not --poolspec-backend='numpy'" in out, out
    code, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", env={"POOLSPEC_PATH": "jit",
                        "POOLSPEC_PHASES": "double-backward", "POOLSPEC_OPS": "avg_pool1d",
                        "POOLSPEC_INCLUDE": "g00[01]-float64"})
    assert code == (0 if HAS_JAX else 4), out


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_pytest_path_runs_through_compile(tmp_path: Path) -> None:
    code, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-path", "compile",
                        "--poolspec-ops", "avg_pool2d", "--poolspec-include", "g000-float64",
                        "--poolspec-phases", "forward,double-backward")
    assert code == 4 and "the path 'compile' has no double-backward" in out, out
    # poolspec's own avg_pool2d through torch.compile: its gradient is right where inductor's decomposition of
    # torch's is not (the case test_inductor_path sees failing)
    code, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-path", "compile",
                        "--poolspec-ops", "avg_pool2d", "--poolspec-include", "g000-float64")
    assert code == 0 and "2 passed" in out, out
    (tmp_path / "test_mine.py").write_text(
        "from poolspec.conformance.pytest_plugin import conformance_tests\n"
        "test_c = conformance_tests(path='compile', ops='avg_pool1d', include='g000-float64-forward')\n",
        encoding="utf-8")
    code, out = _pytest(tmp_path, "test_mine.py")
    assert code == 0 and "1 passed" in out, out


def test_cli_peer(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "poolspec", "conformance", "--peer", "nosuch"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "not a path peer of this package (inductor, inductor-dynamic, export-ort)" \
        in proc.stderr, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "poolspec", "conformance", "--peer", "nosuch"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "unknown peer 'nosuch'; choose from onnxruntime" in proc.stderr, proc.stderr
    if HAS_TORCH:
        proc = subprocess.run([sys.executable, "-m", "poolspec", "conformance", "--peer", "inductor", "--ops",
                               "affine_grid", "--per-op", "1", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.startswith("inductor: ") and "affine_grid" in proc.stdout, proc.stdout
