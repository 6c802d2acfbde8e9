"""lp_pool's conformance record: torch's formula's edge rules (norm_type 1, 2, fractional, +-inf; ceil_mode's
partial windows) in every rank, inputs with windows of zeros, and its deviation flags."""

from __future__ import annotations

import math
import random

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as, _lead, _ops, _rank, window_draw
from ...conformance.families import Family


def lp_grid() -> list[Case]:
    """docs/TORCH_NUMERICS.md section 4: the ceil_mode K/n scaling of partial windows, windows whose sum is 0
    (gradient 0), negative sums with non-integer 1/p (NaN), p = 1 with negative sums, p = +-inf, negative
    and fractional p, a 1-tuple kernel on 1d, unbatched and N = 0."""
    out: list[Case] = []
    norms = [(1.0, "p_1"), (2.0, "p_2"), (3.0, "odd_p"), (1.5, "fractional_p"), (0.5, "p_below_1"),
             (-1.0, "negative_p"), (float("inf"), "p_inf"), (float("-inf"), "p_minus_inf")]
    for n in (1, 2, 3):
        op = f"lp_pool{n}d"
        spatial = (7,) + tuple(4 + i for i in range(n - 1))
        for p, flag in norms:
            for ceil in (False, True):
                args = dict(norm_type=p, kernel_size=(2,) + (2,) * (n - 1), stride=(3,) + (1,) * (n - 1),
                            ceil_mode=ceil)
                out.append(Case(op, _lead(n) + spatial, args, (flag,) + (("ceil_partial_window",) if ceil else ())))
        out.append(Case(op, _lead(n) + spatial, dict(norm_type=2, kernel_size=3), ("int_norm_type",)))
        out.append(Case(op, (3,) + (5,) * n, dict(norm_type=2.0, kernel_size=2, ceil_mode=True), ("unbatched",)))
        out.append(Case(op, (0, 2) + (4,) * n, dict(norm_type=2.0, kernel_size=2), ("empty_batch",)))
    out.append(Case("lp_pool1d", (2, 2, 7), dict(norm_type=2.0, kernel_size=(3,), stride=(2,)), ("tuple_kernel",)))
    return out


def lp_random(count: int, seed: int = 4) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, spatial, k, s = window_draw(rng)
        p = rng.choice((1.0, 2.0, 3.0, 4.0, 0.5, 1.5, 2.5, -1.0, -2.0, float("inf"), float("-inf")))
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(norm_type=p, kernel_size=k, stride=None if rng.random() < 0.2 else s,
                    ceil_mode=rng.random() < 0.5)
        out.append(Case(f"lp_pool{n}d", lead + spatial, args, ("random",)))
    return out


def _lp_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = np.round(rng.standard_normal(case.shape) * 4) / 4
    if x.ndim and x.shape[-1] > 2:
        x[..., :2] = 0.0  # a window of zeros: S == 0, gradient 0
    p = case.args["norm_type"]
    if math.isfinite(p) and p != int(p) and case.seed % 2:
        x = np.abs(x)  # half of the fractional-p cases without the NaNs of negative powers
    return {"input": _as(x, case.dtype)}


def _lp_flags(case: Case) -> tuple[str, ...]:
    tuple_kernel = _rank(case.op) == 1 and isinstance(case.args.get("kernel_size"), tuple)
    return ("lp_pool1d_tuple_kernel",) if tuple_kernel else ()


def _errors() -> list[GoldenCase]:
    return [GoldenCase(f"lp_pool{n}d-e000", f"lp_pool{n}d", (1, 2) + (4,) * n, dict(norm_type=2.0, kernel_size=2),
                       ("lp_pool_integer_input",), "int64", error="TypeError") for n in (1, 2, 3)]


RECORD = Family("lp_pool", _ops("lp_pool"), lp_grid, lambda: lp_random(60, seed=105), _lp_inputs,
                dtypes=(("float32", 3), ("float16", 7)), half_flags=("lp_pool_half_precision",),
                deviation_flags=_lp_flags, errors=_errors, second_order=("input",),
                reference="torch+lp-forward-mode")
