"""The conformance suite's pytest entry, run as a backend author would (a separate pytest process, no ini of
ours): on poolspec itself, and on conformance/examples/wrong_pools.py, a NumPy avg/max_pool1d with two
deliberate mistakes, with and without an xfails file, under xdist, and through ``conformance_tests`` in a test
module of the author's own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from poolspec.conformance import case_id, case_phases, golden

ROOT = Path(__file__).resolve().parents[1]
WRONG = ROOT / "conformance" / "examples" / "wrong_pools.py"
OPS = "avg_pool1d,max_pool1d"


def _pytest(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the author's ini, not ours
    proc = subprocess.run([sys.executable, "-m", "pytest", "-c", str(tmp_path / "pytest.ini"), "-p", "no:cacheprovider",
                           "-q", "-rf", *args], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _failed(out: str) -> set[str]:
    return set(re.findall(r"FAILED \S*test_conformance\[([^\]]+)\]", out))


def _summary(out: str) -> dict[str, list[int]]:
    part = out.split("poolspec conformance ===")[1]
    return {m[0]: [int(v) for v in m[1:]] for m in re.findall(r"^(\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", part, re.M)}


def _drops(case: golden.Golden) -> bool:
    """Whether torch drops the last ceil-mode window of this avg_pool1d case because it starts in the right
    padding."""
    a = case.arguments
    if "dilation" in a:  # poolspec's extension: inexpressible for a module without it (skipped, not failed)
        return False

    def first(v: int | tuple[int, ...]) -> int:
        return v[0] if isinstance(v, tuple) else v

    k, p = first(a["kernel_size"]), first(a.get("padding", 0))
    s = first(a["stride"]) if a.get("stride") is not None else k
    n = case.arrays()["input"].shape[-1]
    if not a.get("ceil_mode") or n + 2 * p < k:
        return False
    last = -(-(n + 2 * p - k) // s)  # index of the last window ceil_mode would add
    return last * s >= n + p


def test_poolspec_passes_its_own_suite(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", "avg_pool2d",
                      "--poolspec-include=-g0[0-3]")
    assert rc == 0, out
    cases = [c for c in golden.cases(["avg_pool2d"]) if re.search("-g0[0-3]", case_id(c, "forward"))
             and c.dtype != "bfloat16"]  # NumPy has no bfloat16: those skip
    assert _summary(out)["avg_pool2d"][1:3] == [len(cases), 0]
    # numpy has no autodiff: the double-backward tests skip, every other phase passes
    ran = sum(len([p for p in case_phases(c) if p != "double-backward"]) for c in cases)
    assert f"{ran} passed" in out


def test_wrong_implementation_fails_exactly_its_mistakes(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", OPS,
                      "--poolspec-phases", "forward", env={"POOLSPEC_IMPL": str(WRONG)})
    assert rc == 1, out
    failed = _failed(out)
    by_id = {case_id(c, "forward"): c for c in golden.cases(OPS.split(","))}
    avg = {i for i in failed if i.startswith("avg_pool1d")}
    # mistake 1 (a last ceil-mode window starting in the right padding is kept) shows exactly where torch's rule
    # (docs/TORCH_NUMERICS.md section 1) drops a window, and in error cases where that window is all there is
    dropped = {i for i, c in by_id.items() if c.op == "avg_pool1d" and c.error is None and c.dtype != "bfloat16"
               and _drops(c)}  # NumPy has no bfloat16
    assert dropped and avg - dropped == {i for i in avg if by_id[i].error is not None}
    assert dropped <= avg
    # mistake 2 (>= in the max scan): the last of tied maxima wins, so inputs of ones fail on their indices
    assert any(i.startswith("max_pool1d") for i in failed)
    table = _summary(out)
    assert table["avg_pool1d"][2] == len({by_id[i].name for i in avg})
    assert "conformance of wrong_pools on numpy" in out


def test_xfails_file_and_xdist(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", OPS,
                      env={"POOLSPEC_IMPL": str(WRONG)})
    failed = sorted(_failed(out))
    assert rc == 1 and failed
    xfails = tmp_path / "xfails.txt"
    # ids, a pattern, and a pytest node id, each with a comment
    avg = [i for i in failed if i.startswith("avg_pool1d")]
    lines = ["# mistake 1", *avg, "# mistake 2", r"max_pool1d-.*  # every max_pool1d test that fails",
             "poolspec/conformance/test_suite.py::test_conformance[avg_pool1d-g000-float64-forward]"]
    xfails.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", OPS,
                      "--poolspec-xfails-file", str(xfails), "-n", "2", env={"POOLSPEC_IMPL": str(WRONG)})
    assert rc == 0, out
    assert f"{len(failed)} xfailed" in out and "xpassed" in out  # passing max_pool1d tests match the pattern
    table = _summary(out)
    assert table["avg_pool1d"][2] == 0 and table["max_pool1d"][2] == 0  # failed column: none left
    assert "xfailed" in out.split("poolspec conformance ===")[1]


def test_conformance_tests_in_an_authors_module(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(
        "from poolspec.conformance.pytest_plugin import conformance_tests\n"
        f"test_pools = conformance_tests(impl={str(WRONG)!r}, ops=['avg_pool1d'], include=['-g06'],\n"
        "                               xfails=['avg_pool1d-g06[6-9]-.*-forward'])\n",
        encoding="utf-8")
    rc, out = _pytest(tmp_path, "test_mine.py")
    assert rc == 0, out
    assert re.search(r"\d+ passed", out) and re.search(r"\d+ xfailed", out)
    assert "conformance of wrong_pools on numpy" in out


def test_options_and_ids(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--collect-only",
                      "--poolspec-ops", "grid_sample", "--poolspec-exclude", "double-backward$")
    assert rc == 0, out
    ids = re.findall(r"test_conformance\[([^\]]+)\]", out)
    want = [case_id(c, p) for c in golden.cases(["grid_sample"]) for p in case_phases(c) if p != "double-backward"]
    assert ids == want and len(set(ids)) == len(ids)
    assert "grid_sample-g000-float64-forward" in ids and "grid_sample-g000-float64-backward" in ids
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-phases", "sideways")
    assert rc == 4 and "unknown 'sideways'" in out


def test_every_case_id_is_unique() -> None:
    ids = [case_id(c, p) for c in golden.cases() for p in case_phases(c)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9_]+-[gre]\d{3}-[a-z0-9]+-(forward|backward|double-backward)", i) for i in ids)


@pytest.mark.parametrize("phase", ["forward", "backward", "double-backward"])
def test_plugin_is_inert_without_conformance_tests(tmp_path: Path, phase: str) -> None:
    (tmp_path / "test_other.py").write_text("def test_x():\n    assert True\n", encoding="utf-8")
    rc, out = _pytest(tmp_path, "test_other.py", "--poolspec-phases", phase)
    assert rc == 0 and "poolspec conformance" not in out and json is not None


def test_the_readme_example_xfails_file_makes_the_run_pass(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", OPS,
                      f"--poolspec-impl={WRONG}", f"--poolspec-xfails-file={WRONG.with_suffix('.xfails.txt')}")
    assert rc == 0, out
    assert re.search(r"\b46 xfailed", out) and "xfails file entries matching no test" not in out


def test_one_run_per_device(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    xfails = tmp_path / "xfails.txt"
    xfails.write_text("avg_pool1d-g000-float64-forward-meta  # a meta tensor holds no values\n", encoding="utf-8")
    rc, out = _pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-backend", "torch",
                      "--poolspec-device", "cpu,meta", "--poolspec-ops", "avg_pool1d", "--poolspec-include=g00[01]-",
                      "--poolspec-phases", "forward", f"--poolspec-xfails-file={xfails}")
    assert rc == 1, out
    assert _failed(out) == {"avg_pool1d-g001-float64-forward-meta"}  # the bare-id line covers no other device
    assert "1 failed, 2 passed, 1 xfailed" in out
    assert "on torch (cpu)" in out and "on torch (meta)" in out


_BUGGY = '''import poolspec


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """poolspec's avg_pool2d with one planted bug: with count_include_pad the divisor counts the padding of
    clipped ceil-mode windows too."""
    if count_include_pad and ceil_mode and divisor_override is None:
        return poolspec.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override=-1) * -1 / _k(kernel_size)
    return poolspec.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _k(k):
    return k * k if isinstance(k, int) else k[0] * k[1]
'''


def _plain_pytest(cwd: Path, *args: str) -> tuple[int, str, float]:
    """The pytest executable itself (not ``python -m pytest``, which would put the current directory on
    sys.path), in the author's directory."""
    import time

    exe = Path(sys.executable).with_name("pytest")
    start = time.perf_counter()
    proc = subprocess.run([str(exe), "-p", "no:cacheprovider", "-q", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={k: v for k, v in os.environ.items()
                                                       if not k.startswith("POOLSPEC_")})
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def test_plain_pytest_finds_the_authors_module_and_names_the_call(tmp_path: Path) -> None:
    """The documented command, run with plain ``pytest`` where the author's package lives: the module is
    found, exactly the planted cases fail, the summary is printed, and each message quotes the call, the
    flags and how to load the case."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "mypkg" / "pools.py").write_text(_BUGGY, encoding="utf-8")
    rc, out, _ = _plain_pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", "--poolspec-impl",
                               "mypkg.pools", "--poolspec-backend", "numpy", "--poolspec-ops", "avg_pool2d",
                               "--poolspec-phases", "forward")
    assert rc == 1, out
    cases = [c for c in golden.cases(["avg_pool2d"]) if c.dtype != "bfloat16"]
    planted = {case_id(c, "forward") for c in cases if c.error is None and c.arguments.get("ceil_mode")
               and c.arguments.get("count_include_pad", True) and c.arguments.get("divisor_override") is None}
    # the bug changes only windows clipped by the input's end: the cases whose values it changes fail
    failed = _failed(out)
    assert failed and failed <= planted, sorted(failed - planted)
    assert "poolspec conformance ===" in out and "avg_pool2d" in _summary(out)
    one = sorted(failed)[0]
    c = poolspec_case = __import__("poolspec").conformance.case(one)
    assert poolspec_case.op == "avg_pool2d"
    assert f"call: avg_pool2d(a['input'], kernel_size={c.arguments['kernel_size']!r}" in out
    assert "flags: " in out and f"poolspec.conformance.case({one!r}).arrays()" in out
    assert "implementation " in out and "reference " in out and "np.float64" not in out


@pytest.mark.parametrize("option", ["--poolspec-backend=nump", "--poolspec-ops=avg_pool2dd",
                                    "--poolspec-phases=forwrd", "--poolspec-impl=mypkg.nope",
                                    "--poolspec-impl=nothere.py"])
def test_a_misspelt_option_is_one_usage_error(tmp_path: Path, option: str) -> None:
    rc, out, seconds = _plain_pytest(tmp_path, "--pyargs", "poolspec.conformance.test_suite", option)
    assert rc == 4, out
    assert "ERROR: --poolspec-" in out and option.split("=")[1] in out, out
    assert not re.search(r"\d+ (passed|failed)", out)  # no test ran
    assert seconds < 30


def test_conformance_tests_takes_strings_and_refuses_unknown_ops() -> None:
    from poolspec.conformance.pytest_plugin import conformance_tests

    fn = conformance_tests(ops="avg_pool1d", phases="forward")
    ids = [p.id for p in fn.pytestmark[0].args[1]]
    assert ids and all(i.startswith("avg_pool1d-") and i.endswith("-forward") for i in ids)
    with pytest.raises(pytest.UsageError, match="avg_pool1dd"):
        conformance_tests(ops="avg_pool1d,avg_pool1dd")


def test_case_lookup_by_either_id() -> None:
    from poolspec import conformance

    c = golden.cases(["max_pool2d"])[5]
    for name in (case_id(c, "forward"), conformance.case_key(c), c.name, case_id(c, "forward") + "-cpu"):
        assert conformance.case(name) == c
    with pytest.raises(KeyError, match="no stored case"):
        conformance.case("max_pool2d-g999-float64-forward")
