"""The arguments a ``torch.library`` node carries (autodiff/torch_graph.py): a ``spec`` string, the ``repr`` of a
dict of Python literals read back without ``eval`` (an exported program is data), whose ints travel as markers
``"$i"`` into a SymInt list ``sizes`` (a size may come from a traced shape).

>>> spec, sizes = encode({"kernel_size": (2, 3), "mode": "max"}, "build")
>>> sizes, arguments(spec, sizes)
([2, 3], {'kernel_size': (2, 3), 'mode': 'max'})
"""

from __future__ import annotations

import ast
import math
from functools import lru_cache
from typing import Any

import numpy as np

_NAMES = {"inf": math.inf, "nan": math.nan}


@lru_cache(maxsize=1024)
def _parse(spec: str) -> dict[str, Any]:
    """The ``repr`` of a dict of Python literals (``inf`` included), read without ``eval``: an exported
    program is data."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(value(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Name) and node.id in _NAMES:
            return _NAMES[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            if isinstance(inner, (int, float)):
                return -inner
        raise ValueError(f"poolspec: malformed op arguments {spec!r}")

    tree = ast.parse(spec, mode="eval").body
    if not isinstance(tree, ast.Dict) or not all(isinstance(k, ast.Constant) for k in tree.keys):
        raise ValueError(f"poolspec: malformed op arguments {spec!r}")
    return {k.value: value(v) for k, v in zip(tree.keys, tree.values)}  # type: ignore[union-attr]


def arguments(spec: str, sizes: list[Any]) -> dict[str, Any]:
    """The keyword arguments a node carries: ``spec`` with each marker ``"$i"`` replaced by ``sizes[i]``
    (specialised to an int where it is a SymInt: the plans depend on it)."""
    return _filled(spec, tuple(int(s) for s in sizes))


@lru_cache(maxsize=1024)
def _filled(spec: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    kw = _parse(spec)

    def fill(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return type(v)(fill(e) for e in v)
        if isinstance(v, str) and v.startswith("$") and v[1:].isdigit():
            return sizes[int(v[1:])]
        return v

    return {k: fill(v) for k, v in kw.items() if not k.startswith("@")}


def _split(v: Any, sizes: list[Any]) -> Any:
    """``v`` with each int replaced by a marker ``"$i"`` and moved to ``sizes``, which the node takes as a
    SymInt list: a size may come from a traced shape (``output_size=x.shape[-2:]`` under dynamic shapes),
    which Dynamo presents as an int that has no ``repr``."""
    if isinstance(v, (tuple, list)):  # torch.Size included
        parts = [_split(e, sizes) for e in v]
        return parts if isinstance(v, list) else tuple(parts)
    if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, (int, np.integer)):
        sizes.append(v)
        return f"${len(sizes) - 1}"
    if isinstance(v, np.floating):
        return float(v)
    return v


def encode(args: dict[str, Any], build: str) -> tuple[str, list[Any]]:
    """A node's ``spec`` and ``sizes`` for keyword arguments ``args`` (Python literals, sizes maybe SymInts)."""
    sizes: list[Any] = []
    spec = {k: _split(v, sizes) for k, v in args.items()}
    spec["@build"] = build  # read by no kernel: keeps torch's on-disk compile caches per build
    return repr(spec), sizes
