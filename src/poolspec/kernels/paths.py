"""The kernels' fast paths, in one table.

Every kernel is written first as its reference: plain array-API calls that every namespace runs (JAX, Dask,
array-api-strict, torch under a graph decomposition), no in-place writes, no question of which backend it is
on. A kernel that does better on some backends asks a *gate* before taking the faster way, and every gate is a
row of :data:`TABLE`: its name, what the path needs (a backend that writes in place, a backend that pays per
operation, a given array type), when it applies, and how it must agree with the reference (``bitwise``: the same
bits; ``tolerance``: another order of the same sums, within the conformance tolerances and bit-identical run to
run). ``tests/test_reference_paths.py`` walks the table: each path alone against the reference on every stored
case that reaches it.

Example::

    _FOLD = paths.writes("maxes.fold", "a running maximum folded into one buffer, tap by tap")

    def window_max(xp, x):
        mod = _FOLD(x)          # the array module (numpy, cupy, torch) or None: take the reference
        ...
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .._compat import is_jax_array, is_torch_array, launch_bound, writable_module

Need = Literal["writes", "cpu-writes", "launches", "torch", "numpy", "jax"]
Exact = Literal["bitwise", "tolerance"]


@dataclass(frozen=True)
class FastPath:
    """One row of :data:`TABLE`.

    ``needs``: ``writes`` (NumPy, CuPy or torch outside autograd: the gate answers the array module),
    ``cpu-writes`` (the same, on the CPU only: NumPy, torch CPU),
    ``launches`` (a backend where each operation is a kernel launch: torch CUDA, CuPy; the gate answers a bool),
    ``torch``, ``numpy`` or ``jax`` (calls of that library that the namespace does not offer or offers slower).
    ``within``: the path this one is only reached from (the walk turns both on)."""

    name: str
    needs: Need
    when: str
    exact: Exact = "bitwise"
    within: str | None = None


TABLE: dict[str, FastPath] = {}


@dataclass
class Walk:
    """Which paths are on while a test walks the table: ``on`` None for all of them (as in a call), else only
    those named; ``launches``: whether the launch paths run on any array (as ``as_on_a_gpu`` makes them);
    ``fired``: the paths whose gate opened."""

    on: frozenset[str] | None = None
    launches: bool = False
    fired: set[str] = field(default_factory=set)


# None outside a walk: a gate then costs one list read beyond its check
_WALK: list[Walk | None] = [None]


@contextlib.contextmanager
def walk(on: frozenset[str] | None = None, launches: bool = False) -> Iterator[Walk]:
    """Run the block with only the paths ``on`` (all where None; none at all: the reference layer)."""
    before = _WALK[0]
    _WALK[0] = w = Walk(on, launches)
    try:
        yield w
    finally:
        _WALK[0] = before


def _row(name: str, needs: Need, when: str, exact: Exact, within: str | None) -> None:
    if name in TABLE:
        raise ValueError(f"fast path {name!r} is registered twice")
    TABLE[name] = FastPath(name, needs, when, exact, within)


def _open(name: str) -> Walk | None:
    """The walk in force if ``name`` is on in it (None: no walk, or it is off)."""
    w = _WALK[0]
    if w is None or (w.on is not None and name not in w.on):
        return None
    return w


def writes(name: str, when: str, exact: Exact = "bitwise", within: str | None = None,
           cpu: bool = False) -> Callable[[Any], Any]:
    """A gate answering the array module that may fill ``x``'s results in place (``writable_module``), or None;
    ``cpu``: only where operations are cheap to launch (NumPy, torch on the CPU)."""
    _row(name, "cpu-writes" if cpu else "writes", when, exact, within)

    def gate(x: Any) -> Any:
        w = _WALK[0]
        if w is None:
            return None if cpu and launch_bound(x) else writable_module(x)
        if w.on is not None and name not in w.on or cpu and (w.launches or launch_bound(x)):
            return None
        mod = writable_module(x)
        if mod is not None:
            w.fired.add(name)
        return mod
    return gate


def launches(name: str, when: str, exact: Exact = "tolerance", within: str | None = None) -> Callable[[Any], bool]:
    """A gate answering whether ``x``'s backend pays per operation (``launch_bound``), so that the few-operation
    path is taken."""
    _row(name, "launches", when, exact, within)

    def gate(x: Any) -> bool:
        if _WALK[0] is None:
            return launch_bound(x)
        w = _open(name)
        if w is None:
            return False
        on = w.launches or launch_bound(x)
        if on:
            w.fired.add(name)
        return on
    return gate


def library(name: str, needs: Literal["torch", "numpy", "jax"], when: str, exact: Exact = "bitwise",
            within: str | None = None) -> Callable[[Any], bool]:
    """A gate answering whether ``x`` is a torch tensor (a NumPy array, a JAX array), whose library's own call is
    taken."""
    _row(name, needs, when, exact, within)
    test: Callable[[Any], bool] = {"torch": is_torch_array, "jax": is_jax_array,
                                   "numpy": lambda a: isinstance(a, np.ndarray)}[needs]

    def gate(x: Any) -> bool:
        if _WALK[0] is None:
            return test(x)
        w = _open(name)
        on = w is not None and test(x)
        if on and w is not None:
            w.fired.add(name)
        return on
    return gate


def torch_module() -> Any:
    """torch, for a path whose gate said the array is torch's (never imported here)."""
    return sys.modules["torch"]


_NEEDS = {"writes": "writes in place (NumPy, CuPy, torch outside autograd)",
          "cpu-writes": "writes in place, on the CPU", "launches": "pays per operation (torch CUDA, CuPy)",
          "torch": "torch", "numpy": "NumPy", "jax": "JAX"}


def markdown() -> str:
    """docs/FASTPATHS.md: the table, one row per fast path (every module imported first, so that all are
    registered)."""
    import importlib
    import pkgutil
    from pathlib import Path

    package = Path(__file__).resolve().parents[1]  # poolspec's folder: its modules found by name, not imported
    for info in pkgutil.walk_packages([str(package)], "poolspec."):
        if info.name.startswith(("poolspec.kernels", "poolspec.families")):
            importlib.import_module(info.name)
    lines = ["# Fast paths", "",
             "Every kernel is written as its reference (plain array-API calls, no in-place writes, no backend checks),",
             "which JAX, Dask and array-api-strict run; the paths below are taken where their backend allows, each",
             "through a gate of `poolspec.kernels.paths`, and each is held against the reference on every stored case",
             "that reaches it (`tests/test_reference_paths.py`): bit for bit, or (`tolerance`) within the conformance",
             "tolerances and bit-identical run to run. Written by `python -m poolspec.kernels.paths`.", "",
             "| path | backend | agrees | within | when |", "|---|---|---|---|---|"]
    for row in sorted(TABLE.values(), key=lambda r: r.name):
        lines.append(f"| `{row.name}` | {_NEEDS[row.needs]} | {row.exact} | {row.within or ''} | "
                     f"{row.when.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # the table lives in the imported module, not in this __main__ copy
    from poolspec.kernels import paths

    print(paths.markdown(), end="")
