"""``poolspec.frontends.tf.nn`` and ``poolspec.frontends.tf.image`` against TensorFlow (CPU, deterministic ops,
oneDNN off): random configurations over ksize/strides forms, SAME/VALID/explicit padding, ranks, dtypes,
``max_pool_with_argmax``'s index options, and every ``tf.image.resize`` method with antialias,
preserve_aspect_ratio and float/int dtypes; gradients by ``tf.GradientTape``.

Not generated: channels-first data formats (TF's CPU kernels refuse them), NaN inputs (TF's MaxPool skips NaN, a
difference on the cards), ties inside a window (the winner's order), bfloat16 (NumPy has no such dtype) and
uint16 max pooling (poolspec refuses it)."""

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


def config(rng: np.random.Generator) -> Config:
    return _resize_config(rng) if rng.random() < 0.45 else _pool_config(rng)


MODULES = {"tf.nn": _pool_config, "tf.image": _resize_config}


# ----------------------------------------------------------------------------------------------- calls

def _call(config: Config, x: Any) -> Any:
    tf = _tensorflow()
    name = config.function.removeprefix("tf.")
    options = dict(config.options)
    if name == "nn.max_pool_with_argmax":
        options["output_dtype"] = getattr(tf, options["output_dtype"])
    fn = tf.image.resize if name == "image.resize" else getattr(tf.nn, name.removeprefix("nn."))
    return fn(x, **options)


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
    (arg, x), = config.arrays.items()
    if cotangents is not None and (_shifted(config) or any(c.size == 0 for c in cotangents)):
        return [], {}  # TF's gradient there is a bug (see the cards): not compared
    xt = tf.constant(x)
    try:
        if cotangents is None:
            out = _call(config, xt)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            return [o.numpy() for o in outs], {}
        with tf.GradientTape() as tape:
            tape.watch(xt)
            out = _call(config, xt)
            floats = [o for o in (list(out) if isinstance(out, (tuple, list)) else [out]) if o.dtype.is_floating]
        grad = tape.gradient(floats, xt, output_gradients=[tf.constant(c, dtype=o.dtype)
                                                           for o, c in zip(floats, cotangents)])
    except LookupError as e:  # no registered gradient (ResizeArea)
        raise Refused(f"no gradient: {e}") from e
    except (ValueError, TypeError, tf.errors.InvalidArgumentError, tf.errors.UnimplementedError,
            tf.errors.NotFoundError) as e:
        raise Refused(f"{type(e).__name__}: {str(e).splitlines()[0][:200]}") from e
    if grad is None:
        return [], {}
    return [], {arg: grad.numpy()}


def frontend(config: Config) -> Any:
    from poolspec.frontends.tf import image, nn

    name = config.function.removeprefix("tf.")
    fn = image.resize if name == "image.resize" else getattr(nn, name.removeprefix("nn."))
    options = config.options
    return lambda x: fn(x, **options)
