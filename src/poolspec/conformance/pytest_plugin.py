"""The conformance suite as pytest tests: one collected test per case and phase, with a stable id
(``avg_pool2d-g012-float64-forward``, ``...-backward``, ``...-double-backward``), the implementation and
backend chosen by option or environment variable, include/exclude patterns, xfail and skip files, and the
CLI's summary table at the end.

Run against your module of torch-style functions::

    pytest --pyargs poolspec.conformance.test_suite --poolspec-impl mypkg.pools --poolspec-backend numpy \\
        --poolspec-xfails-file xfails.txt

or, inside your own test suite (a file your pytest collects)::

    from poolspec.conformance.pytest_plugin import conformance_tests

    test_poolspec = conformance_tests(impl="mypkg.pools", backend="numpy", xfails_file="xfails.txt")

``--poolspec-path compile`` (or ``compile-dynamic``, ``export-ort``, ``jit``) runs every call through a compiler
or exporter (``poolspec.conformance.paths``), on the path's backend and in the phases it has.

Every option has an environment variable (``POOLSPEC_IMPL``, ``POOLSPEC_BACKEND``, ``POOLSPEC_PATH``,
``POOLSPEC_DEVICE``, ``POOLSPEC_OPS``, ``POOLSPEC_PHASES``, ``POOLSPEC_INCLUDE``, ``POOLSPEC_EXCLUDE``,
``POOLSPEC_XFAILS_FILE``, ``POOLSPEC_SKIPS_FILE``); an option wins over its variable. Include/exclude are regular
expressions searched in the test id (as ONNX's backend test ``include``/``exclude``); an xfails or skips file
holds one id or regular expression per line (matched against the whole id), ``#`` starts a comment (as array-api-tests'
``--xfails-file``). This module is registered as a pytest plugin (entry point ``pytest11``); it adds the options
and the summary, and does nothing in a run that collects no conformance test.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_OPTIONS = {  # option -> (environment variable, help)
    "impl": ("POOLSPEC_IMPL", "module of torch-style functions to test (a dotted name or a .py path; "
                              "default: poolspec itself)"),
    "backend": ("POOLSPEC_BACKEND", "array library the cases' arrays are made in (default numpy)"),
    "device": ("POOLSPEC_DEVICE", "device on that backend (e.g. cuda:0); several, comma-separated, run the suite "
                                  "once per device, each id ending in -<device>"),
    "path": ("POOLSPEC_PATH", "run the implementation through a compiler or exporter: compile, compile-dynamic, "
                              "export-ort (torch arrays), jit (JAX arrays); its backend is the path's"),
    "ops": ("POOLSPEC_OPS", "comma-separated ops (default: all)"),
    "phases": ("POOLSPEC_PHASES", "comma-separated phases: forward, backward, double-backward (default: all)"),
    "include": ("POOLSPEC_INCLUDE", "only ids matching this regular expression (repeatable)"),
    "exclude": ("POOLSPEC_EXCLUDE", "leave out ids matching this regular expression (repeatable)"),
    "xfails-file": ("POOLSPEC_XFAILS_FILE", "file of ids/patterns expected to fail (# comments)"),
    "skips-file": ("POOLSPEC_SKIPS_FILE", "file of ids/patterns to skip (# comments)"),
}
_REPEATABLE = ("include", "exclude")
_KEY = "poolspec_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("poolspec", "poolspec conformance suite")
    for name, (env, text) in _OPTIONS.items():
        group.addoption(f"--poolspec-{name}", action="append" if name in _REPEATABLE else "store", default=None,
                        help=f"{text} [env {env}]")


def pytest_configure(config: pytest.Config) -> None:
    """Options given on the command line are checked at start-up (a usage error, exit status 4), before any
    collection; environment variables alone are checked where the suite is collected."""
    if any(config.getoption(f"--poolspec-{name}", default=None) is not None for name in _OPTIONS):
        Settings.from_config(config)


# ------------------------------------------------------------------------------------------------ settings

def _read_list(path: str | None) -> list[str]:
    if not path:
        return []
    entries = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            # a pytest node id (test_suite.py::test_conformance[<id>]) names the same case as its bare id
            entries.append(entry[entry.index("[") + 1:entry.rindex("]")] if entry.endswith("]") else entry)
    return entries


@dataclass
class Settings:
    """What to run and how; ``from_config`` fills it from options, then environment variables."""

    impl: str | None = None
    backend: str = "numpy"
    path: str | None = None
    devices: tuple[str | None, ...] = (None,)
    ops: list[str] | None = None
    phases: tuple[str, ...] = ("forward", "backward", "double-backward")
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    xfails: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)

    @classmethod
    def from_values(cls, get: Any) -> Settings:
        def one(name: str) -> Any:
            value = get(name)
            return value if value is not None else os.environ.get(_OPTIONS[name][0]) or None

        def many(name: str) -> list[str]:
            value = get(name)
            env = os.environ.get(_OPTIONS[name][0])
            return list(value) if value else ([env] if env else [])

        from .runner import PHASES

        phases = tuple(p.strip() for p in one("phases").split(",")) if one("phases") else PHASES
        devices = tuple(d.strip() for d in one("device").split(",")) if one("device") else (None,)
        ops = [o.strip() for o in one("ops").split(",") if o.strip()] if one("ops") else None
        path = one("path")
        # a path fixes the backend (torch tensors for torch.compile and export, JAX arrays for jit) and drops the
        # phases it cannot run (torch.compile has no double backward; an exported model no backward)
        backend = one("backend") or (_path_backend(path) if path else "numpy")
        if path and one("phases") is None:
            phases = _path_phases(path)
        settings = cls(impl=one("impl"), backend=backend, path=path, devices=devices, ops=ops, phases=phases,
                       include=many("include"), exclude=many("exclude"),
                       xfails=_read_list(one("xfails-file")), skips=_read_list(one("skips-file")))
        settings.validate()
        return settings

    def validate(self) -> None:
        """Every choice checked once, before any test: a pytest.UsageError naming the option and the choices."""
        from . import golden
        from .backends import NAMES
        from .runner import PHASES

        if self.path is not None:
            from .paths import PATHS, get

            try:
                path = get(self.path)
            except ValueError as e:
                raise pytest.UsageError(f"--poolspec-path={self.path!r}: {e}") from e
            if self.backend != path.backend:
                raise pytest.UsageError(f"--poolspec-path={self.path!r} runs on {path.backend} arrays, not "
                                        f"--poolspec-backend={self.backend!r}")
            beyond = [p for p in self.phases if p not in PATHS[self.path].phases]
            if beyond:
                raise pytest.UsageError(f"--poolspec-phases: the path {self.path!r} has no {', '.join(beyond)} "
                                        f"(it runs {', '.join(path.phases)})")
        if self.backend not in NAMES:
            raise pytest.UsageError(f"--poolspec-backend={self.backend!r}: unknown; choose one of {', '.join(NAMES)}")
        try:
            importlib.import_module("dask.array" if self.backend == "dask" else self.backend)
        except ImportError as e:
            raise pytest.UsageError(f"--poolspec-backend={self.backend!r}: not installed ({e})") from e
        unknown = sorted(set(self.phases) - set(PHASES))
        if unknown:
            raise pytest.UsageError(f"--poolspec-phases: unknown {', '.join(map(repr, unknown))}; choose from "
                                    f"{', '.join(PHASES)}")
        if self.ops is not None:
            known = {c.op for c in golden.cases()}
            unknown = [o for o in self.ops if o not in known]
            if unknown or not self.ops:
                raise pytest.UsageError(f"--poolspec-ops: unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                                        f"choose from {', '.join(sorted(known))}")
        if self.devices != (None,) and self.backend in ("numpy", "array_api_strict", "dask"):
            if any(d not in ("cpu", "CPU_DEVICE", "device1") for d in self.devices):
                raise pytest.UsageError(f"--poolspec-device={','.join(map(str, self.devices))!r}: {self.backend} "
                                        "has no such device")
        for pattern in self.include + self.exclude + self.xfails + self.skips:
            try:
                re.compile(pattern)
            except re.error as e:
                raise pytest.UsageError(f"poolspec: {pattern!r} is not a regular expression ({e})") from e
        if self.impl:
            _import(self.impl)

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        return cls.from_values(lambda name: config.getoption(f"--poolspec-{name}", default=None))


def _path_backend(path: str) -> str:
    from .paths import PATHS

    return PATHS[path].backend if path in PATHS else "numpy"  # an unknown path is reported by validate()


def _path_phases(path: str) -> tuple[str, ...]:
    from .paths import PATHS
    from .runner import PHASES

    return PATHS[path].phases if path in PATHS else PHASES


def _import(spec: str) -> Any:
    """The implementation module (``runner.load_module``: a dotted name importable from the current directory,
    or a .py path), loaded once; a failure is a usage error."""
    from .runner import load_module

    if spec not in _MODULES:
        try:
            _MODULES[spec] = load_module(spec)
        except ValueError as e:
            raise pytest.UsageError(f"--poolspec-impl: {e}") from e
    return _MODULES[spec]


_MODULES: dict[str, Any] = {}


_SESSIONS: dict[tuple[str | None, str, str | None, str | None], tuple[Any, Any]] = {}


def _session(settings: Settings, device: str | None) -> tuple[Any, Any]:
    """The (Backend, Implementation) pair, made once per process and device."""
    from .backends import Backend
    from .runner import module_implementation, poolspec_implementation

    key = (settings.impl, settings.backend, device, settings.path)
    if key not in _SESSIONS:
        impl = module_implementation(_import(settings.impl)) if settings.impl else poolspec_implementation()
        if settings.path:
            from .paths import wrap

            impl = wrap(impl, settings.path)
        _SESSIONS[key] = (Backend(settings.backend, device), impl)
    return _SESSIONS[key]


def _matches(patterns: list[str], *ids: str) -> str | None:
    """The first pattern matching one of ``ids`` whole (an entry without the device suffix covers every device)."""
    return next((p for p in patterns if any(re.fullmatch(p, i) for i in ids)), None)


def params(settings: Settings) -> list[Any]:
    """One ``pytest.param((case, phase), id=...)`` per selected case and phase, marked by the xfails and skips
    lists."""
    from . import golden
    from .runner import case_id, case_phases

    out = []
    for device in settings.devices:
        for case in golden.cases(settings.ops):
            for phase in case_phases(case):
                if phase not in settings.phases:
                    continue
                bare = case_id(case, phase)
                test_id = bare if len(settings.devices) == 1 else f"{bare}-{device}"
                if settings.include and not any(re.search(p, test_id) for p in settings.include):
                    continue
                if any(re.search(p, test_id) for p in settings.exclude):
                    continue
                marks = []
                if (hit := _matches(settings.skips, test_id, bare)) is not None:
                    marks.append(pytest.mark.skip(reason=f"skips file: {hit}"))
                elif (hit := _matches(settings.xfails, test_id, bare)) is not None:
                    marks.append(pytest.mark.xfail(reason=f"xfails file: {hit}", strict=False))
                out.append(pytest.param((settings, device, case, phase), id=test_id, marks=marks))
    return out


def run_param(request: pytest.FixtureRequest, param: tuple[Settings, str | None, Any, str]) -> None:
    """Run one phase of one case and turn its result into the test's outcome."""
    from .runner import run_case

    settings, device, case, phase = param
    backend, impl = _session(settings, device)
    result = run_case(backend, impl, case, (phase,))
    record = {"name": result.name, "op": result.op, "dtype": result.dtype, "phase": phase, "status": result.status,
              "max_ulp": result.max_ulp, "max_abs": result.max_abs if result.max_abs != float("inf") else 1e308,
              "implementation": impl.name, "backend": backend.name, "device": backend.device}
    request.node.user_properties.append((_KEY, json.dumps(record)))
    if result.status in ("skip", "inexpressible"):
        pytest.skip("; ".join(result.problems + result.notes) or result.status)
    if result.status == "fail":
        pytest.fail("\n".join(result.problems), pytrace=False)


