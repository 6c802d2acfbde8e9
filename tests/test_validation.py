"""Argument validation of every pooling op (avg, adaptive avg, max, adaptive max, max_unpool, lp) and their
``*_backward`` functions.

Every invalid call must raise ValueError or TypeError whose message names the offending argument, before any
computation, without touching the inputs; where torch 2.13 has the same rule, torch must refuse the same call
(docs/TORCH_NUMERICS.md sections 1 and 3). Validation is backend-independent, so NumPy carries most of the tests.
"""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import poolspec

AVG = ("avg_pool1d", "avg_pool2d", "avg_pool3d")
ADAPTIVE = ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
MAX = ("max_pool1d", "max_pool2d", "max_pool3d")
ADAPTIVE_MAX = ("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d")
UNPOOL = ("max_unpool1d", "max_unpool2d", "max_unpool3d")
LP = ("lp_pool1d", "lp_pool2d", "lp_pool3d")


def _n(op: str) -> int:
    return int(op[-2])


def _fn(op: str):
    return getattr(poolspec, op)


def _names(message: str, argument: str) -> bool:
    """Whether ``message`` names ``argument`` as a whole word: "stride" does not match "strides", and "x" does
    not match "x.dtype" (a dtype error must name "x.dtype")."""
    pattern = rf"(?<![\w.]){re.escape(argument)}(?!\w)" + (r"(?!\.dtype)" if argument == "x" else "")
    return re.search(pattern, message) is not None


def _spatial(op: str, size: int = 5) -> tuple[int, ...]:
    return (size,) * _n(op)


@dataclass(frozen=True)
class Invalid:
    """One invalid call: ``op(x, **args)`` with x = zeros(shape, dtype) must raise ``error`` naming ``argument``
    (max_unpool: ``op(x, indices, **args)``, indices zeros of x's shape unless ``args["indices"]`` gives them).
    Where torch 2.13 has the rule (``torch_too``), torch must refuse the same call; where poolspec is stricter,
    torch must accept it (so the split is checked, not assumed)."""

    rule: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    error: type[Exception]
    argument: str
    dtype: str = "float64"
    torch_too: bool = True

    @property
    def id(self) -> str:
        return f"{self.op}-{self.rule}"


def _per_axis(op: str, value: Any, first: Any) -> Any:
    """``first`` on axis 0 and ``value`` elsewhere, as an int for 1d ops."""
    n = _n(op)
    return first if n == 1 else (first,) + (value,) * (n - 1)


def _avg_cases(op: str) -> list[Invalid]:
    n = _n(op)
    b = (2, 3)
    s5 = _spatial(op)
    wrong_len = 2 if n != 2 else 3
    cases = [
        Invalid("stride_0", op, b + s5, dict(kernel_size=2, stride=0), ValueError, "stride"),
        Invalid("stride_negative", op, b + s5, dict(kernel_size=2, stride=-1), ValueError, "stride"),
        Invalid("stride_0_on_one_axis", op, b + s5, dict(kernel_size=2, stride=_per_axis(op, 1, 0)),
                ValueError, "stride"),
        Invalid("padding_negative", op, b + s5, dict(kernel_size=2, padding=-1), ValueError, "padding"),
        Invalid("padding_over_half_k3_p2", op, b + s5, dict(kernel_size=3, padding=2), ValueError, "padding"),
        Invalid("padding_over_half_k4_p3", op, b + (7,) * n, dict(kernel_size=4, padding=3), ValueError, "padding"),
        Invalid("padding_over_half_k1_p1", op, b + s5, dict(kernel_size=1, padding=1), ValueError, "padding"),
        Invalid("padding_over_half_one_axis", op, b + s5, dict(kernel_size=3, padding=_per_axis(op, 0, 2)),
                ValueError, "padding"),
        Invalid("kernel_0", op, b + s5, dict(kernel_size=0), ValueError, "kernel_size"),
        Invalid("kernel_0_stride_1", op, b + s5, dict(kernel_size=0, stride=1), ValueError, "kernel_size"),
        Invalid("kernel_negative", op, b + s5, dict(kernel_size=-2, stride=1), ValueError, "kernel_size"),
        Invalid("kernel_0_on_one_axis", op, b + s5, dict(kernel_size=_per_axis(op, 2, 0), stride=1),
                ValueError, "kernel_size"),
        Invalid("output_size_0", op, b + (1,) * n, dict(kernel_size=4, padding=1), ValueError, "kernel_size"),
        Invalid("output_size_0_kernel_over_input", op, b + (3,) * n, dict(kernel_size=4), ValueError,
                "kernel_size"),
        Invalid("divisor_override_0", op, b + s5, dict(kernel_size=2, divisor_override=0), ValueError,
                "divisor_override"),
        Invalid("divisor_override_float", op, b + s5, dict(kernel_size=2, divisor_override=2.0), TypeError,
                "divisor_override"),
        Invalid("rank_too_few", op, (5,) * n, dict(kernel_size=2), ValueError, "x"),
        Invalid("rank_too_many", op, (1,) + b + s5, dict(kernel_size=2), ValueError, "x"),
        Invalid("rank_0", op, (), dict(kernel_size=2), ValueError, "x"),
        Invalid("channels_0", op, (2, 0) + s5, dict(kernel_size=2), ValueError, "x"),
        Invalid("unbatched_channels_0", op, (0,) + s5, dict(kernel_size=2), ValueError, "x"),
        Invalid("spatial_0_first", op, b + (0,) + s5[1:], dict(kernel_size=1), ValueError, "x"),
        Invalid("spatial_0_last", op, b + s5[1:] + (0,), dict(kernel_size=1), ValueError, "x"),
        Invalid("kernel_float", op, b + s5, dict(kernel_size=2.0), TypeError, "kernel_size"),
        Invalid("kernel_bool", op, b + s5, dict(kernel_size=True), TypeError, "kernel_size"),
        Invalid("kernel_str", op, b + s5, dict(kernel_size="2"), TypeError, "kernel_size"),
        Invalid("kernel_float_entry", op, b + s5, dict(kernel_size=(2.0,) * n), TypeError, "kernel_size"),
        Invalid("kernel_none", op, b + s5, dict(kernel_size=None), TypeError, "kernel_size"),
        Invalid("stride_float", op, b + s5, dict(kernel_size=2, stride=1.5), TypeError, "stride"),
        Invalid("padding_float", op, b + s5, dict(kernel_size=2, padding=0.5), TypeError, "padding"),
        Invalid(f"kernel_{wrong_len}_ints", op, b + s5, dict(kernel_size=(2,) * wrong_len), ValueError,
                "kernel_size"),
        Invalid("kernel_empty_tuple", op, b + s5, dict(kernel_size=()), ValueError, "kernel_size"),
        Invalid(f"stride_{wrong_len}_ints", op, b + s5, dict(kernel_size=2, stride=(1,) * wrong_len), ValueError,
                "stride"),
        Invalid(f"padding_{wrong_len}_ints", op, b + s5, dict(kernel_size=2, padding=(0,) * wrong_len),
                ValueError, "padding"),
        Invalid("ceil_mode_int", op, b + s5, dict(kernel_size=2, ceil_mode=1), TypeError, "ceil_mode"),
        Invalid("ceil_mode_none", op, b + s5, dict(kernel_size=2, ceil_mode=None), TypeError, "ceil_mode"),
        Invalid("ceil_mode_str", op, b + s5, dict(kernel_size=2, ceil_mode="yes"), TypeError, "ceil_mode"),
        Invalid("count_include_pad_int", op, b + s5, dict(kernel_size=2, count_include_pad=0), TypeError,
                "count_include_pad"),
        Invalid("count_include_pad_none", op, b + s5, dict(kernel_size=2, count_include_pad=None), TypeError,
                "count_include_pad"),
    ]
    for dtype in ("bool", "int8", "int32", "uint8", "complex64", "complex128"):
        cases.append(Invalid(f"dtype_{dtype}", op, b + s5, dict(kernel_size=2), TypeError, "x.dtype", dtype))
    if n == 3:
        # every input extent must be >= kernel_size even with padding (torch: "input image ... smaller than
        # kernel size"), also where ceil_mode would give a partial window
        cases += [
            Invalid("kernel_over_input_with_padding", op, b + (5, 5, 2), dict(kernel_size=3, padding=1),
                    ValueError, "kernel_size"),
            Invalid("kernel_over_input_ceil_mode", op, b + (2, 5, 5), dict(kernel_size=3, stride=2, ceil_mode=True),
                    ValueError, "kernel_size"),
            Invalid("kernel_over_input_unbatched", op, (3, 5, 1, 5), dict(kernel_size=(1, 3, 1), padding=(0, 1, 0)),
                    ValueError, "kernel_size"),
        ]
    return cases


