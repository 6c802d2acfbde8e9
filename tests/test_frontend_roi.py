"""The box front-ends against the live libraries: ``onnx.RoiAlign`` against onnx's reference evaluator (and
onnxruntime where installed), ``tf.image.crop_and_resize`` against TensorFlow, each on 2,000 seeded random
configurations through NumPy and a subset through every installed backend; gradients; argument refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from poolspec.frontends import onnx as ponnx
from poolspec.frontends.tf import image as pimage

F32 = np.float32
SHARDS = 4
PER_SHARD = 500  # 2,000 configurations per function through NumPy
# configurations per backend (JAX compiles every op of every new shape: fewer there)
SUBSET = {"jax": 10, "dask": 20}


# --- onnx.RoiAlign --------------------------------------------------------------------------------------------

def _roi_config(rng: np.random.Generator, t: int) -> dict:
    dt = (np.float64, np.float32)[t % 2]
    N, C, H, W = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 3), rng.integers(1, 9), rng.integers(1, 9)))
    K = int(rng.integers(0, 4))
    scale = float(F32(rng.choice([1.0, 0.5, 0.25, 2.0, rng.uniform(0.2, 2.0)])))
    rois = rng.uniform(-3.0, max(H, W) / scale + 2.0, (K, 4))
    if rng.random() < 0.3:
        rois = np.round(rois * 2) / 2  # samples on pixel centres and edges
    if rng.random() < 0.2:
        rois = rois[:, [2, 3, 0, 1]]  # negative rois
    attrs = dict(coordinate_transformation_mode=str(rng.choice(["half_pixel", "output_half_pixel"])),
                 mode=str(rng.choice(["avg", "max"])), output_height=int(rng.integers(1, 4)),
                 output_width=int(rng.integers(1, 4)), sampling_ratio=int(rng.choice([0, 0, 1, 2, 3])),
                 spatial_scale=scale)
    return dict(X=rng.standard_normal((N, C, H, W)).astype(dt), rois=rois.astype(dt),
                batch_indices=rng.integers(0, N, K).astype(np.int64), attrs=attrs)


def _roi_reference(c: dict) -> np.ndarray:
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator

    t = TensorProto.DOUBLE if c["X"].dtype == np.float64 else TensorProto.FLOAT
    node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], **c["attrs"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", t, None),
                                            helper.make_tensor_value_info("rois", t, None),
                                            helper.make_tensor_value_info("batch_indices", TensorProto.INT64, None)],
                              [helper.make_tensor_value_info("Y", t, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(ReferenceEvaluator(model).run(None, {k: c[k] for k in ("X", "rois", "batch_indices")})[0])


def _tol(dtype) -> float:
    return 1e-12 if dtype == np.float64 else 1e-5


@pytest.mark.parametrize("shard", range(SHARDS))
def test_roi_align_matches_the_reference_evaluator(shard):
    """2,000 configurations (half of them float32, which the reference computes in float32 with some terms in
    double: within 1e-5), none refused by the reference, no mismatch."""
    rng = np.random.default_rng(1000 + shard)
    refused = mismatched = 0
    for t in range(PER_SHARD):
        c = _roi_config(rng, t)
        try:
            want = _roi_reference(c)
        except Exception:  # noqa: BLE001 - counted: the reference refuses nothing in these configurations
            refused += 1
            continue
        got = ponnx.RoiAlign(c["X"], c["rois"], c["batch_indices"], **c["attrs"])
        tol = _tol(c["X"].dtype)
        if got.dtype != want.dtype or got.shape != want.shape or not np.allclose(got, want, rtol=tol, atol=tol):
            mismatched += 1
    assert (refused, mismatched) == (0, 0)


def test_roi_align_max_of_samples_is_the_largest_bilinear_sample():
    """max_of="samples" against the avg of a 1 x 1 sample grid per bin (one sample: its value), maximised by hand."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((1, 2, 6, 7))
    rois = np.array([[0.5, 1.0, 5.0, 4.5], [2.0, 0.0, 6.5, 5.0]])
    bi = np.array([0, 0])
    got = ponnx.RoiAlign(X, rois, bi, mode="max", max_of="samples", output_height=2, output_width=3,
                         sampling_ratio=2)
    # each bin's 2 x 2 samples are the bins of a 4 x 6 avg RoiAlign with one sample each
    fine = ponnx.RoiAlign(X, rois, bi, output_height=4, output_width=6, sampling_ratio=1)
    want = fine.reshape(2, 2, 2, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    taps = ponnx.RoiAlign(X, rois, bi, mode="max", output_height=2, output_width=3, sampling_ratio=2)
    assert not np.allclose(taps, got)  # the spec's maximum of weighted corner terms is another number


def _negative_adaptive(c: dict) -> np.ndarray:
    """Which rois of ``c`` have a negative adaptive sample grid (half_pixel, sampling_ratio 0, x2 < x1 or y2 < y1
    by a bin or more)."""
    a = c["attrs"]
    if a["coordinate_transformation_mode"] != "half_pixel" or a["sampling_ratio"] > 0:
        return np.zeros(c["rois"].shape[0], bool)
    r, s = c["rois"], c["rois"].dtype.type(a["spatial_scale"])
    size = (r[:, 2:4] * s - s.dtype.type(0.5)) - (r[:, 0:2] * s - s.dtype.type(0.5))
    return (np.ceil(size / np.array([a["output_width"], a["output_height"]], dtype=r.dtype)) < 0).any(axis=1)


def test_roi_align_matches_onnxruntime():
    """600 float32 configurations against onnxruntime's CPU kernel (opset 16, its latest RoiAlign): no mismatch;
    it refuses exactly the configurations with a negative adaptive grid (SafeInt's integer overflow), where the
    reference and poolspec give 0."""
    ort = pytest.importorskip("onnxruntime")
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto

    ort.set_default_logger_severity(4)  # its warning that max mode changed in 1.13, and the refusals' log lines
    rng = np.random.default_rng(11)
    refused = mismatched = 0
    for _ in range(600):
        c = _roi_config(rng, 1)  # float32
        node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], **c["attrs"])
        graph = helper.make_graph([node], "g", [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("rois", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("batch_indices", TensorProto.INT64, None)],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        # onnxruntime registers RoiAlign up to opset 16 (17 to 22 change only the types)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = ponnx.RoiAlign(c["X"], c["rois"], c["batch_indices"], **c["attrs"])
        try:
            want = session.run(None, {k: c[k] for k in ("X", "rois", "batch_indices")})[0]
        except Exception:  # noqa: BLE001 - counted below
            refused += 1
            negative = _negative_adaptive(c)
            assert negative.any() and not got[negative].any()
            continue
        mismatched += not np.allclose(got, want, rtol=1e-5, atol=1e-5)
    assert mismatched == 0 and 0 < refused < 100


def test_roi_align_on_every_backend(backend):
    """A seeded subset through the backend, against the reference evaluator (float64: 1e-12)."""
    rng = np.random.default_rng(21)
    for t in range(SUBSET.get(backend.name, 40)):
        c = _roi_config(rng, t)
        dt = "float64" if c["X"].dtype == np.float64 else "float32"
        if not backend.supports(dt):
            continue
        want = _roi_reference(c)
        got = ponnx.RoiAlign(backend.asarray(c["X"]), backend.asarray(c["rois"]),
                             backend.asarray(c["batch_indices"]), **c["attrs"])
        np.testing.assert_allclose(backend.to_numpy(got), want, rtol=_tol(c["X"].dtype), atol=_tol(c["X"].dtype),
                                   err_msg=str(c["attrs"]))


def test_roi_align_gradients_on_torch():
    """avg: poolspec.roi_align's gradient; max (both maxima): the autodiff of the gather and the maximum, checked
    against finite differences (float64, random values: no ties)."""
    torch = pytest.importorskip("torch")
    import poolspec

    rng = np.random.default_rng(3)
    X = torch.tensor(rng.standard_normal((2, 2, 7, 6)), requires_grad=True)
    rois = torch.tensor([[0.3, 1.2, 4.9, 5.5], [1.0, 0.5, 3.5, 6.0]], dtype=torch.float64)
    bi = torch.tensor([1, 0])
    g = torch.tensor(rng.standard_normal((2, 2, 2, 3)))
    out = ponnx.RoiAlign(X, rois, bi, output_height=2, output_width=3, sampling_ratio=0)
    (grad,) = torch.autograd.grad(out, X, g)
    boxes = np.concatenate([bi.numpy()[:, None].astype(np.float64), rois.numpy()], axis=1)
    want = poolspec.roi_align_backward(g.numpy(), X.detach().numpy(), boxes, (2, 3), 1.0, 0, True)
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-13, atol=1e-15)
    for max_of in ("weighted_taps", "samples"):
        assert torch.autograd.gradcheck(
            lambda x, m=max_of: ponnx.RoiAlign(x, rois, bi, mode="max", max_of=m, output_height=2,
                                               output_width=3, sampling_ratio=2), (X,))


_X = np.zeros((1, 1, 4, 4))
_R = np.array([[0.0, 0.0, 2.0, 2.0]])
_B = np.array([0])


@pytest.mark.parametrize("args, kwargs, error, text", [
    ((_X[0], _R, _B), {}, ValueError, "X="),
    ((_X.astype(np.int64), _R.astype(np.int64), _B), {}, TypeError, "X="),
    ((_X, _R[:, :3], _B), {}, ValueError, "rois="),
    ((_X, _R.astype(np.float32), _B), {}, TypeError, "rois="),
    ((_X, _R, np.array([0, 0])), {}, ValueError, "batch_indices="),
    ((_X, _R, np.array([0.0])), {}, TypeError, "batch_indices="),
    ((_X, _R, np.array([1])), {}, ValueError, "batch_indices="),
    ((_X, np.array([[0.0, np.nan, 1, 1]]), _B), {}, ValueError, "rois="),
    ((_X, _R, _B), {"mode": "sum"}, ValueError, "mode="),
    ((_X, _R, _B), {"coordinate_transformation_mode": "align_corners"}, ValueError, "coordinate_transformation_mode"),
    ((_X, _R, _B), {"output_height": 0}, ValueError, "output_height="),
    ((_X, _R, _B), {"output_width": 1.5}, TypeError, "output_width="),
    ((_X, _R, _B), {"sampling_ratio": -1}, ValueError, "sampling_ratio="),
    ((_X, _R, _B), {"spatial_scale": 0.0}, ValueError, "spatial_scale="),
    ((_X, _R, _B), {"spatial_scale": "1"}, TypeError, "spatial_scale="),
    ((_X, _R, _B), {"max_of": "bins"}, ValueError, "max_of="),
])
def test_roi_align_refusals_name_the_argument(args, kwargs, error, text):
    with pytest.raises(error, match=text):
        ponnx.RoiAlign(*args, **kwargs)


# --- onnx.MaxRoiPool (onnx's reference evaluator has none: onnxruntime's CPU kernel, opset 1) ----------------------

def _pool_config(rng: np.random.Generator) -> dict:
    N, C, H, W = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 3), rng.integers(1, 10), rng.integers(1, 10)))
    K = int(rng.integers(0, 4))
    scale = float(F32(rng.choice([1.0, 0.5, 0.25, 2.0, rng.uniform(0.2, 2.0)])))
    corners = rng.uniform(-3.0, max(H, W) / scale + 2.0, (K, 4))
    if rng.random() < 0.4:
        corners = np.round(corners * 2) / 2  # rounding ties
    rois = np.concatenate([rng.integers(0, N, (K, 1)), corners], axis=1).astype(F32)
    return dict(X=rng.standard_normal((N, C, H, W)).astype(F32), rois=rois,
                attrs=dict(pooled_shape=[int(rng.integers(1, 4)), int(rng.integers(1, 4))], spatial_scale=scale))


