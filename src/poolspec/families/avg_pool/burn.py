"""avg_pool's Burn rule: ``burn_tensor::module::avg_pool1d/2d`` (no divisor_override or dilation in Burn)."""

from __future__ import annotations

import numpy as np

from ...conformance import golden
from ...export.burn import BurnOp, flag, window


def _avg_call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool, n: int) -> str:
    args = case.arguments
    k, s, p = window(args, n)
    return (f"{case.op}({x}, {k}, {s}, {p}, {flag(args.get('count_include_pad', True))}, "
            f"{flag(args.get('ceil_mode', False))})")


def _avg_eligible(case: golden.Golden, a: dict[str, np.ndarray], n: int) -> bool:
    dilation = case.arguments.get("dilation", 1)
    return case.arguments.get("divisor_override") is None and dilation in (1, [1] * n, (1,) * n)


RULE = BurnOp(_avg_call, _avg_eligible)
