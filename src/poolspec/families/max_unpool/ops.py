"""max_unpool1d/2d/3d and the VJP w.r.t. the values.

The cards are in ``card.py`` (torch's output size rule and its +-stride window for an explicit ``output_size``); the
kernel is ``kernels.unpool.Unpool`` (a sort and binary search per call instead of a scatter; duplicate indices: the
last input cell in row-major order wins); the autodiff bindings are ``autodiff.max_backward`` (the op, linear in
``x``) and ``autodiff.max_select`` (its transpose)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..._calls import channels_last, check_indices, check_layout, keep_layout, resolve, resolve_backward
from ..._compat import extremes, is_dask_array
from ..._types import Array
from ...autodiff import graph_op, in_graph, max_backward, max_select
from ...kernels.unpool import Unpool
from .._docs import Template

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d",
           "max_unpool1d_backward", "max_unpool2d_backward", "max_unpool3d_backward"]

Size = int | tuple[int, ...]


@lru_cache(maxsize=512)
def _unpool(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> Unpool:
    return Unpool(in_spatial, out_spatial)


def _out_of_range(op: str, lo: int, hi: int, out_spatial: tuple[int, ...]) -> ValueError | None:
    size = math.prod(out_spatial)
    if lo >= 0 and hi < size:
        return None
    return ValueError(f"{op}: indices contains {lo if lo < 0 else hi}, outside the output plane of spatial size "
                      f"{tuple(out_spatial)} (valid: 0 <= index < {size})")


def _checked_block(block: np.ndarray, op: str, out_spatial: tuple[int, ...]) -> np.ndarray:
    """A Dask block of indices, checked when it is computed (the same ValueError as an eager check)."""
    if block.size:
        error = _out_of_range(op, int(block.min()), int(block.max()), out_spatial)
        if error is not None:
            raise error
    return block


def _check(op: str, x: Any, indices: Any, out_spatial: tuple[int, ...]) -> Any:
    """``indices``, checked: now where the values are at hand, inside the graph on Dask (the graph stays lazy
    and the error is raised at compute time)."""
    xp = check_indices(op, indices, x, tuple(x.shape), "x.shape", unsigned=True)
    if math.prod(indices.shape) == 0 or math.prod(out_spatial) == 0:
        return indices  # an empty output plane has nothing to place, as torch
    if is_dask_array(indices):
        lazy: Any = indices  # not the TypeGuard's dask type, whose map_blocks stub takes no function
        return lazy.map_blocks(_checked_block, op, out_spatial, dtype=indices.dtype)
    found = extremes(xp, indices)
    if found is None:
        # a traced (or torch meta) index cannot be inspected (out-of-range entries are then dropped, see
        # Unpool)
        return indices
    lo, hi = found
    error = _out_of_range(op, lo, hi, out_spatial)
    if error is not None:
        raise error
    return indices


def _resolve(n: int, x: Any, indices: Any, args: dict[str, Any],
             grad_output: Any = None) -> tuple[Any, Unpool, Any]:
    op = f"max_unpool{n}d"
    if grad_output is None:
        _, _, r = resolve(op, x, **args)
    else:
        _, _, r = resolve_backward(op, grad_output, x, **args)
    out_spatial = tuple(r.params["output_size"])
    indices = _check(op if grad_output is None else op + "_backward", x, indices, out_spatial)
    return r, _unpool(tuple(x.shape[-n:]), out_spatial), indices


def _forward(n: int, x: Any, indices: Any, args: dict[str, Any]) -> Any:
    if in_graph(x):
        return graph_op(f"max_unpool{n}d", args, x, indices=indices)
    _, kernel, indices = _resolve(n, x, indices, args)
    return keep_layout(f"max_unpool{n}d", x, max_backward(kernel, x, indices))


def _backward(n: int, grad_output: Any, x: Any, indices: Any, args: dict[str, Any]) -> Any:
    if in_graph(x):
        return graph_op(f"max_unpool{n}d", args, x, grad_output, indices)
    _, kernel, indices = _resolve(n, x, indices, args, grad_output)
    return max_select(kernel, grad_output, indices, primal=x)


# the docstring of max_unpool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d max unpooling, as ``torch.nn.functional.{op}``: zeros except ``x`` at ``indices``.

The partial inverse of max_pool{n}d. Of duplicate indices the last in row-major order wins (torch leaves the winner
unspecified).

Parameters
----------
x : array
    The values (e.g. max_pool's output), shaped {x}, C and the spatial sizes non-empty; any array-API array (NumPy,
    torch, JAX, CuPy, Dask, array-api-strict); float16, bfloat16, float32, float64, int8, int16, int32, int64 or uint8.
indices : array
    Flat indices into each (N, C) plane of the output, as torch's (max_pool{n}d with return_indices=True): x's shape and
    namespace, any integer dtype (read as int64), values in [0, prod(output spatial size)).
kernel_size : int or tuple of int
    The pooling window size k, {sizes}; every entry > 0; only feeds the default output size.
stride : int, tuple of int or None, default None
    The pooling step s; every entry > 0 (None or (): kernel_size, as torch).
padding : int or tuple of int, default 0
    The pooling padding p; every entry >= 0.
output_size : tuple of int or None, default None
    The output spatial size: {ints} (or {hi}, the first two ignored, as torch), each strictly between O - s and O + s;
    None: O = (L - 1) * s - 2p + k{per_axis}.
{layout}

Returns
-------
array
    Zeros shaped (N, C, {o}) or (C, {o}) with x's values at indices; x's namespace, device and dtype.

Raises
------
ValueError
    If x is not {lo}-d or {hi}-d or has an empty non-batch dimension, a kernel_size or stride entry is not > 0, padding
    is negative, a tuple has the wrong length, the default output size is negative, an output_size entry is out of its
    range, indices' shape is not x's, or an index is outside the output plane (on Dask when computed; jax.jit-traced
    indices cannot be checked and out-of-range ones are dropped).
TypeError
    If x is not an array of a supported library or indices comes from another, x's dtype is not one of the above,
    indices' dtype is not an integer one, kernel_size, stride or padding is not an int or tuple of ints, or
    output_size is not None or a tuple of ints.

{examples}
""", defaults=dict(per_axis=" per axis"))


