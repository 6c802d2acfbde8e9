"""interpolate and its VJP, in every mode torch 2.13 has, plus Lanczos-3 without antialiasing.

The card is in ``card.py`` (torch's size/scale rules and errors); the per-axis tap tables are ``plans.resample``
(torch's index and weight arithmetic, in its compute type); the op is a ``SeparableLinear`` of those tables
(``area`` is adaptive average pooling, ``kernels.linear.adaptive_avg_plan``), applied innermost axis first; the VJP
is the transposed tables, so the backward gathers and never scatters; the autodiff bindings are ``autodiff.linear``.

Where torch's CPU fast paths disagree with its generic kernel or with their own backward (docs/TORCH_NUMERICS.md
5.6), the generic rule is used; see ``spec.deviations("interpolate")``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..._calls import channels_last, check_layout, keep_layout, layout_op, resolve, resolve_backward
from ..._compat import compute_dtype_name, dtype_name, namespace
from ..._types import Array
from ...autodiff import graph_op, in_graph, linear
from ...kernels.linear import SeparableLinear, adaptive_avg_plan, fixed_point
from ...plans import resample
from .._docs import Template

__all__ = ["interpolate", "interpolate_backward"]

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
        return adaptive_avg_plan(in_spatial, out_spatial)
    axes = tuple(_axis(mode, L, O, s, align_corners, antialias, ctype)
                 for L, O, s in zip(in_spatial, out_spatial, scales))
    return SeparableLinear(in_spatial, out_spatial, axes, custom_vjp=True)


def _uint8(x: Any, args: dict[str, Any]) -> Any | None:
    """uint8 bilinear, bicubic and lanczos: torch's integer pipeline (no gradient: integers have none)."""
    if args["mode"] not in ("bilinear", "bicubic", "lanczos") or dtype_name(namespace(x), x.dtype) != "uint8":
        return None
    _, _, r = resolve("interpolate", x, **args)
    p = r.params
    axes = tuple(resample.fixed_point(L, O, s, p["align_corners"], p["mode"], p["antialias"])
                 for L, O, s in zip(tuple(x.shape[-len(p["size"]):]), p["size"], p["scales"]))
    return keep_layout(layout_op("interpolate", r), x, fixed_point(x, axes))


def _run(x: Any, args: dict[str, Any], grad_output: Any = None) -> Any:
    if in_graph(x):
        return graph_op("interpolate", args, x, grad_output)
    if grad_output is None and (y := _uint8(x, args)) is not None:
        return y
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


_INTERPOLATE_DOC = Template("""\
Resample ``x`` to ``size`` or by ``scale_factor``, as ``torch.nn.functional.interpolate``.

Every mode of torch 2.13; ``mode="lanczos"`` with ``antialias=False`` (an extension: torch requires
``antialias=True``) is Lanczos-3 without widening, as ``jax.image.resize(..., "lanczos3", antialias=False)``.
The forward and the backward gather over per-axis tap tables: bit-identical across runs on every backend.

Parameters
----------
x : array
    Input shaped (N, C, *spatial), any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict):
    3-D for linear, 4-D for bilinear, bicubic and lanczos, 5-D for trilinear, 3- to 5-D for nearest,
    nearest-exact and area. float16, bfloat16, float32, float64; uint8 with nearest, nearest-exact, bilinear,
    bicubic and lanczos (antialias), computed in torch's integer pipeline.
size : int, tuple of int or None, default None
    The output spatial size, one int for every axis or one per spatial axis; entries > 0 (area takes 0).
scale_factor : float, tuple of float or None, default None
    Multiplier of the spatial size, finite and > 0: output size ``floor(L * scale_factor)`` per axis.
mode : str, default "nearest"
    One of nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area, lanczos.
align_corners : bool or None, default None
    Map the corner pixel centres onto each other; only with linear, bilinear, bicubic, trilinear (and
    False with lanczos). None means False.
recompute_scale_factor : bool or None, default None
    With ``scale_factor``: True derives the kernel's scale from the output size instead; not True with ``size``.
antialias : bool, default False
    Widen the kernel when downsampling (PIL-style); bilinear, bicubic and lanczos on a 4-D input only.
{layout}

Returns
-------
array
    The resampled (N, C, *O), of ``x``'s namespace, device and dtype (channels_last kept on torch).

Raises
------
ValueError
    If both or neither of ``size`` and ``scale_factor`` are given, ``mode`` is unknown, ``x``'s rank does not
    fit the mode or a non-batch dimension is empty, ``align_corners`` is set with a mode that has none (or is
    True with lanczos), ``antialias`` is set with another mode or rank, ``recompute_scale_factor=True`` comes
    with ``size``, or ``size``/``scale_factor`` has the wrong length, an entry that is not finite and > 0, or
    gives an empty output (outside area mode).
TypeError
    If ``x`` is not a supported array, its dtype is not accepted by the mode, ``size`` or ``scale_factor`` is
    not numeric, or ``align_corners``, ``recompute_scale_factor`` or ``antialias`` is not a bool.

Examples
--------
>>> import numpy as np, poolspec
>>> poolspec.interpolate(np.array([[[0.0, 1.0, 2.0]]]), size=5, mode="linear", align_corners=True)
array([[[0. , 0.5, 1. , 1.5, 2. ]]])
""")


