"""The porter's mapping tables (docs/PORTING.md), row by row against the real libraries: OpenCV's ``cv2.resize``
and Pillow's ``Image.resize`` on float32 images in 0-255; ``jax.image.resize`` and the ``lax.reduce_window``
pooling Flax is built on; the ONNX reference evaluator (``onnx.reference.ReferenceEvaluator``) on one-node models
made with ``onnx.helper``; TensorFlow's ``tf.image.resize`` and ``tf.nn`` pools. Random sizes: up-, integer down-
and fractional downscales unless the row says otherwise (only integer factors where a row holds only there); a
case may scale its two axes differently, so a few cases cover every kind on both axes. Each peer is imported
with ``pytest.importorskip``, so a missing library skips its rows only."""

from __future__ import annotations

import contextlib
from functools import cache

import numpy as np
import pytest

import poolspec

# float32 images in 0-255: both libraries compute in float32, poolspec's reference here in float64
TOL = 2e-4
# the other peers on values in [0, 1] (resize) or standard normal (pools, grid_sample): float32 rounding of a
# few dozen products and sums, and exact float64 arithmetic
TOL32 = 1e-5
TOL64 = 1e-12


def _sizes(kinds: tuple[str, ...], n: int = 60) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    rng = np.random.default_rng(7)
    out = []
    for t in range(n):
        kind = kinds[t % len(kinds)]
        H, W = (int(v) for v in rng.integers(4, 40, 2))
        if kind == "up":
            out.append(((H, W), (H * int(rng.integers(2, 4)), W + int(rng.integers(1, 20)))))
        elif kind == "down-int":
            f = int(rng.integers(2, 4))
            out.append(((H * f, W * f), (H, W)))
        else:
            out.append(((H, W), (max(1, H * 2 // 3), max(1, W * 3 // 5))))
    return out


def _cv2(flag: str):
    def resize(img, size):
        cv2 = pytest.importorskip("cv2")
        return cv2.resize(img, (size[1], size[0]), interpolation=getattr(cv2, flag))
    return resize


def _pil(flag: str):
    def resize(img, size):
        Image = pytest.importorskip("PIL.Image")
        return np.asarray(Image.fromarray(img, mode="F").resize((size[1], size[0]), getattr(Image.Resampling, flag)))
    return resize


ALL = ("up", "down-int", "down-frac")
ROWS = [
    ("cv2.INTER_LINEAR", _cv2("INTER_LINEAR"), {"mode": "bilinear", "align_corners": False}, ALL),
    ("cv2.INTER_CUBIC", _cv2("INTER_CUBIC"), {"mode": "bicubic", "align_corners": False}, ALL),
    ("cv2.INTER_AREA", _cv2("INTER_AREA"), {"mode": "area"}, ("down-int",)),
    ("cv2.INTER_NEAREST", _cv2("INTER_NEAREST"), {"mode": "nearest"}, ("down-int",)),
    ("cv2.INTER_NEAREST_EXACT", _cv2("INTER_NEAREST_EXACT"), {"mode": "nearest-exact"}, ("down-int",)),
    ("PIL BILINEAR", _pil("BILINEAR"), {"mode": "bilinear", "antialias": True, "align_corners": False}, ALL),
    ("PIL BICUBIC", _pil("BICUBIC"), {"mode": "bicubic", "antialias": True, "align_corners": False}, ALL),
    ("PIL LANCZOS", _pil("LANCZOS"), {"mode": "lanczos", "antialias": True, "align_corners": False}, ALL),
    ("PIL NEAREST", _pil("NEAREST"), {"mode": "nearest-exact"}, ("down-int",)),
]


@pytest.mark.parametrize("name, resize, kw, kinds", ROWS, ids=[r[0] for r in ROWS])
def test_mapping_row(name, resize, kw, kinds):
    rng = np.random.default_rng(11)
    for shape, size in _sizes(kinds):
        img = (rng.random(shape) * 255).astype(np.float32)
        want = resize(img, size).astype(np.float64)
        got = poolspec.interpolate(img[None, None].astype(np.float64), size=size, **kw)[0, 0]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"{name} {shape} -> {size}")


# ------------------------------------------------------------------------------------------------------------
# resize cases for the other peers: one (input, output) length pair per axis and kind

UP, UP_INT, DOWN_INT, DOWN_FRAC = "up", "up-int", "down-int", "down-frac"
EVERY = (UP, DOWN_INT, DOWN_FRAC, UP_INT)
INTEGER = (UP_INT, DOWN_INT)
UPSCALES = (UP, UP_INT)


def _axis(kind: str, rng: np.random.Generator) -> tuple[int, int]:
    if kind == UP:  # a non-integer factor above 1
        L = int(rng.integers(3, 20))
        return L, L * int(rng.integers(1, 3)) + int(rng.integers(1, L))
    if kind == UP_INT:
        L = int(rng.integers(2, 16))
        return L, L * int(rng.integers(2, 5))
    if kind == DOWN_INT:
        O = int(rng.integers(1, 12))
        return O * int(rng.integers(2, 5)), O
    L = int(rng.integers(7, 40))  # a non-integer factor below 1
    O = int(L * rng.uniform(0.3, 0.9))
    return L, O - 1 if L % O == 0 else O


def _cases(kinds: tuple[str, ...], n: int | None = None, seed: int = 0) -> list[tuple[tuple[int, ...], ...]]:
    """n cases ((H, W), (H_out, W_out)); H takes the kinds in turn and W the next one, so len(kinds) cases put
    every kind on both axes."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(len(kinds) if n is None else n):
        (H, Ho), (W, Wo) = _axis(kinds[t % len(kinds)], rng), _axis(kinds[(t + 1) % len(kinds)], rng)
        out.append(((H, W), (Ho, Wo)))
    return out


# ------------------------------------------------------------------------------------------------------------
# JAX: jax.image.resize and lax.reduce_window (what flax.linen.max_pool / avg_pool call)


def _jax():
    return pytest.importorskip("jax")


def _x64(jax):
    """64-bit JAX for the float64 cases, without leaking the flag into other tests."""
    enable = getattr(jax, "enable_x64", None)
    if enable is None:
        enable = getattr(pytest.importorskip("jax.experimental"), "enable_x64", None)
    return enable(True) if enable is not None else contextlib.nullcontext()


JAX_RESIZE_ROWS = [
    ("nearest", False, {"mode": "nearest-exact"}, INTEGER),
    ("linear", False, {"mode": "bilinear", "align_corners": False}, EVERY),
    ("linear", True, {"mode": "bilinear", "align_corners": False, "antialias": True}, EVERY),
    ("cubic", True, {"mode": "bicubic", "align_corners": False, "antialias": True}, EVERY),
    ("cubic", False, {"mode": "bicubic", "align_corners": False, "antialias": True}, UPSCALES),
    ("cubic-pytorch", False, {"mode": "bicubic", "align_corners": False}, EVERY),
    ("lanczos3", False, {"mode": "lanczos"}, EVERY),
    ("lanczos3", True, {"mode": "lanczos", "antialias": True}, EVERY),
    ("area", False, {"mode": "area"}, (DOWN_INT,)),
]


@pytest.mark.parametrize("method, antialias, kw, kinds", JAX_RESIZE_ROWS,
                         ids=[f"{r[0]}-antialias={r[1]}" for r in JAX_RESIZE_ROWS])
def test_jax_resize_row(method, antialias, kw, kinds):
    jax = _jax()
    try:
        jax.image.ResizeMethod.from_string(method)
    except ValueError:
        pytest.skip(f"jax {jax.__version__} has no resize method {method!r}")
    rng = np.random.default_rng(1)
    for dtype, cases, tol in ((np.float32, _cases(kinds), TOL32), (np.float64, _cases(kinds, 1, seed=5), TOL64)):
        with _x64(jax) if dtype == np.float64 else contextlib.nullcontext():
            for shape, size in cases:
                x = rng.random((1, 2) + shape).astype(dtype)
                want = np.asarray(jax.image.resize(x, (1, 2) + size, method, antialias=antialias))
                assert want.dtype == dtype
                got = poolspec.interpolate(x, size=size, **kw)
                np.testing.assert_allclose(got, want, rtol=0, atol=tol,
                                           err_msg=f"{method} antialias={antialias} {dtype.__name__} {shape} -> {size}")


def test_jax_resize_other_ranks():
    """jax.image.resize resizes every axis whose length changes: "linear" on (N, C, L) and (N, C, D, H, W)."""
    jax = _jax()
    rng = np.random.default_rng(2)
    with _x64(jax):
        for mode, shape, size in (("linear", (9,), (20,)), ("trilinear", (5, 12, 7), (9, 4, 16))):
            x = rng.random((1, 2) + shape)
            want = np.asarray(jax.image.resize(x, (1, 2) + size, "linear", antialias=False))
            got = poolspec.interpolate(x, size=size, mode=mode, align_corners=False)
            np.testing.assert_allclose(got, want, rtol=0, atol=TOL64, err_msg=f"{mode} {shape} -> {size}")


def _pool_configs(n: int, seed: int = 3):
    """(H, W), kernel, stride, padding (at most half the kernel, torch's limit), dilation"""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = tuple(int(v) for v in rng.integers(1, 6, 2))
        yield ((tuple(int(v) for v in rng.integers(8, 30, 2)), k, tuple(int(v) for v in rng.integers(1, 4, 2)),
                tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k), tuple(int(v) for v in rng.integers(1, 3, 2))))


def _lax_pool(x, op: str, k, s, padding, d=(1, 1), count_include_pad: bool = True):
    """flax.linen.max_pool / avg_pool on NCHW data: lax.reduce_window with -inf (max) or 0 (sum) as the pad
    value; avg_pool divides by the window size (count_include_pad=True, Flax's default) or by the pooled ones."""
    from jax import lax

    pads = padding if isinstance(padding, str) else [(0, 0), (0, 0)] + [
        tuple(p) if isinstance(p, tuple) else (p, p) for p in padding]
    window, strides = (1, 1) + tuple(k), (1, 1) + tuple(s)
    if op == "max":
        return lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, window, strides, pads,
                                 window_dilation=(1, 1) + tuple(d))
    total = lax.reduce_window(x, np.array(0, x.dtype), lax.add, window, strides, pads)
    if count_include_pad:
        return total / np.prod(k)
    return total / lax.reduce_window(np.ones_like(x), np.array(0, x.dtype), lax.add, window, strides, pads)


def _lax_row(row, x, k, s, p, d):
    """(peer, poolspec) for one configuration, or None where the row does not cover it"""
    pairs = _pairs(k, p, d if row.startswith("max") else (1, 1))
    if row == "max VALID":
        return _lax_pool(x, "max", k, s, "VALID", d), poolspec.max_pool2d(x, k, s, dilation=d)
    if row == "max padded":
        return _lax_pool(x, "max", k, s, p, d), poolspec.max_pool2d(x, k, s, p, d)
    if row == "max SAME":
        return _lax_pool(x, "max", k, s, "SAME", d), poolspec.max_pool2d(x, k, s, "same", d)
    if row == "max (low, high)":
        return _lax_pool(x, "max", k, s, pairs, d), poolspec.max_pool2d(x, k, s, pairs, d)
    if row == "avg VALID":
        return _lax_pool(x, "avg", k, s, "VALID"), poolspec.avg_pool2d(x, k, s)
    if row == "avg padded":
        return _lax_pool(x, "avg", k, s, p), poolspec.avg_pool2d(x, k, s, p)
    if row == "avg padded, count_include_pad=False":
        return (_lax_pool(x, "avg", k, s, p, count_include_pad=False),
                poolspec.avg_pool2d(x, k, s, p, count_include_pad=False))
    if row == "avg SAME":
        return _lax_pool(x, "avg", k, s, "SAME"), poolspec.avg_pool2d(x, k, s, "same")
    if row == "avg SAME, count_include_pad=False":
        return (_lax_pool(x, "avg", k, s, "SAME", count_include_pad=False),
                poolspec.avg_pool2d(x, k, s, "same", count_include_pad=False))
    if row == "avg (low, high)":
        return _lax_pool(x, "avg", k, s, pairs), poolspec.avg_pool2d(x, k, s, pairs)
    if row == "avg (low, high), count_include_pad=False":
        return (_lax_pool(x, "avg", k, s, pairs, count_include_pad=False),
                poolspec.avg_pool2d(x, k, s, pairs, count_include_pad=False))
    raise AssertionError(row)


LAX_ROWS = ["max VALID", "max padded", "max SAME", "max (low, high)", "avg VALID", "avg padded",
            "avg padded, count_include_pad=False", "avg SAME", "avg SAME, count_include_pad=False", "avg (low, high)",
            "avg (low, high), count_include_pad=False"]


def _pairs(k, p, d):
    """Asymmetric (low, high) padding from a configuration: low p, high the rest of the window's reach."""
    return tuple((pi, (ki - 1) * di - pi) for ki, pi, di in zip(k, p, d))


@pytest.mark.parametrize("row", LAX_ROWS)
def test_lax_reduce_window_row(row):
    jax = _jax()
    rng = np.random.default_rng(4)
    for dtype, n in ((np.float32, 5), (np.float64, 3)):
        done = 0
        with _x64(jax) if dtype == np.float64 else contextlib.nullcontext():
            for shape, k, s, p, d in _pool_configs(60, seed=3 + (dtype == np.float64)):
                x = rng.standard_normal((2, 3) + shape).astype(dtype)
                pair = _lax_row(row, x, k, s, p, d)
                if pair is None:
                    continue
                want, got = np.asarray(pair[0]), pair[1]
                assert want.dtype == dtype and want.shape == got.shape, (row, shape, k, s, p, d, want.shape, got.shape)
                np.testing.assert_allclose(got, want, rtol=0, atol=TOL32 if dtype == np.float32 else TOL64,
                                           err_msg=f"{row} {dtype.__name__} {shape} k={k} s={s} p={p} d={d}")
                done += 1
                if done == n:
                    break
        assert done == n, row


# ------------------------------------------------------------------------------------------------------------
# ONNX: the reference evaluator on one-node models


@cache
def _onnx_session(op: str, node_inputs: tuple[str, ...], types: tuple[str, ...], attrs: tuple, opset: int):
    onnx = pytest.importorskip("onnx")
    reference = pytest.importorskip("onnx.reference")
    helper, T = onnx.helper, onnx.TensorProto
    named = [name for name in node_inputs if name]
    node = helper.make_node(op, list(node_inputs), ["Y"], **dict(attrs))
    graph = helper.make_graph([node], op,
                              [helper.make_tensor_value_info(n, getattr(T, t), None) for n, t in zip(named, types)],
                              [helper.make_tensor_value_info("Y", getattr(T, types[0]), None)])
    return reference.ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))


