"""``tf.image.resize`` on poolspec's tap tables: every ``tf.image.ResizeMethod`` with TensorFlow 2.21's kernels
(ResizeBilinear / ResizeNearestNeighbor / ResizeBicubic with half-pixel centres, ResizeArea, ScaleAndTranslate
with its sampling kernels and antialias), their float32 coordinate arithmetic reproduced on the host so that the
taps and weights are TF's, and TF's output dtypes.

>>> import numpy as np
>>> from poolspec.frontends.tf import image
>>> image.resize(np.array([[[0.0], [1.0]]]), [1, 4])[0, :, 0]
array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..._compat import (
    device,
    dtype_name,
    index_dtype,
    is_dask_array,
    is_jax_array,
    namespace,
    readable,
    to_host,
    to_namespace,
)
from ..._types import Array
from ...autodiff import max_select
from ...kernels.cells import Cells
from ...plans.windows import GatherPlan
from ...spec._card import Argument, Port
from ...spec.frontends import FrontendCard, gradient
from .._common import at_least, choice, dense_table, fail, flag, ints, mirror, nonempty, resample, tap_table
from .._geometry import half_pixel, spatial_axes
from .._tensorflow import NOTE as TENSORFLOW_NOTE
from .._tensorflow import is_tensorflow, on_tensorflow

_F = np.float32
METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


# ---------------------------------------------------------------------------------- TF's sampling kernels
# Each evaluates in float32 as sampling_kernels.h does (the Gaussian's exponent in double).

def _lanczos(radius: float) -> Any:
    r, pi = _F(radius), _F(3.14159265359)

    def k(x: np.ndarray) -> np.ndarray:
        x = np.abs(x).astype(_F)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (r * np.sin(pi * x) * np.sin(pi * x / r) / (pi * pi * x * x)).astype(_F)
        return np.where(x > r, _F(0), np.where(x <= 1e-3, _F(1), v)).astype(_F)

    return k, r


def _gaussian(x: np.ndarray) -> np.ndarray:
    x = np.abs(x).astype(_F)
    sigma = _F(1.5) / _F(3.0)
    v = np.exp((-x * x).astype(np.float64) / (2.0 * float(sigma) * float(sigma))).astype(_F)
    return np.where(x >= _F(1.5), _F(0), v)


def _triangle(x: np.ndarray) -> np.ndarray:
    x = np.abs(x).astype(_F)
    return np.where(x < 1, (_F(1) - x).astype(_F), _F(0))


def _keys(x: np.ndarray) -> np.ndarray:
    x = np.abs(x).astype(_F)
    outer = (((_F(-0.5) * x + _F(2.5)) * x - _F(4.0)) * x + _F(2.0)).astype(_F)
    inner = (((_F(1.5) * x - _F(2.5)) * x) * x + _F(1.0)).astype(_F)
    return np.where(x >= 2, _F(0), np.where(x >= 1, outer, inner))


def _mitchell(x: np.ndarray) -> np.ndarray:
    x = np.abs(x).astype(_F)
    outer = ((((_F(-7.0) / _F(18.0)) * x + _F(2.0)) * x - _F(10.0) / _F(3.0)) * x + _F(16.0) / _F(9.0)).astype(_F)
    inner = ((((_F(7.0) / _F(6.0)) * x - _F(2.0)) * x) * x + _F(8.0) / _F(9.0)).astype(_F)
    return np.where(x >= 2, _F(0), np.where(x >= 1, outer, inner))


_KERNELS: dict[str, tuple[Any, Any]] = {
    "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0), "gaussian": (_gaussian, _F(1.5)),
    "triangle": (_triangle, _F(1.0)), "keyscubic": (_keys, _F(2.0)), "mitchellcubic": (_mitchell, _F(2.0))}


# ------------------------------------------------------------------------------------ per-axis tap tables

def _scale_and_translate(kernel: str, antialias: bool, L: int, O: int) -> GatherPlan:
    """ScaleAndTranslate's spans (ComputeSpansCore) for scale = float32(O) / float32(L), translation 0."""
    fn, radius = _KERNELS[kernel]
    scale = _F(O) / _F(L)
    inv_scale = _F(1.0 / float(scale))
    inv_translate = _F(-inv_scale * _F(0))
    samples = (half_pixel(O, inv_scale) + inv_translate).astype(_F)
    kernel_scale = max(inv_scale, _F(1)) if antialias else _F(1)
    one_over = _F(_F(1) / kernel_scale)
    reach = _F(radius * kernel_scale)
    span = min(2 * math.ceil(float(reach)) + 1, L)
    index = np.full((span, O), L, dtype=np.int64)
    weight = np.zeros((span, O))
    for x, sample in enumerate(samples):
        if sample < 0 or sample > L:
            continue
        start = min(max(math.ceil(_F(_F(sample - reach) - _F(0.5))), 0), L - 1)
        end = min(max(math.floor(_F(_F(sample + reach) - _F(0.5))), 0), L - 1) + 1
        src = np.arange(start, end)
        pos = (src.astype(_F) + _F(0.5) - sample).astype(_F)
        w = _normalised(fn((pos * one_over).astype(_F)))
        if w is not None:
            index[: end - start, x] = src
            weight[: end - start, x] = w
    return tap_table(index, weight, L)


