"""Every front-end function has a card and a generated page, and the pages match the cards; the cards name only
arguments the functions take, in their order; the modules import without the libraries they mirror."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from poolspec.spec import frontend_card, frontend_cards
from poolspec.spec.frontends import MODULES, write

ROOT = Path(__file__).resolve().parents[1]


def _public(module: str) -> list[str]:
    """The module's public functions, and the module classes its ``__all__`` lists (torch.nn's: a class with a
    ``forward``; jax.image's ResizeMethod is an enum, not a function)."""
    mod = importlib.import_module(f"poolspec.frontends.{module}")
    functions = [f"{module}.{name}" for name, fn in vars(mod).items()
                 if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == mod.__name__]
    return functions + [f"{module}.{name}" for name in getattr(mod, "__all__", ())
                        if inspect.isclass(getattr(mod, name, None)) and hasattr(getattr(mod, name), "forward")]


def test_every_public_function_has_a_card_and_every_card_a_function():
    public = sorted(name for m in MODULES for name in _public(m))
    assert public and sorted(c.name for c in frontend_cards()) == public


@pytest.mark.parametrize("name", [c.name for c in frontend_cards()])
def test_card_arguments_are_the_signature(name):
    card = frontend_card(name)
    module, _, fn = name.rpartition(".")
    sig = inspect.signature(getattr(importlib.import_module(f"poolspec.frontends.{module}"), fn))
    assert [a.name for a in card.arguments] == list(sig.parameters), name
    for a in card.arguments:
        default = sig.parameters[a.name].default
        if not a.required and default is not inspect.Parameter.empty and not callable(default):
            assert a.default == default, (name, a.name)
    assert card.notes and card.summary and card.determinism and card.checked, name
    assert card.to_dict()["id"] == card.id


def test_frontend_pages_are_in_sync_with_the_cards(tmp_path):
    """docs/frontends is what `poolspec cards --frontends --out docs/frontends` writes from the cards today."""
    committed = ROOT / "docs" / "frontends"
    written = write(tmp_path)
    assert sorted(p.name for p in committed.iterdir()) == sorted(p.name for p in written)
    for p in written:
        assert (committed / p.name).read_text() == p.read_text(), f"docs/frontends/{p.name} is stale: regenerate it"


def test_frontends_import_without_the_mirrored_libraries():
    code = ("import sys\n"
            "for m in ('tensorflow', 'keras', 'flax', 'onnx', 'onnxruntime'):\n"
            "    sys.modules[m] = None\n"
            "from poolspec.spec.frontends import MODULES\n"
            "import importlib\n"
            "for m in MODULES:\n"
            "    importlib.import_module('poolspec.frontends.' + m)\n"
            "import numpy as np\n"
            "from poolspec.frontends.tf import nn\n"
            "print(float(nn.max_pool2d(np.ones((1, 2, 2, 1)), 2, 2, 'VALID')[0, 0, 0, 0]))\n"
            "assert 'torch' not in sys.modules and 'jax' not in sys.modules, 'a backend was imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "1.0", out.stderr[-2000:]