def _onnx(op: str, *arrays: np.ndarray, opset: int = 20, **attrs) -> np.ndarray:
    """Run a one-node model of op on arrays (inputs X, A, B ...; for Resize X and its scales, if float, or sizes)."""
    names = ("X",) + tuple(chr(ord("A") + i) for i in range(len(arrays) - 1))
    node_inputs = names
    if op == "Resize":  # X, roi, scales, sizes
        node_inputs = ("X", "", "A") if arrays[1].dtype != np.int64 else ("X", "", "", "A")
    types = tuple({"float32": "FLOAT", "float64": "DOUBLE", "int64": "INT64"}[a.dtype.name] for a in arrays)
    session = _onnx_session(op, node_inputs, types, tuple(sorted(attrs.items())), opset)
    return session.run(None, dict(zip(names, arrays)))[0]


HALF = {"coordinate_transformation_mode": "half_pixel"}
PT_HALF = {"coordinate_transformation_mode": "pytorch_half_pixel"}
CORNERS = {"coordinate_transformation_mode": "align_corners"}
CUBIC75 = {"mode": "cubic", "cubic_coeff_a": -0.75}
CUBIC50 = {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}
# name, Resize attributes, poolspec keywords, kinds, float64 tolerance (the evaluator forms cubic weights in
# float32: cubic_coeff_a is a float32 attribute)
ONNX_RESIZE_ROWS = [
    ("nearest asymmetric floor", {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                  "nearest_mode": "floor"}, {"mode": "nearest"}, INTEGER, TOL64),
    ("nearest half_pixel round_prefer_ceil", {"mode": "nearest", **HALF, "nearest_mode": "round_prefer_ceil"},
     {"mode": "nearest-exact"}, INTEGER, TOL64),
    ("linear half_pixel", {"mode": "linear", **HALF}, {"mode": "bilinear", "align_corners": False}, EVERY, TOL64),
    ("linear pytorch_half_pixel", {"mode": "linear", **PT_HALF}, {"mode": "bilinear", "align_corners": False},
     EVERY, TOL64),
    ("linear align_corners", {"mode": "linear", **CORNERS}, {"mode": "bilinear", "align_corners": True}, EVERY,
     TOL64),
    ("linear antialias exclude_outside", {"mode": "linear", **HALF, "antialias": 1, "exclude_outside": 1},
     {"mode": "bilinear", "align_corners": False, "antialias": True}, EVERY, TOL64),
    ("cubic -0.75 half_pixel", {**CUBIC75, **HALF}, {"mode": "bicubic", "align_corners": False}, EVERY, TOL32),
    ("cubic -0.75 pytorch_half_pixel", {**CUBIC75, **PT_HALF}, {"mode": "bicubic", "align_corners": False}, EVERY,
     TOL32),
    ("cubic -0.75 align_corners", {**CUBIC75, **CORNERS}, {"mode": "bicubic", "align_corners": True}, EVERY, TOL32),
    ("cubic -0.5 exclude_outside antialias", {**CUBIC50, **HALF, "antialias": 1},
     {"mode": "bicubic", "align_corners": False, "antialias": True}, EVERY, TOL32),
    ("cubic -0.5 exclude_outside", {**CUBIC50, **HALF}, {"mode": "bicubic", "align_corners": False, "antialias": True},
     UPSCALES, TOL32),
]