def _normalised(w: np.ndarray) -> np.ndarray | None:
    """Taps scaled to sum 1 as TF's kernels scale them (the float32 sum in tap order, then a product with its
    reciprocal); None where the sum is too small to divide by (below 1000 times float32's smallest normal).

    >>> _normalised(np.array([1.0, 3.0], np.float32)).tolist()
    [0.25, 0.75]
    """
    total = _F(0)
    for v in w:
        total = _F(total + v)
    if abs(total) < 1000.0 * np.finfo(_F).tiny:
        return None
    return (np.asarray(w, dtype=_F) * _F(_F(1) / total)).astype(_F)


def _half_pixel(L: int, O: int, shift: bool) -> np.ndarray:
    """TF's HalfPixelScaler ((o + 0.5) * scale - 0.5) or, without ``shift``, HalfPixelScalerForNN, in float32
    with scale = float32(L) / float32(O)."""
    src = half_pixel(O, _F(L) / _F(O))
    return (src - _F(0.5)).astype(_F) if shift else src


def _bilinear(L: int, O: int) -> GatherPlan:
    src = _half_pixel(L, O, True)
    low_f = np.floor(src)
    lower = np.maximum(low_f.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), L - 1)
    lerp = (src - low_f).astype(_F).astype(np.float64)
    same = lower == upper
    index = np.stack([lower, np.where(same, L, upper)])
    weight = np.stack([np.where(same, 1.0, 1.0 - lerp), np.where(same, 0.0, lerp)])
    return tap_table(index, weight, L)


def _nearest(L: int, O: int) -> GatherPlan:
    src = _half_pixel(L, O, False)
    index = np.maximum(np.minimum(np.floor(src).astype(np.int64), L - 1), 0)
    return tap_table(index[None, :], np.ones((1, O)), L)


@lru_cache(maxsize=1)
def _keys_table() -> np.ndarray:
    """ResizeBicubic's coefficient table (1024 steps, Keys a = -0.5): columns (c0, c1) per step, the
    polynomials evaluated in double at float32 positions and stored as float32."""
    a = -0.5
    table = np.zeros((1025, 2))
    for i in range(1025):
        x = float(_F(i * 1.0 / 1024))
        table[i, 0] = _F(((a + 2) * x - (a + 3)) * x * x + 1)
        x = float(_F(x + 1.0))
        table[i, 1] = _F(((a * x - 5 * a) * x + 8 * a) * x - 4 * a)
    return table


def _bicubic(L: int, O: int) -> GatherPlan:
    """ResizeBicubic with half_pixel_centers: four taps from the quantised table, taps outside the input
    weighted 0 and the rest renormalised in float32."""
    table = _keys_table()
    src = _half_pixel(L, O, True)
    index = np.full((4, O), L, dtype=np.int64)
    weight = np.zeros((4, O))
    for o in range(O):
        loc = math.floor(src[o])
        delta = _F(src[o] - _F(loc))
        off = int(np.rint(_F(delta * _F(1024))))
        coeffs = (table[off, 1], table[off, 0], table[1024 - off, 0], table[1024 - off, 1])
        taps = np.array([c if 0 <= loc - 1 + t < L else 0.0 for t, c in enumerate(coeffs)], dtype=_F)
        scaled = _normalised(taps)
        w = taps if scaled is None else scaled
        for t in range(4):
            if w[t] != 0:
                index[t, o], weight[t, o] = loc - 1 + t, w[t]
    return tap_table(index, weight, L)


