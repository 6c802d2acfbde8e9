"""The conformance suite as collected tests: ``pytest --pyargs poolspec.conformance.test_suite`` (options and
environment variables in ``pytest_plugin``). Not part of poolspec's own test run (its testpaths are tests/)."""

from __future__ import annotations

from typing import Any

import pytest

from poolspec.conformance.pytest_plugin import Settings, params, run_param


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "poolspec_case" in metafunc.fixturenames:
        metafunc.parametrize("poolspec_case", params(Settings.from_config(metafunc.config)))


def test_conformance(request: pytest.FixtureRequest, poolspec_case: tuple[Settings, str | None, Any, str]) -> None:
    run_param(request, poolspec_case)