@pytest.mark.parametrize("name, attrs, kw, kinds, tol64", ONNX_RESIZE_ROWS, ids=[r[0] for r in ONNX_RESIZE_ROWS])
def test_onnx_resize_row(name, attrs, kw, kinds, tol64):
    rng = np.random.default_rng(5)
    for dtype, tol in ((np.float64, tol64), (np.float32, TOL32)):
        for shape, size in _cases(kinds, 8, seed=6):
            if attrs.get("coordinate_transformation_mode") == "pytorch_half_pixel" and 1 in size:
                continue  # the row's exception: an output of length 1 samples input coordinate -0.5
            x = rng.random((1, 2) + shape).astype(dtype)
            want = _onnx("Resize", x, np.array((1, 2) + size, np.int64), opset=19, **attrs)
            got = poolspec.interpolate(x, size=size, **kw)
            np.testing.assert_allclose(got, want, rtol=0, atol=tol,
                                       err_msg=f"{name} {dtype.__name__} {shape} -> {size}")


def test_onnx_resize_scales_input():
    """Resize given `scales` (float32) rather than `sizes`: poolspec's scale_factor, the same values."""
    rng = np.random.default_rng(6)
    rows = [({"mode": "linear", **HALF}, {"mode": "bilinear", "align_corners": False}, (0.6, 1.3, 1.7, 2.5), TOL64),
            ({**CUBIC75, **HALF}, {"mode": "bicubic", "align_corners": False}, (0.4, 0.75, 1.5, 3.0), TOL32),
            ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
             {"mode": "nearest"}, (0.5, 2.0, 3.0, 0.25), TOL64)]
    for attrs, kw, factors, tol in rows:
        for t in range(4):
            sf = (float(np.float32(factors[t])), float(np.float32(factors[(t + 1) % 4])))
            x = rng.random((1, 2, 8 + 4 * t, 12 - 2 * t))
            want = _onnx("Resize", x, np.array((1.0, 1.0) + sf, np.float32), opset=19, **attrs)
            got = poolspec.interpolate(x, scale_factor=sf, **kw)
            assert got.shape == want.shape, (attrs, sf)
            np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=f"{attrs} scales={sf}")


