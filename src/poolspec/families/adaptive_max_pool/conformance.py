"""adaptive_max_pool's conformance record (its generators are shared with the average family:
``conformance.cases.adaptive_grid``)."""

from __future__ import annotations

from ...conformance.cases import GoldenCase, _adaptive_flags, _max_inputs, _ops, adaptive_grid, adaptive_random
from ...conformance.families import HALF_FLAGS, Family


def _errors() -> list[GoldenCase]:
    return [GoldenCase(f"adaptive_max_pool{n}d-e000", f"adaptive_max_pool{n}d", (1, 2) + (5,) * n,
                       dict(output_size=2), ("integer_input",), "int64", error="TypeError") for n in (1, 2, 3)]


RECORD = Family("adaptive_max_pool", _ops("adaptive_max_pool"), lambda: adaptive_grid("max"),
                lambda: adaptive_random(40, seed=103, kind="max"), _max_inputs, indexed=True,
                dtypes=(("float32", 3), ("float16", 7)), half_flags=HALF_FLAGS, deviation_flags=_adaptive_flags,
                errors=_errors)