def _area(L: int, O: int, factor: float) -> GatherPlan:
    """ResizeArea's coverage weights along one axis (each input cell's covered fraction, in float32, rows past
    the end bounded onto the last), times ``factor``."""
    scale = _F(L) / _F(O)
    matrix = np.zeros((L, O))
    for o in range(O):
        lo, hi = _F(_F(o) * scale), _F(_F(o + 1) * scale)
        for i in range(math.floor(lo), math.ceil(hi)):
            if i < lo:
                w = scale if i + 1 > hi else _F(_F(i + 1) - lo)
            else:
                w = _F(hi - _F(i)) if i + 1 > hi else _F(1)
            matrix[min(max(i, 0), L - 1), o] += float(w) * factor
    return dense_table(matrix)


@lru_cache(maxsize=256)
def _plans(method: str, antialias: bool, in_hw: tuple[int, int], out_hw: tuple[int, int]) -> tuple[GatherPlan, ...]:
    (h, w), (oh, ow) = in_hw, out_hw
    if method == "bilinear" and not antialias:
        return _bilinear(h, oh), _bilinear(w, ow)
    if method == "nearest":
        return _nearest(h, oh), _nearest(w, ow)
    if method == "bicubic" and not antialias:
        return _bicubic(h, oh), _bicubic(w, ow)
    if method == "area":
        hs, ws = _F(h) / _F(oh), _F(w) / _F(ow)
        factor = float(_F(1.0 / float(_F(hs * ws))))
        return _area(h, oh, factor), _area(w, ow, 1.0)
    kernel = {"bilinear": "triangle", "bicubic": "keyscubic"}.get(method, method)
    return _scale_and_translate(kernel, antialias, h, oh), _scale_and_translate(kernel, antialias, w, ow)


def _size(size: Any) -> tuple[int, int]:
    if hasattr(size, "tolist") and not isinstance(size, (list, tuple)):
        size = size.tolist()
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        fail("resize", "size", size, "must be a 1-D sequence of 2 elements: new_height, new_width")
    new = ints("resize", "size", size, "must be a 1-D int32 sequence", ValueError)
    return new[0], new[1]


def _preserve(size: tuple[int, int], h: int, w: int) -> tuple[int, int]:
    """TF's preserve_aspect_ratio in float32: scale = min(new_h / h, new_w / w), each side round(scale * side)
    with ties to even."""
    s = min(_F(size[0]) / _F(h), _F(size[1]) / _F(w))
    return int(np.rint(_F(s * _F(h)))), int(np.rint(_F(s * _F(w))))


