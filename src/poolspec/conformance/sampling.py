"""Conformance records of the data-dependent families: grid_sample, affine_grid, fractional_max_pool.

Each family's cases (an edge-rule grid and seeded random configurations), its input synthesis (the grid, theta
or the samples are inputs like x) and its record; the catalogue, runner, golden generator and exporters take
everything else from the record (``families.Family``).
"""

from __future__ import annotations

import itertools
import random

import numpy as np

from .catalogue import Case, GoldenCase, _as
from .families import Family


def _grid_values(rng: np.random.Generator, shape: tuple[int, ...], kinds: tuple[str, ...]) -> np.ndarray:
    """Points in and around [-1, 1]: dyadic k/8 (exact pixel centres and half-pixel ties under both
    unnormalisations), the edges -1 and 1, and far outside."""
    g = rng.uniform(-1.15, 1.15, shape)
    kind = rng.integers(0, 5, shape)
    if "ties" in kinds:
        g = np.where(kind <= 1, np.round(g * 8) / 8, g)
    g = np.where(kind == 2, rng.choice([-1.0, 1.0], shape), g)
    if "out_of_range" in kinds:
        g = np.where(kind == 3, rng.choice([-4.25, -1.625, 1.375, 3.0, 7.5], shape), g)
    return g


_MODES = [(n, mode, pad, align) for n in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
          for pad in ("zeros", "border", "reflection") for align in (False, True)
          if not (n == 3 and mode == "bicubic")]


def grid_sample_grid() -> list[Case]:
    """Every mode x padding x align_corners in 2-d and 3-d on grids with ties and points outside, plus a
    size-1 axis (reflection to 0 with align_corners) and an all-outside grid."""
    out = []
    for n, mode, pad, align in _MODES:
        x = (2, 2, 4, 5) if n == 2 else (1, 2, 3, 4, 3)
        grid = (2, 3, 4, 2) if n == 2 else (1, 2, 3, 2, 3)
        flags: tuple[str, ...] = ("ties", "out_of_range", {"zeros": "zeros_padding", "border": "border_clip",
                                          "reflection": "reflection_fold"}[pad])
        flags += ("align_corners",) if align else ()
        out.append(Case("grid_sample", x, dict(mode=mode, padding_mode=pad, align_corners=align), flags,
                        {"grid": grid}))
    for mode, pad in itertools.product(("bilinear", "nearest", "bicubic"), ("reflection", "border")):
        out.append(Case("grid_sample", (1, 2, 1, 5), dict(mode=mode, padding_mode=pad, align_corners=True),
                        ("size_1_axis", "reflection_fold" if pad == "reflection" else "border_clip"),
                        {"grid": (1, 2, 3, 2)}))
    return out


def grid_sample_random(count: int = 30, seed: int = 107) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        n, mode, pad, align = r.choice(_MODES)
        S = tuple(r.randint(1, 7 if n == 2 else 4) for _ in range(n))
        O = tuple(r.randint(1, 5 if n == 2 else 3) for _ in range(n))
        N, C = r.randint(1, 2), r.randint(1, 3)
        out.append(Case("grid_sample", (N, C) + S, dict(mode=mode, padding_mode=pad, align_corners=align),
                        ("random", "ties", "out_of_range"), {"grid": (N,) + O + (n,)}))
    return out


def _grid_sample_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = np.round(rng.standard_normal(case.shape) * 4) / 4
    kinds: tuple[str, ...] = ("ties", "out_of_range") if "random" in case.flags or "ties" in case.flags else ()
    kinds += ("out_of_range",) if {"border_clip", "reflection_fold"} & set(case.flags) else ()
    grid = _grid_values(rng, case.ports["grid"], kinds)
    return {"input": _as(x, case.dtype), "grid": _as(grid, case.dtype)}


def _grid_sample_errors() -> list[GoldenCase]:
    e = [("batch size", (1, 2, 3, 3), (2, 2, 2, 2), {}),
         ("grid last dimension", (1, 2, 3, 3), (1, 2, 2, 3), {}),
         ("bicubic 5-D", (1, 1, 3, 3, 3), (1, 2, 2, 2, 3), dict(mode="bicubic")),
         ("unknown mode", (1, 2, 3, 3), (1, 2, 2, 2), dict(mode="cubic")),
         ("unknown padding", (1, 2, 3, 3), (1, 2, 2, 2), dict(padding_mode="wrap")),
         ("empty spatial", (1, 2, 0, 3), (1, 2, 2, 2), {})]
    return [GoldenCase(f"grid_sample-e{i:03d}", "grid_sample", x, dict(mode="bilinear", padding_mode="zeros",
                                                                         align_corners=False) | args,
                       (flag.replace(" ", "_"),), "float64", error="ValueError", ports={"grid": grid})
            for i, (flag, x, grid, args) in enumerate(e)]


def affine_grid_grid() -> list[Case]:
    out = []
    for size, align in itertools.product([(2, 3, 4, 5), (1, 1, 1, 7), (3, 2, 1, 1), (2, 1, 3, 4, 5),
                                          (1, 2, 1, 6, 1), (1, 1, 33, 2)], (False, True)):
        n = len(size) - 2
        flags: tuple[str, ...] = ("align_corners",) if align else ()
        flags += ("size_1_axis",) if 1 in size[2:] else ()
        out.append(Case("affine_grid", (size[0], n, n + 1), dict(size=size, align_corners=align), flags))
    return out


def affine_grid_random(count: int = 8, seed: int = 108) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        n = r.choice((2, 3))
        size = (r.randint(1, 3), r.randint(1, 3)) + tuple(r.randint(1, 9) for _ in range(n))
        out.append(Case("affine_grid", (size[0], n, n + 1), dict(size=size, align_corners=r.random() < 0.5),
                        ("random",)))
    return out


def _affine_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"input": _as(rng.standard_normal(case.shape), case.dtype)}


def _affine_errors() -> list[GoldenCase]:
    e = [("size rank", (1, 2, 3), (1, 1, 4)), ("theta shape", (1, 3, 4), (1, 1, 4, 4)),
         ("theta batch", (2, 2, 3), (1, 1, 4, 4)), ("empty size", (1, 2, 3), (1, 1, 0, 4))]
    return [GoldenCase(f"affine_grid-e{i:03d}", "affine_grid", theta, dict(size=size, align_corners=False),
                       (flag.replace(" ", "_"),), "float64", error="ValueError")
            for i, (flag, theta, size) in enumerate(e)]


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


FAMILIES = [
    Family("grid_sample", ("grid_sample",), grid_sample_grid, grid_sample_random, _grid_sample_inputs,
           ports=("input", "grid"), differentiable=("input", "grid"), dtypes=(("float32", 3),),
           errors=_grid_sample_errors, second_order=("input", "grid"), reference="torch-autograd",
           tolerance={"float64": (1e-12, 1e-12), "float32": (2e-5, 5e-5)}),
    Family("affine_grid", ("affine_grid",), affine_grid_grid, affine_grid_random, _affine_inputs,
           dtypes=(("float32", 2),), errors=_affine_errors, reference="torch-autograd"),
    Family("fractional_max_pool", ("fractional_max_pool2d", "fractional_max_pool3d"), fractional_grid,
           fractional_random, _fractional_inputs, ports=("input", "samples"),
           keyword_ports={"samples": "_random_samples"}, indexed=True, dtypes=(("float32", 3),),
           errors=_fractional_errors, reference="torch-autograd"),
]