def _adaptive_cases(op: str) -> list[Invalid]:
    n = _n(op)
    b = (2, 3)
    s5 = _spatial(op)
    cases = [
        Invalid("output_size_negative", op, b + s5, dict(output_size=-1), ValueError, "output_size"),
        Invalid("output_size_negative_entry", op, b + s5, dict(output_size=(2,) * (n - 1) + (-1,)), ValueError,
                "output_size"),
        Invalid("output_size_float", op, b + s5, dict(output_size=2.0), TypeError, "output_size"),
        Invalid("output_size_float_entry", op, b + s5, dict(output_size=(2.0,) + (2,) * (n - 1)), TypeError,
                "output_size"),
        Invalid("output_size_bool", op, b + s5, dict(output_size=True), TypeError, "output_size"),
        Invalid("output_size_str", op, b + s5, dict(output_size="2"), TypeError, "output_size"),
        Invalid(f"output_size_{n + 1}_entries", op, b + s5, dict(output_size=(2,) * (n + 1)), ValueError,
                "output_size"),
        Invalid("output_size_empty_tuple", op, b + s5, dict(output_size=()), ValueError, "output_size"),
        Invalid("rank_too_few", op, (5,) * n, dict(output_size=2), ValueError, "x"),
        Invalid("rank_too_many", op, (1,) + b + s5, dict(output_size=2), ValueError, "x"),
        Invalid("spatial_0_first", op, b + (0,) + s5[1:], dict(output_size=2), ValueError, "x"),
        Invalid("spatial_0_last", op, b + s5[1:] + (0,), dict(output_size=2), ValueError, "x"),
        Invalid("unbatched_spatial_0", op, (3,) + s5[1:] + (0,), dict(output_size=2), ValueError, "x"),
    ]
    if n > 1:
        # torch's adaptive pools need exactly n entries: no broadcasting of a 1-tuple
        cases.append(Invalid("output_size_1_entry", op, b + s5, dict(output_size=(2,)), ValueError, "output_size"))
    if n > 2:
        cases.append(Invalid("output_size_2_entries", op, b + s5, dict(output_size=(2, 2)), ValueError,
                             "output_size"))
    for dtype in ("int64", "int32", "int8", "uint8", "bool", "complex64"):
        cases.append(Invalid(f"dtype_{dtype}", op, b + s5, dict(output_size=2), TypeError, "x.dtype", dtype))
    return cases


def _window_cases(op: str) -> list[Invalid]:
    """The regular-window rules max_pool shares with avg_pool, and its own: dilation, return_indices, the
    padding limit of the undilated kernel, integer dtypes accepted."""
    n = _n(op)
    b = (2, 3)
    s5 = _spatial(op)
    wrong_len = 2 if n != 2 else 3
    keep = {"stride_0", "stride_negative", "stride_0_on_one_axis", "padding_negative", "padding_over_half_k3_p2",
            "padding_over_half_k1_p1", "padding_over_half_one_axis", "kernel_0", "kernel_negative",
            "kernel_0_on_one_axis", "output_size_0", "output_size_0_kernel_over_input", "rank_too_few",
            "rank_too_many", "rank_0", "channels_0", "unbatched_channels_0", "spatial_0_first", "spatial_0_last",
            "kernel_float", "kernel_bool", "kernel_str", "kernel_none", "stride_float", "padding_float",
            f"kernel_{wrong_len}_ints", "kernel_empty_tuple", "ceil_mode_int", "ceil_mode_none"}
    shared = [Invalid(c.rule, op, c.shape, c.args, c.error, c.argument, c.dtype)
              for c in _avg_cases(f"avg_pool{n}d") if c.rule in keep]
    return shared + [
        Invalid("dilation_0", op, b + s5, dict(kernel_size=2, dilation=0), ValueError, "dilation"),
        Invalid("dilation_negative", op, b + s5, dict(kernel_size=2, dilation=-1), ValueError, "dilation"),
        Invalid("dilation_0_on_one_axis", op, b + s5, dict(kernel_size=2, dilation=_per_axis(op, 1, 0)),
                ValueError, "dilation"),
        Invalid("dilation_float", op, b + s5, dict(kernel_size=2, dilation=1.5), TypeError, "dilation"),
        Invalid("dilation_bool", op, b + s5, dict(kernel_size=2, dilation=True), TypeError, "dilation"),
        Invalid(f"dilation_{wrong_len}_ints", op, b + s5, dict(kernel_size=2, dilation=(1,) * wrong_len),
                ValueError, "dilation"),
        # torch 2.13 also limits padding by the undilated kernel (p <= k // 2), whatever the dilation
        Invalid("padding_over_half_undilated_kernel", op, b + (9,) * n, dict(kernel_size=2, padding=2, dilation=3),
                ValueError, "padding"),
        Invalid("output_size_0_dilated", op, b + (4,) * n, dict(kernel_size=3, dilation=2), ValueError,
                "kernel_size"),
        Invalid("dtype_bool", op, b + s5, dict(kernel_size=2), TypeError, "x.dtype", "bool"),
        Invalid("dtype_complex64", op, b + s5, dict(kernel_size=2), TypeError, "x.dtype", "complex64"),
        Invalid("dtype_complex128", op, b + s5, dict(kernel_size=2), TypeError, "x.dtype", "complex128"),
        # stricter than torch, whose Python wrapper takes any truthy value
        Invalid("return_indices_int", op, b + s5, dict(kernel_size=2, return_indices=1), TypeError,
                "return_indices", torch_too=False),
        Invalid("return_indices_none", op, b + s5, dict(kernel_size=2, return_indices=None), TypeError,
                "return_indices", torch_too=False),
        # deviation max_pool_empty_window: torch returns -inf and an out-of-range index
        Invalid("empty_window", op, b + (1,) * n, dict(kernel_size=2, stride=3, padding=1, dilation=2), ValueError,
                "dilation", torch_too=False),
        Invalid("empty_window_taps_straddle", op, b + (2,) * n, dict(kernel_size=2, stride=2, padding=1, dilation=3),
                ValueError, "dilation", torch_too=False),
    ]


