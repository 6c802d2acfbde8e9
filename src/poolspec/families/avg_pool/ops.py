"""avg_pool1d/2d/3d and their VJPs.

The cards are in ``card.py``; the per-axis plans come from ``plans.windows`` (regular windows) and the op is a
``SeparableLinear``: per-axis window sums and one division by the product of per-axis counts
(docs/TORCH_NUMERICS.md section 1). The VJP is the transposed plan chain; its VJP is the forward again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..._calls import channels_last, check_layout, keep_layout, resolve, resolve_backward
from ..._types import Array, Padding, Size
from ...autodiff import graph_op, in_graph, linear
from ...kernels.linear import Divisor, SeparableLinear, outer_product
from ...plans import windows
from .._docs import Template

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d",
           "avg_pool1d_backward", "avg_pool2d_backward", "avg_pool3d_backward"]


@lru_cache(maxsize=512)
def _avg_plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...],
              stride: tuple[int, ...], padding: tuple[int, ...], high: tuple[int, ...], count_include_pad: bool,
              divisor_override: int | None, dilation: tuple[int, ...]) -> SeparableLinear:
    axes = tuple(windows.regular(L, O, k, s, p, d) for L, O, k, s, p, d in
                 zip(in_spatial, out_spatial, kernel, stride, padding, dilation))
    if divisor_override is not None:
        return SeparableLinear(in_spatial, out_spatial, axes, divisor_override)
    counts = [windows.avg_counts(L, O, k, s, p, count_include_pad, h, d) for L, O, k, s, p, h, d
              in zip(in_spatial, out_spatial, kernel, stride, padding, high, dilation)]
    if not any((c == 0).any() for c in counts):
        return SeparableLinear(in_spatial, out_spatial, axes, outer_product(counts))
    # a window whose taps all fall in the padding (dilation > 1, padding not counted) sums to 0 over 0 cells:
    # NaN, as torch's conv quotient 0 / 0; its factor is NaN, so nothing is divided by zero (no 1/0 in the
    # cotangent either, which reaches only padding cells). int64 refuses such windows (the card).
    factors = tuple(_frozen(np.where(c == 0, np.nan, c.astype(np.float64))) for c in counts)
    return SeparableLinear(in_spatial, out_spatial, axes, Divisor(factors))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _args(kernel_size: Any, stride: Any, padding: Any, ceil_mode: Any, count_include_pad: Any,
          divisor_override: Any, dilation: Any) -> dict[str, Any]:
    """The op's arguments as its card names them (the node's arguments inside a torch.compile capture)."""
    return dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                count_include_pad=count_include_pad, divisor_override=divisor_override, dilation=dilation)


def _avg_op(n: int, x: Any, args: dict[str, Any], grad_output: Any = None) -> Any:
    name = f"avg_pool{n}d"
    if in_graph(x):
        return graph_op(name, args, x, grad_output)
    if grad_output is None:
        _, _, r = resolve(name, x, **args)
    else:
        _, _, r = resolve_backward(name, grad_output, x, **args)
    p = r.params
    plan = _avg_plan(tuple(x.shape[-n:]), tuple(r.output_shape[-n:]), p["kernel_size"], p["stride"],
                     p["padding"], p["padding_high"], p["count_include_pad"], p["divisor_override"], p["dilation"])
    if grad_output is None:
        return keep_layout(name, x, linear(plan, x))
    return linear(plan, grad_output, transpose=True, primal=x)


# the docstring of avg_pool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d average pooling, as ``torch.nn.functional.{op}``{plus}.

Each output is its window's sum over the input divided by the window's cell count (padding included if
count_include_pad) or by divisor_override. int64 sums in int64 and divides with truncation toward zero, as torch;
float16/bfloat16 are computed in float32 and rounded once.{extent} A ``dilation`` (keyword-only, a poolspec
extension) spaces the window's taps: torch's conv with a ones kernel over the zero-padded input divided by the count
of taps in the padded axis (count_include_pad) or in the input; a window of padding taps only is 0, or NaN (0 / 0)
without count_include_pad.

Parameters
----------
x : array
    Input shaped {x}, C and the spatial sizes non-empty; any array-API array (NumPy, torch, JAX, CuPy, Dask,
    array-api-strict); float16, bfloat16, float32, float64 or int64.
kernel_size : int or tuple of int
    The window size k, {sizes}; every entry > 0.
stride : int, tuple of int or None, default None
    The window step s; every entry > 0 (None or (): kernel_size, as torch).
padding : int, tuple of int, tuple of (int, int) or str, default 0
    Implicit zero padding: p on both sides of each spatial axis, 0 <= p <= k // 2 (torch's); or per axis a
    (low, high) pair, each at most (k - 1) * d (as lax.reduce_window and ONNX's pads); or "valid" (none) or
    "same" (TensorFlow's: ceil(L / s) outputs, the odd cell of padding at the end).
ceil_mode : bool, default False
    Use ceil instead of floor in the output size rule (a window may overhang the input, but not start in the right
    padding).
count_include_pad : bool, default True
    Count padding cells (not the ceil_mode overhang) in the divisor.
divisor_override : int or None, default None
    Divide every window sum by this non-zero int (negative allowed) instead of the cell count{lacks}.
dilation : int or tuple of int, default 1
    Keyword-only: the spacing d of a window's taps a + t*d, t < k; every entry > 0 (torch's avg_pool has none).
{layout}

Returns
-------
array
    Shaped (N, C, {o}) or (C, {o}),{per_axis} O = floor((L + 2p - d(k - 1) - 1 + (s - 1 if ceil_mode else 0)) / s) + 1,
    minus 1 if ceil_mode and (O - 1) * s >= L + p; x's namespace, device and dtype.

Raises
------
ValueError
    If x is not {lo}-d or {hi}-d or has an empty non-batch dimension, a kernel_size, stride or dilation entry is not
    > 0, padding is negative or > kernel_size // 2, a tuple has the wrong length, divisor_override is 0, an int64
    window holds padding taps only without count_include_pad or divisor_override, {last}.
TypeError
    If x is not an array of a supported library, x's dtype is not one of the above (e.g. int32, bool), kernel_size,
    stride, padding, dilation or divisor_override is not an int or tuple of ints (e.g. a float or a bool), or
    ceil_mode or count_include_pad is not a bool.

{examples}
""", defaults=dict(plus="", lacks="", extent="", last="or an output size is < 1",
                  # the shape formula starts a line of its own (a newline in a field breaks the line there)
                  per_axis=" per spatial axis\n"))