def resize(images: Array, size: Any, method: str = "bilinear", preserve_aspect_ratio: bool = False,
           antialias: bool = False, name: str | None = None) -> Array:
    """Resize images, as ``tf.image.resize`` (TensorFlow 2.21), on poolspec's tap tables.

    bilinear and bicubic are TF's half-pixel ResizeBilinear / ResizeBicubic (Keys a = -0.5 from a 1024-step
    table, taps outside the image dropped and the rest renormalised); nearest is ResizeNearestNeighbor's
    floor((o + 0.5) * L / O); area is ResizeArea's coverage average; lanczos3, lanczos5, gaussian and
    mitchellcubic (and bilinear/bicubic with antialias, as triangle/keyscubic) are ScaleAndTranslate at scale
    O / L, its kernel stretched by L / O when antialias and downsampling. Coordinates and weights are TF's
    float32 ones; every method but nearest computes in float32.

    Parameters
    ----------
    images : array
        (N, H, W, C) or (H, W, C) images, H, W, C > 0; any array-API array of an int8/16/32/64, uint8/16,
        float16, bfloat16, float32 or float64 dtype.
    size : sequence of 2 int
        (new_height, new_width), both > 0 (the bound of each side with preserve_aspect_ratio).
    method : str, default "bilinear"
        One of "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"
        (the ``tf.image.ResizeMethod`` values).
    preserve_aspect_ratio : bool, default False
        Resize to the largest size within ``size`` of the image's aspect ratio: scale = min(new_h / H, new_w / W),
        each side round-half-even(scale * side), in float32.
    antialias : bool, default False
        Stretch the kernel when downsampling (bilinear, bicubic and the ScaleAndTranslate methods; nearest and
        area ignore it, as TF).
    name : str or None, default None
        Accepted and ignored.

    Returns
    -------
    array
        (N, new_h, new_w, C) or (new_h, new_w, C): images' dtype for nearest, float32 otherwise.

    Raises
    ------
    ValueError
        If images is not 3-d or 4-d or has an empty height, width or channel axis, size is not 2 ints > 0
        (after preserve_aspect_ratio), or method is not one of the above.
    TypeError
        If images' dtype is not one of the above (e.g. bool) or preserve_aspect_ratio or antialias is not a
        bool.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.tf import image
    >>> image.resize(np.arange(4, dtype=np.uint8).reshape(2, 2, 1), [4, 4], method="nearest")[:, :, 0]
    array([[0, 0, 1, 1],
           [0, 0, 1, 1],
           [2, 2, 3, 3],
           [2, 2, 3, 3]], dtype=uint8)
    """
    if is_tensorflow(images):
        return on_tensorflow("tf.image.resize", lambda a: resize(a, size, method, preserve_aspect_ratio, antialias),
                             images)
    xp = namespace(images, names=("images",), op="resize")
    if images.ndim not in (3, 4):
        fail("resize", "images", tuple(images.shape), "must have either 3 or 4 dimensions")
    new = _size(size)
    choice("resize", "method", method, METHODS, f"must be one of {METHODS}")
    flag("resize", "preserve_aspect_ratio", preserve_aspect_ratio)
    flag("resize", "antialias", antialias)
    dt = choice("resize", "images.dtype", dtype_name(xp, images.dtype), _DTYPES, f"must be one of {_DTYPES}",
                kind=TypeError)
    axes = spatial_axes(images.ndim, 2, False)
    nonempty("resize", "images", tuple(images.shape), (*axes, images.ndim - 1), "height, width and channels must "
                                                                                  "be non-empty")
    h, w = int(images.shape[axes[0]]), int(images.shape[axes[1]])
    if preserve_aspect_ratio:
        new = _preserve(new, h, w)
    at_least("resize", "size", new, new, 1, "output dimensions must be positive")
    plans = _plans(method, bool(antialias), (h, w), new)
    x = images if method == "nearest" or dt == "float32" else xp.astype(images, xp.float32)
    return resample(x, axes, plans)


# ------------------------------------------------------------------------------------------ crop_and_resize

_CROP_METHODS = ("bilinear", "nearest")
_CROP_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "float32", "float64")


def _kept(a: Any) -> Any:
    """``a`` kept as computed: XLA (JAX) may fuse a * b + c into one fused multiply-add or a division by a
    constant into a product with its reciprocal; TF's kernel rounds every float32 operation."""
    if is_jax_array(a):
        import jax

        return jax.lax.optimization_barrier(a)
    return a


def _positions(xp: Any, lo: Any, hi: Any, L: int, n: int) -> Any:
    """CropAndResize's float32 sample positions (K, n) along one axis: lo * (L - 1) + i * ((hi - lo) * (L - 1)) /
    (n - 1), each operation rounded; n == 1: the box centre 0.5 * (lo + hi) * (L - 1)."""
    last = float(L - 1)
    if n == 1:
        return _kept(_kept((lo + hi) * 0.5) * last)
    step = _kept((hi - lo) * last) / _kept(xp.asarray(float(n - 1), dtype=xp.float32, device=device(lo)))
    i = xp.reshape(xp.arange(n, dtype=xp.float32, device=device(lo)), (1, n))
    return _kept(lo * last) + _kept(i * _kept(step))


def _crop_taps(xp: Any, pos: Any, L: int, method: str) -> tuple[Any, Any, Any, Any]:
    """(low tap, high tap, the high tap's weight, whether inside [0, L - 1]) per position: floor / ceil and
    pos - floor for bilinear; for nearest roundf's index (half away from zero; positions are >= 0) twice."""
    inside = (pos >= 0) & (pos <= float(L - 1))
    pos = xp.where(inside, pos, xp.zeros_like(pos))
    low = xp.floor(pos)
    frac = pos - low
    if method == "nearest":
        near = xp.where(frac >= 0.5, low + 1, low)
        return near, near, frac, inside
    return low, xp.ceil(pos), frac, inside


def _host_values(a: Any) -> np.ndarray | None:
    if is_dask_array(a):
        return np.asarray(a.compute())
    return to_host(a) if readable(a) else None


