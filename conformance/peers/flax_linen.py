"""Flax's pooling functions (flax.linen.avg_pool / max_pool), channels-last, with explicit (lo, hi) padding.

flax has no dilation, ceil mode, divisor or adaptive pooling: an adaptive pool whose output size divides the input
is the pool with window = stride = L / O (torch's adaptive windows are then exactly those), otherwise not
expressible. flax has no resizing (interpolate is left out).
"""

from __future__ import annotations

from typing import Any

from ._common import ceil_adds_window, even_adaptive_window, ntuple, per_rank, require

NAME = "flax"
BACKEND = "jax"
IMPORTS = ("flax",)
API = "flax.linen.avg_pool(count_include_pad=...) / flax.linen.max_pool, channels-last, padding ((lo, hi), ...)"


def version() -> str:
    import flax
    import jax

    return f"flax {flax.__version__} (jax {jax.__version__})"


def _pool(x: Any, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, **kwargs: Any) -> Any:
    """Call flax's pool on the channels-last view (N, *S, C), or (*S, C) unbatched, and move channels back."""
    import flax.linen as nn
    import jax.numpy as jnp

    k, p = ntuple(kernel_size, n), ntuple(padding, n)
    s = ntuple(stride, n) if stride not in (None, ()) else k
    if ceil_mode and min(k + s) > 0:  # invalid geometries go to the peer as they are
        require(not ceil_adds_window(x.shape[-n:], k, s, p), "ceil_mode adds a window: flax pools have none")
    pool = nn.avg_pool if "count_include_pad" in kwargs else nn.max_pool
    c = x.ndim - n - 1  # the channel axis
    y = pool(jnp.moveaxis(x, c, -1), k, s, tuple((q, q) for q in p), **kwargs)
    return jnp.moveaxis(y, -1, c)


def _avg(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> Any:
    require(set(ntuple(dilation, n)) == {1}, "dilation: flax.linen.avg_pool has no window dilation")
    import jax.numpy as jnp

    require(divisor_override is None, "divisor_override: flax's avg_pool divides by the window count")
    require(jnp.issubdtype(x.dtype, jnp.floating), f"{x.dtype}: flax's avg_pool returns floats")
    return _pool(x, n, kernel_size, stride, padding, ceil_mode, count_include_pad=count_include_pad)


def _max(x: Any, n: int, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
         ceil_mode: bool = False, return_indices: bool = False) -> Any:
    require(set(ntuple(dilation, n)) == {1}, "dilation: flax's max_pool has none")
    y = _pool(x, n, kernel_size, stride, padding, ceil_mode)
    return (y, None) if return_indices else y  # values only


def _adaptive_avg(x: Any, n: int, output_size: Any) -> Any:
    k = even_adaptive_window(x, n, output_size, "flax")
    return _avg(x, n, k, k)


def _adaptive_max(x: Any, n: int, output_size: Any, return_indices: bool = False) -> Any:
    k = even_adaptive_window(x, n, output_size, "flax")
    return _max(x, n, k, k, return_indices=return_indices)


globals().update(per_rank(_avg, _max, _adaptive_avg, _adaptive_max))


_MAX = ["max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]
_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d"]

FINDINGS: list[dict[str, Any]] = [
    {"ops": _AVG, "flags": ["exclude_pad"], "dtypes": ["float32", "float16", "bfloat16"],
     "rule": "avg_pool(count_include_pad=False) divides by a pool of jnp.ones() in the default float dtype, float64 "
             "under jax_enable_x64, so a float32/float16/bfloat16 result comes back as float64 (and its VJP then "
             "rejects a cotangent of the input's dtype).", "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_input"],
     "rule": "In a window holding NaN (value NaN in both) the gradient of flax's max_pool (reduce_window max: "
             "select_and_scatter_add with >=) lets any later tap replace the NaN and goes to the largest tap after "
             "the window's last NaN (or into padding, lost), torch's to the last NaN; data-dependent (the catalogue "
             "has no NaN flag).", "upstream": "new"},
    {"ops": _MAX, "flags": [], "checks": ["grad_grad_output"],
     "rule": "The second order through flax's max_pool is JAX's forward-mode select_and_gather_add, which picks a "
             "later tap than the first among tied maxima and the -inf init in an all -inf window (a 0 where torch "
             "gathers at the first tap); data-dependent.", "upstream": "new"},
    {"ops": _MAX, "flags": ["padding_over_half"], "checks": ["raises"],
     "rule": "flax pools take any (lo, hi) padding: padding over half the kernel is computed (windows wholly in "
             "padding give -inf), where torch raises.", "upstream": "new"},
    {"ops": _AVG + _MAX, "flags": ["random"], "checks": ["raises"],
     "rule": "flax pools compute geometries torch refuses: padding over half the kernel, an output size below 1 "
             "(an empty axis) and, for avg_pool3d, a kernel larger than the input.",
     "upstream": "https://github.com/jax-ml/jax/issues/3973"},
]
