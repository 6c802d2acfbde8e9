"""MLX (CPU wheel, mlx[cpu]) as its users call it: mlx.nn.AvgPool1d/2d/3d, MaxPool1d/2d/3d and Upsample on
channels-last transposes of poolspec's NCHW calls, gradients by mx.vjp of the same call (float64 on the CPU).
Only layout is adapted (channels last, a batch axis for unbatched input); MLX's pools have no ceil_mode,
dilation, divisor_override or count_include_pad=False, its Upsample takes a scale_factor only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import ceil_adds_window, dense_average, ntuple, require

NAME = "mlx"
BACKEND = "numpy"
IMPORTS = ("mlx",)
API = ("mlx.nn.AvgPool1d/2d/3d (zero padding, counted), mlx.nn.MaxPool1d/2d/3d (values only), mlx.nn.Upsample "
       "(nearest / linear / cubic, align_corners), mx.vjp")

_DTYPES = ("float64", "float32", "float16")
Call = Callable[[Any], Any]


def version() -> str:
    import mlx.core as mx

    return f"mlx {mx.__version__} ({mx.default_device()})"


def _mx(a: np.ndarray, n: int) -> Any:
    import mlx.core as mx

    require(a.dtype.name in _DTYPES, f"{a.dtype}: the adapter passes float arrays only")
    return mx.array(np.ascontiguousarray(np.moveaxis(a, 1, -1)), dtype=getattr(mx, a.dtype.name))


def _run(call: Call, x: np.ndarray, n: int, g: np.ndarray | None = None) -> np.ndarray:
    """``call`` on x as channels-last (a batch axis for unbatched input); with g, mx.vjp's input gradient."""
    import mlx.core as mx

    unbatched = x.ndim == n + 1
    xb = x[None] if unbatched else x
    require(xb.ndim == n + 2, f"{x.ndim}-d input to a {n}-d op")
    t = _mx(xb, n)
    if g is None:
        out = np.array(call(t), copy=True)
    else:
        _, (gx,) = mx.vjp(lambda a: call(a), [t], [_mx(g[None] if unbatched else g, n)])
        out = np.array(gx, copy=True)
    out = np.moveaxis(out, -1, 1)
    return out[0] if unbatched else out


def _geometry(x: np.ndarray, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              dilation: Any = 1) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    k, p = ntuple(kernel_size, n), ntuple(padding, n)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else ntuple(stride, n)
    require(all(d == 1 for d in ntuple(dilation, n)), "MLX's pools have no dilation")
    require(all(isinstance(q, int) for q in p), f"padding={padding!r}: MLX takes symmetric integer padding")
    if ceil_mode and min(k + s) > 0:
        require(not ceil_adds_window(x.shape[-n:], k, s, p), "ceil_mode adds a window: MLX's pools floor")
    return k, s, p