def _pool_reference(ort, c: dict) -> np.ndarray:
    from onnx import TensorProto, helper

    node = helper.make_node("MaxRoiPool", ["X", "rois"], ["Y"], **c["attrs"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
                                            helper.make_tensor_value_info("rois", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])  # onnxruntime registers opset 1
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": c["X"], "rois": c["rois"]})[0]


@pytest.mark.parametrize("shard", range(SHARDS))
def test_max_roi_pool_matches_onnxruntime(shard):
    """2,000 float32 configurations: identical, none refused."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    rng = np.random.default_rng(3000 + shard)
    mismatched = 0
    for _ in range(PER_SHARD):
        c = _pool_config(rng)
        want = _pool_reference(ort, c)
        got = ponnx.MaxRoiPool(c["X"], c["rois"], **c["attrs"])
        mismatched += got.shape != want.shape or not np.array_equal(got, want)
    assert mismatched == 0


def test_max_roi_pool_on_every_backend(backend):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    rng = np.random.default_rng(51)
    for _ in range(SUBSET.get(backend.name, 30)):
        c = _pool_config(rng)
        want = _pool_reference(ort, c)
        got = ponnx.MaxRoiPool(backend.asarray(c["X"]), backend.asarray(c["rois"]), **c["attrs"])
        np.testing.assert_array_equal(backend.to_numpy(got), want)


def test_max_roi_pool_gradient_on_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    X = torch.tensor(rng.standard_normal((2, 2, 7, 6)), requires_grad=True)
    rois = torch.tensor([[1, 0.3, 1.2, 4.9, 5.5], [0, 1.0, 0.5, 3.5, 6.0]], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x: ponnx.MaxRoiPool(x, rois, pooled_shape=[2, 3]), (X,))


@pytest.mark.parametrize("args, kwargs, error, text", [
    ((_X, np.array([[0, 0.0, 0, 2, 2]])), {}, ValueError, "pooled_shape="),
    ((_X, np.array([[0, 0.0, 0, 2, 2]])), {"pooled_shape": [2]}, ValueError, "pooled_shape="),
    ((_X, np.array([[0, 0.0, 0, 2, 2]])), {"pooled_shape": [2, 0]}, ValueError, "pooled_shape="),
    ((_X, np.array([[1, 0.0, 0, 2, 2]])), {"pooled_shape": [2, 2]}, ValueError, "rois="),
    ((_X, _R), {"pooled_shape": [2, 2]}, ValueError, "rois="),
    ((_X, np.array([[0, 0.0, 0, 2, 2]], F32)), {"pooled_shape": [2, 2]}, TypeError, "rois="),
    ((_X, np.array([[0, 0.0, 0, 2, 2]])), {"pooled_shape": [2, 2], "spatial_scale": -1.0}, ValueError,
     "spatial_scale="),
])
def test_max_roi_pool_refusals_name_the_argument(args, kwargs, error, text):
    with pytest.raises(error, match=text):
        ponnx.MaxRoiPool(*args, **kwargs)


# --- tf.image.crop_and_resize ---------------------------------------------------------------------------------

_IMAGE_DTYPES = ("float32", "float64", "float16", "uint8", "int32", "int16")


def _crop_config(rng: np.random.Generator, t: int) -> dict:
    N, H, W, C = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 12), rng.integers(1, 12), rng.integers(1, 3)))
    dt = str(rng.choice(_IMAGE_DTYPES))
    img = rng.standard_normal((N, H, W, C)) * (40 if dt[0] in "iu" else 1)
    img = (np.abs(img) if dt == "uint8" else img).astype(dt)
    K = int(rng.integers(0, 4))
    boxes = rng.uniform(-0.3, 1.3, (K, 4)).astype(F32)
    if rng.random() < 0.3:
        boxes = (np.round(boxes * 8) / 8).astype(F32)  # samples on pixels and halfway between (nearest's ties)
    bi = rng.integers(0, N, K).astype(np.int32)
    if K and rng.random() < 0.03:
        bi[0] = N  # TF refuses: box_index has values outside [0, batch_size)
    if K and rng.random() < 0.02:
        boxes[0, 1] = np.nan  # TF refuses: Boxes contains at least one element that is not finite
    return dict(image=img, boxes=boxes, box_indices=bi, crop_size=(int(rng.integers(1, 8)), int(rng.integers(1, 8))),
                method=("bilinear", "nearest")[t % 2], extrapolation_value=float(rng.choice([0.0, 0.5, -2.25])))


def _tf():
    return pytest.importorskip("tensorflow")


def _crop_reference(tf, c: dict):
    return tf.image.crop_and_resize(c["image"], c["boxes"], c["box_indices"], c["crop_size"], method=c["method"],
                                    extrapolation_value=c["extrapolation_value"]).numpy()


@pytest.mark.parametrize("shard", range(SHARDS))
def test_crop_and_resize_matches_tensorflow(shard):
    """2,000 configurations: bit-identical float32 results, and the configurations TF refuses (a box index outside
    the batch, a non-finite box) refused too, with a ValueError."""
    tf = _tf()
    rng = np.random.default_rng(2000 + shard)
    refused = both_refused = mismatched = 0
    for t in range(PER_SHARD):
        c = _crop_config(rng, t)
        try:
            want = _crop_reference(tf, c)
        except (tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError):
            refused += 1
            with pytest.raises(ValueError):
                pimage.crop_and_resize(**c)
            both_refused += 1
            continue
        got = pimage.crop_and_resize(**c)
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            mismatched += 1
    assert mismatched == 0 and refused == both_refused
    assert 0 < refused < PER_SHARD // 10  # the refused configurations are counted, and few


def test_crop_and_resize_on_every_backend(backend):
    tf = _tf()
    rng = np.random.default_rng(31)
    for t in range(SUBSET.get(backend.name, 40)):
        c = _crop_config(rng, t)
        if not backend.supports(c["image"].dtype.name) or not np.isfinite(c["boxes"]).all() or (
                c["box_indices"] >= c["image"].shape[0]).any():
            continue
        want = _crop_reference(tf, c)
        got = pimage.crop_and_resize(backend.asarray(c["image"]), backend.asarray(c["boxes"]),
                                     backend.asarray(c["box_indices"]), c["crop_size"], c["method"],
                                     c["extrapolation_value"])
        got = backend.to_numpy(got)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=str(c["crop_size"]))


def _tf_grads(tf, c: dict, g: np.ndarray):
    img, boxes = tf.constant(c["image"]), tf.constant(c["boxes"])
    with tf.GradientTape() as tape:
        tape.watch([img, boxes])
        out = tf.image.crop_and_resize(img, boxes, c["box_indices"], c["crop_size"], method=c["method"],
                                       extrapolation_value=c["extrapolation_value"])
    gi, gb = tape.gradient(out, [img, boxes], output_gradients=tf.constant(g))
    return gi.numpy(), gb.numpy()


def _backprop_taps_differ(c: dict) -> bool:
    """Whether TF's CropAndResizeGradBoxes, which computes the positions as y1 * (H - 1) + i * ((y2 - y1) * ((H - 1)
    / (crop_h - 1))) (the ratio first, unlike the forward), puts a sample of ``c`` on other taps or on the other side
    of the image's edge than the forward does (then its box gradient is not the forward's derivative there)."""
    img, boxes = c["image"], c["boxes"]
    for lo_col, hi_col, L, n in ((0, 2, img.shape[1], c["crop_size"][0]), (1, 3, img.shape[2], c["crop_size"][1])):
        if n == 1:
            continue
        lo, hi = boxes[:, lo_col:lo_col + 1], boxes[:, hi_col:hi_col + 1]
        i, last = np.arange(n, dtype=F32)[None, :], F32(L - 1)
        fwd = (lo * last) + i * (((hi - lo) * last) / F32(n - 1))
        bwd = (lo * last) + i * ((hi - lo) * (last / F32(n - 1)))
        for a, b in ((fwd >= 0, bwd >= 0), (fwd <= last, bwd <= last), (np.floor(fwd), np.floor(bwd)),
                     (np.ceil(fwd), np.ceil(bwd))):
            if (a != b).any():
                return True
    return False


def test_crop_and_resize_gradients_match_tensorflow():
    """w.r.t. the image (both methods) and the boxes (bilinear; TF gives nearest the bilinear box gradient) on
    torch, float32: within float32 rounding of the accumulation order. The box gradient is the forward's derivative;
    TF's re-rounds the positions (``_backprop_taps_differ``): configurations where a sample then moves are counted and
    left out of the box comparison."""
    tf = _tf()
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(41)
    checked = moved = 0
    for t in range(300):
        c = _crop_config(rng, t)
        c["image"] = c["image"].astype(F32)
        if not np.isfinite(c["boxes"]).all() or (c["box_indices"] >= c["image"].shape[0]).any():
            continue
        K, (ch, cw), C = c["boxes"].shape[0], c["crop_size"], c["image"].shape[3]
        g = rng.standard_normal((K, ch, cw, C)).astype(F32)
        want_img, want_boxes = _tf_grads(tf, c, g)
        img = torch.tensor(c["image"], requires_grad=True)
        boxes = torch.tensor(c["boxes"], requires_grad=True)
        out = pimage.crop_and_resize(img, boxes, torch.tensor(c["box_indices"]), c["crop_size"], c["method"],
                                     c["extrapolation_value"])
        if K == 0:
            continue
        gi, gb = torch.autograd.grad(out, [img, boxes], torch.tensor(g), allow_unused=True)
        scale = 1 + float(np.abs(g).sum())
        np.testing.assert_allclose(gi.numpy(), want_img, rtol=1e-5, atol=1e-6 * scale)
        if c["method"] == "bilinear" and _backprop_taps_differ(c):
            moved += 1
        elif c["method"] == "bilinear":
            gb = np.zeros_like(want_boxes) if gb is None else gb.numpy()
            np.testing.assert_allclose(gb, want_boxes, rtol=1e-4, atol=1e-5 * scale * max(c["image"].shape))
        checked += 1
    assert checked > 200 and moved < 30


def test_crop_and_resize_on_tensorflow_tensors():
    """A TensorFlow image goes through the host bridge: values and the image gradient are TF's."""
    tf = _tf()
    rng = np.random.default_rng(5)
    c = dict(image=rng.standard_normal((2, 5, 6, 3)).astype(F32), boxes=np.array([[0.1, 0.2, 0.9, 0.7],
                                                                                  [0.8, 0.0, 0.2, 1.1]], F32),
             box_indices=np.array([1, 0], np.int32), crop_size=(3, 4), method="bilinear", extrapolation_value=0.0)
    img = tf.constant(c["image"])
    with tf.GradientTape() as tape:
        tape.watch(img)
        out = pimage.crop_and_resize(img, tf.constant(c["boxes"]), tf.constant(c["box_indices"]), c["crop_size"])
        loss = tf.reduce_sum(out * out)
    grad = tape.gradient(loss, img)
    with tf.GradientTape() as tape:
        tape.watch(img)
        ref = tf.image.crop_and_resize(img, c["boxes"], c["box_indices"], c["crop_size"])
        ref_loss = tf.reduce_sum(ref * ref)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    np.testing.assert_allclose(grad.numpy(), tape.gradient(ref_loss, img).numpy(), rtol=1e-5, atol=1e-6)


