"""affine_grid's conformance record: 2-d and 3-d sizes with align_corners both ways, and the refused calls."""

from __future__ import annotations

import itertools
import random

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as
from ...conformance.families import Family


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


RECORD = Family("affine_grid", ("affine_grid",), affine_grid_grid, affine_grid_random, _affine_inputs,
                dtypes=(("float32", 2),), errors=_affine_errors, reference="torch-autograd")
