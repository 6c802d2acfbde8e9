"""The ONNX front-end is a package (cards, pools, Resize, sampling, argument readers): its public names stay
``poolspec.frontends.onnx.X``, documented as that module's own, and each submodule's examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from poolspec.frontends import onnx

SUBMODULES = ["cards", "pool", "resize", "sampling", "roi", "_args"]


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodule_examples(name):
    module = importlib.import_module(f"poolspec.frontends.onnx.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names_are_the_package_s_own():
    assert [c.name.rpartition(".")[2] for c in onnx.CARDS] == [
        "AveragePool", "LpPool", "MaxPool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "MaxUnpool",
        "Resize", "GridSample", "AffineGrid", "RoiAlign", "MaxRoiPool"]
    for name in onnx.__all__:
        assert getattr(onnx, name).__module__ == "poolspec.frontends.onnx"


# --- AveragePool and LpPool on poolspec.avg_pool: against onnx's reference evaluator ------------------------------

def _reference(op: str, x, **attrs):
    import warnings

    import numpy as np

    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(op, ["X"], ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's mean of an empty window
        return np.asarray(ReferenceEvaluator(model).run(None, {"X": x})[0])


# (spatial, kernel, strides, dilations, pads): explicit pads, floor mode (the reference's ceil-mode windows shift)
_DILATED = [((9,), [3], [1], [2], [2, 3]), ((7, 8), [2, 3], [2, 1], [3, 2], [3, 0, 1, 4]),
            ((6, 5, 7), [2, 2, 3], [1, 2, 2], [2, 3, 2], [1, 0, 2, 2, 3, 1]),
            ((2, 4, 5), [3, 2, 2], [1, 1, 2], [2, 2, 1], [2, 1, 0, 2, 1, 1]),  # depth 2 < kernel 3: by parts
            ((1, 6), [2, 2], [1, 2], [3, 2], [3, 1, 3, 2])]  # windows of padding only


@pytest.mark.parametrize("spatial, k, s, d, pads", _DILATED, ids=[str(c[0]) for c in _DILATED])
@pytest.mark.parametrize("op", ["AveragePool-0", "AveragePool-1", "LpPool-1", "LpPool-3"])
def test_dilated_pools_match_the_reference_evaluator(op, spatial, k, s, d, pads):
    import numpy as np

    name, value = op.split("-")
    extra = {"count_include_pad": int(value)} if name == "AveragePool" else {"p": int(value)}
    x = np.random.default_rng(len(spatial) + sum(k)).standard_normal((2, 3) + spatial)
    attrs = dict(kernel_shape=k, strides=s, dilations=d, pads=pads, **extra)
    want = _reference(name, x, **attrs)
    got = getattr(onnx, name)(x, **attrs)
    empty = np.isnan(want)  # the reference's mean of no cell; poolspec's ONNX AveragePool gives 0 (its card)
    assert got.shape == want.shape and (not empty.any() or (name, value) == ("AveragePool", "0"))
    np.testing.assert_allclose(got[~empty], want[~empty], rtol=1e-12, atol=1e-13)
    assert (got[empty] == 0).all()
    if spatial == (1, 6) and name == "AveragePool" and value == "0":
        assert empty.any()
