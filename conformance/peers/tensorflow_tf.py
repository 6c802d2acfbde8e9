"""TensorFlow (CPU, deterministic ops): tf.nn pools and tf.raw_ops resize kernels on NHWC transposes of
poolspec's NCHW calls, gradients by tf.GradientTape of the same call. Only layout is adapted here (channels
last, a batch axis for unbatched input, a unit height for 1-d, TF's (y * W + x) * C + c argmax read per plane);
padding, ceil_mode, scales and dtypes map only where TF's own call gives torch's windows and coordinates."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import NotExpressible, ntuple, pool_out, require

NAME = "tensorflow"
BACKEND = "numpy"
IMPORTS = ("tensorflow",)
API = ("tf.nn.avg_pool, tf.nn.max_pool, tf.nn.max_pool_with_argmax, tf.nn.pool (dilations), tf.raw_ops."
       "ResizeNearestNeighbor / ResizeBilinear / ResizeBicubic / ResizeArea / ScaleAndTranslate, tf.GradientTape; "
       "tf.image.crop_and_resize (bilinear) at roi_align's sample points, their mean per bin")

tf: Any = None  # the module, set by _tf()


def _tf() -> Any:
    """TensorFlow, imported on first use (``peers.installed`` imports this module without its peer), on the
    CPU, with deterministic ops and TF's own Eigen kernels (oneDNN reorders sums)."""
    global tf
    if tf is None:
        if "tensorflow" not in sys.modules:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
        import tensorflow

        tensorflow.config.experimental.enable_op_determinism()
        tf = tensorflow
    return tf


Call = Callable[[Any], Any]  # NHWC tensor -> NHWC tensor, or (values, argmax)


def version() -> str:
    return f"tensorflow {_tf().__version__} (CPU, op determinism, oneDNN off)"


# ------------------------------------------------------------------------------------------------- layout

def _kernel(call: Call, *args: Any) -> Any:
    """``call(*args)``; a dtype TF has no CPU kernel for, or an op without a registered gradient, is a call TF
    cannot make (never cast)."""
    try:
        return call(*args)
    except LookupError as e:  # "gradient registry has no entry for: ResizeArea"
        raise NotExpressible(f"TF has no gradient: {e}") from e
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as e:
        text = str(e)
        if any(m in text for m in ("Could not find device for node", "No registered", "expected to be a")):
            raise NotExpressible(f"TF has no CPU kernel: {text.splitlines()[0][:160]}") from e
        raise


def _forward(x: np.ndarray, n: int, call: Call) -> Any:
    """Run ``call`` on x as NHWC (a batch axis for unbatched input) and return NCHW NumPy."""
    _tf()
    unbatched = x.ndim == n + 1
    xb = x[None] if unbatched else x
    out = _kernel(call, tf.constant(np.moveaxis(xb, 1, -1)))
    back = [None if o is None else np.moveaxis(o.numpy(), -1, 1) for o in (out if isinstance(out, tuple) else (out,))]
    back = [None if o is None else (o[0] if unbatched else o) for o in back]
    return tuple(back) if isinstance(out, tuple) else back[0]


def _gradient(g: np.ndarray, x: np.ndarray, n: int, call: Call) -> np.ndarray:
    """TF's own gradient of the same call for cotangent g."""
    _tf()
    unbatched = x.ndim == n + 1
    xt = tf.constant(np.moveaxis(x[None] if unbatched else x, 1, -1))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = _kernel(call, xt)
        y = y[0] if isinstance(y, tuple) else y
    gt = tf.constant(np.moveaxis(g[None] if unbatched else g, 1, -1), dtype=y.dtype)
    gx = _kernel(lambda: tape.gradient(y, xt, output_gradients=gt))
    require(gx is not None, f"TF registers no gradient for this call on {x.dtype}")
    out = np.moveaxis(gx.numpy(), -1, 1)
    return out[0] if unbatched else out


# ------------------------------------------------------------------------------------------------ pooling

