"""max_pool's conformance record: the edge rules of docs/TORCH_NUMERICS.md section 2 in every rank (empty
windows included), seeded random configurations, tie- and NaN-rich inputs, its deviation flags and dtype rules."""

from __future__ import annotations

import random
from typing import Any

from ...conformance.cases import Case, GoldenCase, _lead, _max_inputs, _ops, _rank, window_draw
from ...conformance.families import HALF_FLAGS, Family


def max_grid() -> list[Case]:
    """Edge rules of docs/TORCH_NUMERICS.md section 2: ceil_mode, padding at the limit (windows next to all-padding
    regions), dilation with ceil_mode, overlapping windows, empty windows (rejected), unbatched, N = 0."""
    out: list[Case] = []
    # (L, k, s, p, d, ceil, flags)
    axis_cases = [
        (7, 2, 3, 0, 1, True, ("ceil_last_window_one_cell",)),
        (6, 3, 2, 1, 1, True, ("ceil_window_start_in_padding_dropped", "padding_at_limit")),
        (5, 3, 1, 1, 1, False, ("overlapping", "padding_at_limit")),
        (4, 2, 1, 1, 1, True, ("padding_adjacent", "even_kernel")),
        (9, 3, 2, 1, 2, True, ("dilation", "ceil_mode")),
        (8, 2, 3, 1, 3, True, ("dilation", "ceil_mode", "padding")),
        (10, 4, 3, 2, 2, False, ("dilation", "padding_at_limit")),
        (1, 2, 3, 1, 2, False, ("empty_window",)),
        (3, 2, 1, 1, 3, False, ("empty_window",)),
        (6, 1, 2, 0, 1, False, ("kernel_1",)),
        (5, 5, 1, 2, 1, True, ("window_wider_than_input",)),
    ]
    for n in (1, 2, 3):
        op = f"max_pool{n}d"
        for L, k, s, p, d, ceil, flags in axis_cases:
            spatial = (L,) + tuple(4 + i for i in range(n - 1))
            rest = n - 1
            args = dict(kernel_size=(k,) + (2,) * rest, stride=(s,) + (1,) * rest, padding=(p,) + (1,) * rest,
                        dilation=(d,) + (1,) * rest, ceil_mode=ceil)
            out.append(Case(op, _lead(n) + spatial, args, flags))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                        ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(kernel_size=2), ("empty_batch",)))
        out.append(Case(op, (1, 2) + (6,) * n, dict(kernel_size=3, stride=1, padding=1), ("overlapping",)))
    return out


def max_random(count: int, seed: int = 2) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, spatial, k, s = window_draw(rng)
        d = tuple(rng.choice((1, 1, 2, 3)) for _ in range(n))
        p = tuple(rng.randint(0, max(0, kk // 2 + (1 if rng.random() < 0.1 else 0))) for kk in k)
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.2 else s, padding=p, dilation=d,
                    ceil_mode=rng.random() < 0.5)
        out.append(Case(f"max_pool{n}d", lead + spatial, args, ("random",)))
    return out


def has_empty_window(case: Case) -> bool:
    """Whether dilation and padding leave some max_pool window without an input cell (torch: -inf and an
    out-of-range index; poolspec: ValueError, deviation max_pool_empty_window). Integer arithmetic only."""
    n = _rank(case.op)

    def tup(v: Any, default: Any) -> tuple[int, ...]:
        v = default if v is None or v == () else v
        return tuple(v) * (n if len(v) == 1 else 1) if isinstance(v, (tuple, list)) else (v,) * n

    a = case.args
    k, d = tup(a["kernel_size"], 1), tup(a.get("dilation", 1), 1)
    s, p = tup(a.get("stride"), a["kernel_size"]), tup(a.get("padding", 0), 0)
    axes = []
    for L, kk, ss, pp, dd in zip(case.shape[-n:], k, s, p, d):
        eff = dd * (kk - 1) + 1
        if min(ss, kk, dd) <= 0 or pp < 0 or pp > kk // 2 or pp > eff // 2:
            return False  # refused for another reason
        out = (L + 2 * pp - eff + (ss - 1 if a.get("ceil_mode") else 0)) // ss + 1
        if a.get("ceil_mode") and (out - 1) * ss >= L + pp:
            out -= 1
        if out < 1:
            return False
        axes.append((L, kk, ss, pp, dd, out))
    return any(not any(0 <= o * ss - pp + t * dd < L for t in range(kk))
               for L, kk, ss, pp, dd, out in axes for o in range(out))


def _max_flags(case: Case) -> tuple[str, ...]:
    return ("max_pool_empty_window",) if has_empty_window(case) else ()


def _max_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    integer = _rank(case.op) == 1 and dtype.startswith(("int", "uint"))
    return (("max_pool1d_integer_values",) if integer else ()), None


def _errors() -> list[GoldenCase]:
    out = []
    for n in (1, 2, 3):
        out += [GoldenCase(f"max_pool{n}d-e000", f"max_pool{n}d", (1, 2) + (1,) * n,
                           dict(kernel_size=2, stride=3, padding=1, dilation=2),
                           ("empty_window", "max_pool_empty_window"), "float64", error="ValueError"),
                GoldenCase(f"max_pool{n}d-e001", f"max_pool{n}d", (1, 2) + (5,) * n, dict(kernel_size=2, padding=2),
                           ("padding_over_half",), "float64", error="ValueError")]
    return out


RECORD = Family("max_pool", _ops("max_pool"), max_grid, lambda: max_random(60, seed=102), _max_inputs, indexed=True,
                dtypes=(("float32", 4), ("int32", 5), ("uint8", 7), ("float16", 9)), half_flags=HALF_FLAGS,
                deviation_flags=_max_flags, dtype_rule=_max_dtype_rule, errors=_errors)
