"""adaptive_avg_pool's conformance record (its generators are shared with the max family:
``conformance.cases.adaptive_grid``)."""

from __future__ import annotations

from ...conformance.cases import _adaptive_flags, _ops, _plain_inputs, adaptive_grid, adaptive_random
from ...conformance.families import HALF_FLAGS, Family

RECORD = Family("adaptive_avg_pool", _ops("adaptive_avg_pool"), lambda: adaptive_grid("avg"),
                lambda: adaptive_random(40, seed=101), _plain_inputs,
                dtypes=(("float32", 3), ("float16", 5), ("bfloat16", 7)), half_flags=HALF_FLAGS,
                deviation_flags=_adaptive_flags)
