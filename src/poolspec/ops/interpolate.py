"""interpolate and its VJP, in every mode torch 2.13 has, plus Lanczos-3 without antialiasing.

Whole definition: the card is ``spec.card("interpolate")`` (spec/resampling.py: torch's size/scale rules and
errors); the per-axis tap tables are ``plans.resample`` (torch's index and weight arithmetic, in its compute
type); the op is a ``SeparableLinear`` of those tables (``area`` is adaptive average pooling, reusing the
avg family's plan), applied innermost axis first; the VJP is the transposed tables, so the backward gathers
and never scatters; the autodiff bindings are ``autodiff.linear``.

Where torch's CPU fast paths disagree with its generic kernel or with their own backward (docs/TORCH_NUMERICS.md
5.6), the generic rule is used; see ``spec.deviations("interpolate")``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .._compat import compute_dtype_name
from .._types import Array
from ..autodiff import graph_op, in_graph, linear
from ..kernels.linear import SeparableLinear
from ..plans import resample
from ._common import keep_layout, layout_op, resolve, resolve_backward
from .avg_pool import _adaptive_plan

Size = int | tuple[int, ...]
Scale = float | tuple[float, ...]


def _axis(mode: str, L: int, O: int, scale: float | None, align_corners: bool, antialias: bool,
          ctype: str) -> Any:
    if mode in ("nearest", "nearest-exact"):
        return resample.nearest(L, O, scale, mode == "nearest-exact")
    if antialias:
        return resample.antialias(L, O, scale, align_corners, mode, ctype)
    if mode in ("linear", "bilinear", "trilinear"):
        return resample.linear(L, O, scale, align_corners, ctype)
    if mode == "bicubic":
        return resample.cubic(L, O, scale, align_corners, ctype)
    if mode == "lanczos":
        return resample.lanczos(L, O, scale, ctype)
    raise AssertionError(mode)


@lru_cache(maxsize=512)
def _plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], mode: str, scales: tuple[float | None, ...],
          align_corners: bool, antialias: bool, ctype: str) -> SeparableLinear:
    if mode == "area":
        return _adaptive_plan(in_spatial, out_spatial)
    axes = tuple(_axis(mode, L, O, s, align_corners, antialias, ctype)
                 for L, O, s in zip(in_spatial, out_spatial, scales))
    return SeparableLinear(in_spatial, out_spatial, axes, custom_vjp=True)


def _run(x: Any, args: dict[str, Any], grad_output: Any = None) -> Any:
    if in_graph(x):
        return graph_op("interpolate", args, x, grad_output)
    if grad_output is None:
        _, dtype, r = resolve("interpolate", x, **args)
    else:
        _, dtype, r = resolve_backward("interpolate", grad_output, x, **args)
    p = r.params
    n = len(p["size"])
    ctype = compute_dtype_name(dtype) if dtype.startswith(("float", "bfloat")) else "float32"
    plan = _plan(tuple(x.shape[-n:]), tuple(p["size"]), p["mode"], tuple(p["scales"]), p["align_corners"],
                 p["antialias"], ctype)
    if grad_output is not None:
        return linear(plan, grad_output, transpose=True, primal=x)
    return keep_layout(layout_op("interpolate", r), x, linear(plan, x))


def interpolate(x: Array, size: Size | None = None, scale_factor: Scale | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Array:
    """Resample ``x`` shaped (N, C, *spatial) to ``size`` or by ``scale_factor``, as
    ``torch.nn.functional.interpolate`` (modes nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
    area, lanczos; ``antialias`` for bilinear, bicubic and lanczos). ``mode="lanczos"`` with
    ``antialias=False`` is Lanczos-3 without widening, as ``jax.image.resize(..., "lanczos3",
    antialias=False)``.

    >>> import numpy as np, poolspec
    >>> poolspec.interpolate(np.array([[[0.0, 1.0, 2.0]]]), size=5, mode="linear", align_corners=True)
    array([[[0. , 0.5, 1. , 1.5, 2. ]]])
    """
    return _run(x, dict(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                        recompute_scale_factor=recompute_scale_factor, antialias=antialias))


def interpolate_backward(grad_output: Array, x: Array, size: Size | None = None, scale_factor: Scale | None = None,
                         mode: str = "nearest", align_corners: bool | None = None,
                         recompute_scale_factor: bool | None = None, antialias: bool = False) -> Array:
    """The gradient of :func:`interpolate` w.r.t. ``x`` for cotangent ``grad_output``: each input cell gathers
    the weighted cotangents of the outputs that read it.

    >>> import numpy as np, poolspec
    >>> poolspec.interpolate_backward(np.ones((1, 1, 4)), np.zeros((1, 1, 2)), size=4, mode="nearest")
    array([[[2., 2.]]])
    """
    return _run(x, dict(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                        recompute_scale_factor=recompute_scale_factor, antialias=antialias), grad_output)
