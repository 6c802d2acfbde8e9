"""The families: one folder each, holding everything that defines a family.

A family's folder ``families/<family>/`` holds ``card.py`` (its cards and its ``FAMILY`` record: the kernel kind
that decides its derivatives in a captured torch graph, where its cards sit in the catalogue, whether inductor may
expand its VJP), ``ops.py`` (its public functions and their ``*_backward``, exported by one star-import line in
``poolspec/__init__.py``), ``conformance.py`` (its conformance ``RECORD``) and, where it has them, ``burn.py`` (its
Burn rule), ``bench.py`` (its benchmark peers) and ``capture.py`` (torch.compile nodes of its own, where the
generic ones do not fit). This module finds the folders; it imports the cards only (``card.py`` imports
``spec``'s rules and nothing above them), so the layers below the public functions can ask about every family
without importing one; ``parts`` finds the pieces above.

>>> from poolspec import families
>>> families.family("max_pool").kind
'routed'
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..spec._card import Card

Kind = Literal["linear", "routed", "composed", "sampled"]


@dataclass(frozen=True)
class Family:
    """A family's record, declared in its ``card.py``.

    ``kind``: ``linear`` (its backward is linear in grad_output and its transpose is the op itself),
    ``routed`` (values at integer winners: the backward routes to them, its transpose gathers at them),
    ``composed`` (pointwise maps around the above, differentiated through its parts) or ``sampled`` (reads at
    data-dependent positions, with derivatives w.r.t. the positions). ``order``: where its cards sit in the
    catalogue (below 10 the pools, whose cards interleave by spatial rank). ``fused_vjp``: whether inductor may
    expand its VJP node into fused kernels (False where the eager kernels index by data and a functional path
    would have to sort: autodiff/torch_inductor.fuse)."""

    name: str
    kind: Kind
    order: int
    cards: Callable[[], list[Card]]
    fused_vjp: bool = True


@cache
def all_families() -> tuple[Family, ...]:
    """Every family whose folder holds a ``card.py``, in catalogue order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg and not info.name.startswith("_"):
            record = importlib.import_module(f"{__name__}.{info.name}.card").FAMILY
            if record.name != info.name:
                raise LookupError(f"families/{info.name}/card.py declares the family {record.name!r}")
            found.append(record)
    return tuple(sorted(found, key=lambda f: f.order))


def parts(part: str) -> dict[str, ModuleType]:
    """Each family's module ``families/<family>/<part>.py``, by family name, for the families that have one: how
    a lower layer finds the family pieces that sit above it (``conformance``, ``burn``, ``bench``, ``capture``)."""
    found = {}
    for f in all_families():
        name = f"{__name__}.{f.name}.{part}"
        if importlib.util.find_spec(name) is not None:
            found[f.name] = importlib.import_module(name)
    return found


def family(name: str) -> Family:
    """The record of family ``name``."""
    for f in all_families():
        if f.name == name:
            return f
    raise LookupError(f"no family {name!r}; families: {', '.join(f.name for f in all_families())}")


@cache
def _built() -> tuple[tuple[Family, Card], ...]:
    """Every family's cards, built once, with their family."""
    return tuple((f, c) for f in all_families() for c in f.cards())


def owner(card_name: str) -> Family:
    """The family whose folder holds the card ``card_name``."""
    for f, c in _built():
        if c.name == card_name:
            return f
    raise LookupError(f"no family holds a card {card_name!r}")


def catalogue() -> list[Card]:
    """Every family's cards in catalogue order: the pools (order below 10) by spatial rank first."""
    keyed = []
    for i, (f, c) in enumerate(_built()):
        rank = c.spatial_dims[0] if f.order < 10 else 0
        keyed.append(((f.order >= 10, rank, f.order, i), c))
    return [c for _, c in sorted(keyed, key=lambda kc: kc[0])]