def test_onnx_resize_other_ranks():
    rng = np.random.default_rng(7)
    for mode, shape, size in (("linear", (9,), (20,)), ("trilinear", (5, 12, 7), (9, 4, 16))):
        x = rng.random((1, 2) + shape)
        want = _onnx("Resize", x, np.array((1, 2) + size, np.int64), opset=19, mode="linear", **HALF)
        got = poolspec.interpolate(x, size=size, mode=mode, align_corners=False)
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL64, err_msg=f"{mode} {shape} -> {size}")


def _ceil_overhang(L: int, k: int, s: int, p: int) -> int:
    """cells the last ceil_mode window reaches past the padded input"""
    out = -(-(L + 2 * p - k) // s) + 1
    out -= (out - 1) * s >= L + p
    return (out - 1) * s + k - L - 2 * p


def _onnx_pool_row(row, x, k, s, p, d):
    """(peer, poolspec) for one configuration, or None where the row does not cover it"""
    if s == (1, 1) and d == (1, 1):
        # onnx 1.23's evaluator reads 2-D pads as (top, bottom, left, right) on its stride-1 path, and its ceil_mode
        # there is off: equal pads, no ceil_mode
        if row.startswith("MaxPool ceil"):
            return None
        p = (p[0], p[0]) if p[0] <= k[1] // 2 else (0, 0)
    pads = p + p  # ONNX: all begins, then all ends
    if row.endswith("begin != end"):
        if s == (1, 1) and d == (1, 1):
            return None  # the evaluator's stride-1 path reads the pads in another order (above)
        pairs = _pairs(k, p, d)
        pads = tuple(a for a, _ in pairs) + tuple(b for _, b in pairs)
        if row.startswith("MaxPool"):
            return (_onnx("MaxPool", x, kernel_shape=k, strides=s, pads=pads, dilations=d),
                    poolspec.max_pool2d(x, k, s, pairs, d))
        include = int("count_include_pad=1" in row)
        return (_onnx("AveragePool", x, kernel_shape=k, strides=s, pads=pads, count_include_pad=include),
                poolspec.avg_pool2d(x, k, s, pairs, count_include_pad=bool(include)))
    if row == "MaxPool":
        return (_onnx("MaxPool", x, kernel_shape=k, strides=s, pads=pads, dilations=d),
                poolspec.max_pool2d(x, k, s, p, d))
    if row == "MaxPool ceil_mode":
        return (_onnx("MaxPool", x, kernel_shape=k, strides=s, pads=pads, dilations=d, ceil_mode=1),
                poolspec.max_pool2d(x, k, s, p, d, ceil_mode=True))
    if row.startswith("AveragePool"):
        include = int("count_include_pad=1" in row)
        ceil = "ceil_mode" in row
        if ceil and max(_ceil_overhang(*a) for a in zip(x.shape[2:], k, s, p)) > 1:
            return None  # the evaluator moves half of a longer overhang to the front
        return (_onnx("AveragePool", x, kernel_shape=k, strides=s, pads=pads, count_include_pad=include,
                      ceil_mode=int(ceil)),
                poolspec.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=bool(include)))
    if row.startswith("LpPool"):
        norm = int(row[-1])
        if norm % 2:
            x = np.abs(x)  # ONNX sums |x|^p, torch x^p
        return _onnx("LpPool", x, kernel_shape=k, strides=s, p=norm), poolspec.lp_pool2d(x, norm, k, s)
    if row == "GlobalAveragePool":
        return _onnx("GlobalAveragePool", x), poolspec.adaptive_avg_pool2d(x, 1)
    if row == "GlobalMaxPool":
        return _onnx("GlobalMaxPool", x), poolspec.adaptive_max_pool2d(x, 1)
    raise AssertionError(row)


