"""Known upstream bug classes as stored cases (``poolspec/data/known_bugs.json``): each class's deliberately buggy
adapter (``conformance/examples/known_bugs.py``) fails exactly the class's cases, and the run report names the
class; the same adapter with its bug switched off passes; and poolspec passes every known-bug case on every
installed backend."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from poolspec.conformance import golden, known_bugs, runner
from poolspec.conformance.backends import Backend

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "conformance" / "examples"))

import known_bugs as adapters  # noqa: E402

CLASSES = known_bugs.classes()
IDS = [c.id for c in CLASSES]


def test_catalogue_names_at_least_twelve_classes_with_upstream_and_stored_cases():
    assert len(CLASSES) >= 12
    assert len(set(IDS)) == len(IDS)
    keys = {runner.case_key(c) for c in golden.cases()}
    for c in CLASSES:
        assert c.title and c.rule, c.id
        assert c.upstream and all(u.startswith("https://github.com/") for u in c.upstream), c.id
        assert c.cases and len(set(c.cases)) == len(c.cases), c.id
        assert set(c.cases) <= keys, (c.id, sorted(set(c.cases) - keys)[:5])
        assert {k.rsplit("-", 2)[0] for k in c.cases} <= set(c.ops), c.id
        assert sorted(adapters.BUGS[c.id][0]) == sorted(c.ops), c.id
    assert set(adapters.BUGS) == set(IDS)


@pytest.mark.parametrize("bug", CLASSES, ids=IDS)
def test_buggy_adapter_fails_its_class_and_the_summary_names_it(bug):
    report = runner.run("numpy", ops=list(bug.ops), implementation=adapters.implementation(bug.id))
    failed = [r.id for r in report.failures]
    assert sorted(failed) == sorted(bug.cases)
    table = report.table()
    assert "Known bug classes hit:" in table
    assert f"known bug {bug.id}: {len(bug.cases)} of {len(bug.cases)} cases failed" in table
    assert bug.upstream[0] in table


@pytest.mark.parametrize("bug", CLASSES, ids=IDS)
def test_adapter_with_its_bug_off_passes(bug):
    # so every failure above is the bug's, not the adapter's
    report = runner.run("numpy", ops=list(bug.ops), implementation=adapters.implementation(bug.id, buggy=False))
    assert report.passed, [(r.id, r.problems[:1]) for r in report.failures[:5]]
    assert sum(r.status == "pass" for r in report.results) >= len(bug.cases)
    assert "Known bug classes" not in report.table()


def test_summary_lists_only_the_classes_hit():
    assert known_bugs.section([]) == []
    bug = CLASSES[0]
    lines = known_bugs.section(bug.cases[:1])
    assert lines[0].startswith("Known bug classes hit: ")
    assert any(line.startswith(f"known bug {bug.id}: 1 of {len(bug.cases)} cases failed") for line in lines)
    # stored case names (the pytest summary's) map to their keys
    name = next(c.name for c in golden.cases(list(bug.ops)) if runner.case_key(c) == bug.cases[0])
    assert known_bugs.hits([name])[0][0].id == bug.id


def _poolspec_on(backend_name: str, keys: set[str]) -> None:
    cases = [c for c in golden.cases() if runner.case_key(c) in keys]
    assert len(cases) == len(keys)
    bk, impl = Backend(backend_name), runner.poolspec_implementation()
    jobs = (os.cpu_count() or 1) if backend_name == "jax" else 1
    for op in {c.op for c in cases}:
        runner.family(op)  # imports done before threads start (as runner.run does)
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda c: runner.run_case(bk, impl, c), cases))
    failed = [(r.id, r.problems[:1]) for r in results if r.status == "fail"]
    assert not failed, failed[:10]
    assert sum(r.status == "pass" for r in results) > len(cases) // 2


# JAX (a compilation per case and phase) and Dask run a spread, as tests/test_conformance.py does for the whole
# suite: each class's first and last case; the slow test runs them all
_SPREAD = ("jax", "dask")


def test_poolspec_passes_every_known_bug_case(backend):
    if backend.name in _SPREAD:
        keys = {k for c in CLASSES for k in (c.cases[0], c.cases[-1])}
    else:
        keys = {k for c in CLASSES for k in c.cases}
    _poolspec_on(backend.name, keys)


@pytest.mark.slow
def test_poolspec_passes_every_known_bug_case_all_of_them(backend):
    if backend.name not in _SPREAD:
        pytest.skip("the default run takes every case on this backend")
    _poolspec_on(backend.name, {k for c in CLASSES for k in c.cases})


def test_pytest_summary_names_the_class(tmp_path):
    # the pytest entry a backend author runs: its "poolspec conformance" summary ends with the class hit
    bug = next(c for c in CLASSES if c.id == "trt-grid-sample-align-corners")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {**os.environ, "POOLSPEC_IMPL": str(ROOT / "conformance" / "examples" / "known_bugs.py"),
           "KNOWN_BUG": bug.id}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-c", str(tmp_path / "pytest.ini"), "-p", "no:cacheprovider",
                           "-q", "--pyargs", "poolspec.conformance.test_suite", "--poolspec-ops", "grid_sample",
                           "--poolspec-phases", "forward"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    summary = out.split("poolspec conformance ===")[1]
    assert "Known bug classes hit: 1 of" in summary
    assert f"known bug {bug.id}: {len(bug.cases)} of {len(bug.cases)} cases failed" in summary
