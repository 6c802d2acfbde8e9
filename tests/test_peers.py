"""The peer adapters cannot rot silently: the ONNX reference evaluator's adapter (onnx is a test dependency) runs
a spread of the cases here and must give each the status stored in conformance/results/onnx_reference.json; and
conformance/MATRIX.md must be what matrix.py makes of the stored results."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from poolspec.conformance import Implementation, golden
from poolspec.conformance.backends import Backend
from poolspec.conformance.runner import run_case

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "conformance" / "results"
sys.path.insert(0, str(ROOT))

from conformance import peers  # noqa: E402
from conformance.matrix import write_matrix  # noqa: E402

STORED = json.loads((RESULTS / "onnx_reference.json").read_text(encoding="utf-8"))
# the ops the evaluator offers (others are all "has no <op>" skips)
OPS = sorted({c["op"] for c in STORED["cases"] if c["status"] in ("pass", "fail", "inexpressible")})


@pytest.mark.parametrize("op", OPS)
def test_onnx_reference_adapter_gives_the_stored_statuses(op: str) -> None:
    pytest.importorskip("onnx")
    adapter = peers.load("onnx_reference")
    impl = Implementation(adapter.NAME, lambda o: getattr(adapter, o, None),
                          lambda o: getattr(adapter, o + "_backward", None))
    stored = {c["id"]: c for c in STORED["cases"] if c["op"] == op}
    cases = [c for c in golden.cases([op]) if c.name in stored]
    chosen = cases[::7] if len(cases) > 40 else cases  # a spread: every 7th case of the large families
    backend = Backend(adapter.BACKEND)
    differ = {}
    for case in chosen:
        result = run_case(backend, impl, case)
        if result.status != stored[case.name]["status"]:
            differ[case.name] = (result.status, stored[case.name]["status"], result.problems[:1])
    assert not differ, differ
    assert chosen


def test_matrix_is_generated_from_the_stored_results(tmp_path: Path) -> None:
    out = tmp_path / "MATRIX.md"
    write_matrix(RESULTS, out)
    assert out.read_text(encoding="utf-8") == (ROOT / "conformance" / "MATRIX.md").read_text(encoding="utf-8")
    peers_run = [json.loads(p.read_text(encoding="utf-8")) for p in RESULTS.glob("*.json")]
    assert sum(p.get("installed", False) for p in peers_run) >= 5
