"""The window geometry the front-ends share: TensorFlow's SAME rule (lax.padtype_to_pads, ONNX's SAME_UPPER and
SAME_LOWER, Keras' "same"), VALID, and explicit padding with floor or ceil output sizes, written once.

>>> same_pads(5, 3, 2)
(1, 1)
"""

from __future__ import annotations

from typing import Any


def same_output(length: Any, stride: int) -> Any:
    """SAME's output size, ceil(L / s) (``length`` may be symbolic)."""
    return -(-length // stride)


def same_pads(length: int, kernel: int, stride: int, dilation: int = 1, lower: bool = False) -> tuple[int, int]:
    """SAME's (low, high) padding: total max((O - 1) s + (k - 1) d + 1 - L, 0) with O = ceil(L / s), the odd
    cell at the end (``lower``: at the start, ONNX's SAME_LOWER and lax's SAME_LOWER)."""
    span = (kernel - 1) * dilation + 1
    total = max((same_output(length, stride) - 1) * stride + span - length, 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def valid_output(length: Any, kernel: int, stride: int, dilation: int = 1) -> Any:
    """VALID's output size, floor((L - span) / s) + 1, 0 where the (dilated) window is longer than the axis
    (a symbolic ``length``: the formula, assuming a window fits)."""
    span = (kernel - 1) * dilation + 1
    if isinstance(length, int) and length < span:
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
