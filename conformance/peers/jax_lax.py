"""JAX as its users write pooling and resizing: jax.lax.reduce_window (sum / count, max) and jax.image.

Decisions: count_include_pad=False is sum / reduce_window of ones over the same padding (the standard idiom);
an adaptive pool whose output size divides the input is reduce_window with k = s = L / O (torch's windows are
then exactly those); align_corners=True is scale_and_translate with the recipe its docstring gives for torch's
align_corners=True; bicubic is jax.image's "cubic-pytorch" (documented as PyTorch's bicubic) and area its "area"
(same name and purpose; FINDINGS says where the two rules part).
"""

from __future__ import annotations

import math
from typing import Any

from ._common import ceil_adds_window, even_adaptive_window, ntuple, per_rank, require

NAME = "jax"
BACKEND = "jax"
IMPORTS = ("jax",)
API = ("jax.lax.reduce_window (add / window count or reduce_window of ones; max with the dtype's lowest init; "
       "window_dilation), jax.image.resize / jax.image.scale_and_translate")


def version() -> str:
    import jax

    return f"jax {jax.__version__}"


# ----------------------------------------------------------------------------------------------------- pools

def _window(x: Any, n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1,
            ceil_mode: bool = False) -> dict[str, Any]:
    """reduce_window's arguments for torch's geometry (leading batch/channel axes get a window of 1)."""
    k, p, d = ntuple(kernel_size, n), ntuple(padding, n), ntuple(dilation, n)
    s = ntuple(stride, n) if stride not in (None, ()) else k
    if ceil_mode and min(k + s + d) > 0:  # invalid geometries go to the peer as they are
        require(not ceil_adds_window(x.shape[-n:], k, s, p, d), "ceil_mode adds a window: reduce_window has none")
    lead = x.ndim - n
    return dict(window_dimensions=(1,) * lead + k, window_strides=(1,) * lead + s,
                padding=((0, 0),) * lead + tuple((q, q) for q in p), window_dilation=(1,) * lead + d)