def conformance_tests(impl: str | None = None, backend: str | None = None, *, path: str | None = None,
                      device: str | None = None,
                      ops: list[str] | str | None = None, phases: tuple[str, ...] | str | None = None,
                      include: list[str] | str | None = None, exclude: list[str] | str | None = None,
                      xfails: list[str] | None = None, xfails_file: str | None = None,
                      skips_file: str | None = None) -> Any:
    """A parametrized test function running the suite, for a test module of your own (arguments left None
    fall back to the environment variables)."""
    def joined(v: Any) -> str | None:  # a list, or one comma-separated string
        return None if v is None else v if isinstance(v, str) else ",".join(v)

    def listed(v: Any) -> list[str] | None:
        return None if v is None else [v] if isinstance(v, str) else list(v)

    given = {"impl": impl, "backend": backend, "path": path, "device": device, "ops": joined(ops),
             "phases": joined(phases),
             "include": listed(include), "exclude": listed(exclude), "xfails-file": xfails_file,
             "skips-file": skips_file}
    settings = Settings.from_values(given.get)
    settings.xfails += listed(xfails) or []

    @pytest.mark.parametrize("poolspec_case", params(settings))
    def test_conformance(request: pytest.FixtureRequest, poolspec_case: tuple[Settings, str | None, Any, str]) -> None:
        run_param(request, poolspec_case)

    return test_conformance


