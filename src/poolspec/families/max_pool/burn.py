"""max_pool's Burn rule: ``burn_tensor::module::max_pool1d/2d`` and their ``_with_indices``."""

from __future__ import annotations

from ...conformance import golden
from ...export.burn import BurnOp, arr, flag, window


def _max_call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool, n: int) -> str:
    args = case.arguments
    k, s, p = window(args, n)
    name = case.op + ("_with_indices" if with_indices else "")
    return f"{name}({x}, {k}, {s}, {p}, {arr(args.get('dilation', 1), n)}, {flag(args.get('ceil_mode', False))})"


RULE = BurnOp(_max_call, with_indices=True)
