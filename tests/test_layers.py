"""The package's layers (docs/ARCHITECTURE.md, "Layers"): every import statement in src/poolspec, at module level or
inside a function, goes to a module of its own layer or one below, and no modules import each other in a circle.
Discovery by name (``importlib.import_module`` of the families' folders, the fast-path table's walk, the Keras
front-end's registrations) is not an import statement and is how a lower layer finds what sits above it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"

# low to high; a module belongs to the first layer with a matching pattern ("x.*": x's modules, "x.**": at any
# depth, "x": x itself)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("poolspec._types", "poolspec._version", "poolspec._compat", "poolspec.counting")),
    ("rules", ("poolspec.spec._*", "poolspec.plans", "poolspec.plans.*")),
    ("cards", ("poolspec.families", "poolspec.families.*.card")),
    ("catalogue", ("poolspec.spec", "poolspec.spec.*", "poolspec.registry")),
    ("kernels", ("poolspec._calls", "poolspec.kernels", "poolspec.kernels.*")),
    ("autodiff", ("poolspec.autodiff", "poolspec.autodiff.*")),
    ("ops", ("poolspec.families.*", "poolspec.families.*.ops", "poolspec.families.*.sampling",
             "poolspec.families.*.search", "poolspec.families.*.capture", "poolspec.families.*.jax_taps")),
    ("api", ("poolspec",)),
    ("mirrors", ("poolspec.families.*.conformance", "poolspec.families.*.burn", "poolspec.conformance",
                 "poolspec.conformance.*", "poolspec.frontends", "poolspec.frontends.**", "poolspec.export",
                 "poolspec.export.*", "poolspec.pyramid", "poolspec.memory")),
    ("tools", ("poolspec.bench", "poolspec.bench_*", "poolspec.device_bench", "poolspec.cli", "poolspec.__main__",
               "poolspec.families.*.bench")),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "poolspec").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _matches(name: str, pattern: str) -> bool:
    """``*`` in ``pattern`` stands for any part of one dotted name (``_*``: a private one), ``**`` for any
    submodule at any depth."""
    regex = r"\.".join(r"[^.]+(?:\.[^.]+)*" if part == "**" else re.escape(part).replace(r"\*", "[^.]*")
                       for part in pattern.split("."))
    return re.fullmatch(regex, name) is not None


def layer(name: str) -> int:
    for i, (_, patterns) in enumerate(LAYERS):
        if any(_matches(name, p) for p in patterns):
            return i
    raise LookupError(f"{name}: in no layer of tests/test_layers.py")


def _targets(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    if node.level:
        here = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    out = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    return [t for t in out if t in MODULES]


def imports() -> dict[str, set[str]]:
    """Every module's imports of poolspec modules, wherever the statement stands."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update(t for t in _targets(name, node) if t != name)
        edges[name] = found
    return edges


def test_every_module_is_in_a_layer_and_imports_only_its_own_or_lower():
    edges = imports()
    up = [f"{a} ({LAYERS[layer(a)][0]}) imports {b} ({LAYERS[layer(b)][0]})"
          for a in sorted(edges) for b in sorted(edges[a]) if layer(b) > layer(a)]
    assert not up, "\n".join(up)


def test_no_import_circles():
    edges, index, low, stack, on, circles = imports(), {}, {}, [], set(), []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, circles


def test_the_layers_see_every_module():
    assert all(layer(name) >= 0 for name in MODULES)
    assert {"poolspec", "poolspec.registry", "poolspec.families.max_pool.ops"} <= set(MODULES)