ONNX_POOL_ROWS = ["MaxPool", "MaxPool ceil_mode", "AveragePool count_include_pad=0",
                  "AveragePool count_include_pad=1", "AveragePool ceil_mode count_include_pad=0",
                  "AveragePool ceil_mode count_include_pad=1", "LpPool p=1", "LpPool p=2", "LpPool p=3",
                  "GlobalAveragePool", "GlobalMaxPool", "MaxPool pads begin != end",
                  "AveragePool count_include_pad=0 pads begin != end",
                  "AveragePool count_include_pad=1 pads begin != end"]


@pytest.mark.parametrize("row", ONNX_POOL_ROWS)
def test_onnx_pool_row(row):
    rng = np.random.default_rng(8)
    for dtype, n in ((np.float64, 6), (np.float32, 4)):
        done = 0
        for shape, k, s, p, d in _pool_configs(80, seed=9 + (dtype == np.float32)):
            x = rng.standard_normal((2, 3) + shape).astype(dtype)
            if not row.startswith("MaxPool"):
                d = (1, 1)
            pair = _onnx_pool_row(row, x, k, s, p, d)
            if pair is None:
                continue
            want, got = pair
            assert want.dtype == dtype and want.shape == got.shape, (row, shape, k, s, p, d, want.shape, got.shape)
            np.testing.assert_allclose(got, want, rtol=0, atol=TOL32 if dtype == np.float32 else TOL64,
                                       err_msg=f"{row} {dtype.__name__} {shape} k={k} s={s} p={p} d={d}")
            done += 1
            if done == n:
                break
        assert done == n, row


