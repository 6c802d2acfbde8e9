"""Shared fixtures: one ``backend`` fixture runs every numeric test on every installed backend."""

from __future__ import annotations

import os
import sys
from collections import defaultdict

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
# torch's reference computations (scripts/oracle.py), shared with the golden generator
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))

# TensorFlow's reference is its portable (Eigen) kernels: on x86 its oneDNN kernels take over some pools by the
# CPU and the call (3-d SAME windows shorter than the stride then start at the padded edge, not inside the input),
# so a comparison would depend on the machine; set before anything imports TensorFlow
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

from backends import ALL, available  # noqa: E402

_AVAILABLE = available()

if _AVAILABLE["dask"] is None:
    import dask

    # the test arrays are tiny: the threaded scheduler's overhead doubles the run time and buys nothing here
    # (the cluster tests use dask.distributed explicitly)
    dask.config.set(scheduler="synchronous")

if _AVAILABLE["jax"] is None:
    import jax

    # float64 comparisons need 64-bit JAX; poolspec itself never changes this flag.
    jax.config.update("jax_enable_x64", True)


@pytest.fixture(params=list(ALL), ids=list(ALL))
def backend(request):
    reason = _AVAILABLE[request.param]
    if reason is not None:
        pytest.skip(reason)
    return ALL[request.param]


class ErrorLog:
    """Largest error seen per (backend, op, dtype), and how many cases ran: reported at the end."""

    def __init__(self) -> None:
        self.max_abs: dict[tuple[str, str, str], float] = defaultdict(float)
        self.max_rel: dict[tuple[str, str, str], float] = defaultdict(float)
        self.cases: dict[tuple[str, str], int] = defaultdict(int)

    def record(self, backend: str, op: str, dtype: str, got: np.ndarray, want: np.ndarray) -> None:
        key = (backend, op, dtype)
        self.cases[(backend, op)] += 1
        if got.size == 0:
            return
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(want64)
        if not finite.any():
            return
        err = np.abs(got64 - want64)[finite]
        scale = np.maximum(np.abs(want64[finite]), 1e-300)
        self.max_abs[key] = max(self.max_abs[key], float(err.max()))
        self.max_rel[key] = max(self.max_rel[key], float((err / np.maximum(scale, 1.0)).max()))


ERRORS = ErrorLog()


@pytest.fixture
def errors():
    return ERRORS


def pytest_sessionfinish(session):
    """Under pytest-xdist each worker hands its error log to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["poolspec_errors"] = {
            "max_abs": [[list(k), v] for k, v in ERRORS.max_abs.items()],
            "max_rel": [[list(k), v] for k, v in ERRORS.max_rel.items()],
            "cases": [[list(k), v] for k, v in ERRORS.cases.items()],
        }


def pytest_testnodedown(node, error):
    data = getattr(node, "workeroutput", {}).get("poolspec_errors")
    if not data:
        return
    for key, value in data["max_abs"]:
        ERRORS.max_abs[tuple(key)] = max(ERRORS.max_abs[tuple(key)], value)
    for key, value in data["max_rel"]:
        ERRORS.max_rel[tuple(key)] = max(ERRORS.max_rel[tuple(key)], value)
    for key, value in data["cases"]:
        ERRORS.cases[tuple(key)] += value


def pytest_terminal_summary(terminalreporter):
    if not ERRORS.cases:
        return
    tr = terminalreporter
    tr.section("poolspec numeric cases against torch")
    per_backend: dict[str, int] = defaultdict(int)
    for (b, _), n in ERRORS.cases.items():
        per_backend[b] += n
    for b, n in sorted(per_backend.items()):
        tr.write_line(f"{b:>17}: {n} comparisons")
    worst: dict[tuple[str, str], float] = defaultdict(float)
    for (_backend, op, dt), v in ERRORS.max_rel.items():
        worst[(op, dt)] = max(worst[(op, dt)], v)
    tr.write_line("largest |got - want| / max(|want|, 1) per op and dtype, over all backends:")
    for (op, dt), v in sorted(worst.items()):
        tr.write_line(f"{op:>22} {dt:>9}: {v:.3g}")