_I = np.zeros((1, 3, 3, 1), F32)
_BX = np.array([[0.0, 0.0, 1.0, 1.0]], F32)
_BI = np.array([0], np.int32)


@pytest.mark.parametrize("args, kwargs, error, text", [
    ((_I[0], _BX, _BI, (2, 2)), {}, ValueError, "image="),
    ((np.zeros((1, 0, 3, 1), F32), _BX, _BI, (2, 2)), {}, ValueError, "image="),
    ((_I.astype(bool), _BX, _BI, (2, 2)), {}, TypeError, "image.dtype="),
    ((_I, _BX[:, :3], _BI, (2, 2)), {}, ValueError, "boxes="),
    ((_I, _BX.astype(np.int32), _BI, (2, 2)), {}, TypeError, "boxes="),
    ((_I, np.array([[0, np.inf, 1, 1]], F32), _BI, (2, 2)), {}, ValueError, "boxes="),
    ((_I, _BX, np.array([0, 0], np.int32), (2, 2)), {}, ValueError, "box_indices="),
    ((_I, _BX, np.array([0.0]), (2, 2)), {}, TypeError, "box_indices="),
    ((_I, _BX, np.array([-1], np.int32), (2, 2)), {}, ValueError, "box_indices="),
    ((_I, _BX, _BI, (2, 2, 2)), {}, ValueError, "crop_size="),
    ((_I, _BX, _BI, (0, 2)), {}, ValueError, "crop_size="),
    ((_I, _BX, _BI, (2.0, 2)), {}, TypeError, "crop_size="),
    ((_I, _BX, _BI, (2, 2)), {"method": "BILINEAR"}, ValueError, "method="),
    ((_I, _BX, _BI, (2, 2)), {"extrapolation_value": "0"}, TypeError, "extrapolation_value="),
])
def test_crop_and_resize_refusals_name_the_argument(args, kwargs, error, text):
    with pytest.raises(error, match=text):
        pimage.crop_and_resize(*args, **kwargs)


def test_crop_and_resize_empty_results():
    assert pimage.crop_and_resize(_I, np.zeros((0, 4), F32), np.zeros(0, np.int32), (2, 3)).shape == (0, 2, 3, 1)
    out = pimage.crop_and_resize(np.zeros((1, 3, 3, 0), F32), _BX, _BI, (2, 3))
    assert out.shape == (1, 2, 3, 0) and out.dtype == np.float32