GRID_ROWS = [(mode, padding) for mode in ("linear", "nearest", "cubic") for padding in ("zeros", "border", "reflection")
             if (mode, padding) != ("cubic", "border")]


@pytest.mark.parametrize("mode, padding", GRID_ROWS, ids=[f"{m}-{p}" for m, p in GRID_ROWS])
def test_onnx_grid_sample_row(mode, padding):
    """GridSample-20 (4-D, and 5-D for linear and nearest); the evaluator interpolates in float32."""
    rng = np.random.default_rng(10)
    ours = {"linear": "bilinear", "nearest": "nearest", "cubic": "bicubic"}[mode]
    shapes = [((2, 7, 9), (5, 6)), ((2, 4, 11), (7, 3)), ((1, 3, 5, 6), (4, 2, 3))]
    for dtype in (np.float64, np.float32):
        for align in (0, 1):
            for xs, gs in shapes[: 2 if mode == "cubic" else 3]:
                x = rng.standard_normal((1,) + xs).astype(dtype)
                grid = rng.uniform(-1.6, 1.6, (1,) + gs + (len(gs),)).astype(dtype)
                want = _onnx("GridSample", x, grid, mode=mode, padding_mode=padding, align_corners=align)
                got = poolspec.grid_sample(x, grid, mode=ours, padding_mode=padding, align_corners=bool(align))
                np.testing.assert_allclose(got, want, rtol=0, atol=TOL32,
                                           err_msg=f"{mode} {padding} align_corners={align} {dtype.__name__} {xs}")