def _crop_checks(fn: str, xp: Any, image: Any, boxes: Any, box_indices: Any, crop_size: Any, method: str,
                 extrapolation_value: Any) -> tuple[str, tuple[int, int]]:
    """crop_and_resize's refusals, as TensorFlow's (before any computation): the image's dtype name and the crop
    size (crop_height, crop_width)."""
    if image.ndim != 4:
        fail(fn, "image", tuple(image.shape), "must be 4-D (N, H, W, C)")
    dt = choice(fn, "image.dtype", dtype_name(xp, image.dtype), _CROP_DTYPES, f"must be one of {_CROP_DTYPES}",
                kind=TypeError)
    nonempty(fn, "image", tuple(image.shape), (1, 2), "image dimensions (height and width) must be positive")
    if boxes.ndim != 2 or int(boxes.shape[1]) != 4:
        fail(fn, "boxes", tuple(boxes.shape), "must be (num_boxes, 4): y1, x1, y2, x2 per box")
    if not xp.isdtype(boxes.dtype, "real floating"):
        fail(fn, "boxes", boxes.dtype, "must be floating (float32)", TypeError)
    K = int(boxes.shape[0])
    if box_indices.ndim != 1 or int(box_indices.shape[0]) != K:
        fail(fn, "box_indices", tuple(box_indices.shape), f"must be (num_boxes,) = ({K},)")
    if not xp.isdtype(box_indices.dtype, "integral"):
        fail(fn, "box_indices", box_indices.dtype, "must be int32 or int64", TypeError)
    if hasattr(crop_size, "tolist") and not isinstance(crop_size, (list, tuple)):
        crop_size = crop_size.tolist()
    if not isinstance(crop_size, (list, tuple)) or len(crop_size) != 2:
        fail(fn, "crop_size", crop_size, "must be a 1-D sequence of 2 ints: crop_height, crop_width")
    ch, cw = ints(fn, "crop_size", crop_size, "must be a 1-D int32 sequence")
    at_least(fn, "crop_size", crop_size, (ch, cw), 1, "crop dimensions must be positive")
    choice(fn, "method", method, _CROP_METHODS, f"must be one of {_CROP_METHODS}")
    if isinstance(extrapolation_value, (bool, np.bool_)) or not isinstance(
            extrapolation_value, (int, float, np.integer, np.floating)):
        fail(fn, "extrapolation_value", extrapolation_value, "must be a float", TypeError)
    return dt, (ch, cw)


