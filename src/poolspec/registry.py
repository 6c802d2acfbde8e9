"""One record per op: what every layer outside an op's own definition asks about it.

The card (``spec``) states an op's arguments, ports and shape rule; the record adds what the layers around
the ops need to treat it generically: its family and spatial rank (never parsed from its name elsewhere),
its kernel kind (which decides the derivatives of its backward in a captured torch graph), whether its input
always has a batch axis, whether it returns winners, and its public forward and backward functions.

Kinds:

- ``linear``: linear in its input; its backward is linear in grad_output and its transpose is the op itself
  (avg_pool, adaptive_avg_pool, interpolate, max_unpool).
- ``routed``: values at integer winners; the backward routes grad_output to them and its transpose gathers
  at them (max_pool, adaptive_max_pool, fractional_max_pool).
- ``composed``: a composition of the above with pointwise maps, differentiated through its parts (lp_pool).
- ``sampled``: reads at data-dependent positions, with derivatives w.r.t. the positions (grid_sample,
  affine_grid).

>>> from poolspec.registry import op
>>> op("max_pool2d").family, op("max_pool2d").rank, op("max_pool2d").kind
('max_pool', 2, 'routed')
>>> op("interpolate").spatial_rank(5)
3
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import spec
from .families import Family, Kind, owner


@dataclass(frozen=True)
class OpDef:
    """An op's record (see the module docstring)."""

    name: str
    family: str
    rank: int | None  # spatial rank fixed by the op; None: the input's rank decides
    kind: Kind
    arrays: tuple[str, ...]  # its array arguments, in call order (the card's array ports)
    indexed: bool  # has return_indices: (values, winners)
    fused_vjp: bool  # whether inductor may expand its VJP node into fused kernels (the family's record)

    @property
    def card(self) -> spec.Card:
        return spec.card(self.name)

    @property
    def forward(self) -> Callable[..., Any]:
        return function(self.name)

    @property
    def backward(self) -> Callable[..., Any]:
        return function(f"{self.name}_backward")

    @property
    def fixed_rank(self) -> int:
        """The spatial rank of an op that fixes it (the pools); a ValueError for one whose input decides."""
        if self.rank is None:
            raise ValueError(f"{self.name}: the spatial rank follows the input's rank")
        return self.rank

    def spatial_rank(self, input_rank: int) -> int:
        """The number of spatial axes of an input of ``input_rank`` dimensions."""
        return self.rank if self.rank is not None else input_rank - 2

    def has_batch(self, input_rank: int) -> bool:
        """Whether an input of ``input_rank`` dimensions has a batch axis (else it is (C, *spatial)): always
        where the input's rank decides the spatial rank (interpolate, grid_sample, affine_grid)."""
        return self.rank is None or input_rank == self.rank + 2

    @property
    def takes_indices(self) -> bool:
        """Whether winners are one of its array inputs (max_unpool: values and the pool's indices)."""
        return "indices" in self.arrays


def _record(c: spec.Card, family: Family) -> OpDef:
    ranks = c.spatial_dims
    return OpDef(name=c.name, family=family.name, rank=ranks[0] if len(ranks) == 1 else None, kind=family.kind,
                 arrays=tuple(a.name for a in c.arguments if a.is_array),
                 indexed=any(p.name == "indices" for p in c.outputs), fused_vjp=family.fused_vjp)


def _records() -> dict[str, OpDef]:
    return {c.name: _record(c, owner(c.name)) for c in spec.cards()}


OPS: dict[str, OpDef] = _records()


def op(name: str) -> OpDef:
    """The record of op ``name``, or of the op whose backward ``name`` is (``"avg_pool2d_backward"``)."""
    found = OPS.get(name.removesuffix("_backward"))
    if found is None:
        raise ValueError(f"unknown op {name!r}; known ops: {', '.join(OPS)}")
    return found


def ops(family: str | None = None, kind: Kind | None = None) -> list[OpDef]:
    """The records, all or those of one family or kind, in the cards' order."""
    return [d for d in OPS.values() if (family is None or d.family == family) and (kind is None or d.kind == kind)]


# the public functions, bound by the package once the families' modules are imported: the registry sits below
# them (they import it), so it imports none of them
_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def bind(functions: Mapping[str, Callable[..., Any]]) -> None:
    """Record the public functions (``poolspec/__init__`` binds every family's)."""
    _FUNCTIONS.update(functions)


def function(name: str) -> Callable[..., Any]:
    """The public function ``name`` (an op or its ``_backward``)."""
    found = _FUNCTIONS.get(name)
    if found is None:
        raise ValueError(f"no public function {name!r}; known: {', '.join(sorted(_FUNCTIONS))}")
    return found