def test_onnx_affine_grid_row():
    """AffineGrid-20; the evaluator returns float32."""
    rng = np.random.default_rng(11)
    for dtype in (np.float64, np.float32):
        for align in (0, 1):
            for size in ((2, 3, 5, 7), (2, 1, 4, 6, 3)):
                theta = rng.standard_normal((2, len(size) - 2, len(size) - 1)).astype(dtype)
                want = _onnx("AffineGrid", theta, np.array(size, np.int64), align_corners=align)
                got = poolspec.affine_grid(theta, size, align_corners=bool(align))
                np.testing.assert_allclose(got, want, rtol=0, atol=TOL32, err_msg=f"{size} align_corners={align}")


# ------------------------------------------------------------------------------------------------------------
# TensorFlow (NHWC): tf.image.resize returns float32, and the CPU pools here round float64 to float32, so float32


TF_RESIZE_ROWS = [
    ("bilinear", False, {"mode": "bilinear", "align_corners": False}, EVERY),
    ("bilinear", True, {"mode": "bilinear", "align_corners": False, "antialias": True}, EVERY),
    ("bicubic", True, {"mode": "bicubic", "align_corners": False, "antialias": True}, EVERY),
    ("lanczos3", False, {"mode": "lanczos"}, EVERY),
    ("lanczos3", True, {"mode": "lanczos", "antialias": True}, EVERY),
    ("nearest", False, {"mode": "nearest-exact"}, EVERY),
    ("area", False, {"mode": "area"}, (DOWN_INT,)),
]


