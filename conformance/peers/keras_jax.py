"""Keras 3 ops on its JAX backend: keras.ops.average_pool / max_pool / adaptive_average_pool / adaptive_max_pool
and keras.ops.image.resize, all with data_format="channels_first" (torch's layout).

Keras pools have padding "valid" (torch's padding=0) or "same" (TensorFlow's asymmetric padding, never torch's
symmetric one), no dilation, ceil mode or divisor; resize takes a 2-d output size only (4-d input, no scale
factor, no align_corners) and has no torch "nearest" (keras' nearest samples pixel centres: nearest-exact),
no A = -0.75 bicubic and, on JAX, no area. An unbatched pool input gets a batch axis of 1 and loses it again.
"""

from __future__ import annotations

import math
from typing import Any

from ._common import ceil_adds_window, ntuple, per_rank, require

NAME = "keras"
BACKEND = "jax"
IMPORTS = ("keras",)
API = ("keras.ops.average_pool / max_pool (padding='valid') / adaptive_average_pool / adaptive_max_pool, "
       "keras.ops.image.resize, data_format='channels_first', KERAS_BACKEND=jax")


def _keras() -> Any:
    import os

    os.environ["KERAS_BACKEND"] = "jax"  # before keras' first import: the backend is fixed then
    import keras

    require(keras.backend.backend() == "jax", f"keras runs on {keras.backend.backend()}, not jax")
    return keras


def version() -> str:
    import jax

    return f"keras {_keras().__version__} (jax {jax.__version__})"


def _batched(x: Any, n: int, call: Any) -> Any:
    """keras pools take (N, C, *S) only: an unbatched (C, *S) input gets a batch axis of 1 and loses it again."""
    if x.ndim == n + 2:
        return call(x)
    y = call(x[None])
    return tuple(v[0] for v in y) if isinstance(y, tuple) else y[0]


def _geometry(x: Any, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool) -> tuple[Any, Any]:
    k, p = ntuple(kernel_size, n), ntuple(padding, n)
    s = ntuple(stride, n) if stride not in (None, ()) else k
    require(set(p) <= {0}, "padding: keras pools pad 'valid' (none) or 'same' (TensorFlow's asymmetric rule)")
    if ceil_mode and min(k + s) > 0:  # invalid geometries go to the peer as they are
        require(not ceil_adds_window(x.shape[-n:], k, s, p), "ceil_mode adds a window: keras pools have none")
    return k, s


