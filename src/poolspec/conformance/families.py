"""One record per op family: everything the catalogue, the runner, the golden generator and the exporters need
to know about it, so that a new family is added in one place (its record) and nothing else branches on its
name.

A record names the family's ops, its case generators (an edge-rule grid and seeded random configurations),
its input synthesis, the extra dtypes its rules depend on, its deviation flags, its array ports (the stored
arrays passed to the call, in order, and which of them are differentiable) and how its forward and explicit
backward are called. Each family's record (``RECORD``) lives beside its generators in its folder,
``poolspec/families/<family>/conformance.py``; ``families()`` finds them in the families' order.

Stored array names: the first port is always ``input`` (x; affine_grid's theta), its gradient ``grad_input``;
another differentiable port ``p`` (grid_sample's ``grid``) has ``grad_p``, ``grad_p_cotangent`` and
``grad_grad_p``; non-differentiable ports (``indices``, ``samples``) are inputs only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

# the deviation every float16/bfloat16 case of a family that accumulates in float32 carries
HALF_FLAGS = ("half_backward_float32_accumulation",)


def grad_name(port: str) -> str:
    """The stored name of the gradient w.r.t. ``port``."""
    return "grad_input" if port == "input" else f"grad_{port}"


def _call_default(family: Family, fn: Callable[..., Any], arguments: dict[str, Any],
                  arrays: dict[str, Any]) -> tuple[Any, Any]:
    """Positional ports, then the arguments; keyword ports by their keyword; (values, indices) if indexed."""
    positional = [arrays[p] for p in family.ports if p not in family.keyword_ports]
    keywords = {family.keyword_ports[p]: arrays[p] for p in family.keyword_ports if p in arrays}
    if family.indexed:
        out = fn(*positional, **arguments, **keywords, return_indices=True)
        return out[0], out[1]
    return fn(*positional, **arguments, **keywords), None


def _backward_default(family: Family, bw: Callable[..., Any], g: Any, arguments: dict[str, Any],
                      arrays: dict[str, Any], winners: Any, strict: bool) -> tuple[Any, ...]:
    """``bw(grad_output, *ports, **arguments)``; an indexed family's winners as ``indices=`` (poolspec's own
    backward takes them; a foreign one may not). Returns one gradient per differentiable port."""
    positional = [arrays[p] for p in family.ports if p not in family.keyword_ports]
    keywords = {family.keyword_ports[p]: arrays[p] for p in family.keyword_ports if p in arrays}
    if family.indexed and winners is not None and strict:
        keywords["indices"] = winners
    out = bw(g, *positional, **arguments, **keywords)
    return out if isinstance(out, tuple) else (out,)


@dataclass(frozen=True)
class Family:
    """An op family's conformance record (see the module docstring)."""

    name: str
    ops: tuple[str, ...]
    grid: Callable[[], list[Any]]  # the edge-rule grid: catalogue Cases
    random: Callable[[], list[Any]]  # seeded random configurations
    inputs: Callable[[Any, np.random.Generator], dict[str, np.ndarray]]  # numeric inputs of a GoldenCase
    ports: tuple[str, ...] = ("input",)  # stored input arrays in call order
    differentiable: tuple[str, ...] = ("input",)
    keyword_ports: dict[str, str] = field(default_factory=dict)  # port -> keyword it is passed as
    indexed: bool = False  # called with return_indices=True, returns (values, int64 indices)
    dtypes: tuple[tuple[str, int], ...] = ()  # extra dtypes: (dtype, every k-th grid case)
    half_flags: tuple[str, ...] = ()  # deviations every float16/bfloat16 case carries
    deviation_flags: Callable[[Any], tuple[str, ...]] = lambda case: ()
    # per (case, dtype): (extra flags, error) beyond half_flags - a dtype rule of one op of the family
    dtype_rule: Callable[[Any, str], tuple[tuple[str, ...], str | None]] = lambda case, dtype: ((), None)
    errors: Callable[[], list[Any]] = lambda: []  # calls a conforming implementation refuses
    # ports w.r.t. which the second order d<grads, v>/d(port) is stored (besides d/d(grad_output))
    second_order: tuple[str, ...] = ()
    # how the generator gets torch's reference: "torch" (the same call on torch.nn.functional, autograd for the
    # gradients), "torch-autograd" (through the family's call on torch) or "torch+<path>", torch's call plus a
    # special path of scripts/generate_golden.py (quirk-matrices, unpool-rule, lp-forward-mode)
    reference: str = "torch"
    # (rtol, atol) per dtype where the family's sums cancel more than the defaults allow (grid_sample's grid
    # gradient is a difference of products, whose rounding scales with the products, not the result)
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)
    store_by_mode: bool = False  # one golden store per mode (and antialias), else one per op
    call: Callable[..., tuple[Any, Any]] = _call_default
    call_backward: Callable[..., tuple[Any, ...]] = _backward_default

    def forward(self, fn: Callable[..., Any], arguments: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any]:
        return self.call(self, fn, arguments, arrays)

    def backward(self, bw: Callable[..., Any], g: Any, arguments: dict[str, Any], arrays: dict[str, Any],
                 winners: Any = None, strict: bool = False) -> tuple[Any, ...]:
        return self.call_backward(self, bw, g, arguments, arrays, winners, strict)


@lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    """Every family's record, in catalogue order (the families' folders, ``poolspec.families``)."""
    from ..families import parts

    return tuple(module.RECORD for module in parts("conformance").values())


@lru_cache(maxsize=256)
def family(op: str) -> Family:
    """The record of ``op``'s family."""
    for f in families():
        if op in f.ops:
            return f
    raise ValueError(f"no conformance family has the op {op!r}")