def _padding(sizes: tuple[int, ...], k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool) -> str | None:
    """"VALID" or "SAME" where TF's padding rule gives torch's windows on every axis, else None.
    SAME: ceil(L/s) outputs, total padding (O-1)s + k - L split floor-first; VALID: no padding, floor."""
    if min(k + s + d) <= 0:
        return "VALID"  # an invalid call: TF's own check answers
    valid = same = True
    for L, kk, ss, pp, dd in zip(sizes, k, s, p, d):
        O = pool_out(L, kk, ss, pp, dd, ceil)
        valid &= pp == 0 and L >= dd * (kk - 1) + 1 and O == (L - dd * (kk - 1) - 1) // ss + 1
        same &= dd == 1 and O == -(-L // ss) and max((O - 1) * ss + kk - L, 0) // 2 == pp
    return "VALID" if valid else "SAME" if same else None


def _window(n: int, x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1) -> tuple:
    k = ntuple(kernel_size, n)
    s = ntuple(stride, n) if stride not in (None, (), []) else k
    return x.shape[-n:], k, s, ntuple(padding, n), ntuple(dilation, n)


def _avg_call(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
              count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> Call:
    require(all(v == 1 for v in ntuple(dilation, n)), "tf.nn.avg_pool has no dilation")
    sizes, k, s, p, d = _window(n, x, kernel_size, stride, padding)
    pad = _padding(sizes, k, s, p, d, ceil_mode)
    require(pad is not None, f"TF's SAME/VALID padding does not give torch's windows (padding={p}, ceil={ceil_mode})")
    # TF averages over the cells inside the input: torch's count_include_pad=False, or any count without padding
    require(not count_include_pad or not any(p), "TF's average leaves padding out of the count")
    require(divisor_override is None or (divisor_override == math.prod(k) and pad == "VALID"),
            "TF divides by the window's count: no divisor_override")
    require(x.dtype.kind == "f", f"tf.nn.avg_pool has no {x.dtype} kernel")
    return lambda t: tf.nn.avg_pool(t, list(k), list(s), pad)


def _max_call(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
              ceil_mode: bool = False, return_indices: bool = False) -> Call:
    sizes, k, s, p, d = _window(n, x, kernel_size, stride, padding, dilation)
    pad = _padding(sizes, k, s, p, d, ceil_mode)
    if n == 3:
        require(x.dtype.kind == "f" and x.dtype.itemsize <= 4, f"tf.nn.max_pool3d has no {x.dtype} kernel")
    if any(dd != 1 for dd in d):
        # tf.nn.pool dilates only with stride 1 (its documented restriction); SAME there pads the dilated window
        require(pad == "VALID" and all(ss == 1 for ss in s), "tf.nn.pool dilates only with stride 1, VALID")
        return lambda t: tf.nn.pool(t, list(k), "MAX", strides=list(s), padding="VALID", dilations=list(d))
    if pad is None:
        # MaxPool (2-d, and 1-d through it) takes explicit symmetric padding, padded cells never winning
        require(n < 3 and not (ceil_mode and _ceil_adds(sizes, k, s, p)),
                f"TF's padding does not give torch's windows (padding={p}, ceil={ceil_mode})")
        explicit = [[0, 0]] + [[pp, pp] for pp in p] + [[0, 0]]
        return lambda t: tf.nn.max_pool(t, list(k), list(s), explicit)
    if n == 3:
        return lambda t: tf.nn.max_pool3d(t, list(k), list(s), pad)

    def with_argmax(t: Any) -> Any:
        t4 = t if n == 2 else t[:, None]  # 1-d as a one-row image
        kk, ss = ((1,) if n == 1 else ()) + k, ((1,) if n == 1 else ()) + s
        y, arg = tf.nn.max_pool_with_argmax(t4, list(kk), list(ss), pad, include_batch_in_index=False)
        arg = arg // t.shape[-1]  # TF's ((y * W) + x) * C + c, torch's y * W + x
        return (y, arg) if n == 2 else (y[:, 0], arg[:, 0])

    return with_argmax


def _ceil_adds(sizes: tuple, k: tuple, s: tuple, p: tuple) -> bool:
    return any(pool_out(L, kk, ss, pp, 1, True) != pool_out(L, kk, ss, pp, 1, False)
               for L, kk, ss, pp in zip(sizes, k, s, p))


def _adaptive(n: int, x: np.ndarray, output_size: Any) -> tuple[list[int], Any]:
    """Adaptive windows are avg/max pool windows with kernel = stride = L / O where O divides L."""
    sizes = x.shape[-n:]
    out = [L if o is None else o for o, L in zip(ntuple(output_size, n), sizes)]
    require(all(o > 0 and L % o == 0 for o, L in zip(out, sizes)),
            f"adaptive windows {sizes} -> {tuple(out)} are not one TF pool window (O must divide L)")
    return [L // o for o, L in zip(out, sizes)], out


def _adaptive_avg_call(n: int, x: np.ndarray, output_size: Any) -> Call:
    k, _ = _adaptive(n, x, output_size)
    return _avg_call(n, x, k, k)


def _adaptive_max_call(n: int, x: np.ndarray, output_size: Any, return_indices: bool = False) -> Call:
    k, _ = _adaptive(n, x, output_size)
    return _max_call(n, x, k, k)


# ------------------------------------------------------------------------------------------- interpolate

_SPATIAL = {"nearest": (1, 2), "nearest-exact": (1, 2), "area": (1, 2), "linear": (1,), "bilinear": (2,),
            "bicubic": (2,), "lanczos": (2,)}
_KERNEL = {"bilinear": "triangle", "bicubic": "keyscubic", "lanczos": "lanczos3"}  # ScaleAndTranslate kernels


def _interp_call(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                 antialias: bool = False) -> tuple[int, Call]:
    n = x.ndim - 2
    require(n in _SPATIAL.get(mode, ()), f"TF has no {n}-d resize like torch's {mode!r}")
    require((size is None) != (scale_factor is None), "TF's resize takes one size")
    sizes = x.shape[2:]
    sf = ntuple(scale_factor, n) if scale_factor is not None else None
    out = list(ntuple(size, n)) if size is not None else [math.floor(float(L) * f) for L, f in zip(sizes, sf)]
    reaches = sf is not None and not recompute_scale_factor and mode != "area"  # torch samples at 1/sf
    row = (lambda t: t[:, None], lambda t: t[:, 0]) if n == 1 else (lambda t: t, lambda t: t)
    hw = ([1] if n == 1 else []) + out
    cast = x.dtype == np.float16  # TF's float kernels return float32 for half input: one rounding back
    if antialias or mode == "lanczos":
        require(mode in _KERNEL and not align_corners, "ScaleAndTranslate samples at pixel centres only")
        require(x.dtype != np.float64, "ScaleAndTranslate computes in float32")
        # torch's 1/sf where sf reaches its kernel, else L/O: TF's scale input (it samples at (i + 1/2) / scale)
        scale = list(sf) if reaches else [o / L for o, L in zip(out, sizes)]

        def call(t: Any) -> Any:
            y = tf.raw_ops.ScaleAndTranslate(images=t, size=out, scale=tf.constant(scale, tf.float32),
                                             translation=tf.zeros([2]), kernel_type=_KERNEL[mode],
                                             antialias=bool(antialias))
            return tf.cast(y, t.dtype) if cast else y

        return n, call
    # the Resize* kernels take a size only: torch's 1/sf is the same call where it equals TF's L/O in float32
    # (align_corners: (L-1)/(O-1) on both sides; linear modes copy an axis with O == L whatever sf is)
    if reaches and not align_corners:
        linear = mode in ("linear", "bilinear")
        require(all(np.float32(1.0 / f) == np.float32(L) / np.float32(o) or (linear and o == L)
                    for L, o, f in zip(sizes, out, sf)), f"TF samples at L/O, torch at 1/scale_factor={sf}")
    if mode in ("nearest", "nearest-exact"):
        # TF's legacy nearest is floor(i * L/O) (torch's nearest); half-pixel is floor((i + 1/2) L/O)
        # (torch's nearest-exact); align_corners is passed on as given
        op = lambda t: tf.raw_ops.ResizeNearestNeighbor(images=t, size=hw, align_corners=bool(align_corners),  # noqa
                                                        half_pixel_centers=mode == "nearest-exact")
        return n, lambda t: row[1](op(row[0](t)))
    require(x.dtype != np.float64, f"TF's {mode} resize computes in float32")
    if mode == "area":
        # TF's area weighs partly covered pixels by their coverage; torch's adaptive windows are whole pixels,
        # the same only where O divides L or L divides O
        require(all(L % o == 0 or o % L == 0 for L, o in zip(sizes, out)), "TF's area covers pixels fractionally")
        op = lambda t: tf.raw_ops.ResizeArea(images=t, size=hw)  # noqa: E731
    elif mode == "bicubic":
        # TF's half-pixel bicubic is Keys a = -0.5 with renormalised border taps; its legacy one (torch's
        # A = -0.75, replicated border) samples at i * r: torch's align_corners=True only
        require(bool(align_corners), "TF's half-pixel bicubic uses a = -0.5; torch's A = -0.75")
        op = lambda t: tf.raw_ops.ResizeBicubic(images=t, size=hw, align_corners=True)  # noqa: E731
    else:
        op = lambda t: tf.raw_ops.ResizeBilinear(images=t, size=hw, align_corners=bool(align_corners),  # noqa
                                                 half_pixel_centers=not align_corners)

    def call(t: Any) -> Any:
        y = op(row[0](t))
        return row[1](tf.cast(y, t.dtype) if cast else y)

    return n, call


# ------------------------------------------------------------------------------------- torch-style functions

def _pair(make: Callable[..., Any], n: int) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def forward(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        out = _forward(x, n, make(n, x, *args, **kwargs))
        if kwargs.get("return_indices"):
            return out if isinstance(out, tuple) else (out, None)  # MaxPool3D / explicit padding: values only
        return out[0] if isinstance(out, tuple) else out

    def backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        return _gradient(g, x, n, make(n, x, *args, **kwargs))

    return forward, backward


for _n in (1, 2, 3):
    for _name, _make in (("avg_pool", _avg_call), ("max_pool", _max_call), ("adaptive_avg_pool", _adaptive_avg_call),
                         ("adaptive_max_pool", _adaptive_max_call)):
        globals()[f"{_name}{_n}d"], globals()[f"{_name}{_n}d_backward"] = _pair(_make, _n)


def interpolate(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    n, call = _interp_call(x, *args, **kwargs)
    return _forward(x, n, call)


def interpolate_backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    n, call = _interp_call(x, *args, **kwargs)
    return _gradient(g, x, n, call)


def _roi_samples(lo: float, hi: float, scale: float, pooled: int, ratio: int, aligned: bool) -> tuple[float, int]:
    """torchvision's roi_align along one axis: the first sample's coordinate, the spacing of the samples (equal
    across bins) and their number, pooled * grid."""
    off = 0.5 if aligned else 0.0
    start = lo * scale - off
    size = hi * scale - off - start
    if not aligned:
        size = max(size, 1.0)
    grid = ratio if ratio > 0 else math.ceil(size / pooled)
    require(grid > 0, "a negative roi with adaptive sampling has no samples: torchvision's zeros are no crop")
    n = pooled * grid
    return start, size / n, n


def _crop_box(start: float, step: float, n: int, L: int) -> tuple[float, float]:
    """crop_and_resize's normalised (lo, hi) whose n samples lo * (L - 1) + i * (hi - lo) * (L - 1) / (n - 1) are
    start + (i + 0.5) * step (for n = 1: its centre, (lo + hi) / 2 * (L - 1))."""
    first, last = start + 0.5 * step, start + (n - 0.5) * step
    return first / (L - 1), last / (L - 1)


def roi_align(x: np.ndarray, boxes: np.ndarray, output_size: Any, spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False) -> np.ndarray:
    """Per roi, crop_and_resize's bilinear samples at torchvision's sample points and their mean over each bin.
    The same call only where no sample lies in [-1, 0) or (L - 1, L] on an axis: torchvision reads the edge cell
    there, crop_and_resize the extrapolation value (0, as torchvision's beyond that band)."""
    _tf()
    require(x.dtype == np.float32, f"crop_and_resize returns float32 whatever its input ({x.dtype})")
    require(x.ndim == 4 and boxes.ndim == 2 and boxes.shape[1] == 5, "roi_align's (N, C, H, W) input and (K, 5) "
            "boxes only")
    require(isinstance(sampling_ratio, int), f"sampling_ratio {sampling_ratio!r} is no int")
    ph, pw = ntuple(output_size, 2)
    N, C, H, W = x.shape
    require(H > 1 and W > 1 and ph > 0 and pw > 0, "crop_and_resize places samples on a size-1 axis at 0 only")
    image = tf.constant(np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    out = np.zeros((len(boxes), C, ph, pw), np.float32)
    margin = 1e-3  # crop_and_resize computes the positions in float32: keep off the bands' edges
    for k, (b, x1, y1, x2, y2) in enumerate(boxes.astype(np.float64)):
        (ys, dy, ny), (xs, dx, nx) = (_roi_samples(y1, y2, spatial_scale, ph, sampling_ratio, aligned),
                                      _roi_samples(x1, x2, spatial_scale, pw, sampling_ratio, aligned))
        for start, step, n, L in ((ys, dy, ny, H), (xs, dx, nx, W)):
            pos = start + (np.arange(n) + 0.5) * step
            band = ((pos >= -1 - margin) & (pos < margin)) | ((pos > L - 1 - margin) & (pos <= L + margin))
            require(not band.any(), "a sample within a cell of the edge: torchvision reads the edge cell, "
                    "crop_and_resize 0")
        (a, c), (e, f) = _crop_box(ys, dy, ny, H), _crop_box(xs, dx, nx, W)
        crop = tf.image.crop_and_resize(image, np.array([[a, e, c, f]], np.float32), np.array([int(b)], np.int32),
                                        [ny, nx], method="bilinear", extrapolation_value=0.0).numpy()[0]
        out[k] = crop.reshape(ph, ny // ph, pw, nx // pw, C).mean(axis=(1, 3), dtype=np.float64).transpose(2, 0, 1)
    return out


_FLOATS = ["float64", "float32", "float16"]
FINDINGS: list[dict[str, Any]] = [
    {"ops": ["max_pool1d", "max_pool2d"], "flags": ["empty_batch"],
     "rule": "tf.nn.max_pool_with_argmax refuses an empty batch (InvalidArgumentError 'tensor_in must not be "
             "empty') where torch returns empty values and indices",
     "upstream": "https://github.com/tensorflow/tensorflow/issues/21338"},
    {"ops": ["max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"], "flags": [],
     "dtypes": _FLOATS, "checks": ["indices"],
     "rule": "MaxPoolWithArgmax takes a window's first tap and replaces it only by a strictly greater value, so a NaN "
             "wins (value, index and gradient) only as the first tap; torch's max is NaN, at the last NaN, whenever "
             "the window holds one",
     "upstream": "new"},
    {"ops": ["max_pool1d", "max_pool2d"], "flags": [], "dtypes": _FLOATS, "checks": ["output"],
     "rule": "MaxPool with explicit padding reduces with Eigen's max from the lowest finite value, which skips NaN (a "
             "window holding NaN gives the max of its other cells, an all -inf one the lowest finite value), and its "
             "MaxPoolGrad sends the gradient to the first tap unless a later one is strictly greater",
     "upstream": "https://github.com/tensorflow/tensorflow/issues/2501"},
    {"ops": ["interpolate"], "flags": ["interpolate_antialias_equal_size_backward"], "dtypes": _FLOATS,
     "rule": "ScaleAndTranslate resamples every axis at the scale it is given, so an axis whose size stays the same "
             "(O == L) under a scale_factor other than 1 is filtered (forward and gradient); the reference copies it",
     "upstream": "new"},
    *({"ops": ["interpolate"], "flags": ["bicubic_antialias", "equal", how, "uint8_fixed_point"],
       "rule": "ScaleAndTranslate filters a uint8 image's axis whose size stays the same (O == L) under a "
               "scale_factor other than 1 (and returns float32), where torch's uint8 pipeline copies that axis",
       "upstream": "new"} for how in ("scale", "scale_no_recompute")),
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"],
     "rule": "ResizeBilinear, ResizeBicubic and ScaleAndTranslate return float32 for uint8 images, neither rounded nor "
             "clamped (cubic and Lanczos overshoots from -46.6 to 273.9 here), where torch returns uint8 from int16 "
             "fixed-point weights, each axis's pass rounded and clamped",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
     "rule": "ResizeArea, ResizeBilinear (torch's 1-d linear as one row) and ScaleAndTranslate (Lanczos without "
             "antialias) take uint8 images and return float32, where torch refuses uint8 in area and linear and "
             "refuses Lanczos without antialias",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["align_corners_with_nearest"],
     "rule": "ResizeNearestNeighbor takes align_corners (False is its legacy floor(i * L/O) mode) where the reference "
             "refuses align_corners with nearest",
     "upstream": "new"},
]