def _adaptive_max_cases(op: str) -> list[Invalid]:
    shape = (2, 3) + _spatial(op)
    cases = [Invalid(c.rule, op, c.shape, c.args, c.error, c.argument, c.dtype)
             for c in _adaptive_cases(op.replace("max", "avg"))]
    return cases + [
        Invalid("dtype_int16", op, shape, dict(output_size=2), TypeError, "x.dtype", "int16"),
        Invalid("return_indices_int", op, shape, dict(output_size=2, return_indices=1), TypeError,
                "return_indices", torch_too=False),
        Invalid("return_indices_str", op, shape, dict(output_size=2, return_indices="yes"), TypeError,
                "return_indices", torch_too=False),
    ]


def _unpool_cases(op: str) -> list[Invalid]:
    """max_unpool: torch's output_size window and index range; poolspec also checks kernel, stride and padding
    (which torch uses only for the default size: deviation max_unpool_argument_rules)."""
    n = _n(op)
    b = (2, 3)
    s3 = (3,) * n
    default = (6,) * n  # (3 - 1) * 2 - 0 + 2
    wrong_len = 2 if n != 2 else 3
    ints = np.zeros(b + s3, dtype=np.int64)
    return [
        Invalid("output_size_at_upper_limit", op, b + s3, dict(kernel_size=2, output_size=(8,) * n), ValueError,
                "output_size"),
        Invalid("output_size_at_lower_limit", op, b + s3, dict(kernel_size=2, output_size=(4,) * n), ValueError,
                "output_size"),
        Invalid("output_size_one_axis_off", op, b + s3, dict(kernel_size=2, output_size=default[:-1] + (20,)),
                ValueError, "output_size"),
        Invalid(f"output_size_{n + 1}_entries", op, b + s3, dict(kernel_size=2, output_size=(6,) * (n + 1)),
                ValueError, "output_size"),
        Invalid("output_size_int", op, b + s3, dict(kernel_size=2, output_size=6), TypeError, "output_size"),
        Invalid("output_size_float_entry", op, b + s3, dict(kernel_size=2, output_size=(6.0,) * n), TypeError,
                "output_size"),
        Invalid("kernel_float", op, b + s3, dict(kernel_size=2.0), TypeError, "kernel_size"),
        Invalid(f"kernel_{wrong_len}_ints", op, b + s3, dict(kernel_size=(2,) * wrong_len), ValueError,
                "kernel_size"),
        Invalid("stride_float", op, b + s3, dict(kernel_size=2, stride=1.5), TypeError, "stride"),
        Invalid("rank_too_few", op, s3, dict(kernel_size=2), ValueError, "x"),
        Invalid("rank_too_many", op, (1,) + b + s3, dict(kernel_size=2), ValueError, "x"),
        Invalid("dtype_bool", op, b + s3, dict(kernel_size=2), TypeError, "x.dtype", "bool"),
        Invalid("dtype_complex64", op, b + s3, dict(kernel_size=2), TypeError, "x.dtype", "complex64"),
        Invalid("indices_float", op, b + s3, dict(kernel_size=2, indices=ints.astype(np.float64)), TypeError,
                "indices.dtype"),
        Invalid("indices_bool", op, b + s3, dict(kernel_size=2, indices=ints.astype(bool)), TypeError,
                "indices.dtype"),
        Invalid("indices_shape", op, b + s3, dict(kernel_size=2, indices=ints[..., :-1]), ValueError,
                "indices.shape"),
        Invalid("indices_too_large", op, b + s3, dict(kernel_size=2, indices=ints + 6 ** n), ValueError, "indices"),
        Invalid("indices_negative", op, b + s3, dict(kernel_size=2, indices=ints - 1), ValueError, "indices"),
        Invalid("indices_list", op, b + s3, dict(kernel_size=2, indices=ints.tolist()), TypeError, "indices"),
        # deviation max_unpool_argument_rules: torch accepts these (max_unpool3d checks its stride) and uses them
    # only for the default size
        Invalid("kernel_0", op, b + s3, dict(kernel_size=0, stride=1), ValueError, "kernel_size", torch_too=False),
        Invalid("stride_0", op, b + s3, dict(kernel_size=2, stride=0), ValueError, "stride", torch_too=n == 3),
        Invalid("padding_negative", op, b + s3, dict(kernel_size=2, padding=-1), ValueError, "padding",
                torch_too=False),
    ]


def _lp_cases(op: str) -> list[Invalid]:
    n = _n(op)
    b = (2, 3)
    s5 = _spatial(op)
    wrong_len = 2 if n != 2 else 3
    cases = [
        Invalid("norm_type_0", op, b + s5, dict(norm_type=0, kernel_size=2), ValueError, "norm_type"),
        Invalid("norm_type_str", op, b + s5, dict(norm_type="2", kernel_size=2), TypeError, "norm_type"),
        Invalid("norm_type_none", op, b + s5, dict(norm_type=None, kernel_size=2), TypeError, "norm_type"),
        Invalid("kernel_0", op, b + s5, dict(norm_type=2, kernel_size=0, stride=1), ValueError, "kernel_size"),
        Invalid("kernel_float", op, b + s5, dict(norm_type=2, kernel_size=2.5), TypeError, "kernel_size"),
        Invalid(f"kernel_{wrong_len}_ints", op, b + s5, dict(norm_type=2, kernel_size=(2,) * wrong_len), ValueError,
                "kernel_size"),
        Invalid("stride_0", op, b + s5, dict(norm_type=2, kernel_size=2, stride=0), ValueError, "stride"),
        Invalid("output_size_0", op, b + s5, dict(norm_type=2, kernel_size=6), ValueError, "kernel_size"),
        Invalid("ceil_mode_int", op, b + s5, dict(norm_type=2, kernel_size=2, ceil_mode=1), TypeError, "ceil_mode"),
        Invalid("rank_too_many", op, (1,) + b + s5, dict(norm_type=2, kernel_size=2), ValueError, "x"),
        Invalid("dtype_complex64", op, b + s5, dict(norm_type=2.0, kernel_size=2), TypeError, "x.dtype",
                "complex64"),
        # stricter than torch: NaN gives NaN everywhere, True is taken as 1
        Invalid("norm_type_nan", op, b + s5, dict(norm_type=float("nan"), kernel_size=2), ValueError, "norm_type",
                torch_too=False),
        Invalid("norm_type_bool", op, b + s5, dict(norm_type=True, kernel_size=2), TypeError, "norm_type",
                torch_too=False),
        # deviation lp_pool_integer_input
        Invalid("dtype_int64", op, b + s5, dict(norm_type=2.0, kernel_size=2), TypeError, "x.dtype", "int64",
                torch_too=False),
    ]
    if n == 3:
        cases.append(Invalid("kernel_over_input", op, b + (5, 5, 2), dict(norm_type=2, kernel_size=3, stride=1),
                             ValueError, "kernel_size"))
    return cases


