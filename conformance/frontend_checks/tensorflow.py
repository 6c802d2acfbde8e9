"""``poolspec.frontends.tf.nn`` and ``poolspec.frontends.tf.image`` against TensorFlow (CPU, deterministic ops,
oneDNN off): random configurations over ksize/strides forms, SAME/VALID/explicit padding, ranks, dtypes,
``max_pool_with_argmax``'s index options, and every ``tf.image.resize`` method with antialias,
preserve_aspect_ratio and float/int dtypes, ``tf.image.crop_and_resize``'s boxes (flipped, outside the image, on
nearest's ties) and methods; gradients by ``tf.GradientTape``.

Not generated: channels-first data formats (TF's CPU kernels refuse them), NaN inputs (TF's MaxPool skips NaN, a
difference on the cards), ties inside a window (the winner's order), bfloat16 (NumPy has no such dtype) and
uint16 max pooling (poolspec refuses it). crop_and_resize's box gradient is compared for bilinear only (TF gives
nearest the bilinear one) and where TF's backward, which re-rounds the sample positions, puts every sample on the
forward's taps (``_backprop_taps_differ``: tests/test_frontend_roi.py)."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "tensorflow"
_tf: Any = None

_MAX_DT = {1: ("float32", "float64", "float16", "int8", "int32", "int64", "uint8"),
           3: ("float32",)}
_MAX_DT[2] = _MAX_DT[1]
_AVG_DT = {1: ("float32", "float64", "float16"), 3: ("float32",)}
_AVG_DT[2] = _AVG_DT[1]
_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
_RESIZE_DT = ("float32", "float32", "float64", "float16", "uint8", "int32", "int16")


def _tensorflow() -> Any:
    global _tf
    if _tf is None:
        if "tensorflow" not in sys.modules:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
        import tensorflow

        tensorflow.config.experimental.enable_op_determinism()
        _tf = tensorflow
    return _tf


def available() -> str | None:
    try:
        _tensorflow()
    except ImportError as e:
        return f"tensorflow is not installed here ({e})"
    return None


def version() -> str:
    return f"tensorflow {_tensorflow().__version__} (CPU, op determinism, oneDNN off)"


# ------------------------------------------------------------------------------------------------ inputs

def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, plane_axes: tuple[int, ...]) -> np.ndarray:
    """Inputs without ties inside a spatial plane: a random permutation per plane (scaled for floats), so
    window maxima, their indices and gradients are unambiguous."""
    size = int(np.prod([shape[a] for a in plane_axes])) if shape else 1
    if dtype.startswith("float") and dtype != "float16":
        return rng.standard_normal(shape).astype(dtype)
    other = [a for a in range(len(shape)) if a not in plane_axes]
    planes = int(np.prod([shape[a] for a in other])) if other else 1
    perm = np.argsort(rng.random((planes, size)), axis=1)
    lo = {"uint8": 0, "int8": -64}.get(dtype, -size // 2)
    vals: np.ndarray = perm + lo
    if dtype == "float16":
        vals = vals / 8.0
    moved = vals.reshape([shape[a] for a in other] + [shape[a] for a in plane_axes])
    return np.moveaxis(moved, list(range(len(other), len(shape))), plane_axes).astype(dtype)


def _form(rng: np.random.Generator, vals: tuple[int, ...], n: int) -> Any:
    """An int, a list of 1, n or n + 2 entries (NHWC order, batch and channel 1)."""
    same = len(set(vals)) == 1
    r = rng.integers(4)
    if r == 0 and same:
        return vals[0]
    if r == 1 and same:
        return [vals[0]]
    if r == 2:
        return [1, *vals, 1]
    return list(vals)


def _pool_config(rng: np.random.Generator) -> Config:
    kind = "max" if rng.random() < 0.55 else "avg"
    n = int(rng.choice([1, 2, 3], p=[0.3, 0.45, 0.25]))
    argmax = kind == "max" and n == 2 and rng.random() < 0.35
    dtype = str(rng.choice((_MAX_DT if kind == "max" else _AVG_DT)[n]))
    if argmax and dtype == "float16":
        dtype = "float32"
    top = 8 if n < 3 else 6
    spatial = tuple(int(v) for v in rng.integers(1, top + 1, n))
    batch = int(rng.integers(0 if not argmax and rng.random() < 0.05 else 1, 4))
    channels = int(rng.integers(1, 4))
    k = tuple(int(v) for v in rng.integers(1, 5, n))
    s = tuple(int(v) for v in rng.integers(1, 5, n))
    if rng.random() < 0.4:
        k = (k[0],) * n
    if rng.random() < 0.4:
        s = (s[0],) * n
    pad: Any = "SAME" if rng.random() < 0.45 else "VALID"
    if pad == "VALID":  # windows longer than the input: TF's 0 outputs, or its refusal below that
        k = tuple(min(kk, L + (ss - 1 if rng.random() < 0.1 else 0)) for kk, L, ss in zip(k, spatial, s))
    if kind == "max" and n < 3 and not argmax and rng.random() < 0.35:
        pairs = [[int(rng.integers(0, kk)), int(rng.integers(0, kk))] for kk in k]
        pad = [[0, 0], *pairs, [0, 0]]
    bad = rng.random() < 0.06
    options: dict[str, Any] = {"ksize": _form(rng, k, n), "strides": _form(rng, s, n), "padding": pad}
    if bad:  # a call both sides refuse
        which = int(rng.integers(5))
        if which == 0:
            options["ksize"] = [0] * n
        elif which == 1:
            options["padding"] = "same"
        elif which == 2:
            options["ksize"] = [2, *k, 1]  # pooling over the batch axis
        elif which == 3 and not isinstance(pad, list):
            options["padding"] = [[0, 0]] + [[1, 0]] * n + [[0, 0]] if (kind == "avg" or n == 3 or argmax) \
                else [[0, 0]] + [[kk, 0] for kk in k] + [[0, 0]]
        else:
            options["strides"] = [1] * (n + 1)
    shape = (batch, *spatial, channels)
    x = _values(rng, shape, dtype, tuple(range(1, n + 1)))
    if argmax:
        options["output_dtype"] = str(rng.choice(["int32", "int64"]))
        options["include_batch_in_index"] = bool(rng.random() < 0.5)
        function = "tf.nn.max_pool_with_argmax"
    else:
        function = f"tf.nn.{kind}_pool{n}d"
    diff = ("input",) if dtype in ("float32", "float64") and batch > 0 else ()
    return Config(function, {"input": x}, options, diff)


def _resize_config(rng: np.random.Generator) -> Config:
    method = str(rng.choice(_METHODS))
    dtype = str(rng.choice(_RESIZE_DT))
    h, w = (int(v) for v in rng.integers(1, 11, 2))
    size = [int(v) for v in rng.integers(1, 16, 2)]
    if rng.random() < 0.15:
        size = [h, w]
    batched = rng.random() < 0.7
    shape = ((int(rng.integers(0 if rng.random() < 0.03 else 1, 3)),) if batched else ()) + (h, w,
                                                                                         int(rng.integers(1, 4)))
    if dtype.startswith("float") and dtype != "float16":
        x = rng.standard_normal(shape).astype(dtype)
    elif dtype == "float16":
        x = rng.standard_normal(shape).astype(dtype)
    else:
        x = rng.integers(0 if dtype == "uint8" else -100, 256 if dtype == "uint8" else 100, shape).astype(dtype)
    options: dict[str, Any] = {"size": size, "method": method, "antialias": bool(rng.random() < 0.5),
                               "preserve_aspect_ratio": bool(rng.random() < 0.2)}
    if rng.random() < 0.04:  # refused by both: a size that is not positive or a method in the wrong case
        if rng.random() < 0.5:
            options["size"] = [0, size[1]]
        else:
            options["method"] = method.upper()
    diff = ("images",) if dtype in ("float32", "float64") and method != "area" and shape[0] > 0 else ()
    rtol = atol = None
    if method != "nearest" and dtype != "float16":  # TF computes in float32 whatever the input dtype
        scale = float(np.abs(x).max()) if x.size else 1.0
        rtol, atol = 2e-5, 2e-6 * max(scale, 1.0)
    return Config("tf.image.resize", {"images": x}, options, diff, rtol, atol)


_CROP_DT = ("float32", "float64", "float16", "uint8", "int32", "int16")


def _backprop_taps_differ(image: np.ndarray, boxes: np.ndarray, crop_size: list[int]) -> bool:
    """Whether TF's CropAndResizeGradBoxes, which computes the positions as y1 * (H - 1) + i * ((y2 - y1) * ((H - 1)
    / (crop_h - 1))) (the ratio first, unlike the forward), puts a sample on other taps or on the other side of the
    image's edge than the forward does (then its box gradient is not the forward's derivative there)."""
    f32 = np.float32
    for lo_col, hi_col, L, n in ((0, 2, image.shape[1], crop_size[0]), (1, 3, image.shape[2], crop_size[1])):
        if n == 1:
            continue
        lo, hi = boxes[:, lo_col:lo_col + 1], boxes[:, hi_col:hi_col + 1]
        i, last = np.arange(n, dtype=f32)[None, :], f32(L - 1)
        fwd = (lo * last) + i * (((hi - lo) * last) / f32(n - 1))
        bwd = (lo * last) + i * ((hi - lo) * (last / f32(n - 1)))
        for a, b in ((fwd >= 0, bwd >= 0), (fwd <= last, bwd <= last), (np.floor(fwd), np.floor(bwd)),
                     (np.ceil(fwd), np.ceil(bwd))):
            if (a != b).any():
                return True
    return False


def _crop_config(rng: np.random.Generator) -> Config:
    """tests/test_frontend_roi.py's configurations: boxes inside and outside [0, 1], flipped, degenerate (y1 == y2
    or x1 == x2), on nearest's ties, a box index outside the batch or a non-finite box now and then (refused by
    both)."""
    N, H, W, C = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 12), rng.integers(1, 12), rng.integers(1, 3)))
    dt = str(rng.choice(_CROP_DT))
    img = rng.standard_normal((N, H, W, C)) * (40 if dt[0] in "iu" else 1)
    img = (np.abs(img) if dt == "uint8" else img).astype(dt)
    K = int(rng.integers(0, 4))
    boxes = rng.uniform(-0.3, 1.3, (K, 4)).astype(np.float32)
    if rng.random() < 0.3:
        boxes = (np.round(boxes * 8) / 8).astype(np.float32)  # samples on pixels and halfway between
    if K and rng.random() < 0.15:
        axis = int(rng.integers(0, 2))
        boxes[0, axis + 2] = boxes[0, axis]  # a degenerate box: every sample on one row or column
    bi = rng.integers(0, N, K).astype(np.int32)
    if K and rng.random() < 0.03:
        bi[0] = N  # both refuse: a box index outside the batch
    if K and rng.random() < 0.02:
        boxes[0, 1] = np.nan  # both refuse: a non-finite box
    crop = [int(rng.integers(1, 8)), int(rng.integers(1, 8))]
    method = str(rng.choice(["bilinear", "nearest"]))
    options: dict[str, Any] = {"crop_size": crop, "method": method,
                               "extrapolation_value": float(rng.choice([0.0, 0.5, -2.25]))}
    diff: tuple[str, ...] = ()
    rtol = atol = None
    if dt in ("float32", "float64") and K > 0:
        diff = ("image",)
        if method == "bilinear" and not _backprop_taps_differ(img, boxes, crop):
            diff = ("image", "boxes")
        # gradients: float32 sums in another order (the box gradient over the whole crop and image); the forward
        # is bit-identical
        rtol, atol = 1e-5, 1e-6 * (1 + K * crop[0] * crop[1] * C) * max(H, W)
    return Config("tf.image.crop_and_resize", {"image": img, "boxes": boxes, "box_indices": bi}, options, diff,
                  rtol, atol)


def _image_config(rng: np.random.Generator) -> Config:
    return _crop_config(rng) if rng.random() < 0.3 else _resize_config(rng)


def config(rng: np.random.Generator) -> Config:
    return _image_config(rng) if rng.random() < 0.45 else _pool_config(rng)


MODULES = {"tf.nn": _pool_config, "tf.image": _image_config}
# conformance/check_frontends.py's --per-function draws: crop_and_resize gets its own (tf.image's draws are then
# tf.image.resize's)
DEDICATED = {"tf.image.crop_and_resize": _crop_config}


# ----------------------------------------------------------------------------------------------- calls

def _call(config: Config, *x: Any) -> Any:
    tf = _tensorflow()
    name = config.function.removeprefix("tf.")
    options = dict(config.options)
    if name == "image.crop_and_resize":
        return tf.image.crop_and_resize(*x, **options)
    if name == "nn.max_pool_with_argmax":
        options["output_dtype"] = getattr(tf, options["output_dtype"])
    fn = tf.image.resize if name == "image.resize" else getattr(tf.nn, name.removeprefix("nn."))
    return fn(x[0], **options)


def _spatial(value: Any, n: int) -> list[int]:
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    return vals * n if len(vals) == 1 else vals[1:-1] if len(vals) == n + 2 and n > 1 else vals[-n:]


def _shifted(config: Config) -> bool:
    """A 3-d SAME pool whose window is shorter than the stride on some axis: TF's 3-d gradients do not follow
    the shifted windows of their forward (a difference on the cards)."""
    if not config.function.endswith("pool3d") or config.options["padding"] != "SAME":
        return False
    x = config.arrays["input"]
    k, s = _spatial(config.options["ksize"], 3), _spatial(config.options["strides"], 3)
    return any((-(-L // ss) - 1) * ss + kk - L < 0 for L, kk, ss in zip(x.shape[1:4], k, s))


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    tf = _tensorflow()
    if cotangents is not None and (_shifted(config) or any(c.size == 0 for c in cotangents)):
        return [], {}  # TF's gradient there is a bug (see the cards): not compared
    names = list(config.arrays)
    xs = [tf.constant(a) for a in config.arrays.values()]
    wrt = [names.index(n) for n in config.differentiable] if len(names) > 1 else [0]
    try:
        if cotangents is None:
            out = _call(config, *xs)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            return [o.numpy() for o in outs], {}
        with tf.GradientTape() as tape:
            tape.watch([xs[i] for i in wrt])
            out = _call(config, *xs)
            floats = [o for o in (list(out) if isinstance(out, (tuple, list)) else [out]) if o.dtype.is_floating]
        grads = tape.gradient(floats, [xs[i] for i in wrt], output_gradients=[tf.constant(c, dtype=o.dtype)
                                                                             for o, c in zip(floats, cotangents)])
    except LookupError as e:  # no registered gradient (ResizeArea)
        raise Refused(f"no gradient: {e}") from e
    except (ValueError, TypeError, tf.errors.InvalidArgumentError, tf.errors.UnimplementedError,
            tf.errors.NotFoundError, tf.errors.OutOfRangeError) as e:
        raise Refused(f"{type(e).__name__}: {str(e).splitlines()[0][:200]}") from e
    return [], {names[i]: g.numpy() for i, g in zip(wrt, grads) if g is not None}


def frontend(config: Config) -> Any:
    from poolspec.frontends.tf import image, nn

    name = config.function.removeprefix("tf.")
    fn = getattr(image, name.removeprefix("image.")) if name.startswith("image.") else getattr(
        nn, name.removeprefix("nn."))
    options = config.options
    return lambda *x: fn(*x, **options)