@_INTERPOLATE_DOC.document()
def interpolate(x: Array, size: Size | None = None, scale_factor: Scale | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("interpolate", layout):
        return channels_last(interpolate, locals(), None, ("x",))
    return _run(x, dict(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                        recompute_scale_factor=recompute_scale_factor, antialias=antialias))


_INTERPOLATE_BACKWARD_DOC = Template("""\
The gradient of :func:`interpolate` with respect to ``x`` for the cotangent ``grad_output``.

Each input cell gathers the weighted cotangents of the outputs that read it (the transposed tap tables, no
scatter): bit-identical across runs on every backend.

Parameters
----------
grad_output : array
    The cotangent of interpolate's output: its shape (N, C, *O), ``x``'s namespace, dtype and device.
x : array
    The forward's input (N, C, *spatial), of a floating dtype.
size : int, tuple of int or None, default None
    As in :func:`interpolate`.
scale_factor : float, tuple of float or None, default None
    As in :func:`interpolate`.
mode : str, default "nearest"
    As in :func:`interpolate`.
align_corners : bool or None, default None
    As in :func:`interpolate`.
recompute_scale_factor : bool or None, default None
    As in :func:`interpolate`.
antialias : bool, default False
    As in :func:`interpolate`.
{layout}

Returns
-------
array
    The gradient with respect to ``x``: ``x``'s shape, namespace, device and dtype.

Raises
------
ValueError
    If the arguments break :func:`interpolate`'s rules, or ``grad_output``'s shape is not the output's or its
    device is not ``x``'s.
TypeError
    If an argument has a wrong type as in :func:`interpolate`, ``x``'s dtype is not floating, or
    ``grad_output``'s dtype or library is not ``x``'s.

Examples
--------
>>> import numpy as np, poolspec
>>> poolspec.interpolate_backward(np.ones((1, 1, 4)), np.zeros((1, 1, 2)), size=4, mode="nearest")
array([[[2., 2.]]])
""")


@_INTERPOLATE_BACKWARD_DOC.document()
def interpolate_backward(grad_output: Array, x: Array, size: Size | None = None, scale_factor: Scale | None = None,
                         mode: str = "nearest", align_corners: bool | None = None,
                         recompute_scale_factor: bool | None = None, antialias: bool = False,
                         *, layout: str = "channels_first") -> Array:
    if check_layout("interpolate_backward", layout):
        return channels_last(interpolate_backward, locals(), None, ("grad_output", "x"))
    return _run(x, dict(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                        recompute_scale_factor=recompute_scale_factor, antialias=antialias), grad_output)
