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


FINDINGS: list[dict[str, Any]] = []
