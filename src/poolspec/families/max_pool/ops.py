"""max_pool1d/2d/3d and their VJPs.

The cards are in ``card.py`` (torch's checks, plus a ValueError for a window that dilation and padding leave
without an input cell); the windows and kernels are ``kernels.maxes.MaxWindows`` (separable max with torch's
scan rule; gradient and double backward by strided slices and selects); the autodiff bindings are
``autodiff.max_pool`` / ``autodiff.max_backward``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, overload

from ..._calls import channels_last, check_layout, keep_layout, resolve, resolve_backward
from ..._types import Array, Padding, Size
from ...autodiff import graph_op, in_graph, max_pool
from ...kernels.maxes import MaxWindows
from .._docs import Template
from .._routed import routed_vjp

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d",
           "max_pool1d_backward", "max_pool2d_backward", "max_pool3d_backward"]


@lru_cache(maxsize=512)
def _windows(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...],
             stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...]) -> MaxWindows:
    return MaxWindows(in_spatial, out_spatial, kernel, stride, padding, dilation)


def _plan(n: int, x: Any, r: Any) -> MaxWindows:
    p = r.params
    return _windows(tuple(x.shape[-n:]), tuple(r.output_shape[-n:]), p["kernel_size"], p["stride"],
                    p["padding"], p["dilation"])


def _forward(n: int, x: Any, args: dict[str, Any]) -> Any:
    if in_graph(x):
        return graph_op(f"max_pool{n}d", args, x)
    _, _, r = resolve(f"max_pool{n}d", x, **args)
    values, idx = max_pool(_plan(n, x, r), x, with_index=r["return_indices"])
    return keep_layout(f"max_pool{n}d", x, (values, idx) if r["return_indices"] else values)


def _backward(n: int, grad_output: Any, x: Any, args: dict[str, Any], indices: Any) -> Any:
    if in_graph(x):
        return graph_op(f"max_pool{n}d", args, x, grad_output, indices)
    _, _, r = resolve_backward(f"max_pool{n}d", grad_output, x, **args)
    return routed_vjp(f"max_pool{n}d", _plan(n, x, r), grad_output, x, indices, r.output_shape)


# the docstring of max_pool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d max pooling of ``x``, as ``torch.nn.functional.{op}``.

Each output is the maximum of a window of ``kernel_size`` taps spaced ``dilation`` apart, placed every ``stride``
cells over ``x`` padded with -inf; ties go to the first maximum in row-major order, a NaN wins (the last one).

Parameters
----------
x : array
    Input shaped {x}; any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) of a float, int8/16/32/64 or
    uint8 dtype. Only the batch dimension N may be 0.
kernel_size : int or tuple of int
    Window size k: one int for every spatial axis or one per axis; every entry > 0.
stride : int, tuple of int or None, default None
    Window step s; every entry > 0 (None or (): kernel_size, as torch).
padding : int, tuple of int, tuple of (int, int) or str, default 0
    Implicit -inf padding: p on both sides of each spatial axis, 0 <= p <= k // 2 (torch's); or per axis a
    (low, high) pair, each at most (k - 1) * d (as lax.reduce_window and ONNX's pads); or "valid" (none) or
    "same" (TensorFlow's: ceil(L / s) outputs, the odd cell of padding at the end).
dilation : int or tuple of int, default 1
    Spacing d between a window's taps; every entry > 0.
ceil_mode : bool, default False
    Use ceil instead of floor in the output size rule (a window starting in the right padding is dropped).
return_indices : bool, default False
    Also return the winners' indices.
{layout}

Returns
-------
array or tuple of array
    The pooled array in x's dtype, shaped (N, C, {odims}) or (C, {odims}) with O = floor((L+2p-d(k-1)-1)/s) + 1 per
    spatial axis (ceil with ``ceil_mode``); with ``return_indices``, (``values``, ``indices``) where indices are int64
    flat positions of the winners in each unpadded {plane} input plane, as torch's.

Raises
------
ValueError
    If x does not have {lo} or {hi} dimensions or has an empty non-batch dimension, a tuple argument has the wrong
    length, an entry of kernel_size, stride or dilation is not positive, padding is negative or above kernel_size // 2,
    an output size is below 1, or dilation and padding leave a window without an input cell (torch returns -inf there).
TypeError
    If x is not an array of a supported library or has an unsupported dtype (bool, complex, uint16, ...), an
    integer argument is not an int or tuple of ints, or ceil_mode or return_indices is not a bool.

{examples}
""", width=116)


