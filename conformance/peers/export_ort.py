"""torch.nn.functional exported (torch.export + torch.onnx.export, dynamo=True) and run in onnxruntime: forward
only."""

from __future__ import annotations

from typing import Any

from . import _paths

NAME = "export-ort"
PATH = "export-ort"
BACKEND = "torch"
IMPORTS = ("torch", "onnx", "onnxscript", "onnxruntime")
API = ("torch.nn.functional through torch.export.export + torch.onnx.export(dynamo=True), one model per call "
       "signature, in onnxruntime.InferenceSession (CPUExecutionProvider, 1 thread), on a sample of the cases")
GRADIENTS = "none (forward only: an exported ONNX model has no autodiff)"


def version() -> str:
    import onnxruntime
    import onnxscript

    return f"{_paths.torch_version()}, onnxscript {onnxscript.__version__}, onnxruntime {onnxruntime.__version__}"


def run(ops: list[str] | None) -> tuple[Any, str]:
    return _paths.run_torch(NAME, ops)


_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]
_M = "M = type('M', (torch.nn.Module,), {'forward': lambda self, x: "  # a module in one line
_EXPORT = "m = torch.onnx.export(M(), (x,), dynamo=True).model_proto.SerializeToString(); "
_SESSION = "onnxruntime.InferenceSession(m, providers=['CPUExecutionProvider'])"
FINDINGS: list[dict[str, Any]] = [
    {"ops": ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"], "flags": [], "checks": ["crash"],
     "rule": "torch.onnx.export(dynamo=True) has no ONNX translation for aten.adaptive_max_poolNd (DispatchError "
             "'No ONNX function found', then ConversionError): a model using it does not export",
     "upstream": "https://github.com/pytorch/pytorch/issues/183439",
     "repro": _M + "torch.nn.functional.adaptive_max_pool2d(x, 3)"
              "}); x = torch.rand(1, 1, 4, 4); torch.onnx.export(M(), (x,), dynamo=True)  # ConversionError"},
    {"ops": ["adaptive_avg_pool3d"], "flags": [], "checks": ["crash"],
     "rule": "torch.onnx.export(dynamo=True) has no ONNX translation for adaptive_avg_pool3d with an output size "
             "that does not divide the input (ONNX has no adaptive pool; only the global case maps): ConversionError",
     "upstream": "https://github.com/microsoft/onnxscript/issues/1646",
     "repro": _M + "torch.nn.functional.adaptive_avg_pool3d(x, (3, 2, 2))}); x = torch.rand(1, 1, 4, 4, 4); "
              "torch.onnx.export(M(), (x,), dynamo=True)  # ConversionError"},
    {"ops": ["fractional_max_pool2d", "fractional_max_pool3d"], "flags": [], "checks": ["crash"],
     "rule": "torch.onnx.export(dynamo=True) has no ONNX translation for fractional_max_pool2d/3d (even with "
             "_random_samples given): ConversionError", "upstream": "new",
     "repro": "s = torch.rand(1, 1, 2); " + _M +
              "torch.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s)"
              "}); x = torch.rand(1, 1, 4, 4); torch.onnx.export(M(), (x,), dynamo=True)  # ConversionError"},
    {"ops": [*_AVG, "interpolate"], "flags": [], "dtypes": ["float64"], "checks": ["crash"],
     "rule": "onnxruntime's CPU provider has no float64 kernel for AveragePool or Resize (NOT_IMPLEMENTED when the "
             "session is made), so an exported float64 model using avg_pool, lp_pool (p = 1 exports to "
             "AveragePool) or interpolate does not run",
     "upstream": "https://github.com/microsoft/onnxruntime/issues/7546",
     "repro": _M + "torch.nn.functional.avg_pool2d(x, 2)"
              "}); x = torch.rand(1, 1, 4, 4, dtype=torch.float64); " + _EXPORT + _SESSION + "  # NotImplemented"},
    {"ops": _AVG, "flags": ["divisor_override"], "checks": ["output"],
     "rule": "the exported avg_pool drops divisor_override: the model divides each window by its size (the "
             "TorchScript exporter refused divisor_override, pytorch#105349; the dynamo exporter ignores it "
             "silently)", "upstream": "new",
     "repro": _M + "torch.nn.functional.avg_pool2d(x, 2, "
              "divisor_override=1)}); x = torch.arange(16.).reshape(1, 1, 4, 4); " + _EXPORT + "s = " + _SESSION
              + "; print(M()(x).flatten(), s.run(None, {s.get_inputs()[0].name: x.numpy()})[0].flatten())  "
              "# [10, 18, 42, 50] vs [2.5, 4.5, 10.5, 12.5]"},
    {"ops": ["max_pool1d", "max_pool2d", "max_pool3d"], "flags": [], "checks": ["output"],
     "rule": "the exported max pool is ONNX MaxPool, which in onnxruntime starts from the window's first in-input "
             "cell and takes only strictly greater values, so a NaN wins only as that first cell (torch: any NaN "
             "wins); NaN is data, no flag marks it (the onnxruntime peer's finding, reached through the exporter)",
     "upstream": "new",
     "repro": _M + "torch.nn.functional.max_pool1d(x, 2)"
              "}); x = torch.tensor([[[0., float('nan')]]]); " + _EXPORT + "s = " + _SESSION
              + "; print(s.run(None, {s.get_inputs()[0].name: x.numpy()})[0])  # 0 (torch: nan)"},
    {"ops": ["max_unpool1d", "max_unpool2d", "max_unpool3d"], "flags": [], "checks": ["raises"],
     "rule": "the exported max_unpool does not check an index against its plane's output size, where torch raises "
             "'Found an invalid max index': the model computes a result", "upstream": "new",
     "repro": "a = poolspec.conformance.case('max_unpool2d-g003-float64').arrays(); x, i = "
              "torch.from_numpy(a['input']), torch.from_numpy(a['indices']); "
              + _M.replace("self, x:", "self, x, i:") + "torch.nn.functional."
              "max_unpool2d(x, i, (3, 2), (3, 1), output_size=(7, 3))}); m = torch.onnx.export(M(), (x, i), "
              "dynamo=True).model_proto.SerializeToString(); s = " + _SESSION + "; print(s.run(None, {n.name: "
              "v.numpy() for n, v in zip(s.get_inputs(), (x, i))})[0].shape)  # (2, 2, 7, 3); M()(x, i) raises"},
    {"ops": ["affine_grid"], "flags": [], "dtypes": ["float64"], "checks": ["output"],
     "rule": "the exported float64 affine_grid differs from torch's by up to 1.9e-8 (the size of float32 rounding: "
             "its base grid appears to be built in float32), beyond float64's rtol 1e-12", "upstream": "new",
     "repro": "t = torch.from_numpy(poolspec.conformance.case('affine_grid-g000-float64').arrays()['input']); "
              + _M.replace("self, x:", "self, t:") + "torch.nn.functional.affine_grid(t, (2, 3, 4, 5), "
              "align_corners=False)}); m = torch.onnx.export(M(), (t,), dynamo=True).model_proto."
              "SerializeToString(); s = " + _SESSION + "; print(abs(s.run(None, {s.get_inputs()[0].name: "
              "t.numpy()})[0] - M()(t).numpy()).max())  # about 1.9e-08"},
]
