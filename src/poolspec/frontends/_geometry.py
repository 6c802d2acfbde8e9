"""The window geometry the front-ends share: TensorFlow's SAME rule (lax.padtype_to_pads, ONNX's SAME_UPPER and
SAME_LOWER, Keras' "same", tf.nn's SAME and its unclamped 3-d total), VALID, and explicit padding with floor or ceil
output sizes; the spatial axes of a channels-last or channels-first layout; the half-pixel centres of resampling:
each written once.

>>> same_pads(5, 3, 2)
(1, 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np


def same_output(length: Any, stride: int) -> Any:
    """SAME's output size, ceil(L / s) (``length`` may be symbolic)."""
    return -(-length // stride)


def same_total(length: int, kernel: int, stride: int, dilation: int = 1) -> int:
    """SAME's total padding before it is clamped at 0, (O - 1) s + (k - 1) d + 1 - L with O = ceil(L / s):
    negative where the window is shorter than the stride (TensorFlow's 3-d pools then start inside the input)."""
    return (same_output(length, stride) - 1) * stride + (kernel - 1) * dilation + 1 - length


def same_pads(length: int, kernel: int, stride: int, dilation: int = 1, lower: bool = False) -> tuple[int, int]:
    """SAME's (low, high) padding: total max((O - 1) s + (k - 1) d + 1 - L, 0) with O = ceil(L / s), the odd
    cell at the end (``lower``: at the start, ONNX's SAME_LOWER and lax's SAME_LOWER)."""
    total = max(same_total(length, kernel, stride, dilation), 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def valid_output(length: Any, kernel: int, stride: int, dilation: int = 1) -> Any:
    """VALID's output size, floor((L - span) / s) + 1, 0 where the (dilated) window is longer than the axis
    (a symbolic ``length``: the formula, assuming a window fits)."""
    span = (kernel - 1) * dilation + 1
    if isinstance(length, (int, np.integer)) and length < span:
        return 0
    return (length - span) // stride + 1


def padded_output(length: int, low: int, high: int, kernel: int, stride: int, dilation: int = 1,
                  ceil: bool = False) -> int:
    """The output size with explicit padding: floor (or ceil) of (L + low + high - span) / s, plus 1; in ceil
    mode a window that would start in the end padding is dropped (torch's and ONNX's rule)."""
    span = (kernel - 1) * dilation + 1
    total = length + low + high - span
    out = (-(-total // stride) if ceil else total // stride) + 1
    if ceil and (out - 1) * stride >= length + low:
        out -= 1
    return out


def spatial_axes(ndim: int, n: int, channels_first: bool) -> tuple[int, ...]:
    """The axes of the ``n`` spatial dimensions of a ``ndim``-d array whose last axis (``channels_first``: the
    one before the spatial axes) holds the channels: every layout the front-ends name (Keras' data_format,
    TensorFlow's NHWC/NCHW), batched or not.

    >>> spatial_axes(4, 2, False), spatial_axes(4, 2, True), spatial_axes(3, 2, False)
    ((1, 2), (2, 3), (0, 1))
    """
    first = ndim - n if channels_first else ndim - n - 1
    return tuple(range(first, first + n))


def half_pixel(out: int, scale: Any, dtype: Any = np.float32) -> np.ndarray:
    """The half-pixel centres ``(o + 0.5) * scale`` of outputs ``o < out`` in ``dtype``, evaluated in that dtype
    as TensorFlow's HalfPixelScaler and jax.image's samples are (callers subtract 0.5 and any translation in the
    same dtype).

    >>> half_pixel(2, np.float32(2.0)).tolist()
    [1.0, 3.0]
    """
    t = np.dtype(dtype).type
    return ((np.arange(out, dtype=t) + t(0.5)) * scale).astype(t, copy=False)