@pytest.mark.parametrize("method, antialias, kw, kinds", TF_RESIZE_ROWS,
                         ids=[f"{r[0]}-antialias={r[1]}" for r in TF_RESIZE_ROWS])
def test_tf_resize_row(method, antialias, kw, kinds):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(12)
    for shape, size in _cases(kinds, 8, seed=13):
        x = rng.random((1, 2) + shape).astype(np.float32)
        want = tf.image.resize(x.transpose(0, 2, 3, 1), size, method=method, antialias=antialias).numpy()
        got = poolspec.interpolate(x, size=size, **kw)
        np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2), rtol=0, atol=TOL32,
                                   err_msg=f"{method} antialias={antialias} {shape} -> {size}")


@pytest.mark.parametrize("row", ["max VALID", "avg VALID", "max SAME", "avg SAME"])
def test_tf_pool_row(row):
    """tf.nn.max_pool2d / avg_pool2d; TF's avg_pool leaves 'SAME' padding out of the divisor."""
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(14)
    done = 0
    for shape, k, s, _, _ in _pool_configs(60, seed=15):
        x = rng.standard_normal((2, 3) + shape).astype(np.float32)
        peer = tf.nn.max_pool2d if row.startswith("max") else tf.nn.avg_pool2d
        want = peer(x.transpose(0, 2, 3, 1), k, s, row.split()[1]).numpy().transpose(0, 3, 1, 2)
        if row == "max VALID":
            got = poolspec.max_pool2d(x, k, s)
        elif row == "avg VALID":
            got = poolspec.avg_pool2d(x, k, s)
        elif row == "max SAME":
            got = poolspec.max_pool2d(x, k, s, "same")
        else:
            got = poolspec.avg_pool2d(x, k, s, "same", count_include_pad=False)
        assert want.shape == got.shape, (row, shape, k, s)
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL32, err_msg=f"{row} {shape} k={k} s={s}")
        done += 1
        if done == 12:
            break
    assert done == 12