def _avg(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> Any:
    require(set(ntuple(dilation, n)) == {1}, "dilation: keras.ops.average_pool has no dilation")
    import jax.numpy as jnp

    keras = _keras()
    require(divisor_override is None, "divisor_override: keras' average_pool divides by the window size")
    require(jnp.issubdtype(x.dtype, jnp.floating), f"{x.dtype}: keras' average_pool returns floats")
    k, s = _geometry(x, n, kernel_size, stride, padding, ceil_mode)  # padding 0: count_include_pad is moot
    return _batched(x, n, lambda b: keras.ops.average_pool(b, k, s, "valid", "channels_first"))


def _max(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
         ceil_mode: bool = False, return_indices: bool = False) -> Any:
    keras = _keras()
    require(set(ntuple(dilation, n)) == {1}, "dilation: keras' max_pool has none")
    k, s = _geometry(x, n, kernel_size, stride, padding, ceil_mode)
    y = _batched(x, n, lambda b: keras.ops.max_pool(b, k, s, "valid", "channels_first"))
    return (y, None) if return_indices else y  # values only


def _adaptive(x: Any, n: int, output_size: Any, op: str, return_indices: bool = False) -> Any:
    keras = _keras()
    out = tuple(L if o is None else o for L, o in zip(x.shape[-n:], ntuple(output_size, n)))  # None keeps L
    fn = getattr(keras.ops, op)
    y = _batched(x, n, lambda b: fn(b, out, data_format="channels_first"))
    return (y, None) if return_indices else y


def _adaptive_avg(x: Any, n: int, output_size: Any) -> Any:
    return _adaptive(x, n, output_size, "adaptive_average_pool")


def _adaptive_max(x: Any, n: int, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive(x, n, output_size, "adaptive_max_pool", return_indices)


globals().update(per_rank(_avg, _max, _adaptive_avg, _adaptive_max))


# (torch mode, antialias) -> keras interpolation and antialias
_INTERPOLATIONS = {
    ("nearest-exact", False): ("nearest", False),  # pixel centres, as torch's nearest-exact
    ("bilinear", False): ("bilinear", False), ("bilinear", True): ("bilinear", True),
    ("bicubic", True): ("bicubic", True),  # Keys A = -0.5, as torch's antialias bicubic (PIL)
    ("lanczos", True): ("lanczos3", True),
}
_WHY_NOT = {
    "nearest": "torch nearest takes floor(i * L / O); keras' nearest samples pixel centres (nearest-exact)",
    "bicubic": "torch bicubic without antialias is A = -0.75 with replicated edges; keras' bicubic is A = -0.5",
    "lanczos": "lanczos without antialias: poolspec's own reference is jax.image's lanczos3 (a circular check)",
    "area": "keras' resize on JAX has no area interpolation",
    "linear": "keras resizes 2-d images only; torch's linear is 1-d",
    "trilinear": "keras resizes 2-d images only; torch's trilinear is 3-d",
}


def interpolate(x: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None, antialias: bool = False) -> Any:
    keras = _keras()
    require((mode, bool(antialias)) in _INTERPOLATIONS, _WHY_NOT.get(mode, f"mode={mode!r} antialias={antialias}"))
    method, aa = _INTERPOLATIONS[mode, bool(antialias)]
    require(x.ndim == 4, f"{x.ndim}-d input: keras resizes 2-d images only")
    require(not align_corners, "align_corners=True: keras' resize has no corner alignment")
    require(size is None or scale_factor is None, "size and scale_factor together: resize takes one size")
    require(size is not None or scale_factor is not None, "neither size nor scale_factor")
    if size is not None:
        out = tuple(int(o) for o in ntuple(size, 2))
    else:
        sf = tuple(float(f) for f in ntuple(scale_factor, 2))
        out = tuple(math.floor(L * f) for L, f in zip(x.shape[2:], sf))  # torch's size rule names the shape only
        # keras scales by O / L: torch's 1 / sf is the same scale only where recomputed or where L * sf == O
        require(recompute_scale_factor or all(L * f == O for L, f, O in zip(x.shape[2:], sf, out)),
                f"scale_factor {sf} is not {out} / {tuple(x.shape[2:])}: keras' resize takes a size only")
    return keras.ops.image.resize(x, out, interpolation=method, antialias=aa, data_format="channels_first")


_ADAPTIVE = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
             "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]
_MAX = ["max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]
_NAN = ("in a window holding NaN (value NaN in both) the gradient, JAX's select_and_scatter_add with >=, lets any "
        "later tap replace the NaN and goes to the largest tap after the window's last NaN (or into padding, lost), "
        "torch's to the last NaN; data-dependent (the catalogue has no NaN flag).")

FINDINGS: list[dict[str, Any]] = [
    {"ops": _ADAPTIVE, "flags": ["empty_output"], "checks": ["crash"],
     "rule": "keras' adaptive pools size their windows as ceil(L / O), so an output size of 0 raises "
             "ZeroDivisionError where torch returns an empty array.", "upstream": "new"},
    {"ops": _ADAPTIVE, "flags": ["integer_input"], "checks": ["raises"],
     "rule": "keras' adaptive_max_pool takes integer input (a reduce_window max), where torch raises TypeError.",
     "upstream": "new"},
    {"ops": ["adaptive_max_pool2d", "adaptive_max_pool3d"], "flags": [], "checks": ["grad_input"],
     "rule": "keras' adaptive_max_pool reduces one spatial axis after another (a stride-1 reduce_window max of the "
             "small and the big window, then a gather, first axis first), so among tied maxima its gradient goes to "
             "the first in column-major order (last axis outermost), torch's to the first in row-major order; and " +
             _NAN, "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_input"], "rule": "As for JAX's reduce_window max: " + _NAN,
     "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_grad_output"],
     "rule": "The second order is JAX's forward-mode select_and_gather_add, which picks a later tap than the first "
             "among tied maxima and the -inf init in an all -inf window (a 0 where torch gathers at the first tap); "
             "data-dependent.", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"], "checks": ["output"],
     "rule": "keras.ops.image.resize resamples uint8 through jax.image.resize in float32, both axes before one "
             "rounding (half to even, saturated to 0..255), where torch resamples one axis at a time with int16 "
             "fixed-point weights and rounds and clamps after each pass: 1 apart in a few pixels, up to 9 where a "
             "Lanczos overshoot is clamped between torch's passes", "upstream": "new"},
]