@_FORWARD.document(plus=" (plus ``divisor_override``)", lacks="; torch's avg_pool1d lacks it", per_axis="", example="""
>>> poolspec.avg_pool1d(np.arange(5.0)[None], 2, ceil_mode=True)
array([[0.5, 2.5, 4. ]])""")
def avg_pool1d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Padding = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None, *, dilation: Size = 1,
               layout: str = "channels_first") -> Array:
    if check_layout("avg_pool1d", layout):
        return channels_last(avg_pool1d, locals(), 1, ("x",))
    return _avg_op(1, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation))


@_FORWARD.document(example="""
>>> poolspec.avg_pool2d(np.ones((1, 3, 3)), 2, stride=1, padding=1, count_include_pad=False).shape
(1, 4, 4)""")
def avg_pool2d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Padding = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None, *, dilation: Size = 1,
               layout: str = "channels_first") -> Array:
    if check_layout("avg_pool2d", layout):
        return channels_last(avg_pool2d, locals(), 2, ("x",))
    return _avg_op(2, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation))


@_FORWARD.document(extent=" Every input extent must be >= kernel_size, padding notwithstanding, as torch.",
                   last="an output size is < 1, or an input extent is < kernel_size",
                   example="""
>>> poolspec.avg_pool3d(np.ones((2, 1, 4, 4, 4)), 2).shape
(2, 1, 2, 2, 2)""")
def avg_pool3d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Padding = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None, *, dilation: Size = 1,
               layout: str = "channels_first") -> Array:
    if check_layout("avg_pool3d", layout):
        return channels_last(avg_pool3d, locals(), 3, ("x",))
    return _avg_op(3, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation))


# the docstring of avg_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` with respect to ``x`` for the cotangent ``grad_output``.

Linear in grad_output: every input cell gathers g / divisor from the windows that contain it (the transposed window
sum); its own gradient is :func:`{op}` again.

Parameters
----------
{linear_arrays}
kernel_size : int or tuple of int
    The window size, as in :func:`{op}`.
stride : int, tuple of int or None, default None
    The window step, as in :func:`{op}` (None: kernel_size).
padding : int, tuple of int, tuple of (int, int) or str, default 0
    The implicit zero padding, as in :func:`{op}`.
ceil_mode : bool, default False
    Ceil instead of floor in the output size rule, as in :func:`{op}`.
count_include_pad : bool, default True
    Count padding cells in the divisor, as in :func:`{op}`.
divisor_override : int or None, default None
    The divisor instead of the cell count, as in :func:`{op}`.
dilation : int or tuple of int, default 1
    Keyword-only: the spacing of the window's taps, as in :func:`{op}`.
{layout}

{linear_returns}

{examples}
""", defaults=dict(no_gradient=" (int64 has no gradient)"))


@_BACKWARD.document(example="""
>>> poolspec.avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 4)), 2)
array([[0.5, 0.5, 0.5, 0.5]])""")
def avg_pool1d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None, *, dilation: Size = 1,
                        layout: str = "channels_first") -> Array:
    if check_layout("avg_pool1d_backward", layout):
        return channels_last(avg_pool1d_backward, locals(), 1, ("grad_output", "x"))
    return _avg_op(1, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation), grad_output)


@_BACKWARD.document(example="""
>>> poolspec.avg_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 2)
array([[[0.25, 0.25],
        [0.25, 0.25]]])""")
def avg_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None, *, dilation: Size = 1,
                        layout: str = "channels_first") -> Array:
    if check_layout("avg_pool2d_backward", layout):
        return channels_last(avg_pool2d_backward, locals(), 2, ("grad_output", "x"))
    return _avg_op(2, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation), grad_output)


@_BACKWARD.document(example="""
>>> float(poolspec.avg_pool3d_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 2, 2, 2)), 2).sum())
1.0""")
def avg_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None, *, dilation: Size = 1,
                        layout: str = "channels_first") -> Array:
    if check_layout("avg_pool3d_backward", layout):
        return channels_last(avg_pool3d_backward, locals(), 3, ("grad_output", "x"))
    return _avg_op(3, x, _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation), grad_output)