# ------------------------------------------------------------------------------------------------- summary

class _Summary:
    """The records of the conformance tests this run reported (on the xdist controller: its workers')."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == _KEY:
                record = json.loads(str(value))
                if hasattr(report, "wasxfail") and report.skipped:
                    record["status"] = "xfail"
                self.records.append(record)

    def reports(self) -> list[Any]:
        """The CLI's Report per device, one row per case (a case fails if any phase fails; xfail if one is
        xfailed)."""
        from .runner import CaseResult, Report

        rank = {"fail": 5, "xfail": 4, "pass": 3, "inexpressible": 2, "skip": 1}
        by_device: dict[Any, dict[str, CaseResult]] = {}
        for r in self.records:
            cases = by_device.setdefault(r["device"], {})
            c = cases.setdefault(r["name"], CaseResult(r["name"], r["op"], r["dtype"], r["status"]))
            if rank[r["status"]] > rank[c.status]:
                c.status = r["status"]
            c.max_ulp, c.max_abs = max(c.max_ulp, r["max_ulp"]), max(c.max_abs, r["max_abs"])
        first = self.records[0]
        return [Report(first["backend"], device, first["implementation"], list(cases.values()), 0.0)
                for device, cases in by_device.items()]


_SUMMARY = _Summary()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _SUMMARY.add(report)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not _SUMMARY.records:
        return
    terminalreporter.section("poolspec conformance")
    for report in _SUMMARY.reports():
        for line in report.table().splitlines():
            if line.startswith("total"):
                line = line.split("   in ")[0]  # pytest prints the time
            elif line.startswith(("FAIL", "...", " ")):
                continue  # pytest lists the failures
            terminalreporter.write_line(line)
    phases: dict[str, dict[str, int]] = {}
    for r in _SUMMARY.records:
        row = phases.setdefault(r["phase"], {})
        row[r["status"]] = row.get(r["status"], 0) + 1
    terminalreporter.write_line("tests by phase: " + "; ".join(
        f"{phase} " + ", ".join(f"{n} {status}" for status, n in sorted(row.items()))
        for phase, row in phases.items()))
    settings = Settings.from_config(config)
    if settings.xfails:
        from . import golden
        from .runner import case_id, case_phases

        ids = [case_id(c, p) for c in golden.cases(settings.ops) for p in case_phases(c)]
        stale = [p for p in settings.xfails if not any(re.fullmatch(p, i) for i in ids)]
        if stale:
            terminalreporter.write_line(f"xfails file entries matching no test: {', '.join(stale)}")