def crop_and_resize(image: Array, boxes: Array, box_indices: Array, crop_size: Any, method: str = "bilinear",
                    extrapolation_value: float = 0.0, name: str | None = None) -> Array:
    """Crops of ``image`` resampled to ``crop_size``, as ``tf.image.crop_and_resize`` (TensorFlow 2.21).

    Box (y1, x1, y2, x2), normalised (0 and 1 are the first and last pixel centres), samples its image at
    in_y = y1 * (H - 1) + i * ((y2 - y1) * (H - 1)) / (crop_h - 1) (crop_h == 1: 0.5 * (y1 + y2) * (H - 1)), x
    likewise, in float32 with every operation rounded as TF's CPU kernel; a sample outside [0, H - 1] x [0, W - 1]
    is ``extrapolation_value``. bilinear interpolates floor / ceil taps (top = tl + (tr - tl) * x_lerp, then
    top + (bottom - top) * y_lerp); nearest reads the roundf (half away from zero) cell. Flipped boxes (y1 > y2)
    crop upside down. The image is cast to float32 and the result is float32.

    Parameters
    ----------
    image : array
        (N, H, W, C), H and W > 0; int8/16/32/64, uint8/16, float16, float32 or float64 (any array-API array, or a
        TensorFlow tensor).
    boxes : array
        (K, 4) normalised boxes y1, x1, y2, x2, finite; any floating dtype, rounded to float32 as TF; image's
        library.
    box_indices : array
        (K,) integer image of each box, in [0, N).
    crop_size : sequence of 2 int
        (crop_h, crop_w), both > 0.
    method : str, default "bilinear"
        "bilinear" or "nearest".
    extrapolation_value : float, default 0.0
        The value of samples outside the image (rounded to float32).
    name : str or None, default None
        Accepted and ignored.

    Returns
    -------
    array
        (K, crop_h, crop_w, C) float32, image's namespace and device.

    Raises
    ------
    ValueError
        If image is not 4-d or has an empty height or width, boxes is not (K, 4) or not finite, box_indices is not
        (K,) or holds an index outside [0, N), crop_size is not 2 ints > 0, or method is unknown.
    TypeError
        If image's dtype is not one of the above (bool, bfloat16), boxes is not floating, box_indices is not
        integer, crop_size has non-int entries or extrapolation_value is not a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.tf import image
    >>> img = np.arange(9.0).reshape(1, 3, 3, 1)
    >>> image.crop_and_resize(img, np.array([[0.0, 0.0, 0.75, 1.0]]), np.array([0]), [2, 3])[0, :, :, 0]
    array([[0. , 1. , 2. ],
           [4.5, 5.5, 6.5]], dtype=float32)
    """
    fn = "crop_and_resize"
    if is_tensorflow(image):
        tb, ti = (np.asarray(a) for a in (boxes, box_indices))

        def on_host(a: Any) -> Any:
            xp_a = namespace(a)
            return crop_and_resize(a, to_namespace(tb, xp_a, a), to_namespace(ti, xp_a, a), crop_size, method,
                                   extrapolation_value)

        return on_tensorflow("tf.image.crop_and_resize", on_host, image)
    xp = namespace(image, boxes, box_indices, names=("image", "boxes", "box_indices"), op=fn)
    dt, (ch, cw) = _crop_checks(fn, xp, image, boxes, box_indices, crop_size, method, extrapolation_value)
    N, H, W, C = (int(v) for v in image.shape)
    K = int(boxes.shape[0])
    bi = _host_values(box_indices)
    if bi is not None and bi.size and (bi.min() < 0 or bi.max() >= N):
        fail(fn, "box_indices", f"values in [{bi.min()}, {bi.max()}]", f"must lie in [0, {N}) (the batch)")
    hb = _host_values(boxes)
    if hb is not None and not np.isfinite(hb).all():
        fail(fn, "boxes", "...", "must be finite (TF: Boxes contains at least one element that is not finite)")
    ext = float(np.float32(extrapolation_value))
    if K * C == 0:
        return xp.zeros((K, ch, cw, C), dtype=xp.float32, device=device(image))
    if is_dask_array(image):  # images whole, one task per channel block; boxes and indices, small, as NumPy
        import dask.array as da

        chans = image.chunks[3]
        img = image.rechunk(((N,), (H,), (W,), chans))
        return da.map_blocks(lambda b: crop_and_resize(b, hb, bi, (ch, cw), method, ext), img, dtype=np.float32,
                             meta=np.empty((0, 0, 0, 0), np.float32), chunks=((K,), (ch,), (cw,), chans))
    f32 = xp.float32
    planes = xp.reshape(xp.permute_dims(image if dt == "float32" else xp.astype(image, f32), (3, 0, 1, 2)),
                        (C, N * H * W))
    b = boxes if dtype_name(xp, boxes.dtype) == "float32" else xp.astype(boxes, f32)
    y0 = _positions(xp, b[:, 0:1], b[:, 2:3], H, ch)
    x0 = _positions(xp, b[:, 1:2], b[:, 3:4], W, cw)
    top, bottom, ylerp, yin = _crop_taps(xp, y0, H, method)
    left, right, xlerp, xin = _crop_taps(xp, x0, W, method)
    itype = index_dtype(xp, image)
    batch = xp.reshape(xp.astype(box_indices, itype), (K, 1, 1))

    def cell(rows: Any, cols: Any) -> Any:  # (K, ch, cw) flat cells, outside the image: N * H * W (reads 0)
        flat = (batch * H + xp.astype(xp.reshape(rows, (K, ch, 1)), itype)) * W + xp.astype(
            xp.reshape(cols, (K, 1, cw)), itype)
        inside = xp.reshape(yin, (K, ch, 1)) & xp.reshape(xin, (K, 1, cw))
        return xp.where(inside, flat, xp.full_like(flat, N * H * W))

    if method == "nearest":
        cells = xp.reshape(cell(top, left), (1, -1))
        out = xp.reshape(max_select(Cells(N * H * W, int(cells.shape[1])), planes, cells), (C, K, ch, cw))
    else:
        cells = xp.reshape(xp.stack([cell(top, left), cell(top, right), cell(bottom, left), cell(bottom, right)],
                                    axis=-1), (1, -1))
        vals = xp.reshape(max_select(Cells(N * H * W, int(cells.shape[1])), planes, cells), (C, K, ch, cw, 4))
        xl, yl = xp.reshape(xlerp, (1, K, 1, cw)), xp.reshape(ylerp, (1, K, ch, 1))
        tl, tr, bl, br = (vals[..., j] for j in range(4))
        upper = tl + _kept((tr - tl) * xl)
        lower = bl + _kept((br - bl) * xl)
        out = upper + _kept((lower - upper) * yl)
    inside = xp.reshape(yin, (1, K, ch, 1)) & xp.reshape(xin, (1, K, 1, cw))
    out = xp.where(inside, out, xp.full_like(out, ext))
    return xp.permute_dims(out, (1, 2, 3, 0))


