"""What the RoI families' conformance records share: a random call's draws (``random_call``), the kinds of boxes a
case asks for (``box_kinds``), the corners of the kinds of boxes both draw (``corners``) and the refused calls
(``errors``).

>>> import numpy as np
>>> a, b = corners(np.random.default_rng(0), "large", 4, 3)
>>> bool(a[0] <= 0 < 4 <= a[1] and b[0] <= 0 < 3 <= b[1])
True
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ...conformance.cases import GoldenCase


def random_call(r: random.Random) -> tuple[tuple[int, ...], int, tuple[int, int], float]:
    """A random call's shape (N, C, H, W), roi count K, output size and spatial scale, drawn from ``r`` in this
    order (the stored cases depend on it)."""
    shape = (r.randint(1, 3), r.randint(1, 3), r.randint(1, 9), r.randint(1, 9))
    size = (r.randint(1, 4), r.randint(1, 4))
    return shape, r.choice((0, 1, 2, 5)), size, r.choice((1.0, 0.5, 2.0, 0.25))


def box_kinds(case: Any, kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds of boxes ``case`` asks for by its ``boxes_<kind>`` flags; every kind where it names none."""
    return tuple(k for k in kinds if f"boxes_{k}" in case.flags) or kinds


def corners(rng: np.random.Generator, kind: str, W: int, H: int) -> tuple[np.ndarray, np.ndarray]:
    """A box's (x1, x2) and (y1, y2), in x's cells, of a kind every RoI family draws: ``inside``,
    ``partly_outside``, ``outside`` (right or left of the image), ``degenerate`` (zero width) or ``large`` (over
    the whole image)."""
    if kind == "inside":
        return np.sort(rng.uniform(0, W, 2)), np.sort(rng.uniform(0, H, 2))
    if kind == "partly_outside":
        return np.sort(rng.uniform(-3, W + 3, 2)), np.sort(rng.uniform(-3, H + 3, 2))
    if kind == "outside":
        a, b = np.sort(rng.uniform(W + 1.5, W + 5, 2)), np.sort(rng.uniform(-5, H + 5, 2))
        return (a if rng.random() < 0.5 else -a[::-1]), b  # right of the image or left of it
    if kind == "degenerate":
        v, u = rng.uniform(-1, W + 1), rng.uniform(-1, H + 1)
        return np.array([v, v]), np.array([u, u + rng.choice([0.0, 0.5])])
    if kind == "large":
        return np.array([rng.uniform(-3, 0), rng.uniform(W, 2 * W)]), np.array([rng.uniform(-3, 0),
                                                                               rng.uniform(H, 2 * H)])
    raise ValueError(f"corners: kind={kind!r} is no shared kind of box")


def errors(op: str, base: dict[str, object],
           own: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, object], str]]) -> list[GoldenCase]:
    """The refused calls of ``op`` (its arguments ``base``): a wrong boxes shape, x's rank, a negative output size,
    then its ``own`` (flag, x's shape, the boxes' shape, arguments, error), then an empty spatial dimension."""
    e: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, object], str]] = [
        ("boxes shape", (1, 2, 4, 4), (3, 4), {}, "ValueError"),
        ("input rank", (2, 4, 4), (1, 5), {}, "ValueError"),
        ("negative output size", (1, 2, 4, 4), (1, 5), dict(output_size=(-1, 2)), "ValueError"),
        *own,
        ("empty spatial", (1, 2, 0, 4), (1, 5), {}, "ValueError")]
    return [GoldenCase(f"{op}-e{i:03d}", op, x, {**base, **args}, (flag.replace(" ", "_"),), "float64",
                       error=error, ports={"boxes": boxes}) for i, (flag, x, boxes, args, error) in enumerate(e)]