def _interp_cases() -> list[Invalid]:
    op, x4, x3, x5 = "interpolate", (2, 3, 5, 5), (2, 3, 5), (2, 3, 4, 4, 4)
    bl = dict(mode="bilinear")
    cases = [
        Invalid("size_and_scale_factor", op, x4, dict(size=3, scale_factor=2.0), ValueError, "size"),
        Invalid("neither_size_nor_scale_factor", op, x4, dict(), ValueError, "size"),
        Invalid("align_corners_with_nearest", op, x4, dict(size=3, align_corners=False), ValueError, "align_corners"),
        Invalid("align_corners_with_nearest_exact", op, x4, dict(size=3, mode="nearest-exact", align_corners=True),
                ValueError, "align_corners"),
        Invalid("align_corners_with_area", op, x4, dict(size=3, mode="area", align_corners=False), ValueError,
                "align_corners"),
        Invalid("align_corners_with_lanczos", op, x4, dict(size=3, mode="lanczos", antialias=True,
                                                           align_corners=True), ValueError, "align_corners"),
        Invalid("antialias_with_nearest", op, x4, dict(size=3, antialias=True), ValueError, "antialias"),
        Invalid("antialias_with_area", op, x4, dict(size=3, mode="area", antialias=True), ValueError, "antialias"),
        Invalid("antialias_with_linear", op, x3, dict(size=3, mode="linear", antialias=True), ValueError,
                "antialias"),
        Invalid("antialias_with_trilinear", op, x5, dict(size=3, mode="trilinear", antialias=True), ValueError,
                "antialias"),
        Invalid("bilinear_rank_3", op, x3, dict(size=3, **bl), ValueError, "x"),
        Invalid("bilinear_rank_5", op, x5, dict(size=3, **bl), ValueError, "x"),
        Invalid("linear_rank_4", op, x4, dict(size=3, mode="linear"), ValueError, "x"),
        Invalid("trilinear_rank_4", op, x4, dict(size=3, mode="trilinear"), ValueError, "x"),
        Invalid("bicubic_rank_5", op, x5, dict(size=3, mode="bicubic"), ValueError, "x"),
        Invalid("lanczos_rank_3", op, x3, dict(size=3, mode="lanczos", antialias=True), ValueError, "x"),
        Invalid("nearest_rank_2", op, (3, 5), dict(size=3), ValueError, "x"),
        Invalid("nearest_rank_6", op, (1, 2, 3, 3, 3, 3), dict(size=3), ValueError, "x"),
        Invalid("area_rank_2", op, (3, 5), dict(size=3, mode="area"), ValueError, "x"),
        Invalid("channels_0", op, (2, 0, 5, 5), dict(size=3, **bl), ValueError, "x"),
        Invalid("spatial_0", op, (2, 3, 0, 5), dict(size=3, **bl), ValueError, "x"),
        Invalid("mode_unknown", op, x4, dict(size=3, mode="cubic"), ValueError, "mode"),
        Invalid("mode_upper_case", op, x4, dict(size=3, mode="Bilinear"), ValueError, "mode"),
        Invalid("size_0", op, x4, dict(size=0, **bl), ValueError, "size"),
        Invalid("size_0_one_axis", op, x4, dict(size=(3, 0), **bl), ValueError, "size"),
        Invalid("size_negative", op, x4, dict(size=-2, **bl), ValueError, "size"),
        Invalid("size_float", op, x4, dict(size=3.0, **bl), TypeError, "size"),
        Invalid("size_float_entry", op, x4, dict(size=(3, 2.5), **bl), TypeError, "size"),
        Invalid("size_3_entries_for_2d", op, x4, dict(size=(3, 3, 3), **bl), ValueError, "size"),
        Invalid("size_1_entry_for_2d", op, x4, dict(size=(3,), **bl), ValueError, "size"),
        Invalid("scale_factor_0", op, x4, dict(scale_factor=0.0, **bl), ValueError, "scale_factor"),
        Invalid("scale_factor_negative", op, x4, dict(scale_factor=-2.0, **bl), ValueError, "scale_factor"),
        Invalid("scale_factor_nan", op, x4, dict(scale_factor=float("nan"), **bl), ValueError, "scale_factor"),
        Invalid("scale_factor_inf", op, x4, dict(scale_factor=float("inf"), **bl), ValueError, "scale_factor"),
        Invalid("scale_factor_too_small", op, x4, dict(scale_factor=0.1, **bl), ValueError, "scale_factor"),
        Invalid("scale_factor_3_entries_for_2d", op, x4, dict(scale_factor=(2.0, 2.0, 2.0), **bl), ValueError,
                "scale_factor"),
        Invalid("scale_factor_str", op, x4, dict(scale_factor="2", **bl), TypeError, "scale_factor"),
        Invalid("recompute_with_size", op, x4, dict(size=3, recompute_scale_factor=True, **bl), ValueError,
                "recompute_scale_factor"),
        Invalid("dtype_bool", op, x4, dict(size=3), TypeError, "x.dtype", "bool"),
        Invalid("dtype_complex64", op, x4, dict(size=3, **bl), TypeError, "x.dtype", "complex64"),
        Invalid("dtype_int64_nearest", op, x4, dict(size=3), TypeError, "x.dtype", "int64"),
        Invalid("dtype_int32_nearest_exact", op, x4, dict(size=3, mode="nearest-exact"), TypeError, "x.dtype",
                "int32"),
        Invalid("dtype_uint8_area", op, x4, dict(size=3, mode="area"), TypeError, "x.dtype", "uint8"),
        Invalid("align_corners_int", op, x4, dict(size=3, align_corners=1, **bl), TypeError, "align_corners"),
        Invalid("size_bool", op, x4, dict(size=True, **bl), TypeError, "size"),
        # stricter than torch, which takes any truthy value or a bool as a number

        Invalid("antialias_int", op, x4, dict(size=3, antialias=1, **bl), TypeError, "antialias", torch_too=False),
        Invalid("recompute_int", op, x4, dict(scale_factor=2.0, recompute_scale_factor=1, **bl), TypeError,
                "recompute_scale_factor", torch_too=False),
        Invalid("scale_factor_bool", op, x4, dict(scale_factor=True, **bl), TypeError, "scale_factor",
                torch_too=False),
        Invalid("dtype_uint8_lanczos", op, x4, dict(size=3, mode="lanczos"), TypeError, "x.dtype", "uint8"),
    ]
    return cases


CASES = ([c for op in AVG for c in _avg_cases(op)] + [c for op in ADAPTIVE for c in _adaptive_cases(op)]
         + [c for op in MAX for c in _window_cases(op)] + [c for op in ADAPTIVE_MAX for c in _adaptive_max_cases(op)]
         + [c for op in UNPOOL for c in _unpool_cases(op)] + [c for op in LP for c in _lp_cases(op)]
         + _interp_cases())


