"""onnx's reference evaluator (onnx.reference.ReferenceEvaluator, NumPy) on the same one-node ONNX models as the
onnxruntime peer (see _onnx.py)."""

from __future__ import annotations

from typing import Any

from . import _onnx

NAME = "onnx_reference"
BACKEND = "numpy"
IMPORTS = ("onnx",)
API = _onnx.API + " in onnx.reference.ReferenceEvaluator (after onnx.checker's full check)"


def version() -> str:
    import onnx

    return f"onnx {onnx.__version__} reference evaluator (opset {_onnx.OPSET})"


def _prepare(model: Any) -> _onnx.Runner:
    import onnx
    from onnx.reference import ReferenceEvaluator

    # the evaluator checks nothing itself: the checker (with shape and type inference) is where ONNX refuses a
    # model, as a runtime does when it loads one
    onnx.checker.check_model(model, full_check=True)
    evaluator = ReferenceEvaluator(model)
    return lambda feeds: evaluator.run(None, feeds)


globals().update(_onnx.functions(_onnx.Peer("onnx's reference evaluator", _prepare)))

_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_LP = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]
_POOLS = _MAX + _LP + ["avg_pool1d", "avg_pool2d", "avg_pool3d"]
_UNPOOL = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
_F64 = ["float64"]
_STRIDE_1 = ("MaxPool with every stride and dilation 1 takes the evaluator's generic pool path, which pads only 2-D "
             "input, miscounts the padding in the output size, skips NaN and decodes the argmax with the output's "
             "shape: wrong shapes, wrong indices or an exception")
_NAN = ("MaxPool starts from the window's first in-input cell and takes only strictly greater values, so a NaN wins "
        "only as that first cell (torch: any NaN wins, with the last NaN's index); NaN is data, no flag marks it: "
        "two max-pool inputs in three hold NaN")
_ABS = ("LpPool pools |x|^p (the p-norm), torch x^p: with odd p negative inputs differ (p = 1 sums signed values, "
        "p = 3 gives NaN for a negative sum, p = -1 sums signed reciprocals)")
_SAME_SIZE = ("an axis that a scale != 1 leaves at its length (O == L) is still resampled at x / scale, where torch's "
              "linear modes, antialiased filters and uint8 bicubic copy it")
_UINT8 = ("Resize computes uint8 in float64, every axis before one rounding (half to even, saturated to 0..255), where "
          "torch resamples one axis at a time with int16 fixed-point weights and rounds and clamps after each pass: 1 "
          "apart in a few pixels, up to 11 where a cubic overshoot is clamped between torch's passes")
_NEAREST = ("nearest indices divide by the float32 scale in float64 (3 / 0.6f = 4.9999998 -> 4) where torch "
            "multiplies by the float32 reciprocal (3 * (1 / 0.6)f rounds to 5), so at integral source coordinates the "
            "index is one lower")
_CUBIC = ("cubic weights come out in float32: the cubic_coeff_a attribute arrives as a NumPy float32 scalar, which "
          "keeps Python-float arithmetic in float32 under NumPy 2, so float64 results are off by ~1e-6")
_SCALES = ("Resize's scales input is float32, so the float64 result carries float32 rounding of 1 / scale (~1e-7 "
           "relative; torch divides by the double scale_factor)")
_GRID = ("GridSample denormalises grid coordinates into a float32 buffer (float64 results off by ~1e-7) and, with "
         "border padding, clamps an out-of-range coordinate before taking its 4 cubic taps (torch clamps each tap)")
