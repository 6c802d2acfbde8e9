"""The ONNX front-end is a package (cards, pools, Resize, sampling, argument readers): its public names stay
``poolspec.frontends.onnx.X``, documented as that module's own, and each submodule's examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from poolspec.frontends import onnx

SUBMODULES = ["cards", "pool", "resize", "sampling", "_args"]


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodule_examples(name):
    module = importlib.import_module(f"poolspec.frontends.onnx.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names_are_the_package_s_own():
    assert [c.name.rpartition(".")[2] for c in onnx.CARDS] == [
        "AveragePool", "LpPool", "MaxPool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "MaxUnpool",
        "Resize", "GridSample", "AffineGrid"]
    for name in onnx.__all__:
        assert getattr(onnx, name).__module__ == "poolspec.frontends.onnx"
