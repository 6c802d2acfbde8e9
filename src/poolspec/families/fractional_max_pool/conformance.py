"""fractional_max_pool's conformance record: windows placed by given samples (the samples are an input like
x), output sizes and ratios, and the refused calls."""

from __future__ import annotations

import random

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as
from ...conformance.families import Family


def fractional_grid() -> list[Case]:
    out = []
    for n in (2, 3):
        op = f"fractional_max_pool{n}d"
        S = (9, 7) if n == 2 else (6, 5, 7)
        for k, osize, flags in [(2, (4,) * n, ("overlapping_windows",)), (3, (3,) * n, ("kernel_3",)),
                                (1, (3,) * n, ("kernel_1",)), (2, (1,) * n, ("output_1",)),
                                ((2, 3) + ((1,) if n == 3 else ()), (S[0] - 1 - (n == 3),) + (2,) * (n - 1),
                                 ("output_at_limit",))]:
            k = k[:n] if isinstance(k, tuple) else k
            out.append(Case(op, (2, 2) + S, dict(kernel_size=k, output_size=osize), flags,
                            {"samples": (2, 2, n)}))
        out.append(Case(op, (2, 2) + S, dict(kernel_size=2, output_ratio=(0.5,) * n), ("output_ratio",),
                        {"samples": (2, 2, n)}))
        out.append(Case(op, (3,) + S, dict(kernel_size=2, output_size=3), ("unbatched",), {"samples": (1, 3, n)}))
    return out


def fractional_random(count: int = 16, seed: int = 109) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        n = r.choice((2, 3))
        S = tuple(r.randint(2, 9 if n == 2 else 6) for _ in range(n))
        k = tuple(r.randint(1, s - (n == 3)) for s in S)
        O = tuple(r.randint(1, s - kk + 1 - (n == 3)) for s, kk in zip(S, k))
        N, C = r.randint(1, 2), r.randint(1, 3)
        out.append(Case(f"fractional_max_pool{n}d", (N, C) + S, dict(kernel_size=k, output_size=O), ("random",),
                        {"samples": (N, C, n)}))
    return out


def _fractional_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = np.round(rng.standard_normal(case.shape) * 2) / 2  # ties
    if case.seed % 3:
        x[rng.random(case.shape) < 0.08] = np.nan
        x[rng.random(case.shape) < 0.04] = -np.inf
    u = rng.random(case.ports["samples"])
    if case.seed % 2:
        u = np.round(u * 8) / 8  # window starts on exact products
    return {"input": _as(x, case.dtype), "samples": _as(u, case.dtype)}


def _fractional_errors() -> list[GoldenCase]:
    return [
        GoldenCase("fractional_max_pool2d-e000", "fractional_max_pool2d", (1, 2, 5, 5),
                   dict(kernel_size=4, output_size=3), ("kernel_too_large",), "float64", error="ValueError",
                   ports={"samples": (1, 2, 2)}),
        GoldenCase("fractional_max_pool3d-e000", "fractional_max_pool3d", (1, 2, 4, 4, 4),
                   dict(kernel_size=2, output_size=3), ("kernel_too_large_3d_strict",), "float64", error="ValueError",
                   ports={"samples": (1, 2, 3)}),
        GoldenCase("fractional_max_pool2d-e001", "fractional_max_pool2d", (1, 2, 5, 5),
                   dict(kernel_size=2, output_size=3), ("samples_shape",), "float64", error="ValueError",
                   ports={"samples": (1, 2, 3)}),
    ]


RECORD = Family("fractional_max_pool", ("fractional_max_pool2d", "fractional_max_pool3d"), fractional_grid,
                fractional_random, _fractional_inputs, ports=("input", "samples"),
                keyword_ports={"samples": "_random_samples"}, indexed=True, dtypes=(("float32", 3),),
                errors=_fractional_errors, reference="torch-autograd")
