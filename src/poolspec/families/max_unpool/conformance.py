"""max_unpool's conformance record: its output-size rules in every rank, indices from a pool, distinct or
duplicated, and torch's reference through the unpool rule of scripts/generate_golden.py."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as, _lead, _ops, _rank
from ...conformance.families import Family


def unpool_grid() -> list[Case]:
    """max_unpool after max_pool (overlapping windows give duplicate indices), the default and explicit
    output sizes at both ends of torch's +-stride window, padding, unbatched, N = 0. ``pool`` holds the
    max_pool arguments that make the indices; ``indices`` says how the test makes them."""
    out: list[Case] = []
    # (L, k, s, p, output_size delta or None, indices kind, flags)
    axis_cases = [
        (8, 2, 2, 0, None, "pool", ("tiling",)),
        (7, 3, 2, 1, None, "pool", ("padding", "duplicates_possible")),
        (7, 3, 2, 1, 1, "pool", ("output_size_above_default",)),
        (9, 3, 3, 0, -2, "pool", ("output_size_at_lower_limit",)),
        (6, 3, 1, 1, None, "pool", ("overlapping", "duplicates")),
        (5, 2, 2, 0, None, "permutation", ("arbitrary_indices",)),
        (5, 2, 2, 0, None, "duplicates", ("duplicates", "winner_rule")),
        (4, 4, 1, 0, 0, "pool", ("output_size_equals_default",)),
    ]
    for n in (1, 2, 3):
        op = f"max_unpool{n}d"
        for L, k, s, p, delta, kind, flags in axis_cases:
            spatial = (L,) + tuple(3 + i for i in range(n - 1))
            rest = n - 1
            args = dict(kernel_size=(k,) + (2,) * rest, stride=(s,) + (1,) * rest, padding=(p,) + (0,) * rest)
            shape = _lead(n) + spatial
            pooled = tuple((spatial[i] + 2 * args["padding"][i] - args["kernel_size"][i]) // args["stride"][i] + 1
                           for i in range(n))
            if delta is not None:
                default = [(pooled[i] - 1) * args["stride"][i] - 2 * args["padding"][i] + args["kernel_size"][i]
                           for i in range(n)]
                args["output_size"] = (default[0] + delta,) + tuple(default[1:])
            out.append(Case(op, shape, dict(args, indices=kind), flags))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=2, indices="pool"), ("unbatched",)))
        out.append(Case(op, (0, 2) + (6,) * n, dict(kernel_size=2, indices="pool"), ("empty_batch",)))
    return out


def unpool_random(count: int, seed: int = 3) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(2, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, min(3, L)) for L in spatial)
        s = tuple(rng.randint(1, 3) for _ in range(n))
        p = tuple(rng.randint(0, kk // 2) for kk in k)
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        kind = rng.choice(("pool", "pool", "permutation", "duplicates"))
        out.append(Case(f"max_unpool{n}d", lead + spatial, dict(kernel_size=k, stride=s, padding=p, indices=kind),
                        ("random",)))
    return out


def unpool_indices(rng: np.random.Generator, kind: str, planes: int, m: int, size: int) -> np.ndarray:
    """(planes, m) int64 indices into an unpool plane of ``size`` cells: distinct per plane ("permutation",
    where the plane is large enough), else uniform with at least one duplicate per plane."""
    flat = np.empty((planes, m), dtype=np.int64)
    for row in flat:
        if kind == "permutation" and size >= m:
            row[:] = rng.permutation(size)[:m]
        else:
            row[:] = rng.integers(0, max(size, 1), m)
            if m > 1:
                row[-1] = row[0]  # at least one duplicate per plane
    return flat


def _unpool_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Values shaped as max_pool's output on the case's shape and int64 indices into the unpool output: from a
    max pool of tie-free data ("pool"), distinct per plane ("permutation"), or with duplicates."""
    n = _rank(case.op)
    args = {k: v for k, v in case.args.items() if k != "indices"}

    def tup(v: Any, default: Any) -> tuple[int, ...]:
        v = default if v is None else v
        return (v,) * n if isinstance(v, int) else tuple(v)

    k, s, p = tup(args["kernel_size"], 1), tup(args.get("stride"), args["kernel_size"]), tup(args.get("padding"), 0)
    spatial = case.shape[-n:]
    pooled = tuple((spatial[i] + 2 * p[i] - k[i]) // s[i] + 1 for i in range(n))
    lead = case.shape[:-n]
    default = tuple((pooled[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    out_spatial = tuple(args["output_size"][-n:]) if args.get("output_size") else default
    size, m = math.prod(out_spatial), math.prod(pooled)
    planes = math.prod(lead)
    kind = case.args["indices"]
    if kind == "pool":
        from ..max_pool.ops import max_pool1d, max_pool2d, max_pool3d  # the winners of a pool are the natural input

        pool = (max_pool1d, max_pool2d, max_pool3d)[n - 1]
        data = rng.permutation(math.prod(case.shape)).reshape(case.shape).astype(np.float64)
        _, idx = pool(data, args["kernel_size"], args.get("stride"), args.get("padding", 0), return_indices=True)
    else:
        idx = unpool_indices(rng, kind, planes, m, size).reshape(lead + pooled)
    x = rng.standard_normal(lead + pooled)
    if case.dtype.startswith("int"):
        x = np.round(x * 4)
    return {"input": _as(x, case.dtype), "indices": np.asarray(idx, dtype=np.int64)}


def _unpool_flags(case: Case) -> tuple[str, ...]:
    return ("max_unpool_duplicate_indices",) if case.args.get("indices") == "duplicates" else ()


def _unpool_backward(family: Any, bw: Any, g: Any, arguments: dict[str, Any], arrays: dict[str, Any],
                     winners: Any, strict: bool) -> tuple[Any, ...]:
    return (bw(g, arrays["input"], arrays["indices"], **arguments),)


def _errors() -> list[GoldenCase]:
    return [GoldenCase(f"max_unpool{n}d-e000", f"max_unpool{n}d", (1, 2) + (2,) * n, dict(kernel_size=2, stride=0),
                       ("max_unpool_argument_rules",), "float64", error="ValueError") for n in (1, 2, 3)]


RECORD = Family("max_unpool", _ops("max_unpool"), unpool_grid, lambda: unpool_random(40, seed=104), _unpool_inputs,
                ports=("input", "indices"), dtypes=(("float32", 3), ("int64", 5)), deviation_flags=_unpool_flags,
                errors=_errors, reference="torch+unpool-rule", call_backward=_unpool_backward)