@_FORWARD.document(ints="1 int", per_axis="", example="""
>>> poolspec.max_unpool1d(np.array([[3.0, 5.0]]), np.array([[1, 2]]), 2)
array([[0., 3., 5., 0.]])""")
def max_unpool1d(x: Array, indices: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 output_size: tuple[int, ...] | None = None, *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool1d", layout):
        return channels_last(max_unpool1d, locals(), 1, ("x", "indices"))
    return _forward(1, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                        output_size=output_size))


@_FORWARD.document(ints="2 ints", example="""
>>> poolspec.max_unpool2d(np.array([[[7.0]]]), np.array([[[3]]]), 2)
array([[[0., 0.],
        [0., 7.]]])""")
def max_unpool2d(x: Array, indices: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 output_size: tuple[int, ...] | None = None, *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool2d", layout):
        return channels_last(max_unpool2d, locals(), 2, ("x", "indices"))
    return _forward(2, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                        output_size=output_size))


@_FORWARD.document(ints="3 ints", example="""
>>> poolspec.max_unpool3d(np.array([[[[7.0]]]]), np.array([[[[7]]]]), 2).shape
(1, 2, 2, 2)""")
def max_unpool3d(x: Array, indices: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 output_size: tuple[int, ...] | None = None, *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool3d", layout):
        return channels_last(max_unpool3d, locals(), 3, ("x", "indices"))
    return _forward(3, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                        output_size=output_size))


# the docstring of max_unpool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` with respect to ``x``: ``grad_output`` gathered at ``indices``.

A losing duplicate index gets 0, as it does not reach the output (the exact transpose of the forward); its own gradient
is :func:`{op}` again.

Parameters
----------
{linear_arrays}
indices : array
    Flat indices into each (N, C) plane of the output, as in :func:`{op}`: x's shape, an integer dtype.
kernel_size : int or tuple of int
    The pooling window size, as in :func:`{op}`.
stride : int, tuple of int or None, default None
    The pooling step, as in :func:`{op}` (None: kernel_size).
padding : int or tuple of int, default 0
    The pooling padding, as in :func:`{op}`.
output_size : tuple of int or None, default None
    The output spatial size, as in :func:`{op}`.
{layout}

{linear_returns}

{examples}
""", defaults=dict(x_role="values", rules=" (indices' shape and range included)",
                  no_gradient=" (integer values unpool but have no gradient)"))


@_BACKWARD.document(example="""
>>> poolspec.max_unpool1d_backward(np.array([[1.0, 2.0, 3.0, 4.0]]), np.ones((1, 2)), np.array([[1, 2]]), 2)
array([[2., 3.]])""")
def max_unpool1d_backward(grad_output: Array, x: Array, indices: Array, kernel_size: Size, stride: Size | None = None,
                          padding: Size = 0, output_size: tuple[int, ...] | None = None,
                          *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool1d_backward", layout):
        return channels_last(max_unpool1d_backward, locals(), 1, ("grad_output", "x", "indices"))
    return _backward(1, grad_output, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                                      output_size=output_size))


@_BACKWARD.document(example="""
>>> poolspec.max_unpool2d_backward(np.arange(4.0).reshape(1, 2, 2), np.ones((1, 1, 1)), np.array([[[2]]]), 2)
array([[[2.]]])""")
def max_unpool2d_backward(grad_output: Array, x: Array, indices: Array, kernel_size: Size, stride: Size | None = None,
                          padding: Size = 0, output_size: tuple[int, ...] | None = None,
                          *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool2d_backward", layout):
        return channels_last(max_unpool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _backward(2, grad_output, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                                      output_size=output_size))


@_BACKWARD.document(example="""
>>> g = np.arange(8.0).reshape(1, 2, 2, 2)
>>> poolspec.max_unpool3d_backward(g, np.ones((1, 1, 1, 1)), np.array([[[[5]]]]), 2)
array([[[[5.]]]])""")
def max_unpool3d_backward(grad_output: Array, x: Array, indices: Array, kernel_size: Size, stride: Size | None = None,
                          padding: Size = 0, output_size: tuple[int, ...] | None = None,
                          *, layout: str = "channels_first") -> Array:
    if check_layout("max_unpool3d_backward", layout):
        return channels_last(max_unpool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _backward(3, grad_output, x, indices, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                                      output_size=output_size))