def _split(case: Invalid, x: Any, to_array: Any = np.asarray) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional operands and keyword arguments of ``case`` (max_unpool takes indices second)."""
    args = dict(case.args)
    if case.op not in UNPOOL:
        return (x,), args
    indices = args.pop("indices", np.zeros(case.shape, dtype=np.int64))
    return (x, indices if isinstance(indices, list) else to_array(indices)), args


def _call(case: Invalid):
    operands, args = _split(case, np.zeros(case.shape, dtype=case.dtype))
    return _fn(case.op)(*operands, **args)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_invalid_call_raises_naming_the_argument(case: Invalid):
    with pytest.raises(case.error) as info:
        _call(case)
    assert type(info.value) is case.error, f"{type(info.value).__name__} instead of {case.error.__name__}"
    message = str(info.value)
    assert _names(message, case.argument), f"message does not name {case.argument!r}: {message}"
    assert case.op in message, f"message does not name the op: {message}"


def _torch():
    return pytest.importorskip("torch")


def _oracle():
    _torch()
    import oracle

    return oracle


def _torch_fn(op: str, args: dict[str, Any]):
    """torch's ``op(·, **args)`` through the oracle's mapping (avg_pool1d's divisor_override goes through
    torch's avg_pool2d over a unit axis)."""
    oracle = _oracle()
    if op == "avg_pool1d" and args.get("divisor_override") is not None:
        args = {"stride": None, "padding": 0, **args}  # that mapping reads all three
    return oracle.torch_fn(op, args)


def _torch_refuses(op: str, x: Any, args: dict[str, Any], *more: Any) -> BaseException | None:
    """The exception torch raises for ``op(x, *more, **args)``, None if it accepts the call."""
    try:
        if more:
            getattr(_torch().nn.functional, op)(x, *more, **args)
        else:
            _torch_fn(op, args)(x)
    except Exception as e:  # torch raises RuntimeError, TypeError, ValueError, IndexError, NotImplementedError
        return e
    return None


def _torch_zeros(shape: tuple[int, ...], dtype: str):
    torch = _torch()
    return torch.from_numpy(np.zeros(shape, dtype=dtype))


def _torch_case(case: Invalid) -> BaseException | None:
    torch = _torch()
    operands, args = _split(case, _torch_zeros(case.shape, case.dtype),
                            lambda a: torch.from_numpy(np.array(a)))
    return _torch_refuses(case.op, operands[0], args, *operands[1:])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_torch_refuses_the_same_call(case: Invalid):
    refused = _torch_case(case)
    if not case.torch_too:
        assert refused is None, f"torch 2.13 refuses {case.id} ({refused!r}): the rule is torch's too"
        return
    assert refused is not None, f"torch 2.13 accepts {case.id}"
    if case.error is TypeError and case.argument not in ("x", "x.dtype", "indices.dtype", "indices"):
        # a Python-level type error of an option is a TypeError in torch too
        assert isinstance(refused, TypeError), repr(refused)


# --- the valid neighbours of the rules: what must be accepted (torch accepts them too) ---------------------------

VALID = [
    ("avg_pool1d", (2, 3, 5), dict(kernel_size=3, padding=1)),  # padding exactly k // 2
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=4, padding=2)),
    ("avg_pool3d", (2, 3, 5, 5, 5), dict(kernel_size=(3, 1, 2), padding=(1, 0, 1))),
    ("avg_pool2d", (0, 3, 5, 5), dict(kernel_size=2)),  # N = 0
    ("avg_pool3d", (0, 3, 4, 4, 4), dict(kernel_size=2)),
    ("avg_pool1d", (3, 5), dict(kernel_size=2)),  # unbatched
    ("avg_pool2d", (2, 3, 2, 5), dict(kernel_size=3, padding=1)),  # kernel over input, padding makes up (2d)
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=(2,))),  # a 1-tuple broadcasts for avg_pool
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=2, stride=())),  # () means kernel_size
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=[2, 3], stride=[1, 2])),  # lists
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=np.int64(2))),  # NumPy integers are ints
    ("avg_pool2d", (2, 3, 5, 5), dict(kernel_size=2, divisor_override=-3)),  # negative divisor accepted
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, divisor_override=-1)),
    ("avg_pool1d", (2, 3, 5), dict(kernel_size=2, divisor_override=-2)),
    ("adaptive_avg_pool1d", (2, 0, 5), dict(output_size=2)),  # C = 0 is allowed for adaptive
    ("adaptive_avg_pool2d", (2, 0, 5, 5), dict(output_size=2)),
    ("adaptive_avg_pool2d", (0, 5, 5), dict(output_size=2)),  # unbatched C = 0
    ("adaptive_avg_pool3d", (0, 5, 5, 5), dict(output_size=2)),
    ("adaptive_avg_pool2d", (0, 3, 5, 5), dict(output_size=2)),  # N = 0
    ("adaptive_avg_pool2d", (2, 3, 5, 5), dict(output_size=0)),  # O = 0: empty output
    ("adaptive_avg_pool3d", (2, 3, 5, 5, 5), dict(output_size=(0, 2, 7))),
    ("adaptive_avg_pool2d", (2, 3, 5, 5), dict(output_size=(None, 3))),  # None keeps L
    ("adaptive_avg_pool1d", (2, 3, 5), dict(output_size=(9,))),  # O > L
]


@pytest.mark.parametrize("op,shape,args", VALID, ids=[f"{op}{list(s)}({a})" for op, s, a in VALID])
def test_valid_neighbours_are_accepted_as_torch(op, shape, args):
    oracle = _oracle()
    torch = oracle.torch
    x = np.random.default_rng(0).standard_normal(shape)
    out = _fn(op)(x, **args)
    want = _torch_fn(op, args)(torch.from_numpy(x.copy())).numpy()
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)


def test_recorded_extensions_are_accepted_where_torch_refuses():
    """Deviations adaptive_pool3d_empty_channels and avg_pool3d_half: poolspec accepts, torch refuses."""
    ids = {d["id"] for d in poolspec.spec.deviations()}
    assert {"adaptive_pool3d_empty_channels", "avg_pool3d_half"} <= ids
    assert poolspec.adaptive_avg_pool3d(np.zeros((2, 0, 4, 4, 4)), 2).shape == (2, 0, 2, 2, 2)
    assert _torch_refuses("adaptive_avg_pool3d", _torch_zeros((2, 0, 4, 4, 4), "float64"), dict(output_size=2))
    x = np.ones((1, 1, 4, 4, 4), dtype=np.float16)
    out = poolspec.avg_pool3d(x, 2)
    assert out.dtype == np.float16 and out.shape == (1, 1, 2, 2, 2)
    assert _torch_refuses("avg_pool3d", _torch_zeros(x.shape, "float16"), dict(kernel_size=2))


def test_negative_divisor_override_divides_by_it():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    out = poolspec.avg_pool2d(x, 2, divisor_override=-2)
    torch = _torch()
    want = torch.nn.functional.avg_pool2d(torch.from_numpy(x), 2, divisor_override=-2).numpy()
    np.testing.assert_array_equal(out, want)


# --- non-arrays and unknown or missing arguments -------------------------------------------------------------

