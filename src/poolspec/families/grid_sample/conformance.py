"""grid_sample's conformance record: every mode, padding and align_corners in 2-d and 3-d, grids with exact
pixel centres, half-pixel ties, the edges and far outside, and the refused calls."""

from __future__ import annotations

import itertools
import random

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as
from ...conformance.families import Family


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


RECORD = Family("grid_sample", ("grid_sample",), grid_sample_grid, grid_sample_random, _grid_sample_inputs,
                ports=("input", "grid"), differentiable=("input", "grid"), dtypes=(("float32", 3),),
                errors=_grid_sample_errors, second_order=("input", "grid"), reference="torch-autograd",
                tolerance={"float64": (1e-12, 1e-12), "float32": (2e-5, 5e-5)})
