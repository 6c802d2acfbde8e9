"""PaddlePaddle (CPU wheel) as its users call it: paddle.nn.functional's pools, interpolate, grid_sample and
affine_grid on NCHW tensors, gradients by paddle.grad of the same call. Only layout is adapted here (a batch axis
for unbatched input, a unit height for a 1-d average with divisor_override, int32 masks read as int64); torch's
arguments map onto Paddle's where they mean the same thing (count_include_pad = not exclusive, align_corners=None =
False with align_mode=0, the half-pixel rule); a call Paddle has no argument or CPU kernel for is not expressible."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import NotExpressible, ntuple, require

NAME = "paddle"
BACKEND = "numpy"
IMPORTS = ("paddle",)
API = ("paddle.nn.functional avg_pool1d/2d/3d (exclusive, divisor_override), max_pool1d/2d/3d (return_mask), "
       "adaptive_avg/max_pool1d/2d/3d, lp_pool1d/2d, max_unpool1d/2d/3d, interpolate (align_mode=0, antialias), "
       "grid_sample, affine_grid; paddle.grad")

paddle: Any = None  # the module, set by _paddle()


def _paddle() -> Any:
    """Paddle on the CPU, imported on first use (``peers.installed`` imports this module without its peer)."""
    global paddle
    if paddle is None:
        os.environ.setdefault("GLOG_minloglevel", "2")
        import paddle as module

        module.set_device("cpu")
        paddle = module
    return paddle


def version() -> str:
    return f"paddlepaddle {_paddle().__version__} (CPU)"


Call = Callable[..., Any]  # paddle tensors -> tensor, or (values, mask)


def _kernel(call: Call, *args: Any) -> Any:
    """``call(*args)``; a dtype Paddle registers no CPU kernel for is a call Paddle cannot make (never cast)."""
    try:
        return call(*args)
    except (RuntimeError, NotImplementedError) as e:
        text = str(e)
        if "is not registered" in text or "NotFound" in text.split("\n")[0]:
            raise NotExpressible(f"Paddle has no CPU kernel: {text.splitlines()[0][:160]}") from e
        raise


def _tensor(a: np.ndarray, grad: bool = False) -> Any:
    return _paddle().to_tensor(np.ascontiguousarray(a), stop_gradient=not grad)


def _numpy(t: Any) -> Any:
    return None if t is None else t.numpy()


def _forward(call: Call, inputs: list[np.ndarray], unbatched: bool = False) -> Any:
    """``call`` on the inputs (each with a batch axis added if ``unbatched``), back as NumPy."""
    ts = [_tensor(a[None] if unbatched else a) for a in inputs]
    out = _kernel(call, *ts)
    outs = [_numpy(o) for o in (out if isinstance(out, tuple) else (out,))]
    outs = [o[0] if unbatched and o is not None else o for o in outs]
    return tuple(outs) if isinstance(out, tuple) else outs[0]


def _gradient(call: Call, g: np.ndarray, inputs: list[np.ndarray], wrt: tuple[int, ...],
              unbatched: bool = False) -> tuple[np.ndarray, ...]:
    """Paddle's own gradients of the same call w.r.t. the inputs ``wrt`` for cotangent g."""
    ts = [_tensor(a[None] if unbatched else a, i in wrt) for i, a in enumerate(inputs)]
    y = _kernel(call, *ts)
    y = y[0] if isinstance(y, tuple) else y
    gt = _paddle().to_tensor(np.ascontiguousarray(g[None] if unbatched else g), dtype=y.dtype)
    grads = _kernel(lambda: paddle.grad([y], [ts[i] for i in wrt], grad_outputs=[gt], allow_unused=True))
    require(all(v is not None for v in grads), "Paddle gives no gradient for this call")
    return tuple(v.numpy()[0] if unbatched else v.numpy() for v in grads)


def _stride(stride: Any, n: int) -> Any:
    return None if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else ntuple(stride, n)


# --------------------------------------------------------------------------------------------------- pools

