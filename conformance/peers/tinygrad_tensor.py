"""tinygrad (CPU device: clang-compiled kernels; the PYTHON emulator where no clang is) as its users call it:
``Tensor.avg_pool2d`` / ``max_pool2d`` / ``max_unpool2d`` (rank-generic: their kernel_size's length picks the
pooled trailing axes) and ``Tensor.interpolate``, gradients by ``Tensor.gradient`` of the same call. Only layout
is adapted (int32 argmax read as int64); tinygrad's interpolate takes an output size only, so a scale_factor is
the same call only where torch too samples at L / O."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import NotExpressible, ntuple, require

NAME = "tinygrad"
BACKEND = "numpy"
IMPORTS = ("tinygrad",)
API = ("Tensor.avg_pool2d (dilation, ceil_mode, count_include_pad), Tensor.max_pool2d (return_indices), "
       "Tensor.max_unpool2d, Tensor.gradient; the 2-d ops by default (POOLSPEC_TINYGRAD_ALL=1: also 1-d/3-d through "
       "the same rank-generic calls and Tensor.interpolate)")

Tensor: Any = None  # tinygrad.Tensor, set by _tg()


def _tg() -> Any:
    """tinygrad on its CPU device (clang) where clang is installed, else its PYTHON emulator; imported on first use
    (``peers.installed`` imports this module without its peer)."""
    global Tensor
    if Tensor is None:
        os.environ.setdefault("DEV", "CPU" if shutil.which("clang") else "PYTHON")
        os.environ.setdefault("NOOPT", "1")  # no kernel search or unrolling: compiles faster, the same arithmetic
        from tinygrad import Tensor as T

        Tensor = T
    return Tensor


def version() -> str:
    _tg()
    from importlib.metadata import version as v

    from tinygrad import Device

    return f"tinygrad {v('tinygrad')} (device {Device.DEFAULT})"


Call = Callable[[Any], Any]


def _run(call: Call, x: np.ndarray, extra: tuple[np.ndarray, ...] = ()) -> Any:
    T = _tg()
    try:
        return call(T(np.ascontiguousarray(x)), *[T(np.ascontiguousarray(e)) for e in extra])
    except (NotImplementedError, KeyError) as e:  # a dtype the device renders no kernel for
        raise NotExpressible(f"tinygrad: {type(e).__name__} {str(e)[:160]}") from e


def _forward(call: Call, x: np.ndarray, extra: tuple[np.ndarray, ...] = ()) -> Any:
    out = _run(call, x, extra)
    if isinstance(out, tuple):
        return tuple(o.numpy() for o in out)
    return out.numpy()


def _gradient(call: Call, g: np.ndarray, x: np.ndarray, extra: tuple[np.ndarray, ...] = ()) -> np.ndarray:
    T = _tg()
    require(x.dtype.kind == "f", f"no gradient for {x.dtype}")
    xt = T(np.ascontiguousarray(x))
    y = call(xt, *[T(np.ascontiguousarray(e)) for e in extra])
    y = y[0] if isinstance(y, tuple) else y
    (gx,) = y.gradient(xt, gradient=T(np.ascontiguousarray(g)))
    return gx.numpy()


def _stride(stride: Any, n: int) -> Any:
    return None if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else ntuple(stride, n)


def _padding(padding: Any, n: int) -> tuple[int, ...]:
    """torch's symmetric padding, or poolspec's per-axis (before, after) pairs as tinygrad's flat tuple (last axis
    first, as F.pad); "valid" is no padding; "same" has no tinygrad spelling."""
    if isinstance(padding, str):
        require(padding == "valid", f"padding={padding!r}: tinygrad has no 'same'")
        return (0,) * n
    p = ntuple(padding, n)
    if any(isinstance(q, (tuple, list)) for q in p):
        return tuple(v for q in reversed(p) for v in ntuple(q, 2))
    return p


def _avg(n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> Call:
    require(divisor_override is None, "Tensor.avg_pool2d has no divisor_override")
    k, s, p, d = ntuple(kernel_size, n), _stride(stride, n), _padding(padding, n), ntuple(dilation, n)
    return lambda t: t.avg_pool2d(k, s, d, p, ceil_mode=ceil_mode, count_include_pad=count_include_pad)


def _max(n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
         return_indices: bool = False) -> Call:
    k, s, p, d = ntuple(kernel_size, n), _stride(stride, n), _padding(padding, n), ntuple(dilation, n)

    def call(t: Any) -> Any:
        y, i = t.max_pool2d(k, s, d, p, ceil_mode=ceil_mode, return_indices=True)
        return y, i.cast("int64")

    return call


def _unpool(n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, output_size: Any = None) -> Call:
    k, s, p = ntuple(kernel_size, n), _stride(stride, n), ntuple(padding, n)

    def call(t: Any, i: Any) -> Any:
        # max_unpool2d reads (N, C, *spatial): unbatched input gets a batch axis (layout only)
        if t.ndim == n + 1:
            return t.unsqueeze(0).max_unpool2d(i.unsqueeze(0), k, s, 1, p, output_size=output_size).squeeze(0)
        return t.max_unpool2d(i, k, s, 1, p, output_size=output_size)

    return call


def _pools(make: Callable[..., Call], n: int, ports: int = 1) -> tuple[Call, Call]:
    def forward(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        out = _forward(make(n, *args[ports - 1:], **kwargs), x, tuple(args[:ports - 1]))
        if kwargs.get("return_indices"):
            return out
        return out[0] if isinstance(out, tuple) else out

    def backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        return _gradient(make(n, *args[ports - 1:], **kwargs), g, x, tuple(args[:ports - 1]))

    return forward, backward


# tinygrad schedules and compiles a kernel for every new shape (about 1 s a case here): the default run takes the
# 2-d ops (about 3 min); POOLSPEC_TINYGRAD_ALL=1 adds the 1-d and 3-d pools and interpolate (over 20 min on 2 cores)
_ALL = os.environ.get("POOLSPEC_TINYGRAD_ALL") == "1"
for _n in (1, 2, 3) if _ALL else (2,):
    globals()[f"avg_pool{_n}d"], globals()[f"avg_pool{_n}d_backward"] = _pools(_avg, _n)
    globals()[f"max_pool{_n}d"], globals()[f"max_pool{_n}d_backward"] = _pools(_max, _n)
    globals()[f"max_unpool{_n}d"], globals()[f"max_unpool{_n}d_backward"] = _pools(_unpool, _n, 2)


_MODES = {"nearest": "nearest", "nearest-exact": "nearest-exact", "linear": "linear", "bilinear": "linear",
          "trilinear": "linear"}


def _interp(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
            align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
            antialias: bool = False) -> Call:
    require(mode in _MODES and not antialias, f"Tensor.interpolate has no {mode!r} (antialias={antialias})")
    n = x.ndim - 2
    sizes = x.shape[2:]
    if size is not None:
        out = tuple(int(o) for o in ntuple(size, n))
    else:
        sf = tuple(float(f) for f in ntuple(scale_factor, n))
        out = tuple(math.floor(L * f) for L, f in zip(sizes, sf))
        # tinygrad samples at L / O; torch at 1 / scale_factor unless it recomputes the scale from the size
        require(bool(recompute_scale_factor) or all(L * f == O for L, O, f in zip(sizes, out, sf))
                or (bool(align_corners) and _MODES[mode] == "linear"),
                f"torch samples at 1/scale_factor={sf}; Tensor.interpolate takes a size only")
    # torch's mode names the rank (linear 3-d, bilinear 4-d, trilinear 5-d); tinygrad's "linear" takes any
    want = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    require(want is None or want == n, f"torch's {mode} is {want}-d; this call is {n}-d")
    full = tuple(x.shape[:2]) + out
    return lambda t: t.interpolate(full, mode=_MODES[mode], align_corners=bool(align_corners))


def _interp_forward(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    return _forward(_interp(x, *args, **kwargs), x)


def _interp_gradient(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    return _gradient(_interp(x, *args, **kwargs), g, x)


if _ALL:
    interpolate, interpolate_backward = _interp_forward, _interp_gradient


_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]
_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_UNPOOL = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
_ACCEPTS = ("tinygrad's pools compute geometries torch refuses (a dilated window wholly in padding, padding over half "
            "the kernel, an output size below 1) instead of raising")
FINDINGS: list[dict[str, Any]] = [
    {"ops": _MAX, "flags": [], "checks": ["output", "indices"],
     "rule": "tinygrad's max reduction skips NaN (a window [nan, 1] gives 1, its index that of 1), where torch's max "
             "is NaN, at the last NaN, whenever the window holds one", "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_input"],
     "rule": "tinygrad's max-pool gradient (the max reduction's) splits the cotangent equally over every tap equal to "
             "the max (a window [1, 3, 3, 0]: 0, 0.5, 0.5, 0), where torch sends it all to the first maximum",
     "upstream": "new"},
    {"ops": _MAX, "flags": ["max_pool_empty_window"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _AVG + _MAX + _UNPOOL, "flags": ["random"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _UNPOOL, "flags": ["empty_batch"],
     "rule": "tinygrad's max_unpool2d on an empty batch raises ZeroDivisionError, where torch returns an empty result",
     "upstream": "new"},
    {"ops": _UNPOOL, "flags": ["max_unpool_duplicate_indices"], "checks": ["output"],
     "rule": "tinygrad's max_unpool2d scatters through a one-hot sum, so values sharing an index add up (values 1 "
             "and 2 at index 1 give 3), where torch writes one of them; its gradient then gathers grad_output at every "
             "input's index (as torch's own backward; poolspec gives it to the written element only)",
     "upstream": "new"},
    *({"ops": _UNPOOL, "flags": flags, "checks": ["raises"],
       "rule": "tinygrad's max_unpool2d takes any output_size and a stride of 0, where torch checks output_size "
               "against the default size +- stride and refuses stride 0", "upstream": "new"}
      for flags in (["output_size_at_lower_limit"], ["max_unpool_argument_rules"])),
    {"ops": _AVG, "flags": ["int64"],
     "rule": "tinygrad's avg_pool of an integer tensor returns the float (float32) mean, where torch returns int64 "
             "(the sum divided with truncation)", "upstream": "new"},
]