def _avg(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> Any:
    require(set(ntuple(dilation, n)) == {1}, "dilation: poolspec's extension, not mapped onto window_dilation")
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    require(divisor_override is None, "divisor_override: reduce_window's average divides by the window count")
    require(jnp.issubdtype(x.dtype, jnp.floating), f"{x.dtype}: sum / count is not an integer average")
    w = _window(x, n, kernel_size, stride, padding, ceil_mode=ceil_mode)
    zero = np.zeros((), x.dtype)  # a concrete identity, also under jit: lax then takes it for a (differentiable) sum
    total = lax.reduce_window(x, zero, lax.add, **w)
    if count_include_pad:  # floor-mode windows never pass the right padding: each counts prod(k) cells
        return total / math.prod(w["window_dimensions"])
    return total / lax.reduce_window(jnp.ones(x.shape, x.dtype), zero, lax.add, **w)


def _max(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
         ceil_mode: bool = False, return_indices: bool = False) -> Any:
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    w = _window(x, n, kernel_size, stride, padding, dilation, ceil_mode)
    # -inf, or an integer dtype's lowest value: the concrete identity of max (lax then takes it for a max pool)
    low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    y = lax.reduce_window(x, np.array(low, x.dtype), lax.max, **w)
    return (y, None) if return_indices else y  # values only: reduce_window has no argmax


def _adaptive_avg(x: Any, n: int, output_size: Any) -> Any:
    k = even_adaptive_window(x, n, output_size, "reduce_window")
    return _avg(x, n, k, k)


def _adaptive_max(x: Any, n: int, output_size: Any, return_indices: bool = False) -> Any:
    k = even_adaptive_window(x, n, output_size, "reduce_window")
    return _max(x, n, k, k, return_indices=return_indices)


globals().update(per_rank(_avg, _max, _adaptive_avg, _adaptive_max))


# ------------------------------------------------------------------------------------------------ interpolate

# (torch mode, antialias) -> jax.image method and antialias
_METHODS = {
    ("nearest-exact", False): ("nearest", False),  # half-pixel centres, as torch's nearest-exact
    ("linear", False): ("linear", False), ("bilinear", False): ("linear", False),
    ("trilinear", False): ("linear", False), ("bilinear", True): ("linear", True),
    ("bicubic", False): ("cubic-pytorch", False),  # A = -0.75 with replicated edges, "matching PyTorch"
    ("bicubic", True): ("cubic", True),  # Keys A = -0.5, as torch's antialias bicubic (PIL)
    ("lanczos", True): ("lanczos3", True),
    ("area", False): ("area", False),
}
_WHY_NOT = {
    "nearest": "torch nearest takes floor(i * L / O); jax.image nearest samples pixel centres (nearest-exact)",
    "lanczos": "lanczos without antialias: poolspec's own reference is jax.image's lanczos3 (a circular check)",
}


def _sizes_and_scales(x: Any, size: Any, scale_factor: Any, recompute_scale_factor: Any,
                     mode: str) -> tuple[tuple[int, ...], tuple[float | None, ...]]:
    """Output sizes and, per axis, the scale a user passes on (None: the output size alone decides); torch's
    output-size rule O = floor(L * sf) only names the shape of the call."""
    n = x.ndim - 2
    require(size is None or scale_factor is None, "size and scale_factor together: one output shape is taken")
    require(size is not None or scale_factor is not None, "neither size nor scale_factor")
    spatial = tuple(x.shape[2:])
    if size is not None:
        return tuple(int(o) for o in ntuple(size, n)), (None,) * n
    sf = tuple(float(f) for f in ntuple(scale_factor, n))
    out = tuple(math.floor(L * f) for L, f in zip(spatial, sf))
    reaches = not recompute_scale_factor and mode != "area"  # else torch uses L / O, the shape's own scale
    return out, tuple(f if reaches and L * f != O else None for L, O, f in zip(spatial, out, sf))


def interpolate(x: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None, antialias: bool = False) -> Any:
    import jax
    import jax.numpy as jnp

    require((mode, bool(antialias)) in _METHODS, _WHY_NOT.get(mode, f"mode={mode!r} antialias={antialias}"))
    method, aa = _METHODS[mode, bool(antialias)]
    require(method == "nearest" or jnp.issubdtype(x.dtype, jnp.floating),
            f"{x.dtype}: jax.image returns floats for integer input")
    out, scales = _sizes_and_scales(x, size, scale_factor, recompute_scale_factor, mode)
    shape = tuple(x.shape[:2]) + out
    if not align_corners and all(f is None for f in scales):
        return jax.image.resize(x, shape, method, antialias=aa)
    require(method != "nearest", "a scale other than O / L: scale_and_translate has no nearest")
    if align_corners:
        # the docstring's recipe for torch's align_corners=True; its scale is 0 or undefined on 1-element axes
        require(min(out + tuple(x.shape[2:])) > 1, "align_corners recipe on a 1-element axis")
        scale = tuple((O - 1) / (L - 1) for L, O in zip(x.shape[2:], out))
        shift = tuple(0.5 * (1 - f) for f in scale)
    else:
        scale = tuple(O / L if f is None else f for L, O, f in zip(x.shape[2:], out, scales))
        shift = (0.0,) * len(out)
    return jax.image.scale_and_translate(x, shape, tuple(range(2, x.ndim)), jnp.asarray(scale),
                                         jnp.asarray(shift), method, antialias=aa)


_MAX = ["max_pool1d", "max_pool2d", "max_pool3d"]
_ADAPTIVE_MAX = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]
_POOLS = ["avg_pool1d", "avg_pool2d", "avg_pool3d", *_MAX]
_NO_DILATED_VJP = ("jax.vjp of reduce_window max with window_dilation raises NotImplementedError (no transpose of "
                   "select_and_gather_add for dilated windows): a dilated max pool has values but no gradient.")
_AREA = ("jax.image's area weights each input pixel by the fraction of it the output pixel's footprint covers "
         "(TensorFlow's area), torch's area averages adaptive_avg_pool's integer windows [floor(iL/O), "
         "ceil((i+1)L/O)): the two agree only where O divides L or L divides O.")
_EQUAL = ("torch copies an axis whose output size equals its input size even when a scale_factor != 1 reaches the "
          "kernel (the linear modes, and the antialias modes in their forward); scale_and_translate resamples it at "
          "scale sf, shifting each sample by (1/sf - 1)(i + 1/2).")
