"""What every family's conformance record builds on: the catalogue's ``Case`` (op, input shape, arguments,
flags naming the rules it exercises) and ``GoldenCase`` (a case with stored reference vectors), and the input
syntheses and generators that several families share. Each family's own generators, inputs, deviation flags and
record live in its folder (``poolspec/families/<family>/conformance.py``).
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..registry import op as record
from ..registry import ops as registry_ops


@dataclass(frozen=True)
class Case:
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    flags: tuple[str, ...] = ()
    ports: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)  # shapes of other array inputs

    @property
    def id(self) -> str:
        a = ",".join(f"{k}={v}" for k, v in self.args.items())
        return f"{self.op}{list(self.shape)}({a})"


@dataclass(frozen=True)
class GoldenCase:
    """A catalogue case with its stored reference vectors: ``name`` is stable and file-name safe, ``error`` the
    exception class a conforming implementation raises (None for a numeric case)."""

    name: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    flags: tuple[str, ...]
    dtype: str
    cotangent: str = "random"  # or "ones"
    error: str | None = None
    ports: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())


def _lead(n: int, batched: bool = True, batch: int = 2, channels: int = 2) -> tuple[int, ...]:
    return (batch, channels) if batched else (channels,)


def _rank(op: str) -> int:
    return record(op).fixed_rank


def _ops(family: str) -> tuple[str, ...]:
    return tuple(d.name for d in registry_ops(family))


def _as(x: np.ndarray, dtype: str) -> np.ndarray:
    """``x`` rounded to ``dtype``; bfloat16 values are held in float32 (NumPy has no bfloat16)."""
    if dtype == "bfloat16":
        bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)  # round half to even
        out = rounded.view(np.float32)
        return np.where(np.isnan(x), np.float32(np.nan), out)
    return np.asarray(x).astype(dtype)


def _plain_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    dtype = case.dtype
    if dtype == "uint8":
        return {"input": rng.integers(0, 256, case.shape).astype(np.uint8)}
    if dtype.startswith("int"):
        return {"input": np.round(rng.standard_normal(case.shape) * 20).astype(dtype)}
    return {"input": _as(rng.standard_normal(case.shape), dtype)}


def _max_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Max-family data: full of ties, NaN and -inf (integers: the padding value itself)."""
    dtype = case.dtype
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(np.dtype(dtype))
        ints = rng.integers(max(info.min, -6), min(info.max, 6) + 1, case.shape)
        ints[rng.random(case.shape) < 0.1] = info.min  # the padding value itself
        return {"input": ints.astype(dtype)}
    x = np.round(rng.standard_normal(case.shape) * 2) / 2  # many ties
    if case.seed % 3:  # two cases in three also hold NaN and -inf
        x[rng.random(case.shape) < 0.08] = np.nan
        x[rng.random(case.shape) < 0.04] = -np.inf
    return {"input": _as(x, dtype)}


def adaptive_grid(kind: str = "avg") -> list[Case]:
    """Windows that overlap, output larger than input, equal, divisible, to 1, None entries, empty output."""
    out: list[Case] = []
    pairs = [(13, 7, "overlapping"), (7, 13, "output_larger"), (5, 5, "identity"), (12, 4, "divisible"),
             (7, 1, "global"), (1, 3, "upsample_from_1"), (10, 3, "ragged"), (4, 8, "output_multiple"),
             (9, 0, "empty_output")]
    for n in (1, 2, 3):
        op = f"adaptive_{kind}_pool{n}d"
        for L, O, flag in pairs:
            spatial = (L,) + tuple(3 + i for i in range(n - 1))
            size = (O,) + tuple(2 + i for i in range(n - 1)) if n > 1 else O
            out.append(Case(op, _lead(n) + spatial, dict(output_size=size), (flag,)))
        out.append(Case(op, (3,) + (6,) * n, dict(output_size=4), ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(output_size=3), ("empty_batch",)))
        out.append(Case(op, (2, 0) + (5,) * n, dict(output_size=3), ("empty_channels",)))
        if n > 1:
            out.append(Case(op, (1, 2) + (5,) * n, dict(output_size=(None,) + (3,) * (n - 1)), ("none_entry",)))
    return out


def adaptive_random(count: int, seed: int = 1, kind: str = "avg") -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 12 if n < 3 else 7) for _ in range(n))
        size = tuple(rng.randint(1, 12 if n < 3 else 7) for _ in range(n))
        batched = rng.random() < 0.8
        out.append(Case(f"adaptive_{kind}_pool{n}d", _lead(n, batched, rng.choice((1, 2)), rng.choice((1, 3)))
                        + spatial, dict(output_size=size), ("random",)))
    return out


def _adaptive_flags(case: Case) -> tuple[str, ...]:
    empty = len(case.shape) == _rank(case.op) + 2 and case.shape[1] == 0
    return ("adaptive_pool3d_empty_channels",) if empty else ()


def window_draw(rng: random.Random) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A random pool's rank, spatial sizes, kernel and stride, drawn in this order (the seeded configurations of
    the windowed families depend on it)."""
    n = rng.choice((1, 2, 3))
    spatial = tuple(rng.randint(1, 9 if n < 3 else 6) for _ in range(n))
    k = tuple(rng.randint(1, 4) for _ in range(n))
    s = tuple(rng.randint(1, 4) for _ in range(n))
    return n, spatial, k, s