_BILINEAR_NOTE = ("bilinear: ResizeBilinear(half_pixel_centers=True): src = (o + 0.5) * (L / O) - 0.5 in "
                  "float32, taps max(floor(src), 0) and min(ceil(src), L - 1), weight src - floor(src)")

CARDS: tuple[FrontendCard, ...] = (FrontendCard(
    name="tf.image.resize", version=1, library="tensorflow 2.21", mirrors="tf.image.resize",
    summary="tf.image.resize with every ResizeMethod, antialias and preserve_aspect_ratio, TF's float32 "
            "coordinates, weights and output dtypes.",
    arguments=(
        Argument("images", "array", description="(N, H, W, C) or (H, W, C); ints, uint8/16, float16/32/64, bfloat16"),
        Argument("size", "list[int]", constraints=("2 entries", "entries > 0"), description="(new_h, new_w)"),
        Argument("method", "str", "bilinear", (" | ".join(METHODS),), "a tf.image.ResizeMethod value"),
        Argument("preserve_aspect_ratio", "bool", False, (), "fit within size keeping the aspect ratio"),
        Argument("antialias", "bool", False, (), "stretch the kernel when downsampling"),
        Argument("name", "str | None", None, (), "accepted and ignored"),
    ),
    outputs=(Port("output", "array", "(N, new_h, new_w, C) or (new_h, new_w, C)",
                  "images' dtype for nearest, float32 otherwise"),),
    core=("frontends._common.resample (per-axis tap tables)",), layout="NHWC or HWC (channels_last)",
    gradient=gradient("linear in images: the transposed tap tables, gather-only; TF has gradients for every "
                      "method but area (ResizeArea has no registered gradient)"),
    determinism="deterministic (gather-only forward and backward)",
    notes=(TENSORFLOW_NOTE,
        _BILINEAR_NOTE,
        "nearest: ResizeNearestNeighbor(half_pixel_centers=True): index min(floor((o + 0.5) * (L / O)), L - 1) "
        "in float32; keeps the input dtype",
        "bicubic: ResizeBicubic(half_pixel_centers=True): Keys a = -0.5 weights read from a 1025-entry table at "
        "lrint(frac * 1024), taps outside the image weighted 0 and the four renormalised (not replicated)",
        "area: ResizeArea: each output averages the input cells under [o * L/O, (o + 1) * L/O) weighted by the "
        "covered fraction (float32), times 1 / (scale_h * scale_w)",
        "lanczos3, lanczos5, gaussian (radius 1.5, sigma 0.5), mitchellcubic, and bilinear/bicubic with antialias "
        "(triangle, keyscubic): ScaleAndTranslate with scale float32(O) / float32(L) and translation 0: sample "
        "(o + 0.5) / scale, taps ceil(sample - r*ks - 0.5) .. floor(sample + r*ks - 0.5) clipped to the image, "
        "kernel scale ks = max(L/O, 1) with antialias else 1, weights renormalised to sum 1 in float32",
        "antialias is ignored by nearest and area",
        "every method but nearest casts to float32 (float64 and integer input included) and returns float32",
        "preserve_aspect_ratio: scale = min(new_h / H, new_w / W) in float32, sides rounded half to even",
        "method strings are case-sensitive ('BILINEAR' is refused, as TF)",
    ),
    refuses=(),
    checked="random configurations against tf.image.resize in conformance/frontend_checks/tensorflow.py (values "
            "on NumPy, torch and JAX; gradients against tf.GradientTape where TF has them)",
), FrontendCard(
    name="tf.image.crop_and_resize", version=1, library="tensorflow 2.21", mirrors="tf.image.crop_and_resize",
    summary="tf.image.crop_and_resize (CropAndResize's CPU kernel): one bilinear or nearest sample per output cell "
            "of each normalised box, TF's float32 arithmetic, extrapolation outside the image.",
    arguments=(
        Argument("image", "array", description="(N, H, W, C); ints, uint8/16, float16/32/64 (not bfloat16)"),
        Argument("boxes", "array", description="(K, 4) normalised y1, x1, y2, x2; finite, rounded to float32"),
        Argument("box_indices", "array", description="(K,) int32/int64, each in [0, N)"),
        Argument("crop_size", "list[int]", constraints=("2 entries", "entries > 0"), description="(crop_h, crop_w)"),
        Argument("method", "str", "bilinear", ("bilinear", "nearest")),
        Argument("extrapolation_value", "float", 0.0, (), "the value of samples outside the image"),
        Argument("name", "str | None", None, (), "accepted and ignored"),
    ),
    outputs=(Port("output", "array", "(K, crop_h, crop_w, C)", "float32 crops"),),
    core=("autodiff.max_select (the taps' gather)",), layout="NHWC (channels_last), as TF",
    gradient=gradient("w.r.t. image: the transpose of the tap gather (a sort and a segmented sum, deterministic), "
                      "through the backend's autodiff of the float32 interpolation; w.r.t. boxes (bilinear): the "
                      "backend's autodiff of the sample positions, which is TF's CropAndResizeGradBoxes formula "
                      "(0 for nearest, where TF returns the bilinear formula); TF's CropAndResizeGradBoxes "
                      "recomputes the positions ratio first, y1 * (H - 1) + i * ((y2 - y1) * ((H - 1) / (crop_h - "
                      "1))), so where that moves a sample across a tap or the image's edge (e.g. x2 = 1 landing on "
                      "3.0000002 > W - 1) TF's box gradient is not its forward's derivative and poolspec's is; "
                      "through the TensorFlow bridge the image only", wrt=("image", "boxes")),
    determinism="deterministic (gather-only forward, sort-and-segmented-sum backward)",
    notes=(TENSORFLOW_NOTE,
           "positions in float32, each operation rounded (no fused multiply-add): in_y = y1 * (H - 1) + i * "
           "height_scale, height_scale = ((y2 - y1) * (H - 1)) / (crop_h - 1); crop_h == 1: in_y = 0.5 * (y1 + "
           "y2) * (H - 1) (TF's double product, equal to the float32 one); x likewise",
           "a sample with in_y or in_x outside [0, H - 1] / [0, W - 1] is extrapolation_value (rounded to float32), "
           "whole rows included; flipped boxes (y1 > y2) sample in reverse; boxes may reach outside [0, 1]",
           "bilinear: taps floor(in) and ceil(in) (one tap at an integral position), lerp = in - floor(in); top = tl "
           "+ (tr - tl) * x_lerp, bottom = bl + (br - bl) * x_lerp, out = top + (bottom - top) * y_lerp, in float32",
           "nearest: the cell roundf(in) (half away from zero; in >= 0 here, so floor(in) + (in - floor(in) >= "
           "0.5)), as float32",
           "the image is cast to float32 (float64 and integers included) and the result is float32; boxes of any "
           "floating dtype are rounded to float32 (TF converts them)",
           "K == 0 or C == 0 gives an empty result; N == 0 is allowed only with K == 0 (any box index is then "
           "outside the batch)",
           "established against tf.image.crop_and_resize 2.21 (CPU): bit-identical float32 results over the seeded "
           "configurations of tests/test_frontend_roi.py (crop sizes 1 to 7, boxes in [-0.3, 1.3] and on a 1/8 "
           "grid, flipped boxes, every image dtype), gradients within float32 rounding"),
    refuses=("bfloat16 images (TF's kernel does not register them either)",),
    checked="seeded random configurations against tf.image.crop_and_resize (tests/test_frontend_roi.py: float32 "
            "bit-identical on NumPy, within 1 float32 ulp-scale tolerance on torch, JAX, Dask and "
            "array-api-strict; image and box gradients against tf.GradientTape); 2,000 configurations of its own "
            "in conformance/results/frontends/tensorflow.json, 0 differ",
),)

__all__ = ["crop_and_resize", "resize"]
# other names are tensorflow.image's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "tensorflow.image", __all__)
