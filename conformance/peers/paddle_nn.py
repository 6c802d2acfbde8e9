"""PaddlePaddle (CPU wheel) as its users call it: paddle.nn.functional's pools, interpolate, grid_sample and
affine_grid on NCHW tensors, gradients by paddle.grad of the same call. Only layout is adapted here (a batch axis
for unbatched input, a unit height for a 1-d average with divisor_override, int32 masks read as int64); torch's
arguments map onto Paddle's where they mean the same thing (count_include_pad = not exclusive, align_corners=None =
False with align_mode=0, the half-pixel rule); a call Paddle has no argument or CPU kernel for is not expressible."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import NotExpressible, dense_average, ntuple, require

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
    fn = getattr(_paddle().nn.functional, f"lp_pool{n}d")
    k, s = ntuple(kernel_size, n), _stride(stride, n)
    return (lambda t: fn(t, float(norm_type), k, s, 0, ceil_mode=ceil_mode)), x.ndim == n + 1


def _unpool(n: int, x: np.ndarray, indices: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
            output_size: Any = None) -> tuple[Call, bool]:
    fn = getattr(_paddle().nn.functional, f"max_unpool{n}d")
    k, s, p = ntuple(kernel_size, n), _stride(stride, n), ntuple(padding, n)
    # torch's output_size may name the whole shape or the spatial axes; Paddle's the spatial axes
    out = None if output_size is None else list(output_size)[-n:]
    if out is not None and n == 1:
        out = [*x.shape[:-1], *out] if x.ndim == 3 else [1, *x.shape[:-1], *out]  # max_unpool1d: the whole shape
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
        if (_name, _n) != ("lp_pool", 3):  # Paddle has no lp_pool3d: the runner skips it as "has no"
            globals()[f"{_name}{_n}d"], globals()[f"{_name}{_n}d_backward"] = _pair(_make, _n, _ports)


def _avg_fns(n: int) -> tuple[Call, Call]:
    return dense_average(*_pair(_avg, n))


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
    n = x.ndim - 2
    if mode == "area" and scale_factor is not None and size is None:
        # torch's area is adaptive_avg_pool to floor(L * scale): the scale reaches nothing but the output size,
        # and Paddle's area takes a size only
        size, scale_factor = [math.floor(L * f) for L, f in zip(x.shape[2:], ntuple(scale_factor, n))], None
    if mode == "nearest" and n == 1:
        # Paddle's nearest takes 4-D/5-D input: 1-d as one row (its height copied)
        sz1 = None if size is None else [1, *ntuple(size, 1)]
        sf1 = None if scale_factor is None else [1.0, *ntuple(scale_factor, 1)]
        return lambda t: F.interpolate(t.unsqueeze(2), size=sz1, scale_factor=sf1, mode=mode,
                                       align_corners=bool(align_corners), align_mode=0,
                                       recompute_scale_factor=recompute_scale_factor).squeeze(2)
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
    require(mode in ("bilinear", "nearest"), f"Paddle's grid_sample has no mode {mode!r}")
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


_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]
_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_ADAPTIVE_AVG = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"]
_ADAPTIVE_MAX = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]
_LP = ["lp_pool1d", "lp_pool2d"]
_UNPOOL = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
_POOLS = _AVG + _MAX + _LP + _UNPOOL
_FLOAT32_SCALE = ("Paddle's CPU pool gradients (pool2d_grad/pool3d_grad, and so adaptive_avg_pool and area "
                  "interpolate) "
                  "multiply by the window's 1/count as a float32 scale also for float64 tensors, so float64 gradients "
                  "carry float32 rounding (1/3 -> 0.3333333432674408)")
_NAN_MAX = ("Paddle's max pools start each window from -FLT_MAX and keep a tap only if it is strictly greater, so NaN "
            "never wins (torch: NaN wins, at the last NaN) and a window of NaN/-inf cells gives -3.4028e38 with "
            "mask -1; "
            "its gradient kernel then writes at offset -1 (heap corruption: the adapter refuses that gradient)")
_CEIL = ("Paddle's ceil_mode output size is ceil((L + 2p - k) / s) + 1 without torch's rule that drops a last window "
         "starting in the right padding, so such a window is computed (an extra output); avg_pool1d and lp_pool1d then "
         "fail in their own reshape (ValueError 'ReshapeOp is invalid') and the 2-d/3-d gradient of that window reads "
         "memory it never wrote (two runs differ in their bits)")
_LINEAR_F32 = ("Paddle's CPU interpolate kernels (linear/bilinear/trilinear/bicubic, also antialiased) compute the "
               "source coordinates and weights in float (float32) for float64 tensors, so float64 results carry "
               "float32 rounding (relative error ~1e-7)")
_ACCEPTS = ("Paddle computes geometries torch refuses (padding over half the kernel, an output size below 1, a "
            "stride of "
            "0 for max_unpool) instead of raising")
FINDINGS: list[dict[str, Any]] = [
    {"ops": _MAX + _ADAPTIVE_MAX, "flags": [], "checks": ["output", "indices", "crash"], "rule": _NAN_MAX,
     "upstream": "new"},
    {"ops": _AVG + _LP, "flags": ["ceil_mode"], "checks": ["crash", "two runs"], "rule": _CEIL,
     "upstream": "https://github.com/pytorch/pytorch/issues/116420"},
    {"ops": _AVG + _LP, "flags": ["ceil_overhang"], "checks": ["crash", "two runs"], "rule": _CEIL,
     "upstream": "https://github.com/pytorch/pytorch/issues/116420"},
    {"ops": _AVG + _LP, "flags": ["random"], "checks": ["crash", "two runs"], "rule": _CEIL,
     "upstream": "https://github.com/pytorch/pytorch/issues/116420"},
    {"ops": _AVG, "flags": ["divisor_override"], "checks": ["output", "grad_input"],
     "rule": "Paddle scales divisor_override by the fraction of the kernel its window counts (the cells inside the "
             "input for exclusive=True, inside input + padding otherwise; ceil-mode overhangs too), where torch "
             "divides "
             "every window by divisor_override alone", "upstream": "new"},
    {"ops": _AVG, "flags": ["ceil_mode"], "checks": ["output"], "rule": _CEIL,
     "upstream": "https://github.com/pytorch/pytorch/issues/116420"},
    {"ops": _AVG + _ADAPTIVE_AVG, "flags": [], "dtypes": ["float64"], "checks": ["grad_input"], "rule": _FLOAT32_SCALE,
     "upstream": "new"},
    {"ops": _POOLS, "flags": ["random"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _UNPOOL, "flags": ["random"], "checks": ["crash"],
     "rule": "Where torch's default output size has an empty axis (an empty result), Paddle's max_unpool checks each "
             "index against the empty plane and raises ValueError ('index should less than output tensor height * "
             "output tensor width')", "upstream": "new"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _UNPOOL, "flags": ["max_unpool_argument_rules"], "checks": ["raises"], "rule": _ACCEPTS, "upstream": "new"},
    {"ops": _UNPOOL, "flags": ["max_unpool_duplicate_indices"], "checks": ["grad_input"],
     "rule": "Paddle's max_unpool gradient gathers grad_output at every input's index, so a duplicate whose write lost "
             "also gets gradient (torch's own backward does the same; poolspec gives it to the written element only)",
     "upstream": "new"},
    {"ops": _LP, "flags": ["ceil_partial_window"], "checks": ["output", "grad_input"],
     "rule": "Paddle's lp_pool sums a ceil-mode window's cells (the true p-norm of the partial window), where torch "
             "computes (avg_pool(x^p) * k)^(1/p), which scales a partial window by k / (cells in the window)",
     "upstream": "new"},
    {"ops": _LP, "flags": ["lp_pool_double_backward_at_zero_sum"], "checks": ["output", "grad_input"],
     "rule": "Paddle's lp_pool computes in float32 for float64 input and its gradient at a window whose power sum "
     "is 0 is "
             "NaN (x / S^(1-1/p) at S = 0), where torch's is 0 (the sign/relu chain)", "upstream": "new"},
    {"ops": _LP, "flags": [], "dtypes": ["float64"], "checks": ["output", "grad_input"],
     "rule": "Paddle's lp_pool CPU kernel computes in float32 for float64 input (1.2747548818588257 for "
             "1.2747548783981961), and for norm_type = inf it gives other values than torch's formula "
             "(sign(S) relu(|S|) k)^(1/p) at p = inf", "upstream": "new"},
    {"ops": _LP, "flags": [], "checks": ["output", "grad_input"],
     "rule": "Paddle's lp_pool for norm_type = +-inf or negative p differs from torch's (avg_pool(x^p) k)^(1/p) "
             "formula, and its float32 gradient is NaN at cells where torch's is finite", "upstream": "new"},
    *({"ops": ["affine_grid"], "flags": flags, "checks": ["output", "grad_input"],
       "rule": "Paddle's affine_grid with align_corners=True divides by (L - 1) on a size-1 axis (NaN), where torch's "
               "base grid is 0 there (r004: size [3, 3, 8, 1])", "upstream": "new"}
      for flags in (["align_corners", "size_1_axis"], ["random"])),
    {"ops": ["affine_grid", "grid_sample"], "flags": [], "checks": ["raises"],
     "rule": "Paddle's affine_grid takes a theta whose shape or batch does not match the size and an empty size, and "
             "grid_sample an empty spatial input, where torch raises", "upstream": "new"},
    *({"ops": ["grid_sample"], "flags": flags, "checks": ["grad_grid"],
       "rule": "Paddle's grid gradient passes through the border/reflection clip (and at zeros padding's edge taps), "
               "where torch's is 0 for a coordinate clipped to the edge", "upstream": "new"}
      for flags in (["out_of_range"], ["reflection_fold"])),
    {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
     "rule": "Paddle's linear and trilinear interpolate take uint8 tensors (float weights, truncated), where torch "
             "refuses uint8 in those modes", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"],
     "rule": "Paddle resizes uint8 with float weights and truncates to uint8, where torch uses int16 fixed-point "
     "weights "
             "and rounds", "upstream": "https://github.com/PaddlePaddle/Paddle/pull/11576"},
    {"ops": ["interpolate"], "flags": ["to_1"],
     "rule": "For an output size of 1 (align_corners=False) Paddle's bilinear, trilinear and bicubic forward and "
             "its linear backward use a ratio of 0, reading (or sending the gradient to) input index 0, where torch "
             "samples the centre (L - 1) / 2; Paddle's 1-d linear forward does take the centre, so its "
             "gradient is not that of its forward", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["nearest", "equal"],
     "rule": "Paddle's nearest samples floor(i * L / O) whether or not a scale_factor is given, so an axis whose "
     "size stays "
             "the same under a scale_factor other than 1 is copied, where torch samples floor(i / scale_factor)",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["bicubic", "equal"],
     "rule": "Paddle's bicubic samples at L / O, copying an axis whose size stays the same under a scale_factor other "
             "than 1, where torch applies 1 / scale_factor", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["area"], "dtypes": ["float64"], "checks": ["grad_input"], "rule": _FLOAT32_SCALE,
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": [], "dtypes": ["float64"], "checks": ["output", "grad_input"],
     "rule": _LINEAR_F32, "upstream": "https://github.com/PaddlePaddle/Paddle/pull/74382"},
]
