"""onnxruntime 1.24.4, an older release, through the same one-node models as the onnxruntime peer (``ort.py``): the
suite catching bugs that a later release fixed (AveragePool's ceil-mode divisor, MaxPool's NaN and uint8 indices,
AffineGrid in float32 precision). Its own venv: ``requirements/onnxruntime-1.24.txt``."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from . import ort
from ._common import ntuple

_OPS = ("avg", "max", "adaptive", "lp", "interpolate", "grid", "affine", "roi")
NAME = "onnxruntime-1.24"
BACKEND = "numpy"
IMPORTS = ort.IMPORTS
API = ort.API


def version() -> str:
    return ort.version()


# the same functions as the onnxruntime peer (its own onnxruntime is the one imported in this venv)
globals().update({k: v for k, v in vars(ort).items() if callable(v) and k.split("_")[0] in _OPS})


def _no_zero_stride(fn: Any, n: int) -> Any:
    @functools.wraps(fn)  # its signature: the runner reads which arguments the peer takes
    def call(x: np.ndarray, kernel_size: Any, stride: Any = None, *args: Any, **kwargs: Any) -> Any:
        if stride not in (None, (), []) and 0 in ntuple(stride, n):
            # AveragePool with a zero stride kills the process (SIGFPE: an integer division by the stride); the
            # case fails as an accepted call rather than ending the run
            return np.zeros((0,), x.dtype)
        return fn(x, kernel_size, stride, *args, **kwargs)

    return call


for _n in (1, 2, 3):
    globals()[f"avg_pool{_n}d"] = _no_zero_stride(globals()[f"avg_pool{_n}d"], _n)

_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]
_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
FINDINGS: list[dict[str, Any]] = [
    {"ops": _AVG, "flags": ["stride_0"], "checks": ["raises"],
     "rule": "AveragePool with strides 0 kills the process with SIGFPE (an integer division by the stride), where "
             "torch raises 'stride should not be zero' (1.32.0 refuses the model)", "upstream": "new",
     "repro": "onnxruntime 1.24.4: an AveragePool node with kernel_shape=[2], strides=[0] on a (1, 1, 8) input: "
              "Floating point exception"},
    {"ops": _AVG, "flags": ["ceil_overhang", "count_include_pad"], "checks": ["output"],
     "rule": "AveragePool in ceil mode with count_include_pad=1 divides a window that overhangs the padded input by "
             "the full kernel size, where torch divides by the window clipped to the padded input (fixed by 1.32.0)",
     "upstream": "https://github.com/pytorch/pytorch/issues/183528"},
    {"ops": _AVG, "flags": ["ceil_mode", "count_include_pad"], "checks": ["output"],
     "rule": "the same ceil-mode divisor: a last window reaching past the padded input is divided by the full "
             "kernel size (fixed by 1.32.0)", "upstream": "https://github.com/pytorch/pytorch/issues/183528"},
    {"ops": _MAX, "flags": ["uint8"], "checks": ["indices"],
     "rule": "MaxPool's Indices output for uint8 input is negative for some windows (-1, -5, -26 where torch gives "
             "3, 12, 0), 1.32.0 gives torch's flat indices", "upstream": "new"},
    {"ops": _MAX, "flags": [], "dtypes": ["float16", "float32", "float64"], "checks": ["output"],
     "rule": "MaxPool starts each window from the dtype's lowest finite value and takes only strictly greater "
             "values, so NaN never wins and a window of only -inf or only NaN gives -1.8e308 (float64), where torch "
             "gives NaN or -inf (1.32.0 starts from the window's first cell)",
     "upstream": "new",
     "repro": "onnxruntime 1.24.4: MaxPool kernel_shape=[1], strides=[2] on [[[0.5, nan, 0.5, 0.5, nan, -0.5]]] "
              "gives [0.5, 0.5, -1.797e308] (torch [0.5, 0.5, nan])"},
    {"ops": ["affine_grid"], "flags": [], "dtypes": ["float64"], "checks": ["output"],
     "rule": "AffineGrid computes float64 grids in float32 precision (errors near 1e-8), where torch computes in "
             "the input's precision (fixed by 1.32.0)", "upstream": "new"},
    {"ops": ["affine_grid", "grid_sample"], "flags": [], "checks": ["raises"],
     "rule": "AffineGrid and GridSample accept sizes torch refuses (1.32.0 refuses them)", "upstream": "new"},
    *ort.FINDINGS,
]