def _avg(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: Any = None) -> tuple[Call, bool]:
    k, s, p = ntuple(kernel_size, n), _stride(stride, n), ntuple(padding, n)
    F = _paddle().nn.functional
    ex = not count_include_pad
    if n == 1 and divisor_override is not None:
        # avg_pool1d has no divisor_override: the same window as avg_pool2d over a unit height
        s2 = None if s is None else (1,) + s
        return (lambda t: F.avg_pool2d(t.unsqueeze(-2), (1,) + k, s2, (0,) + p, ceil_mode=ceil_mode, exclusive=ex,
                                       divisor_override=divisor_override).squeeze(-2)), x.ndim == 2
    if n == 1:
        return (lambda t: F.avg_pool1d(t, k, s, p, exclusive=ex, ceil_mode=ceil_mode)), x.ndim == 2
    fn = F.avg_pool2d if n == 2 else F.avg_pool3d
    return (lambda t: fn(t, k, s, p, ceil_mode=ceil_mode, exclusive=ex, divisor_override=divisor_override),
            x.ndim == n + 1)


def _max(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
         ceil_mode: bool = False, return_indices: bool = False) -> tuple[Call, bool]:
    require(all(d == 1 for d in ntuple(dilation, n)), "Paddle's max_pool has no dilation")
    k, s, p = ntuple(kernel_size, n), _stride(stride, n), ntuple(padding, n)
    fn = getattr(_paddle().nn.functional, f"max_pool{n}d")

    def call(t: Any) -> Any:
        y, mask = fn(t, k, s, p, return_mask=True, ceil_mode=ceil_mode)
        return y, _checked(t, mask)

    return call, x.ndim == n + 1


def _checked(t: Any, mask: Any) -> Any:
    """The mask as int64. A window whose cells are all NaN or -inf keeps Paddle's initial mask -1, and its
    gradient kernel then writes before the plane (heap corruption, the process aborts): a gradient through such a
    mask fails here instead of running."""
    if not t.stop_gradient and bool((mask < 0).any()):
        raise RuntimeError("Paddle's max-pool mask holds -1 (a window of NaN/-inf cells): its gradient kernel "
                           "would write out of bounds")
    return mask.astype("int64")


def _adaptive_avg(n: int, x: np.ndarray, output_size: Any) -> tuple[Call, bool]:
    fn = getattr(_paddle().nn.functional, f"adaptive_avg_pool{n}d")
    out = output_size if n == 1 and not isinstance(output_size, (tuple, list)) else list(ntuple(output_size, n))
    if n == 1:
        out = out[0] if isinstance(out, list) else out
    return (lambda t: fn(t, out)), x.ndim == n + 1


def _adaptive_max(n: int, x: np.ndarray, output_size: Any, return_indices: bool = False) -> tuple[Call, bool]:
    fn = getattr(_paddle().nn.functional, f"adaptive_max_pool{n}d")
    out = ntuple(output_size, n)
    size = out[0] if n == 1 else list(out)

    def call(t: Any) -> Any:
        y, mask = fn(t, size, return_mask=True)
        return y, _checked(t, mask)

    return call, x.ndim == n + 1


def _lp(n: int, x: np.ndarray, norm_type: Any, kernel_size: Any, stride: Any = None,
        ceil_mode: bool = False) -> tuple[Call, bool]:
    require(n < 3, "Paddle has no lp_pool3d")
    fn = getattr(_paddle().nn.functional, f"lp_pool{n}d")
    k, s = ntuple(kernel_size, n), _stride(stride, n)
    return (lambda t: fn(t, float(norm_type), k, s, 0, ceil_mode=ceil_mode)), x.ndim == n + 1


def _unpool(n: int, x: np.ndarray, indices: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
            output_size: Any = None) -> tuple[Call, bool]:
    fn = getattr(_paddle().nn.functional, f"max_unpool{n}d")
    k, s, p = ntuple(kernel_size, n), _stride(stride, n), ntuple(padding, n)
    out = None if output_size is None else list(output_size)
    return (lambda t, i: fn(t, i, k, s, p, output_size=out)), x.ndim == n + 1