def _avg_call(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
              ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> Call:
    import mlx.nn as nn

    k, s, p = _geometry(x, n, kernel_size, stride, padding, ceil_mode)
    require(divisor_override is None, "MLX divides by the window size: no divisor_override")
    # MLX pads with zeros and counts them: torch's count_include_pad=True, or any count without padding
    require(count_include_pad or not any(p), "MLX counts its zero padding (count_include_pad=True only)")
    return getattr(nn, f"AvgPool{n}d")(k, s, p)


def _max_call(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
              ceil_mode: bool = False, return_indices: bool = False) -> Call:
    import mlx.nn as nn

    k, s, p = _geometry(x, n, kernel_size, stride, padding, ceil_mode, dilation)
    return getattr(nn, f"MaxPool{n}d")(k, s, p)


def _pair(make: Callable[..., Call], n: int, indexed: bool) -> tuple[Call, Call]:
    def forward(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        y = _run(make(n, x, *args, **kwargs), x, n)
        return (y, None) if indexed and kwargs.get("return_indices") else y

    def backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        return _run(make(n, x, *args, **kwargs), x, n, g)

    return forward, backward


def _avg_fns(n: int) -> tuple[Call, Call]:
    return dense_average(*_pair(_avg_call, n, False))


avg_pool1d, avg_pool1d_backward = _avg_fns(1)
avg_pool2d, avg_pool2d_backward = _avg_fns(2)
avg_pool3d, avg_pool3d_backward = _avg_fns(3)
max_pool1d, max_pool1d_backward = _pair(_max_call, 1, True)
max_pool2d, max_pool2d_backward = _pair(_max_call, 2, True)
max_pool3d, max_pool3d_backward = _pair(_max_call, 3, True)

_MODES = {"nearest": "nearest", "linear": "linear", "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}
_RANK = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _interp(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
            align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
            antialias: bool = False) -> tuple[int, Call]:
    import mlx.nn as nn

    n = x.ndim - 2
    require(mode in _MODES and not antialias, f"mlx.nn.Upsample has no {mode!r} (antialias={antialias})")
    require(_RANK.get(mode, n) == n, f"torch's {mode} is {_RANK.get(mode)}-d; this call is {n}-d")
    require(size is None and scale_factor is not None, "mlx.nn.Upsample takes a scale_factor only")
    require(not recompute_scale_factor, "recompute_scale_factor: torch samples at L/O, Upsample at 1/scale")
    require(not (align_corners and mode == "nearest"), "Upsample's nearest takes no align_corners")
    sf = tuple(float(f) for f in ntuple(scale_factor, n))
    if x.size == 0:
        # verified by hand: Upsample on an empty batch dies with SIGFPE (an integer division by zero), which
        # would end the run; the case fails here instead
        raise RuntimeError("mlx.nn.Upsample aborts the process (SIGFPE) on an empty array")
    return n, nn.Upsample(sf, _MODES[mode], align_corners=bool(align_corners))


def interpolate(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    n, call = _interp(x, *args, **kwargs)
    return _run(call, x, n)


def interpolate_backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    n, call = _interp(x, *args, **kwargs)
    return _run(call, x, n, g)


_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]
_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_EMPTY = ("mx.vjp of a pool on an empty batch raises ValueError ('[scatter] Updates with shape (0,1) are too large for "
          "array with shape (0)'), and mlx.nn.Upsample on an empty batch kills the process with SIGFPE (the adapter "
          "raises instead), where torch returns empty results")
_COORDS = ("mlx.nn.Upsample (align_corners=False) does not sample at torch's 1/scale_factor: nearest reads "
           "floor(i * L / O) (scale 2.1 on 7 cells: 0 0 1 1 2 2 ..., torch 0 0 0 1 1 2 ...), and linear/cubic "
           "place output i at a coordinate that equals torch's (i + 1/2) / sf - 1/2 only for an integer scale "
           "(scale 2.1: output 1 reads 0.381, torch 0.214)")
FINDINGS: list[dict[str, Any]] = [
    {"ops": _AVG + _MAX + ["interpolate"], "flags": ["empty_batch"], "rule": _EMPTY, "upstream": "new"},
    {"ops": _AVG + _MAX, "flags": ["random"], "checks": ["raises"],
     "rule": "MLX's pools compute geometries torch refuses (padding over half the kernel, an output size below 1) "
             "instead of raising", "upstream": "new"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"],
     "rule": "MLX's max pools take padding over half the kernel (windows wholly in -inf padding), where torch raises",
     "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_input"],
     "rule": "MLX's max-pool gradient (its vjp compares every tap with the max) splits the cotangent equally over "
             "tied maxima and gives NaN in windows holding NaN, where torch sends it all to the first maximum (the "
             "last NaN)", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["float16", "align_corners"],
     "rule": "mlx.nn.Upsample with align_corners=True returns float32 for float16 input", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["align_corners"], "dtypes": ["float64"],
     "rule": "mlx.nn.Upsample computes its align_corners coordinates in float32, so float64 results carry float32 "
             "rounding (errors ~1e-6)", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["random"], "checks": ["raises"],
     "rule": "mlx.nn.Upsample computes a scale whose output size is below 1 (an empty axis), where torch raises",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": [], "checks": ["output", "grad_input"], "rule": _COORDS,
     "upstream": "new"},
]