@pytest.mark.parametrize("op", AVG + ADAPTIVE)
@pytest.mark.parametrize("value", [[[[0.0] * 4] * 4] * 2, "x", None], ids=["list", "str", "None"])
def test_non_array_input_is_a_type_error_naming_x(op, value):
    arg = dict(kernel_size=2) if op in AVG else dict(output_size=2)
    with pytest.raises(TypeError) as info:
        _fn(op)(value, **arg)
    assert _names(str(info.value), "x"), str(info.value)


@pytest.mark.parametrize("op", ("avg_pool2d", "adaptive_avg_pool1d"))
def test_torch_refuses_a_list_too(op):
    _torch()
    arg = dict(kernel_size=2) if op in AVG else dict(output_size=2)
    assert _torch_refuses(op, [[[0.0] * 4] * 4] * 2, arg) is not None


UNKNOWN = [("avg_pool2d", dict(kernel_size=2), "dilations"), ("avg_pool1d", dict(kernel_size=2), "kernel"),
           ("avg_pool3d", dict(kernel_size=2), "return_indices"),
           ("adaptive_avg_pool2d", dict(output_size=2), "kernel_size"),
           ("adaptive_avg_pool1d", dict(output_size=2), "return_indices"),
           ("adaptive_avg_pool3d", dict(output_size=2), "size")]


@pytest.mark.parametrize("op,args,unknown", UNKNOWN, ids=[f"{op}-{u}" for op, _, u in UNKNOWN])
def test_unknown_keyword_is_a_type_error(op, args, unknown):
    shape = (2, 3) + (4,) * _n(op)
    with pytest.raises(TypeError) as info:
        _fn(op)(np.zeros(shape), **args, **{unknown: 1})
    assert unknown in str(info.value)
    refused = _torch_refuses(op, _torch_zeros(shape, "float64"), dict(args, **{unknown: 1}))
    assert isinstance(refused, TypeError), repr(refused)


@pytest.mark.parametrize("op", AVG + ADAPTIVE)
def test_missing_required_argument_is_a_type_error(op):
    with pytest.raises(TypeError) as info:
        _fn(op)(np.zeros((2, 3) + (4,) * _n(op)))
    assert ("kernel_size" if op in AVG else "output_size") in str(info.value)


# --- backward functions ----------------------------------------------------------------------------------------

BACKWARD = [
    ("avg_pool1d", (2, 3, 6), dict(kernel_size=2), (2, 3, 3)),
    ("avg_pool2d", (2, 3, 6, 6), dict(kernel_size=3, stride=2, padding=1), (2, 3, 3, 3)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, ceil_mode=True), (2, 3, 2, 2, 2)),
    ("adaptive_avg_pool1d", (2, 3, 7), dict(output_size=3), (2, 3, 3)),
    ("adaptive_avg_pool2d", (2, 3, 5, 5), dict(output_size=(2, 4)), (2, 3, 2, 4)),
    ("adaptive_avg_pool3d", (3, 4, 5, 6), dict(output_size=2), (3, 2, 2, 2)),
    ("max_pool1d", (2, 3, 7), dict(kernel_size=3, stride=2, padding=1, dilation=2), (2, 3, 3)),
    ("max_pool2d", (2, 3, 6, 6), dict(kernel_size=3, stride=2, padding=1), (2, 3, 3, 3)),
    ("max_pool3d", (3, 4, 4, 4), dict(kernel_size=2, ceil_mode=True), (3, 2, 2, 2)),
    ("adaptive_max_pool1d", (2, 3, 7), dict(output_size=3), (2, 3, 3)),
    ("adaptive_max_pool2d", (2, 3, 5, 5), dict(output_size=(2, 4)), (2, 3, 2, 4)),
    ("adaptive_max_pool3d", (3, 4, 5, 6), dict(output_size=2), (3, 2, 2, 2)),
    ("lp_pool1d", (2, 3, 7), dict(norm_type=2.0, kernel_size=3, stride=2, ceil_mode=True), (2, 3, 3)),
    ("lp_pool2d", (2, 3, 6, 6), dict(norm_type=1.5, kernel_size=2), (2, 3, 3, 3)),
    ("lp_pool3d", (3, 4, 4, 4), dict(norm_type=float("inf"), kernel_size=2), (3, 2, 2, 2)),
]
BACKWARD_IDS = [b[0] for b in BACKWARD]


def _bw(op: str):
    return getattr(poolspec, f"{op}_backward")


