"""The op registry: one record per op, consistent with its card and its functions, and the only place that
tells ops apart by name."""

import importlib
import pathlib
import re

import numpy as np
import pytest

import poolspec
from poolspec import families, registry, spec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_family_folder_is_found_and_its_functions_exported():
    """A family is its folder: each one under families/ is found, its cards carry its record, and everything its
    ops.py declares in ``__all__`` is what poolspec exports (a missing star-import line fails here). A folder whose
    name starts with ``_`` holds what several families share (``_roi``), not a family."""
    folders = {p.name for p in (ROOT / "src" / "poolspec" / "families").iterdir()
               if p.is_dir() and not p.name.startswith("_") and (p / "card.py").exists()}
    assert {f.name for f in families.all_families()} == folders
    assert {d.family for d in registry.ops()} == folders
    exported = []
    for f in families.all_families():
        assert all(registry.op(c.name).kind == f.kind for c in f.cards())
        module = importlib.import_module(f"poolspec.families.{f.name}.ops")
        for name in module.__all__:
            assert getattr(poolspec, name) is getattr(module, name), name
        exported += module.__all__
    assert [n for n in poolspec.__all__ if n in exported] == exported


def test_every_card_has_a_record_and_every_public_op_a_card():
    assert [d.name for d in registry.ops()] == [c.name for c in spec.cards()]
    others = {o for c in spec.cards() for o in c.gradient.others}  # further VJPs a card names (roi_align's boxes)
    public = {n.removesuffix("_backward") for n in poolspec.__all__ if callable(getattr(poolspec, n))
              and n not in ("output_shape", "infer_arguments", "set_eager_fusion") and n not in others}
    assert public == set(registry.OPS)
    assert others <= set(poolspec.__all__)


@pytest.mark.parametrize("name", list(registry.OPS))
def test_record_agrees_with_card_and_functions(name):
    d, c = registry.op(name), spec.card(name)
    assert d.forward is getattr(poolspec, name)
    assert d.backward is getattr(poolspec, f"{name}_backward")
    assert registry.op(f"{name}_backward") is d
    assert d.family in name
    assert (d.rank,) == c.spatial_dims or (d.rank is None and len(c.spatial_dims) > 1)
    assert d.arrays == tuple(a.name for a in c.arguments if a.is_array)
    assert d.indexed == ("indices" in [p.name for p in c.outputs])
    for r in c.input_ranks:
        # the unbatched form (C, *spatial) exactly where the card accepts one rank fewer than batched
        assert d.has_batch(r) == (d.rank is None or r == max(c.input_ranks))


def test_unknown_op():
    with pytest.raises(ValueError, match="unknown op 'avg_pool4d'"):
        registry.op("avg_pool4d")


# one call per family whose backward is a function of grad_output alone (linear) or also of x (the others)
_CALLS = {
    "avg_pool2d": dict(kernel_size=2),
    "adaptive_avg_pool2d": dict(output_size=3),
    "interpolate": dict(scale_factor=2, mode="bilinear"),
    "max_pool2d": dict(kernel_size=2),
    "adaptive_max_pool2d": dict(output_size=3),
    "lp_pool2d": dict(norm_type=2, kernel_size=2),
}


@pytest.mark.parametrize("name", list(_CALLS))
def test_kind_decides_whether_backward_reads_x(name):
    """The kind picks the derivative of a backward in captured graphs: a linear op's backward must not depend
    on x, a routed or composed one's must."""
    d, args = registry.op(name), _CALLS[name]
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((1, 2, 6, 6)), rng.standard_normal((1, 2, 6, 6))
    g = rng.standard_normal(poolspec.output_shape(name, x1.shape, **args))
    same = np.array_equal(d.backward(g, x1, **args), d.backward(g, x2, **args))
    assert same == (d.kind == "linear")


_NAMES = "|".join(sorted({*registry.OPS, *(d.family for d in registry.ops())}, key=len, reverse=True))
_DISPATCH = re.compile(
    rf"startswith\(\(?\"(?:adaptive|avg|max|lp|fractional|{_NAMES})"
    rf"|(?:op|name)\[-2\]|\[:-2\]|rstrip\(\"123d\"\)"
    rf"|[=!]= \"(?:{_NAMES})(?:_backward)?\""
    rf"|in \(\"(?:{_NAMES})(?:_backward)?\",")


def test_no_op_name_dispatch_anywhere():
    """Layers ask the registry (family, rank, kind, ports) and the cards, never parse or compare op names; no
    folder is exempt (a family's own rules are data of its card: its shape rule's inverse, the op whose
    memory-format rule it takes)."""
    # scripts/oracle.py is torch's side: it calls torch's functions by their names and imports no poolspec
    sources = list((ROOT / "src" / "poolspec").rglob("*.py")) + [
        p for p in (ROOT / "scripts").glob("*.py") if p.name != "oracle.py"]
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in sources
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if _DISPATCH.search(line)]
    assert not hits, "\n".join(hits)


def test_the_shared_layers_name_no_family():
    """Below the families' folders, code (not prose) names no family or op: autodiff, the call plumbing, the
    registry and the kernels take what differs per family from its folder (its card, record and capture.py)."""
    import ast

    names = {f.name for f in families.all_families()} | {o.name for o in registry.ops()}
    names |= {f"{n}_backward" for n in names}
    # the generic node of every indexed op's values and winners is called poolspec::max_pool, a name kept so
    # that programs exported earlier still load; it serves adaptive_max_pool as well and dispatches on nothing
    kept = {"poolspec::max_pool"}
    src = ROOT / "src" / "poolspec"
    shared = [src / "_calls.py", src / "registry.py", *(src / "autodiff").glob("*.py"), *(src / "kernels").glob("*.py")]
    hits = []
    for path in shared:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if node.value not in kept and (node.value in names or node.value.removeprefix("poolspec::") in names):
                    hits.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not hits, "\n".join(hits)