FINDINGS: list[dict[str, Any]] = [
    {"ops": _MAX, "flags": ["max_pool_empty_window"], "checks": ["raises"],
     "rule": "MaxPool computes a window that dilation leaves without an input cell as NaN with index -1 (torch: -inf "
             "and an out-of-range index; poolspec refuses the call)", "upstream": "new"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"],
     "rule": "MaxPool checks no padding limit: padding of a whole kernel is computed (torch: at most half the kernel; "
             "onnxruntime: less than the kernel)", "upstream": "new"},
    {"ops": _POOLS, "flags": ["random"], "checks": ["raises"],
     "rule": "the pools check neither torch's padding limit (p <= k/2) nor its output size: a window longer than the "
             "padded input gives an empty output, or in ceil mode a window of overhang, where torch raises",
     "upstream": "new"},
    *({"ops": _MAX, "flags": [flag], "rule": _STRIDE_1, "upstream": "new"}
      for flag in ("overlapping", "padding_adjacent", "window_wider_than_input")),
    {"ops": _MAX, "flags": ["random"], "rule": "random configurations: the stride-1 path above where every stride and "
     "dilation is 1, the NaN rule below elsewhere", "upstream": "new"},
    {"ops": _MAX, "flags": [], "dtypes": ["float16", "float32", "float64"], "rule": _NAN, "upstream": "new"},
    {"ops": ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"], "flags": ["global"],
     "rule": "GlobalMaxPool reduces the last two axes whatever the rank, so 3-D input (N, C, L) loses its channel "
             "axis", "upstream": "https://github.com/onnx/onnx/issues/7682"},
    {"ops": _UNPOOL, "flags": ["max_unpool_argument_rules"], "checks": ["raises"],
     "rule": "MaxUnpool accepts stride 0 (each output extent is the kernel) where torch raises",
     "upstream": "https://github.com/onnx/onnx/pull/8476"},
    {"ops": _UNPOOL, "flags": ["output_size_above_default"],
     "rule": "MaxUnpool scatters the indices into the default output shape and only then zero-pads it to output_shape, "
             "so the indices of a larger output_shape overflow (IndexError) or land elsewhere",
     "upstream": "https://github.com/onnx/onnx/issues/2398"},
    {"ops": _UNPOOL, "flags": ["random"],
     "rule": "MaxUnpool scatters even into a default output with a zero extent and raises IndexError (torch returns "
             "the empty output)", "upstream": "new"},
    *({"ops": _LP, "flags": [flag], "rule": _ABS, "upstream": "https://github.com/onnx/onnx/issues/5459"}
      for flag in ("p_1", "odd_p", "negative_p")),
    {"ops": _LP, "flags": ["random"],
     "rule": "random configurations: |x|^p as above, and in ceil mode with an overhang of two or more cells every "
             "window shifted left by half the overhang (the evaluator splits the extra padding over both ends)",
     "upstream": "new"},
    _onnx.UINT8_LINEAR,
    {"ops": ["interpolate"], "flags": ["random"], "checks": ["raises"],
     "rule": "Resize ties no mode to a rank and takes zero output extents: linear on 4-D and 5-D input, antialiased "
             "bicubic on 5-D input and empty outputs are computed where torch raises", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["wrong_rank"], "checks": ["raises"],
     "rule": "Resize's linear mode takes any rank; torch's bilinear needs 4-D input", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["align_corners_with_nearest"], "checks": ["raises"],
     "rule": "Resize's nearest mode takes every coordinate transform; torch refuses any align_corners with nearest",
     "upstream": "new"},
    *({"ops": ["interpolate"], "flags": ["align_corners", how],
       "rule": "with a scales input, align_corners maps x = i (L - 1) / (L * scale - 1) with the unrounded L * scale, "
               "not the output length", "upstream": "https://github.com/onnx/onnx/issues/2462"}
      for how in ("scale", "scale_no_recompute")),
    *({"ops": ["interpolate"], "flags": [mode, "equal", how], "rule": _SAME_SIZE, "upstream": "new"}
      for mode in ("linear", "bilinear", "trilinear", "bilinear_antialias", "bicubic_antialias")
      for how in ("scale", "scale_no_recompute")),
    {"ops": ["interpolate"], "flags": ["bicubic", "equal", "uint8_fixed_point"], "rule": _SAME_SIZE, "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"], "checks": ["output"], "rule": _UINT8,
     "upstream": "https://github.com/onnx/onnx/issues/3390"},
    *({"ops": ["interpolate"], "flags": flags, "rule": _NEAREST, "upstream": "new"}
      for flags in (["nearest", "down", "scale"], ["nearest", "down", "scale_no_recompute"],
                    ["nearest-exact", "equal", "scale"], ["nearest-exact", "equal", "scale_no_recompute"])),
    # input_1 and antialias_width_one are bicubic cases
    *({"ops": ["interpolate"], "flags": [flag], "dtypes": _F64, "rule": _CUBIC, "upstream": "new"}
      for flag in ("bicubic", "bicubic_antialias", "input_1", "antialias_width_one")),
    *({"ops": ["interpolate"], "flags": [how], "dtypes": _F64, "rule": _SCALES, "upstream": "new"}
      for how in ("scale", "scale_no_recompute")),
    {"ops": ["interpolate"], "flags": ["random"], "rule": "random configurations: the float32 cubic weights, float32 "
     "scales, align_corners-with-scales and nearest-division rules above", "upstream": "new"},
    {"ops": ["grid_sample"], "flags": ["bicubic_5-D"], "checks": ["raises"],
     "rule": "GridSample interpolates cubic on 5-D input, which torch (and onnxruntime) refuse", "upstream": "new"},
    {"ops": ["grid_sample"], "flags": ["unknown_padding"], "checks": ["raises"],
     "rule": "GridSample takes an unknown padding_mode ('wrap') as reflection: neither the checker nor the evaluator "
             "validates it", "upstream": "new"},
    {"ops": ["grid_sample"], "flags": ["empty_spatial"], "checks": ["raises"],
     "rule": "GridSample returns an empty output for an input with an empty spatial axis (torch raises)",
     "upstream": "new"},
    {"ops": ["grid_sample"], "flags": ["size_1_axis", "reflection_fold"],
     "rule": "reflection padding with align_corners over a size-1 axis divides by its zero span (OverflowError), "
             "torch samples the one cell", "upstream": "new"},
    {"ops": ["grid_sample"], "flags": ["random"], "rule": "random configurations: " + _GRID + "; reflection over a "
     "size-1 axis with align_corners raises OverflowError", "upstream": "new"},
    {"ops": ["grid_sample"], "flags": [], "dtypes": _F64, "rule": _GRID, "upstream": "new"},
    {"ops": ["affine_grid"], "flags": ["theta_batch"], "checks": ["raises"],
     "rule": "AffineGrid ignores size[0], so a theta of another batch size is accepted (torch raises)",
     "upstream": "new"},
    {"ops": ["affine_grid"], "flags": ["align_corners", "size_1_axis"],
     "rule": "AffineGrid with align_corners=1 puts a size-1 axis at -1 (a one-point arange from -1), torch at 0",
     "upstream": "new"},
    {"ops": ["affine_grid"], "flags": [], "dtypes": _F64,
     "rule": "AffineGrid returns float32 whatever theta's dtype, so float64 grids come back rounded to float32 "
             "(and a size-1 axis with align_corners at -1)", "upstream": "new"},
]