@overload
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ..., *, layout: str = ...) -> Array: ...


@overload
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True], layout: str = ...) -> tuple[Array, Array]: ...


@overload
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...,
               *, layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(example="""
>>> poolspec.max_pool1d(np.array([[1.0, 3.0, 3.0, 0.0, 5.0]]), 2, return_indices=True)
(array([[3., 3.]]), array([[1, 2]]))""")
def max_pool1d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    if check_layout("max_pool1d", layout):
        return channels_last(max_pool1d, locals(), 1, ("x",))
    return _forward(1, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ..., *, layout: str = ...) -> Array: ...


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True], layout: str = ...) -> tuple[Array, Array]: ...


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...,
               *, layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(example="""
>>> poolspec.max_pool2d(np.arange(16.0).reshape(1, 4, 4), 3, 2, 1)
array([[[ 5.,  7.],
        [13., 15.]]])""")
def max_pool2d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    if check_layout("max_pool2d", layout):
        return channels_last(max_pool2d, locals(), 2, ("x",))
    return _forward(2, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ..., *, layout: str = ...) -> Array: ...


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True], layout: str = ...) -> tuple[Array, Array]: ...


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Padding = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...,
               *, layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(example="""
>>> poolspec.max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 2)
array([[[[7.]]]])""")
def max_pool3d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    if check_layout("max_pool3d", layout):
        return channels_last(max_pool3d, locals(), 3, ("x",))
    return _forward(3, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


# the docstring of max_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` w.r.t. ``x`` (its vector-Jacobian product).

``grad_output`` is routed to the forward's winners by gathering, with no scatter (bit-identical across runs).

Parameters
----------
{routed_arrays}
kernel_size : int or tuple of int
    The forward's window size, as in :func:`{op}`.
stride : int, tuple of int or None, default None
    The forward's window step, as in :func:`{op}` (None: kernel_size).
padding : int, tuple of int, tuple of (int, int) or str, default 0
    The forward's padding, as in :func:`{op}`.
dilation : int or tuple of int, default 1
    The forward's dilation, as in :func:`{op}`.
ceil_mode : bool, default False
    The forward's output size rule, as in :func:`{op}`.
{routed_backward}

{examples}
""", width=116)


@_BACKWARD.document(example="""
>>> poolspec.max_pool1d_backward(np.ones((1, 2)), np.array([[1.0, 3.0, 3.0, 0.0]]), 2)
array([[0., 1., 1., 0.]])""")
def max_pool1d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("max_pool1d_backward", layout):
        return channels_last(max_pool1d_backward, locals(), 1, ("grad_output", "x", "indices"))
    return _backward(1, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


@_BACKWARD.document(example="""
>>> poolspec.max_pool2d_backward(np.ones((1, 2, 2)), np.array([[[0.0, 0, 0], [0, 9, 0], [0, 0, 0]]]), 2, 1)
array([[[0., 0., 0.],
        [0., 4., 0.],
        [0., 0., 0.]]])""")
def max_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("max_pool2d_backward", layout):
        return channels_last(max_pool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _backward(2, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


@_BACKWARD.document(example="""
>>> float(poolspec.max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 2)[0, 1, 1, 1])
1.0""")
def max_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("max_pool3d_backward", layout):
        return channels_last(max_pool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _backward(3, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)