def _wrong_shapes(out: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [out[:-1] + (out[-1] + 1,), out[1:], (1,) + out, tuple(reversed(out)) if out != out[::-1] else out + (1,)]


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_reference_shape_is_torch(op, shape, args, out):
    """The cotangent shapes used below are torch's output shapes, and a valid backward call works."""
    oracle = _oracle()
    torch = oracle.torch
    x = torch.zeros(shape, dtype=torch.float64)
    assert tuple(_torch_fn(op, args)(x).shape) == out
    g = np.ones(out)
    got = _bw(op)(g, np.zeros(shape), **args)
    assert got.shape == shape


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_grad_output_wrong_shape(op, shape, args, out):
    wrongs = _wrong_shapes(out)
    for wrong in wrongs:
        assert wrong != out
        with pytest.raises(ValueError) as info:
            _bw(op)(np.ones(wrong), np.zeros(shape), **args)
        assert _names(str(info.value), "grad_output"), str(info.value)
    # torch refuses them too: "Mismatch in shape: grad_output[0] has a shape of ..."
    oracle = _oracle()
    torch = oracle.torch
    for wrong in wrongs:
        xt = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        y = _torch_fn(op, args)(xt)
        with pytest.raises(RuntimeError):
            torch.autograd.grad(y, xt, torch.ones(wrong, dtype=torch.float64))


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
@pytest.mark.parametrize("g_dtype", ["float32", "float16", "int64"])
def test_backward_grad_output_wrong_dtype(op, shape, args, out, g_dtype):
    # stricter than torch, whose autograd casts a float32 cotangent of a float64 output
    with pytest.raises(TypeError) as info:
        _bw(op)(np.ones(out, dtype=g_dtype), np.zeros(shape), **args)
    assert _names(str(info.value), "grad_output"), str(info.value)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
@pytest.mark.parametrize("x_dtype", ["int64", "int32"])
def test_backward_integer_x(op, shape, args, out, x_dtype):
    for g_dtype in ("float64", x_dtype):
        with pytest.raises(TypeError) as info:
            _bw(op)(np.ones(out, dtype=g_dtype), np.zeros(shape, dtype=x_dtype), **args)
        assert _names(str(info.value), "x.dtype"), str(info.value)
    torch = _torch()
    with pytest.raises(RuntimeError):  # "only Tensors of floating point dtype can require gradients"
        torch.zeros(shape, dtype=getattr(torch, x_dtype)).requires_grad_(True)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_mixed_namespaces(op, shape, args, out):
    torch = _torch()
    with pytest.raises(TypeError) as info:  # NumPy cotangent, torch input
        _bw(op)(np.ones(out), torch.zeros(shape, dtype=torch.float64), **args)
    assert _names(str(info.value), "grad_output"), str(info.value)
    with pytest.raises(TypeError) as info:  # torch cotangent, NumPy input
        _bw(op)(torch.ones(out, dtype=torch.float64), np.zeros(shape), **args)
    assert _names(str(info.value), "grad_output"), str(info.value)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_non_array_grad_output_or_x(op, shape, args, out):
    with pytest.raises(TypeError) as info:
        _bw(op)(np.ones(out).tolist(), np.zeros(shape), **args)
    assert _names(str(info.value), "grad_output"), str(info.value)
    with pytest.raises(TypeError) as info:
        _bw(op)(np.ones(out), np.zeros(shape).tolist(), **args)
    assert _names(str(info.value), "x"), str(info.value)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_checks_the_forward_arguments(op, shape, args, out):
    bad, name = (dict(output_size=-1), "output_size") if "output_size" in args else (dict(args, stride=0), "stride")
    with pytest.raises(ValueError) as info:
        _bw(op)(np.ones(out), np.zeros(shape), **bad)
    assert _names(str(info.value), name), str(info.value)
    with pytest.raises(TypeError) as info:
        _bw(op)(np.ones(out), np.zeros(shape), **args, bogus=True)
    assert "bogus" in str(info.value)
    with pytest.raises(ValueError) as info:  # the input's rank is checked as in the forward
        _bw(op)(np.ones(out), np.zeros(shape[-_n(op):]), **args)
    assert _names(str(info.value), "x"), str(info.value)


# --- no computation before validation, inputs untouched, read-only inputs accepted --------------------------------

class _Computed(Exception):
    pass


# every plan builder and every kernel entry point of each op module
_COMPUTE = {
    "poolspec.families.avg_pool.ops": ("linear", "_avg_plan"),
    "poolspec.families.adaptive_avg_pool.ops": ("linear", "adaptive_avg_plan"),
    "poolspec.families.max_pool.ops": ("max_pool", "_windows"),
    "poolspec.families.adaptive_max_pool.ops": ("max_pool", "_adaptive_windows"),
    "poolspec.families._routed": ("max_backward",),
    "poolspec.families.max_unpool.ops": ("max_backward", "max_select", "_unpool"),
    "poolspec.families.lp_pool.ops": ("compose", "max_pool", "max_backward", "_sum_plan", "_max_windows"),
    "poolspec.families.interpolate.ops": ("linear", "_plan", "adaptive_avg_plan"),
}


@pytest.fixture
def no_compute(monkeypatch):
    """Make every plan build and every kernel call of every pooling op raise _Computed."""

    def boom(*args, **kwargs):
        raise _Computed

    for module_name, names in _COMPUTE.items():
        module = importlib.import_module(module_name)
        for name in names:
            assert hasattr(module, name), name
            monkeypatch.setattr(module, name, boom)


def test_no_compute_fixture_is_effective(no_compute):
    """The guard below could not fail if the patched names were not on the compute path."""
    x = np.zeros((1, 4, 4))
    for call in (lambda: poolspec.avg_pool2d(x, 2), lambda: poolspec.adaptive_avg_pool2d(x, 2),
                 lambda: poolspec.avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 4)), 2),
                 lambda: poolspec.max_pool2d(x, 2), lambda: poolspec.adaptive_max_pool2d(x, 3),
                 lambda: poolspec.max_pool2d_backward(np.ones((1, 2, 2)), x, 2),
                 lambda: poolspec.max_unpool2d(x, np.zeros((1, 4, 4), dtype=np.int64), 2),
                 lambda: poolspec.max_unpool2d_backward(np.ones((1, 8, 8)), x, np.zeros((1, 4, 4), dtype=np.int64), 2),
                 lambda: poolspec.lp_pool2d(x, 2, 2), lambda: poolspec.lp_pool2d(x, float("inf"), 2),
                 lambda: poolspec.lp_pool2d_backward(np.ones((1, 2, 2)), x, 2, 2),
                 lambda: poolspec.interpolate(x[None], size=3, mode="bicubic"),
                 lambda: poolspec.interpolate_backward(np.ones((1, 1, 3, 3)), x[None], size=3)):
        with pytest.raises(_Computed):
            call()


EARLY = [c for c in CASES if c.rule in ("stride_0", "padding_over_half_k3_p2", "kernel_0", "output_size_0",
                                        "divisor_override_0", "rank_too_many", "channels_0", "kernel_float",
                                        "ceil_mode_int", "dtype_int32", "output_size_negative",
                                        "output_size_float", "spatial_0_last", "kernel_over_input_with_padding",
                                        "dilation_0", "empty_window", "padding_over_half_undilated_kernel",
                                        "return_indices_int", "dtype_int16", "output_size_at_upper_limit",
                                        "indices_float", "indices_shape", "indices_too_large", "norm_type_0",
                                        "norm_type_nan", "dtype_int64", "kernel_over_input",
                                        "size_and_scale_factor", "align_corners_with_nearest",
                                        "antialias_with_linear", "bilinear_rank_3", "size_0", "scale_factor_nan",
                                        "recompute_with_size", "dtype_uint8_bilinear", "mode_unknown")]


