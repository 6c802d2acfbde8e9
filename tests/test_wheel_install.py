"""A backend author's first run, as conformance/README.md tells it: a fresh virtual environment, the wheel built
from this checkout (not the checkout) and pytest, a buggy implementation module in a directory of the author's,
and the documented command with plain ``pytest``. It must fail exactly the planted cases, print the summary,
quote the failing call and its flags; a misspelt backend, op or phase must be one usage error within seconds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import poolspec
from poolspec.conformance import case_id, golden

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTED = ["--pyargs", "poolspec.conformance.test_suite", "--poolspec-impl", "mypkg.pools",
              "--poolspec-backend", "numpy"]

# one planted bug: ceil_mode is ignored (a NumPy avg_pool2d of the author's, built on poolspec's)
BUGGY = '''import poolspec


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return poolspec.avg_pool2d(x, kernel_size, stride, padding, False, count_include_pad, divisor_override)
'''


def _run(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POOLSPEC_", "PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def author(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the fresh environment's pytest executable, the author's directory)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"  # a copy, so that building writes nothing into the checkout
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(source)],
                 base)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((base / "dist").glob("poolspec-*.whl"))
    _run([sys.executable, "-m", "venv", str(base / "venv")], base).check_returncode()
    python = base / "venv" / "bin" / "python"
    installed = _run([str(python), "-m", "pip", "install", "-q", str(wheel), "pytest"], base)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    probe = _run([str(python), "-c", "import poolspec, sys; print(poolspec.__file__); "
                  "print(sorted({m.split('.')[0] for m in sys.modules}))"], base)
    assert str(base / "venv") in probe.stdout.splitlines()[0], probe.stdout  # the wheel's copy, not the checkout
    assert "'torch'" not in probe.stdout and "'jax'" not in probe.stdout, probe.stdout
    home = base / "author"
    (home / "mypkg").mkdir(parents=True)
    (home / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (home / "mypkg" / "pools.py").write_text(BUGGY, encoding="utf-8")
    return python.with_name("pytest"), home


def _planted() -> set[str]:
    """The avg_pool2d cases whose ceil-mode output has more windows than the floor-mode one (torch's shape rule
    applied to the stored reference output's shape); a NumPy module without backward runs the forward only."""

    def pairs(v: int | tuple[int, ...]) -> tuple[int, ...]:
        return (v, v) if isinstance(v, int) else tuple(v)

    failing = set()
    for c in golden.cases(["avg_pool2d"]):
        # a module without poolspec's dilation extension cannot express the dilated cases (skipped, not failed)
        a = c.arguments
        if c.dtype == "bfloat16" or c.error is not None or not a.get("ceil_mode") or "dilation" in a:
            continue
        k, p = pairs(a["kernel_size"]), pairs(a.get("padding", 0))
        s = pairs(a["stride"]) if a.get("stride") not in (None, ()) else k
        size = c.arrays()["input"].shape[-2:]
        floor = tuple((n + 2 * pi - ki) // si + 1 for n, ki, si, pi in zip(size, k, s, p))
        if floor != tuple(c.arrays()["output"].shape[-2:]):
            failing.add(case_id(c, "forward"))
    return failing


def test_the_documented_command_fails_exactly_the_planted_cases(author: tuple[Path, Path]) -> None:
    pytest_exe, home = author
    start = time.perf_counter()
    proc = _run([str(pytest_exe), "-p", "no:cacheprovider", "-q", *DOCUMENTED], home)
    seconds = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-5000:]
    failed = set(re.findall(r"FAILED \S*test_conformance\[([^\]]+)\]", out))
    planted = _planted()
    assert planted and failed == planted, (sorted(failed - planted), sorted(planted - failed))
    summary = out.split("poolspec conformance ===")[1]
    row = re.search(r"^avg_pool2d\s+(\d+)\s+(\d+)\s+(\d+)", summary, re.M)
    assert row and int(row[3]) == len({f.rsplit("-", 1)[0] for f in failed}), summary
    one = sorted(failed)[0]
    c = poolspec.conformance.case(one)
    assert f"call: avg_pool2d(a['input'], kernel_size={c.arguments['kernel_size']!r}" in out
    assert "ceil_mode=True" in out and any("ceil" in line for line in re.findall(r"^flags: .*", out, re.M))
    assert f"poolspec.conformance.case({one!r}).arrays()" in out
    assert seconds < 300, seconds


@pytest.mark.parametrize("option", ["--poolspec-backend=nump", "--poolspec-ops=avg_pool2dd",
                                    "--poolspec-phases=forwrd"])
def test_a_misspelt_option_is_one_usage_error(author: tuple[Path, Path], option: str) -> None:
    pytest_exe, home = author
    start = time.perf_counter()
    proc = _run([str(pytest_exe), "-p", "no:cacheprovider", "-q", *DOCUMENTED, option], home)
    seconds = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out[-3000:]
    assert "ERROR: --poolspec-" in out and option.split("=")[1] in out, out[-3000:]
    assert not re.search(r"\d+ (passed|failed)", out)
    assert seconds < 30, seconds
