"""The examples in docstrings run as written, and the op pages match the cards (README.md: test_readme.py)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import poolspec.families
from poolspec.spec.frontends import MODULES as FRONTEND_MODULES

MODULES = ["poolspec", "poolspec.spec", "poolspec.families", "poolspec.autodiff.torch_fused", "poolspec.frontends",
           "poolspec.spec.frontends", "poolspec.conformance.conventions", "poolspec.conformance.runner",
           "poolspec.export", "poolspec.families._docs", "poolspec.families._roi.ops",
           "poolspec.families._roi.capture"] + [
    f"poolspec.frontends.{m}" for m in FRONTEND_MODULES] + [
    "poolspec.frontends.torchvision.ops.poolers", "poolspec.frontends.torchvision.ops._modules",
    "poolspec.frontends.torchvision.ops._cards"] + [
    f"poolspec.families.{f.name}.ops" for f in poolspec.families.all_families()]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("family", [f.name for f in poolspec.families.all_families()])
def test_every_public_function_runs_its_example(family):
    """The docstrings the families fill at import (families/_docs.py) are found by doctest like written ones: every
    public function of a family's ops.py has an example that test_docstring_examples runs."""
    module = importlib.import_module(f"poolspec.families.{family}.ops")
    found = {t.name.rsplit(".", 1)[-1] for t in doctest.DocTestFinder().find(module) if t.examples}
    assert set(module.__all__) <= found, sorted(set(module.__all__) - found)


def test_op_pages_are_in_sync_with_the_cards(tmp_path):
    """docs/ops is what `poolspec cards --out docs/ops` writes from the cards today."""
    from poolspec.spec import write_pages as write

    committed = Path(__file__).resolve().parents[1] / "docs" / "ops"
    written = write(tmp_path)
    assert sorted(p.name for p in committed.iterdir()) == sorted(p.name for p in written)
    for p in written:
        assert (committed / p.name).read_text() == p.read_text(), f"docs/ops/{p.name} is stale: regenerate it"


def test_op_pages_show_computed_shapes():
    import poolspec

    committed = Path(__file__).resolve().parents[1] / "docs" / "ops"
    for card in poolspec.spec.cards():
        text = (committed / f"{card.name}.md").read_text()
        assert card.examples, card.name
        for ex in card.examples:
            out = poolspec.output_shape(card.name, tuple(ex.input_shape), **dict(ex.arguments))
            assert f"`{tuple(out)}`" in text
        for section in ("## Shape relation", "## Ports", "## Arguments", "## Description", "## Determinism",
                        "## Examples"):
            assert section in text