@pytest.mark.parametrize("case", EARLY, ids=[c.id for c in EARLY])
def test_errors_are_raised_before_any_computation(no_compute, case):
    with pytest.raises(case.error):
        _call(case)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_backward_errors_are_raised_before_any_computation(no_compute, op, shape, args, out):
    with pytest.raises(ValueError):
        _bw(op)(np.ones(out[:-1] + (out[-1] + 1,)), np.zeros(shape), **args)
    with pytest.raises(TypeError):
        _bw(op)(np.ones(out, dtype=np.float32), np.zeros(shape), **args)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_read_only_inputs_are_accepted_and_unchanged(op, shape, args, out):
    oracle = _oracle()
    rng = np.random.default_rng(len(shape))
    x, g = _read_only(rng.standard_normal(shape)), _read_only(rng.standard_normal(out))
    x0, g0 = x.copy(), g.copy()
    y = _fn(op)(x, **args)
    dx = _bw(op)(g, x, **args)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(g, g0)
    assert not x.flags.writeable and not g.flags.writeable
    ref = oracle.reference(op, x0, "float64", args, g0)
    np.testing.assert_allclose(y, ref["output"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dx, ref["grad_input"], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD, ids=BACKWARD_IDS)
def test_inputs_are_not_modified(op, shape, args, out):
    torch = _torch()
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal(shape), rng.standard_normal(out)
    x0, g0 = x.copy(), g.copy()
    _fn(op)(x, **args)
    _bw(op)(g, x, **args)
    with pytest.raises(ValueError):
        _bw(op)(g[..., :-1], x, **args)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(g, g0)
    xt, gt = torch.from_numpy(x.copy()), torch.from_numpy(g.copy())
    _fn(op)(xt, **args)
    _bw(op)(gt, xt, **args)
    np.testing.assert_array_equal(xt.numpy(), x0)
    np.testing.assert_array_equal(gt.numpy(), g0)


# --- the same errors on every backend -------------------------------------------------------------------------

BACKEND_CASES = [
    ("avg_pool2d", (2, 3, 5, 5), "float64", dict(kernel_size=2, stride=0), ValueError, "stride"),
    ("avg_pool3d", (2, 3, 5, 5, 2), "float64", dict(kernel_size=3, padding=1), ValueError, "kernel_size"),
    ("avg_pool1d", (2, 0, 5), "float64", dict(kernel_size=2), ValueError, "x"),
    ("avg_pool2d", (2, 3, 5, 5), "int32", dict(kernel_size=2), TypeError, "x.dtype"),
    ("avg_pool2d", (2, 3, 5, 5), "float64", dict(kernel_size=2, ceil_mode=1), TypeError, "ceil_mode"),
    ("adaptive_avg_pool2d", (2, 3, 5, 5), "float64", dict(output_size=(2,)), ValueError, "output_size"),
    ("adaptive_avg_pool3d", (2, 3, 5, 5, 5), "int64", dict(output_size=2), TypeError, "x.dtype"),
]


def _message(fn, *args, **kwargs) -> tuple[type[Exception], str]:
    try:
        fn(*args, **kwargs)
    except (ValueError, TypeError) as e:
        return type(e), str(e)
    raise AssertionError("no error raised")


@pytest.mark.parametrize("op,shape,dtype,args,error,argument", BACKEND_CASES,
                         ids=[f"{c[0]}-{c[5]}-{c[1]}" for c in BACKEND_CASES])
def test_same_errors_on_every_backend(backend, op, shape, dtype, args, error, argument):
    x = backend.asarray(np.zeros(shape), dtype)
    kind, message = _message(_fn(op), x, **args)
    assert kind is error, message
    assert _names(message, argument), message
    assert (kind, message) == _message(_fn(op), np.zeros(shape, dtype=dtype), **args)


@pytest.mark.parametrize("op,shape,args,out", BACKWARD[1:5:3], ids=BACKWARD_IDS[1:5:3])
def test_same_backward_errors_on_every_backend(backend, op, shape, args, out):
    x, g = backend.asarray(np.zeros(shape)), backend.asarray(np.ones(out[:-1] + (out[-1] + 1,)))
    kind, message = _message(_bw(op), g, x, **args)
    assert kind is ValueError and _names(message, "grad_output"), message
    assert (kind, message) == _message(_bw(op), np.ones(out[:-1] + (out[-1] + 1,)), np.zeros(shape), **args)
    kind, message = _message(_bw(op), backend.asarray(np.ones(out), "float32"), x, **args)
    assert kind is TypeError and _names(message, "grad_output"), message
    if backend.name != "numpy":
        kind, message = _message(_bw(op), np.ones(out), x, **args)
        assert kind is TypeError and _names(message, "grad_output"), message


# --- the max family's extra operands: indices= of the max backward, max_unpool's indices -------------------------

MAX_BACKWARD = [b for b in BACKWARD if "max" in b[0]]


@pytest.mark.parametrize("op,shape,args,out", MAX_BACKWARD, ids=[b[0] for b in MAX_BACKWARD])
def test_max_backward_indices_are_checked(op, shape, args, out):
    x, g = np.random.default_rng(0).standard_normal(shape), np.ones(out)
    _, idx = _fn(op)(x, **args, return_indices=True)
    np.testing.assert_array_equal(_bw(op)(g, x, **args, indices=idx), _bw(op)(g, x, **args))
    for bad, error, name in ((idx.astype(np.float64), TypeError, "indices.dtype"),
                             (idx[..., :-1], ValueError, "indices.shape"),
                             (idx.tolist(), TypeError, "indices")):
        with pytest.raises(error) as info:
            _bw(op)(g, x, **args, indices=bad)
        assert _names(str(info.value), name) and op in str(info.value), str(info.value)
    torch = _torch()
    with pytest.raises(TypeError) as info:
        _bw(op)(g, x, **args, indices=torch.from_numpy(idx))
    assert _names(str(info.value), "indices"), str(info.value)


UNPOOL_BACKWARD = [("max_unpool1d", (2, 3, 4), dict(kernel_size=2), (2, 3, 8)),
                   ("max_unpool2d", (2, 3, 3, 3), dict(kernel_size=3, stride=2, padding=1), (2, 3, 5, 5)),
                   ("max_unpool3d", (3, 2, 2, 2), dict(kernel_size=2, output_size=(5, 4, 4)), (3, 5, 4, 4))]


@pytest.mark.parametrize("op,shape,args,out", UNPOOL_BACKWARD, ids=[b[0] for b in UNPOOL_BACKWARD])
def test_unpool_backward_checks_cotangent_and_indices(op, shape, args, out):
    torch = _torch()
    x, idx = np.ones(shape), np.zeros(shape, dtype=np.int64)
    want = getattr(torch.nn.functional, op)(torch.from_numpy(x), torch.from_numpy(idx), **args).shape
    assert tuple(want) == out  # the cotangent shape is torch's output shape
    assert _bw(op)(np.ones(out), x, idx, **args).shape == shape
    calls = [
        ((np.ones(out[:-1] + (out[-1] + 1,)), x, idx), ValueError, "grad_output"),
        ((np.ones(out, dtype=np.float32), x, idx), TypeError, "grad_output"),
        ((np.ones(out), x.astype(np.int64), idx), TypeError, "x.dtype"),
        ((np.ones(out), x, idx.astype(np.float32)), TypeError, "indices.dtype"),
        ((np.ones(out), x, idx[..., :-1]), ValueError, "indices.shape"),
        ((np.ones(out), x, idx + math.prod(out[-_n(op):])), ValueError, "indices"),
        ((torch.ones(out, dtype=torch.float64), x, idx), TypeError, "grad_output"),
    ]
    for operands, error, name in calls:
        with pytest.raises(error) as info:
            _bw(op)(*operands, **args)
        assert _names(str(info.value), name) and op in str(info.value), str(info.value)


INTERP_BACKWARD = [((2, 3, 5, 5), dict(size=(3, 7), mode="bilinear"), (2, 3, 3, 7)),
                   ((2, 3, 6), dict(scale_factor=1.5, mode="nearest"), (2, 3, 9)),
                   ((1, 2, 4, 4, 4), dict(size=2, mode="area"), (1, 2, 2, 2, 2))]


@pytest.mark.parametrize("shape,args,out", INTERP_BACKWARD, ids=[a["mode"] for _, a, _ in INTERP_BACKWARD])
def test_interpolate_backward_checks(shape, args, out):
    torch = _torch()
    assert tuple(torch.nn.functional.interpolate(torch.zeros(shape, dtype=torch.float64), **args).shape) == out
    bw = poolspec.interpolate_backward
    x = np.zeros(shape)
    assert bw(np.ones(out), x, **args).shape == shape
    calls = [((np.ones(out[:-1] + (out[-1] + 1,)), x), args, ValueError, "grad_output"),
             ((np.ones(out, dtype=np.float32), x), args, TypeError, "grad_output"),
             ((np.ones(out), x.astype(np.uint8)), args, TypeError, "x.dtype"),
             ((torch.ones(out, dtype=torch.float64), x), args, TypeError, "grad_output"),
             ((np.ones(out), x.tolist()), args, TypeError, "x"),
             ((np.ones(out), x), dict(args, size=None, scale_factor=None), ValueError, "size"),
             ((np.ones(out), x), dict(args, mode="bogus"), ValueError, "mode")]
    for operands, kw, error, name in calls:
        with pytest.raises(error) as info:
            bw(*operands, **kw)
        assert _names(str(info.value), name) and "interpolate" in str(info.value), str(info.value)
