"""onnxruntime (CPU provider) running one-node ONNX models of poolspec's torch-style calls (see _onnx.py)."""

from __future__ import annotations

from typing import Any

from . import _onnx

NAME = "onnxruntime"
BACKEND = "numpy"
IMPORTS = ("onnx", "onnxruntime")
API = _onnx.API + " in onnxruntime.InferenceSession (CPUExecutionProvider, 1 thread)"


def version() -> str:
    import onnx
    import onnxruntime

    return f"onnxruntime {onnxruntime.__version__} (onnx {onnx.__version__}, opset {_onnx.OPSET})"


def _prepare(model: Any) -> _onnx.Runner:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # one thread: the same sums in the same order
    options.log_severity_level = 4  # refusals come back as exceptions; no copy of them on stderr
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


globals().update(_onnx.functions(_onnx.Peer("onnxruntime", _prepare)))

_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_LP = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]
_ABS = ("LpPool pools |x|^p (the p-norm), torch x^p: with odd p negative inputs differ (p = 1 sums signed values, "
        "p = 3 gives NaN for a negative sum, p = -1 sums signed reciprocals)")
_COPY = ("Resize copies the input when the output shape equals the input shape, ignoring a scale != 1 that torch "
         "still applies (nearest, nearest-exact and bicubic sample at x / sf even when O == L)")
FINDINGS: list[dict[str, Any]] = [
    {"ops": _MAX, "flags": ["max_pool_empty_window"], "checks": ["raises"],
     "rule": "MaxPool computes a window that dilation leaves without an input cell: the dtype's lowest finite value "
             "with index -1 (torch: -inf and an out-of-range index; poolspec refuses the call)", "upstream": "new"},
    {"ops": _MAX, "flags": ["random"], "checks": ["raises"],
     "rule": "MaxPool rounds (L + 2p - d(k-1) - 1) / s toward zero (floor mode) or up (ceil mode) before adding "
             "1 and accepts an extent of 0 or 1, so a dilated window longer than the padded input gives one output "
             "or an empty one where torch raises 'Output size is too small'",
     "upstream": "https://github.com/microsoft/onnxruntime/issues/25234"},
    {"ops": _MAX, "flags": [], "dtypes": ["float16", "float32", "float64"],
     "rule": "MaxPool starts from the window's first in-input cell and takes only strictly greater values, so a NaN "
             "wins only as that first cell (torch: any NaN wins, with the last NaN's index); NaN is data, no flag "
             "marks it: two max-pool inputs in three hold NaN", "upstream": "new"},
    {"ops": ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"], "flags": ["global"],
     "rule": "GlobalMaxPool skips NaN (the maximum of the other values), torch returns NaN", "upstream": "new"},
    *({"ops": _LP, "flags": [flag], "rule": _ABS, "upstream": "https://github.com/microsoft/onnxruntime/issues/6302"}
      for flag in ("p_1", "odd_p", "negative_p")),
    # the unbatched float16 case is in ceil mode with a partial window too
    *({"ops": _LP, "flags": [flag], "rule": "in ceil mode LpPool sums a partial window's n in-input cells, torch "
       "(avg_pool times prod(k)) scales that sum by prod(k) / n", "upstream": "new"}
      for flag in ("ceil_partial_window", "unbatched")),
    _onnx.UINT8_LINEAR,
    {"ops": ["interpolate"], "flags": ["bilinear", "uint8_fixed_point"], "checks": ["output"],
     "rule": "linear Resize computes uint8 in float32 and casts the result to uint8, truncating, so many outputs "
             "(115 of 240 in a 7x5 -> 15x8 upscale) come out 1 below torch's (int16 fixed-point weights, each pass "
             "rounded half up)",
     "upstream": "https://github.com/microsoft/onnxruntime/issues/7368"},
    {"ops": ["interpolate"], "flags": ["bicubic", "uint8_fixed_point"], "checks": ["crash"],
     "rule": "cubic Resize without antialias fails on uint8 input at run time (its kernel reads the uint8 tensor "
             "as float: 'Tensor type mismatch') unless the output shape equals the input's (a copy), where torch "
             "resamples uint8 with int16 fixed-point weights", "upstream": "new"},
    *({"ops": ["interpolate"], "flags": [flag, "uint8_fixed_point"], "checks": ["output"],
       "rule": "the antialiased Resize filters quantise uint8 weights to int32 with 22 fraction bits, torch to int16 "
               "with as many as the largest weight allows (14 to 17 here), so a pixel here and there is 1 apart",
       "upstream": "new"}
      for flag in ("bilinear_antialias", "bicubic_antialias", "antialias_width_one")),
    *({"ops": ["interpolate"], "flags": [mode, "equal", how], "rule": _COPY, "upstream": "new"}
      for mode in ("nearest", "nearest-exact", "bicubic") for how in ("scale", "scale_no_recompute")),
    {"ops": ["roi_align"], "flags": ["empty_spatial"], "checks": ["raises"],
     "rule": "RoiAlign accepts an input with an empty spatial axis (H = 0) and returns values, where torchvision "
             "refuses it", "upstream": "new"},
    {"ops": ["roi_pool"], "flags": ["values_nan"], "checks": ["output"],
     "rule": "MaxRoiPool gives NaN in bins where torchvision's roi_pool (a strict > comparison from the lowest "
             "value) gives the bin's largest number", "upstream": "new"},
    {"ops": ["roi_pool"], "flags": ["empty_output"], "checks": ["crash"],
     "rule": "MaxRoiPool refuses a pooled_shape with a 0 ('must only contain positive values'), where torchvision "
             "returns an empty output", "upstream": "new"},
    # the failing random case has a width-1 axis with align_corners too
    *({"ops": ["affine_grid"], "flags": flags,
       "rule": "AffineGrid with align_corners=1 puts a size-1 axis at +1 (its linspace divides by size - 1 = 0), "
               "torch at 0", "upstream": "new"} for flags in (["align_corners", "size_1_axis"], ["random"])),
]