def _pair(make: Callable[..., tuple[Call, bool]], n: int, ports: int = 1) -> tuple[Call, Call]:
    def forward(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        inputs, rest = [x, *args[:ports - 1]], args[ports - 1:]
        call, unbatched = make(n, *inputs, *rest, **kwargs)
        out = _forward(call, inputs, unbatched)
        if kwargs.get("return_indices"):
            return out
        return out[0] if isinstance(out, tuple) else out

    def backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        inputs, rest = [x, *args[:ports - 1]], args[ports - 1:]
        call, unbatched = make(n, *inputs, *rest, **kwargs)
        return _gradient(call, g, inputs, (0,), unbatched)[0]

    return forward, backward


for _n in (1, 2, 3):
    for _name, _make, _ports in (("avg_pool", _avg, 1), ("max_pool", _max, 1), ("adaptive_avg_pool", _adaptive_avg, 1),
                                 ("adaptive_max_pool", _adaptive_max, 1), ("lp_pool", _lp, 1),
                                 ("max_unpool", _unpool, 2)):
        globals()[f"{_name}{_n}d"], globals()[f"{_name}{_n}d_backward"] = _pair(_make, _n, _ports)


def _avg_fns(n: int) -> tuple[Call, Call]:
    fwd, bwd = _pair(_avg, n)

    def forward(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                count_include_pad: bool = True, divisor_override: Any = None) -> Any:
        return fwd(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def backward(g: np.ndarray, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> Any:
        return bwd(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    return forward, backward


# the average pools with explicit signatures: no ``dilation`` parameter, so the runner counts dilated cases as
# not expressible (Paddle's average has no dilation)
avg_pool1d, avg_pool1d_backward = _avg_fns(1)
avg_pool2d, avg_pool2d_backward = _avg_fns(2)
avg_pool3d, avg_pool3d_backward = _avg_fns(3)


# ----------------------------------------------------------------------------------------------- resampling

_MODES = {"nearest", "linear", "bilinear", "trilinear", "bicubic", "area"}


def _interp(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
            align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
            antialias: bool = False) -> Call:
    require(mode in _MODES, f"Paddle's interpolate has no mode {mode!r}")
    F = _paddle().nn.functional
    sz = None if size is None else (list(size) if isinstance(size, (tuple, list)) else size)
    sf = None if scale_factor is None else (list(scale_factor) if isinstance(scale_factor, (tuple, list))
                                            else scale_factor)
    # align_mode=0 is the half-pixel rule (torch's align_corners=False); align_corners is passed on as given, so
    # that a call torch refuses (align_corners with nearest) reaches Paddle's own check
    return lambda t: F.interpolate(t, size=sz, scale_factor=sf, mode=mode, align_corners=bool(align_corners),
                                   align_mode=0, recompute_scale_factor=recompute_scale_factor,
                                   antialias=bool(antialias))


def interpolate(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    return _forward(_interp(x, *args, **kwargs), [x])


def interpolate_backward(g: np.ndarray, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    return _gradient(_interp(x, *args, **kwargs), g, [x], (0,))[0]


def _grid(mode: str = "bilinear", padding_mode: str = "zeros", align_corners: bool | None = None) -> Call:
    F = _paddle().nn.functional
    # torch's align_corners=None is False; Paddle's default is True, so it is always passed
    return lambda t, grid: F.grid_sample(t, grid, mode=mode, padding_mode=padding_mode,
                                         align_corners=bool(align_corners))


def grid_sample(x: np.ndarray, grid: np.ndarray, **kwargs: Any) -> np.ndarray:
    return _forward(_grid(**kwargs), [x, grid])


def grid_sample_backward(g: np.ndarray, x: np.ndarray, grid: np.ndarray, **kwargs: Any) -> tuple[np.ndarray, ...]:
    return _gradient(_grid(**kwargs), g, [x, grid], (0, 1))


def _affine(size: Any, align_corners: bool | None = None) -> Call:
    F = _paddle().nn.functional
    return lambda theta: F.affine_grid(theta, list(size), align_corners=bool(align_corners))


def affine_grid(theta: np.ndarray, size: Any, align_corners: bool | None = None) -> np.ndarray:
    return _forward(_affine(size, align_corners), [theta])


def affine_grid_backward(g: np.ndarray, theta: np.ndarray, size: Any, align_corners: bool | None = None) -> np.ndarray:
    return _gradient(_affine(size, align_corners), g, [theta], (0,))[0]


FINDINGS: list[dict[str, Any]] = []
