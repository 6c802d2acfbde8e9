"""The examples in docstrings and in the README run as written."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

MODULES = ["poolspec", "poolspec.spec", "poolspec.ops.avg_pool", "poolspec.ops.max_pool", "poolspec.ops.max_unpool",
           "poolspec.ops.lp_pool", "poolspec.ops.interpolate"]
README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def _blocks():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_python_blocks(index):
    block = _blocks()[index]
    if "import torch" in block:
        pytest.importorskip("torch")
    if "import jax" in block:
        pytest.importorskip("jax")
    if block.lstrip().startswith(">>>"):
        parser = doctest.DocTestParser()
        test = parser.get_doctest(block, {"poolspec": importlib.import_module("poolspec")}, "README", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0 and runner.tries > 0
    else:
        exec(compile(block, f"README block {index}", "exec"), {})


def test_op_pages_are_in_sync_with_the_cards(tmp_path):
    """docs/ops is what `poolspec cards --out docs/ops` writes from the cards today."""
    from poolspec.spec.markdown import write

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
