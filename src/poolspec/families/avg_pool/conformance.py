"""avg_pool's conformance record: the edge rules of docs/TORCH_NUMERICS.md section 1 in every rank, seeded
random configurations, its deviation flags and dtype rules."""

from __future__ import annotations

import itertools
import random

from ...conformance.cases import Case, GoldenCase, _lead, _ops, _plain_inputs, _rank
from ...conformance.families import HALF_FLAGS, Family


def avg_grid() -> list[Case]:
    """Edge rules of docs/TORCH_NUMERICS.md section 1, in every rank."""
    out: list[Case] = []
    # (L, k, s, p, ceil, flags) along one axis
    axis_cases = [
        (7, 2, 3, 0, True, ("ceil_last_window_one_cell",)),
        (5, 3, 2, 1, True, ("ceil_mode", "padding")),
        (6, 3, 2, 1, True, ("ceil_window_start_in_padding_dropped",)),
        (8, 4, 3, 2, True, ("padding_at_limit", "ceil_overhang")),
        (5, 3, 1, 1, False, ("padding_at_limit",)),
        (4, 2, 1, 1, False, ("padding_at_limit", "even_kernel")),
        (2, 3, 1, 1, False, ("kernel_larger_than_input",)),
        (9, 2, 4, 0, False, ("stride_gt_kernel",)),
        (9, 2, 4, 1, True, ("stride_gt_kernel", "ceil_mode", "padding")),
        (6, 1, 1, 0, False, ("kernel_1",)),
        (10, 5, 2, 2, True, ("padding_at_limit", "ceil_mode")),
        (11, 4, 4, 1, True, ("ceil_overhang",)),
    ]
    for n in (1, 2, 3):
        op = f"avg_pool{n}d"
        for L, k, s, p, ceil, flags in axis_cases:
            if n == 3 and L < k:
                continue
            for cip, div in itertools.product((True, False), (None, 3, -2)):
                spatial = (L,) + tuple(min(L, 4) + i for i in range(n - 1))
                kernel = (k,) + (2,) * (n - 1) if n > 1 else k
                stride = (s,) + (1,) * (n - 1) if n > 1 else s
                pad = (p,) + (1,) * (n - 1) if n > 1 else p
                f = flags + (("count_include_pad",) if cip else ("exclude_pad",))
                f += (("divisor_override",) if div is not None else ())
                out.append(Case(op, _lead(n) + spatial, dict(kernel_size=kernel, stride=stride, padding=pad,
                                ceil_mode=ceil, count_include_pad=cip, divisor_override=div), f))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                        ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(kernel_size=2), ("empty_batch",)))
        out.append(Case(op, (1, 1) + (5,) * n, dict(kernel_size=2, stride=None), ("stride_default",)))
    return out


def avg_random(count: int, seed: int = 0) -> list[Case]:
    """Seeded random avg_pool configurations, some invalid on purpose (torch decides which)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = tuple(rng.randint(1, 4) for _ in range(n))
        p = tuple(rng.randint(0, max(0, kk // 2 + (1 if rng.random() < 0.1 else 0))) for kk in k)
        batched = rng.random() < 0.8
        lead = _lead(n, batched, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.2 else s, padding=p,
                    ceil_mode=rng.random() < 0.5, count_include_pad=rng.random() < 0.5,
                    divisor_override=rng.choice((None, None, None, 2, 5, -3)))
        out.append(Case(f"avg_pool{n}d", lead + spatial, args, ("random",)))
    return out


def _avg_flags(case: Case) -> tuple[str, ...]:
    divisor = _rank(case.op) == 1 and case.args.get("divisor_override") is not None
    return ("avg_pool1d_divisor_override",) if divisor else ()


def _avg_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    return (("avg_pool3d_half",) if _rank(case.op) == 3 and dtype in ("float16", "bfloat16") else ()), None


def _errors() -> list[GoldenCase]:
    return [GoldenCase(f"avg_pool{n}d-e000", f"avg_pool{n}d", (1, 2) + (5,) * n, dict(kernel_size=2, stride=0),
                       ("stride_0",), "float64", error="ValueError") for n in (1, 2, 3)]


RECORD = Family("avg_pool", _ops("avg_pool"), avg_grid, lambda: avg_random(60, seed=100), _plain_inputs,
                dtypes=(("float32", 4), ("float16", 9), ("bfloat16", 13), ("int64", 9)), half_flags=HALF_FLAGS,
                deviation_flags=_avg_flags, dtype_rule=_avg_dtype_rule, errors=_errors)
