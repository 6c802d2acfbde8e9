"""Helpers shared by the adapters: argument normalisation and torch's shape rule, used only to decide whether
a peer's call is the same call (never to compute a result)."""

from __future__ import annotations

import math
from typing import Any

from poolspec.conformance import NotExpressible

__all__ = ["NotExpressible", "ntuple", "pool_out", "ceil_adds_window", "require"]


def ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """``value`` as an n-tuple (an int or a 1-tuple repeated)."""
    if isinstance(value, (tuple, list)):
        return tuple(value) * n if len(value) == 1 else tuple(value)
    return (value,) * n


def pool_out(size: int, k: int, s: int, p: int, d: int = 1, ceil: bool = False) -> int:
    """torch's pooled length (with its rule that the last ceil-mode window must start inside input or left
    padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def ceil_adds_window(sizes: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...],
                     d: tuple[int, ...] | None = None) -> bool:
    """Whether ceil_mode=True gives a longer output than floor on any axis (else the two are the same call)."""
    d = d or (1,) * len(sizes)
    return any(pool_out(n, *a, ceil=True) != pool_out(n, *a) for n, *a in zip(sizes, k, s, p, d))


def require(condition: bool, reason: str) -> None:
    """Raise NotExpressible(reason) unless ``condition``."""
    if not condition:
        raise NotExpressible(reason)