_AA_CORNERS = ("With antialias=True torch's align_corners only changes the ratio to r = (L-1)/(O-1) and keeps the "
               "half-pixel centres r(i+1/2) - 1/2, while scale_and_translate's documented align_corners recipe (scale "
               "(O-1)/(L-1), translation (1-scale)/2) samples input r*i: it matches torch without antialias only.")

FINDINGS: list[dict[str, Any]] = [
    {"ops": _MAX, "flags": ["dilation"], "checks": ["crash"], "rule": _NO_DILATED_VJP, "upstream": "new"},
    {"ops": _MAX, "flags": ["empty_window"], "checks": ["crash"], "rule": _NO_DILATED_VJP, "upstream": "new"},
    {"ops": _MAX, "flags": ["random"], "checks": ["crash"], "rule": _NO_DILATED_VJP, "upstream": "new"},
    {"ops": _MAX + _ADAPTIVE_MAX, "flags": [], "checks": ["grad_input"],
     "rule": "In a window holding NaN (value NaN in both) JAX's max-pool gradient, select_and_scatter_add keeping its "
             "pick only while it is >= the next tap, lets any later tap replace the NaN, so the gradient goes to the "
             "largest tap after the window's last NaN (or into padding, lost), torch's to the last NaN; "
             "data-dependent (the catalogue has no NaN flag; two max cases in three hold NaN).",
     "upstream": "new"},
    {"ops": _MAX + _ADAPTIVE_MAX, "flags": [], "checks": ["grad_grad_output"],
     "rule": "JAX's second order through a max pool is its forward-mode select_and_gather_add (a reduce_window over "
             "(value, tangent) pairs), which picks a later tap than the first among tied maxima and the -inf init in "
             "an all -inf window (a 0 where torch gathers at the first tap), unlike its own first-order gradient and "
             "torch; data-dependent (ties are everywhere in the max cases).",
     "upstream": "new"},
    {"ops": _MAX, "flags": ["max_pool_empty_window"], "checks": ["raises"],
     "rule": "reduce_window gives a window with no input cell its init (-inf, integers the dtype's lowest), as "
             "torch's values do, where poolspec refuses the call.",
     "upstream": "https://github.com/pytorch/pytorch/issues/114216"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"],
     "rule": "reduce_window takes any non-negative padding: padding over half the kernel (windows wholly in padding, "
             "-inf) is computed, where torch raises.", "upstream": "new"},
    {"ops": _POOLS, "flags": ["random"], "checks": ["raises"],
     "rule": "reduce_window computes every geometry torch refuses: padding over half the (dilated) kernel, an output "
             "size below 1 (an empty axis) and, for avg_pool3d, a kernel larger than the input.",
     "upstream": "https://github.com/jax-ml/jax/issues/3973"},
    {"ops": ["interpolate"], "flags": ["area", "up"], "rule": _AREA, "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["area", "down"], "rule": _AREA, "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["equal", "scale"], "rule": _EQUAL, "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["equal", "scale_no_recompute"], "rule": _EQUAL, "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["bilinear_antialias", "align_corners"], "rule": _AA_CORNERS,
     "upstream": "https://github.com/jax-ml/jax/issues/24106"},
    {"ops": ["interpolate"], "flags": ["bicubic_antialias", "align_corners"], "rule": _AA_CORNERS,
     "upstream": "https://github.com/jax-ml/jax/issues/24106"},
    {"ops": ["interpolate"], "flags": ["wrong_rank"], "checks": ["raises"],
     "rule": "jax.image methods take any rank ('bilinear' is linear on every axis), where torch ties linear to 3-d, "
             "bilinear/bicubic/antialias to 4-d and trilinear to 5-d input.", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["random"], "checks": ["raises"],
     "rule": "jax.image methods take any rank and an output size of 0 (an empty axis), where torch raises for a "
             "mode/rank mismatch and for O < 1.", "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["random"], "checks": ["output"],
     "rule": "Random calls failing by the grid's rules: area with non-dividing sizes (r025, r035, r055, r071, r083), "
             "antialias with align_corners (r003, r058) and an equal-size axis under a scale_factor (r093).",
     "upstream": "new"},
]
