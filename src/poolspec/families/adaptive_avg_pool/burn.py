"""adaptive_avg_pool's Burn rule: ``burn_tensor::module::adaptive_avg_pool1d/2d`` (every output size given)."""

from __future__ import annotations

import numpy as np

from ...conformance import golden
from ...export.burn import BurnOp, arr, tuple_of


def _adaptive_call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool, n: int) -> str:
    return f"{case.op}({x}, {arr(case.arguments['output_size'], n)})"


def _adaptive_eligible(case: golden.Golden, a: dict[str, np.ndarray], n: int) -> bool:
    return not any(v is None for v in tuple_of(case.arguments["output_size"], n))


RULE = BurnOp(_adaptive_call, _adaptive_eligible)
