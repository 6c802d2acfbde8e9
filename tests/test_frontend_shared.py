"""The rules and checks the front-ends share (``frontends._geometry``, ``frontends._common``): each written once,
right against the formula it replaces, and refusals that name the function, the argument and the rule."""

from __future__ import annotations

import doctest
import importlib
import itertools

import numpy as np
import pytest

from poolspec.frontends import _common, _geometry


@pytest.mark.parametrize("name", ["_common", "_geometry", "flax._pool", "keras.ops._cards"])
def test_shared_modules_examples(name):
    module = importlib.import_module(f"poolspec.frontends.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_same_and_valid_sizes_are_tensorflows():
    """lax.padtype_to_pads / Keras' "same" / tf.nn's SAME: ceil(L / s) outputs, the odd cell at the end (at the
    start for SAME_LOWER); VALID floor((L - k) / s) + 1 or 0; the unclamped total of TF's 3-d pools."""
    for L, k, s in itertools.product(range(1, 9), range(1, 6), range(1, 5)):
        out = -(-L // s)
        total = (out - 1) * s + k - L
        assert _geometry.same_output(L, s) == out
        assert _geometry.same_total(L, k, s) == total
        assert _geometry.same_pads(L, k, s) == (max(total, 0) // 2, max(total, 0) - max(total, 0) // 2)
        assert _geometry.same_pads(L, k, s, lower=True) == _geometry.same_pads(L, k, s)[::-1]
        assert _geometry.valid_output(L, k, s) == (0 if L < k else (L - k) // s + 1)
        assert _geometry.valid_output(np.int64(L), k, s) == _geometry.valid_output(L, k, s)


def test_spatial_axes_of_every_layout():
    assert _geometry.spatial_axes(5, 3, False) == (1, 2, 3)
    assert _geometry.spatial_axes(5, 3, True) == (2, 3, 4)
    assert _geometry.spatial_axes(3, 2, False) == (0, 1)  # one unbatched image, channels last


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_half_pixel_is_the_expression_it_replaces(dtype):
    scale = dtype(7) / dtype(3)
    want = ((np.arange(9).astype(dtype) + dtype(0.5)) * scale).astype(dtype)
    got = _geometry.half_pixel(9, scale, dtype)
    assert got.dtype == dtype and got.tobytes() == want.tobytes()


def test_mean_tables_average_the_cells_inside():
    for L, k, s, low in itertools.product(range(1, 7), range(1, 5), range(1, 4), range(0, 3)):
        if low >= k:  # a window wholly in the padding: TF's and Keras' padding never makes one
            continue
        out = max((L + low - k) // s + 1, 1)
        packed, offset = (_common.mean_table(L, k, s, low, out, at_offset=a) for a in (False, True))
        x = np.arange(1.0, L + 2)
        x[L] = 0.0  # the padding cell
        for table in (packed, offset):
            got = (table.weight * x[table.index]).sum(axis=0)
            want = [x[max(o * s - low, 0):min(o * s - low + k, L)].mean() for o in range(out)]
            np.testing.assert_allclose(got, want, rtol=1e-15)
        # the same products, only the padding taps placed apart
        assert sorted(packed.weight.ravel().tolist()) == pytest.approx(sorted(offset.weight.ravel().tolist()))


def test_checks_name_the_function_argument_and_rule():
    with pytest.raises(TypeError, match=r"^f: size=\[2, 2.0\]: must be a sequence of ints$"):
        _common.ints("f", "size", [2, 2.0])
    with pytest.raises(TypeError, match="must be a sequence of ints"):
        _common.ints("f", "size", [True])
    with pytest.raises(ValueError, match=r"^f: k=\(0, 1\): every entry must be >= 1$"):
        _common.at_least("f", "k", (0, 1), (0, 1))
    with pytest.raises(ValueError, match=r"^f: padding='full': must be one of VALID, SAME$"):
        _common.choice("f", "padding", "full", ("VALID", "SAME"), any_case=True)
    with pytest.raises(TypeError, match=r"^f: padding=3: must be a string$"):
        _common.choice("f", "padding", 3, ("VALID", "SAME"), not_str="must be a string")
    with pytest.raises(TypeError, match=r"^f: x.dtype='bool': must be one of float32$"):
        _common.choice("f", "x.dtype", "bool", ("float32",), kind=TypeError)
    with pytest.raises(ValueError, match=r"^f: x=\(2, 0\): axis 1 is empty$"):
        _common.nonempty("f", "x", (2, 0), (0, 1), lambda a: f"axis {a} is empty")
    with pytest.raises(TypeError, match=r"^f: antialias=1: must be a bool$"):
        _common.flag("f", "antialias", 1)
    assert _common.choice("f", "padding", "same", ("VALID", "SAME"), any_case=True) == "same"
    assert _common.flag("f", "antialias", np.bool_(True)) is True
