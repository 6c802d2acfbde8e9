"""Write the case lists of poolspec's known-bug catalogue (``src/poolspec/data/known_bugs.json``).

    python scripts/generate_known_bugs.py

For each class: the stored cases of its ops on which its deliberately buggy adapter
(``conformance/examples/known_bugs.py``) fails on the NumPy backend. The same adapter with the bug switched off
must pass every case of those ops, so each listed failure is the bug's; the script refuses to write otherwise.
The classes' descriptions (title, upstream, rule) are edited in the JSON by hand and kept as they are.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "conformance" / "examples"))

import known_bugs as adapters  # noqa: E402

from poolspec.conformance import runner  # noqa: E402

PATH = ROOT / "src" / "poolspec" / "data" / "known_bugs.json"


def main() -> None:
    data = json.loads(PATH.read_text(encoding="utf-8"))
    for entry in data["classes"]:
        ops = list(adapters.BUGS[entry["id"]][0])
        assert sorted(ops) == sorted(entry["ops"]), entry["id"]
        clean = runner.run("numpy", ops=ops, implementation=adapters.implementation(entry["id"], buggy=False))
        if not clean.passed:
            raise SystemExit(f"{entry['id']}: the adapter fails with its bug off: {clean.failures[0].id}")
        report = runner.run("numpy", ops=ops, implementation=adapters.implementation(entry["id"]))
        entry["cases"] = [r.id for r in report.failures]
        print(f"{entry['id']}: {len(entry['cases'])} cases")
    head = json.dumps({"note": data["note"]})[:-1]
    body = ",\n".join(json.dumps(c) for c in data["classes"])  # one class per line: diffs stay readable
    PATH.write_text(f'{head},\n "classes": [\n{body}\n]}}\n', encoding="utf-8")


if __name__ == "__main__":
    main()
