"""poolspec.frontends.onnx against onnxruntime (CPU provider, one thread) on one-node opset 22 models (opset 16 for
GridSample's bilinear/bicubic names and RoiAlign, opset 1 for MaxRoiPool: the latest it registers). Forward only: ONNX
runtimes have no gradients.

The configurations are onnx_reference's generator with onnxruntime's exclusions (the cards list them): float32 only
where onnxruntime registers no float64 kernel (AveragePool, LpPool, GlobalLpPool, Resize), SAME_* auto_pad with
dilation > 1 (onnxruntime sizes the padding without the dilation), Resize to an output shape equal to the input's
under a scale != 1 (onnxruntime copies X) and nearest coordinates exactly on a rounding boundary (onnxruntime
computes them in float32), and a size-1 axis with align_corners in AffineGrid. RoiAlign in float32 only; its
refusal of a negative adaptive sample grid (SafeInt's overflow, where the reference and poolspec give 0) counts as a
library refusal."""

from __future__ import annotations

from typing import Any

from . import onnx_reference as _reference
from .onnx_reference import Config, frontend  # noqa: F401

LIBRARY = "onnxruntime"


def available() -> str | None:
    try:
        import onnxruntime  # noqa: F401
    except ImportError as e:
        return f"onnxruntime is not installed ({e})"
    return _reference.available()


def version() -> str:
    import onnx
    import onnxruntime

    return f"onnxruntime {onnxruntime.__version__} (onnx {onnx.__version__}, opset {_reference.OPSET})"


def _prepare(model: Any) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    onnxruntime.set_default_logger_severity(4)  # RoiAlign's warning at every kernel that max mode changed in 1.13
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def _as_ort(fn: Any, *args: Any) -> Any:
    saved = _reference.RUNTIME, _reference.prepare, _reference._CACHE
    _reference.RUNTIME, _reference.prepare, _reference._CACHE = "ort", _prepare, _CACHE
    try:
        return fn(*args)
    finally:
        _reference.RUNTIME, _reference.prepare, _reference._CACHE = saved


def config(rng: Any) -> Config:
    return _as_ort(_reference.config, rng)


def library(config: Config, cotangents: Any) -> Any:
    return _as_ort(_reference.library, config, cotangents)


# the reference's regression cases, with onnxruntime's outputs (its CPU kernel keeps the specification's maximum of
# weighted corner terms by default)
REGRESSIONS = _reference.REGRESSIONS

# conformance/check_frontends.py's --per-function draws, with onnxruntime's exclusions
DEDICATED = {"onnx.RoiAlign": lambda rng: _as_ort(_reference._roi_align, rng),
             "onnx.MaxRoiPool": lambda rng: _as_ort(_reference._max_roi_pool, rng)}


_CACHE: dict[Any, Any] = {}
