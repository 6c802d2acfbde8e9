"""``keras.ops.image.resize`` (Keras 3.15, JAX backend) on poolspec's kernels: crop or pad to the target aspect
ratio as Keras does, then ``jax.image.resize``'s numbers (:func:`poolspec.frontends.jax.image.resize`), then
Keras' cast back to the input dtype (integers rounded half to even and saturated).

>>> import numpy as np
>>> from poolspec.frontends.keras.ops import image
>>> image.resize(np.array([[[0.0], [4.0]]]), (1, 4))[0, :, 0]
array([0., 1., 3., 4.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._compat import dtype_name, dtype_of, namespace, on
from ...._types import Array
from ....spec._card import Argument, Port
from ....spec.frontends import FrontendCard, gradient
from ..._checks import check
from ..._common import FLOATS, INTS, choice, fail, ints, jax_default_float, mirror, nonempty
from ..._geometry import spatial_axes
from .._keras import SYMBOLIC_NOTE, frontend_call
from .._registry import FUNCTIONS, SPECS

__all__ = ["resize"]

INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic")
_F = "keras.ops.image.resize"


def _pad(xp: Any, x: Any, axis: int, count: int, fill_value: float, dtype: str) -> Any:
    x = xp.astype(x, dtype_of(xp, dtype)) if dtype_name(xp, x.dtype) != dtype else x
    shape = list(x.shape)
    shape[axis] = count
    block = xp.full(tuple(shape), fill_value, dtype=x.dtype, **on(x))
    return xp.concat([block, x, block], axis=axis)


def resize(images: Array, size: Any, interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False, fill_mode: str = "constant",
           fill_value: float = 0.0, data_format: str | None = None) -> Array:
    """Resize images to ``size``, as ``keras.ops.image.resize`` (Keras 3.15, JAX backend).

    With ``crop_to_aspect_ratio`` the largest centred window of the target aspect ratio is resized; with
    ``pad_to_aspect_ratio`` the image is first padded with ``fill_value`` on both sides of its short axis. The
    resampling is ``jax.image.resize`` (half-pixel centres; ``antialias`` widens the kernel when downsampling).

    Parameters
    ----------
    images : array
        One image (height, width, channels) or a batch (batch, height, width, channels), or channels first; height and
        width non-empty; any array-API array of a float or integer dtype.
    size : tuple or list of int
        The output (height, width), both >= 1.
    interpolation : str, default "bilinear"
        "bilinear", "nearest" (pixel centres), "lanczos3", "lanczos5" or "bicubic" (Keys, a = -0.5), lower case.
    antialias : bool, default False
        Antialias when downsampling (ignored by "nearest").
    crop_to_aspect_ratio : bool, default False
        Crop the centred window int(W * h / w) x int(H * w / h) (clamped to the image, at least 1) first.
    pad_to_aspect_ratio : bool, default False
        Pad the short axis by int((int(W * h / w) - H) / 2) (or the width's analogue) cells on both sides first.
    fill_mode : str, default "constant"
        Only "constant".
    fill_value : float, default 0.0
        The padding value.
    data_format : str or None, default None
        "channels_last" or "channels_first" (any case); None: keras.config.image_data_format()
        (Keras' global setting, "channels_last" unless set or in keras.json).

    Returns
    -------
    array
        The resized images in images' layout, namespace and dtype (integers: rounded half to even and saturated).

    Raises
    ------
    ValueError
        If size has not 2 entries or one is < 1, images is not 3-d or 4-d or has an empty height or width, both crop
        and pad are asked for, interpolation is not one of the five, fill_mode is not "constant", or data_format is not
        one of the two layouts.
    TypeError
        If images is not an array of a supported library or has another dtype (bool, complex), size is not a sequence
        of ints, or fill_value is not a number.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.keras.ops import image
    >>> image.resize(np.arange(4.0).reshape(2, 2, 1), (2, 4), pad_to_aspect_ratio=True)[..., 0]
    array([[0., 0., 1., 0.],
           [0., 2., 3., 0.]])
    """
    return frontend_call("keras.ops.image.resize", _resize, images,
                         dict(size=size, interpolation=interpolation, antialias=antialias,
                              crop_to_aspect_ratio=crop_to_aspect_ratio, pad_to_aspect_ratio=pad_to_aspect_ratio,
                              fill_mode=fill_mode, fill_value=fill_value, data_format=data_format), spatial_rank=2)


def _rule(shape: tuple[Any, ...], dtype: str, arguments: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, ...]]:
    """The checks a call and its symbolic spec share (the card's constraints: size's entries, interpolation,
    crop or pad, fill_mode): the target (height, width) and the (height, width) axes."""
    size = arguments["size"]
    if not isinstance(size, (tuple, list, np.ndarray)):
        fail(_F, "size", size, "must be a tuple of 2 ints (height, width)", TypeError)
    target = ints(_F, "size", size, "entries must be ints")
    check(CARDS[0], arguments, _F)
    if len(shape) not in (3, 4):
        fail(_F, "images", shape, "must have 3 (one image) or 4 (a batch) dimensions")
    choice(_F, "images", dtype, FLOATS + INTS, f"dtype must be one of {', '.join(FLOATS + INTS)}", kind=TypeError)
    return (target[0], target[1]), spatial_axes(len(shape), 2, arguments["data_format"] == "channels_first")


def _resize_spec(shape: tuple[Any, ...], dtype: str, size: Any, interpolation: str = "bilinear",
                 antialias: bool = False, crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                 fill_mode: str = "constant", fill_value: float = 0.0,
                 data_format: str = "channels_last") -> tuple[tuple[Any, ...], str]:
    """The output's shape and dtype, for a KerasTensor (sizes may be None)."""
    target, axes = _rule(shape, dtype, dict(size=size, interpolation=interpolation, antialias=antialias,
                                            crop_to_aspect_ratio=crop_to_aspect_ratio,
                                            pad_to_aspect_ratio=pad_to_aspect_ratio, fill_mode=fill_mode,
                                            fill_value=fill_value, data_format=data_format))
    out = list(shape)
    out[axes[0]], out[axes[1]] = target
    return tuple(out), dtype


def _resize(images: Any, size: Any, interpolation: str, antialias: bool, crop_to_aspect_ratio: bool,
            pad_to_aspect_ratio: bool, fill_mode: str, fill_value: float, data_format: str) -> Any:
    from ...jax.image import resize as jax_resize

    xp = namespace(images, names=("images",), op=_F)
    name = dtype_name(xp, images.dtype)
    (target_h, target_w), (hax, wax) = _rule(tuple(images.shape), name, dict(
        size=size, interpolation=interpolation, crop_to_aspect_ratio=crop_to_aspect_ratio,
        pad_to_aspect_ratio=pad_to_aspect_ratio, fill_mode=fill_mode, data_format=data_format))
    if isinstance(fill_value, bool) or not isinstance(fill_value, (int, float, np.integer, np.floating)):
        fail(_F, "fill_value", fill_value, "must be a number", TypeError)
    nonempty(_F, "images", tuple(images.shape), (hax, wax), "height and width must be non-empty (Keras divides by "
                                                            "zero)")
    height, width = int(images.shape[hax]), int(images.shape[wax])
    fmt = data_format

    x = images
    if crop_to_aspect_ratio:
        # Keras' rule, float division and truncation included
        crop_h = max(min(height, int(float(width * target_h) / target_w)), 1)
        crop_w = max(min(width, int(float(height * target_w) / target_h)), 1)
        h0, w0 = int(float(height - crop_h) / 2), int(float(width - crop_w) / 2)
        index = [slice(None)] * x.ndim
        index[hax], index[wax] = slice(h0, h0 + crop_h), slice(w0, w0 + crop_w)
        x = x[tuple(index)]
    elif pad_to_aspect_ratio:
        pad_h = max(height, int(float(width * target_h) / target_w))
        pad_w = max(width, int(float(height * target_w) / target_h))
        h0, w0 = int(float(pad_h - height) / 2), int(float(pad_w - width) / 2)
        if h0 > 0 or w0 > 0:
            # Keras' channels_first blocks are JAX's default float, its channels_last blocks images' dtype times
            # a Python float (the default float again for integer images): the concatenation promotes
            promote = fmt == "channels_first" or name in INTS
            dtype = jax_default_float(images) if promote and name != "float64" else name
            x = _pad(xp, x, hax, h0, float(fill_value), dtype) if h0 > 0 else _pad(xp, x, wax, w0,
                                                                                   float(fill_value), dtype)
    shape = list(x.shape)
    shape[hax], shape[wax] = target_h, target_w
    y = jax_resize(x, tuple(int(v) for v in shape), interpolation, antialias=bool(antialias))
    if dtype_name(xp, y.dtype) == name:
        return y
    if name in INTS:
        info = np.iinfo(name)
        y = xp.clip(xp.round(y), float(info.min), float(info.max))
    return xp.astype(y, images.dtype)


CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(
        name="keras.ops.image.resize", version=1, library="keras 3.15.1 (JAX backend, jax 0.10.2)",
        mirrors="keras.ops.image.resize",
        summary="Image resize with Keras' crop/pad to aspect ratio on jax.image.resize's numbers.",
        arguments=(
            Argument("images", "array", description="(H, W, C), (N, H, W, C) or channels first"),
            Argument("size", "tuple[int, int]", constraints=("2 entries, each >= 1",), description="(height, width)"),
            Argument("interpolation", "str", "bilinear", ("one of " + ", ".join(INTERPOLATIONS),),
                     "jax.image.resize's method of that name"),
            Argument("antialias", "bool", False, (), "widen the kernel when downsampling"),
            Argument("crop_to_aspect_ratio", "bool", False, ("not with pad_to_aspect_ratio",),
                     "resize the largest centred window of the target aspect ratio"),
            Argument("pad_to_aspect_ratio", "bool", False, ("not with crop_to_aspect_ratio",),
                     "pad the short axis evenly with fill_value first"),
            Argument("fill_mode", "str", "constant", ("'constant'",), "the padding mode"),
            Argument("fill_value", "float", 0.0, (), "the padding value"),
            Argument("data_format", "str | None", None, ("'channels_last' or 'channels_first', any case",),
                     "None: keras.config.image_data_format() where Keras is imported, else the value of Keras' "
                     "keras.json ($KERAS_HOME or ~/.keras), else 'channels_last'"),
        ),
        outputs=(Port("resized", "array", "images' rank and layout with (height, width) = size",
                      "the resized images in images' dtype"),),
        core=("frontends.jax.image.resize", "frontends._common.resample"),
        layout="data_format: channels_last (Keras' default) or channels_first; batch and channel axes are kept",
        gradient=gradient("linear in images: the transposed tap tables, then the crop's zero padding or the pad's "
                          "slice"),
        determinism="bit-identical across runs; backward gathers (no scatter)",
        notes=(SYMBOLIC_NOTE,
               "Keras on JAX calls jax.image.resize(images, (…, height, width, …), method=interpolation, "
               "antialias=antialias): half-pixel centres; bilinear = triangle, bicubic = Keys a = -0.5, lanczos3/5; "
               "with antialias the kernel widens by the downscale factor; nearest takes floor((i + 0.5) * L / O)",
               "crop: crop_h = max(min(H, int(W * h / w)), 1), crop_w = max(min(W, int(H * w / h)), 1), offsets "
               "int((H - crop_h) / 2), int((W - crop_w) / 2)",
               "pad: pad_h = max(H, int(W * h / w)); int((pad_h - H) / 2) cells of fill_value on both sides of the "
               "height (the width's analogue otherwise), so an odd difference loses a cell",
               "the padded image is promoted: channels_first padding blocks are JAX's default float (float64 with "
               "x64), channels_last ones images' dtype times the Python fill_value (the default float for integer "
               "images); the result is cast back to images' dtype",
               "integer images are resampled in float32 (float64 for 64-bit integers, or when padded as above), "
               "rounded half to even and saturated to the dtype's range; nearest gathers them as they are",
               "interpolation is case-sensitive; 'area' is not available on Keras' JAX backend"),
        differences=("Keras raises ZeroDivisionError for an empty height or width; poolspec a ValueError",),
        refuses=("bool images (Keras resamples them in float32 and casts back to bool)",
                 "a float size entry is refused by both (jax needs integer shapes)"),
        checked="conformance/frontend_checks/keras.py against keras 3.15.1 on JAX 0.10.2 (x64 enabled): random "
                "3-d and 4-d images of both data formats, the five interpolations with and without antialias, crop, "
                "pad with several fill values, float64/float32/float16 and uint8/int16/int32 images; values on NumPy "
                "and JAX (integers within 1, a .5 rounding flipped by float error), gradients against jax.vjp of the "
                "keras op; counts in conformance/results/frontends/keras.json"),
)

FUNCTIONS["keras.ops.image.resize"], SPECS["keras.ops.image.resize"] = resize, _resize_spec
# other names are keras.ops.image's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "keras.ops.image", __all__)
