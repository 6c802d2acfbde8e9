"""max_pool1d/2d/3d, adaptive_max_pool1d/2d/3d and their VJPs.

Whole definition: the cards are ``spec.card("max_pool2d")`` etc. (spec/pooling.py: torch's checks, plus a
ValueError for a window that dilation and padding leave without an input cell); the windows and kernels
are ``kernels.maxes.MaxWindows`` (separable max with torch's scan rule; gradient and double backward by
strided slices and selects) and ``kernels.adaptive_maxes.AdaptiveMaxWindows`` (the same scan over ragged
adaptive windows, by ``take``; evenly dividing axes use ``MaxWindows``); the autodiff bindings are
``autodiff.max_pool`` / ``autodiff.max_backward``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Literal, overload

import numpy as np

from .._compat import WINNERS, is_traced, readable
from .._types import Array
from ..autodiff import graph_op, in_graph, max_backward, max_indices, max_pool
from ..kernels.adaptive_maxes import adaptive_max_windows
from ..kernels.cells import Cells
from ..kernels.maxes import MaxWindows
from ._common import (
    channels_last,
    check_index_range,
    check_indices,
    check_layout,
    keep_layout,
    resolve,
    resolve_backward,
)

Size = int | tuple[int, ...]
Padding = int | str | tuple[int, ...] | tuple[tuple[int, int], ...]
OutputSize = int | None | tuple[int | None, ...]


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
    return _routed(f"max_pool{n}d", _plan(n, x, r), grad_output, x, indices, r.output_shape)


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


def max_pool1d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    """1-d max pooling of ``x``, as ``torch.nn.functional.max_pool1d``.

    Each output is the maximum of a window of ``kernel_size`` taps spaced ``dilation`` apart, placed every ``stride``
    cells over ``x`` padded with -inf; ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, L) or (C, L); any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) of a
        float, int8/16/32/64 or uint8 dtype. Only the batch dimension N may be 0.
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
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OL) or (C, OL) with O = floor((L+2p-d(k-1)-1)/s) + 1 per
        spatial axis (ceil with ``ceil_mode``); with ``return_indices``, (``values``, ``indices``) where indices are
        int64 flat positions of the winners in each unpadded length-L input plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 2 or 3 dimensions or has an empty non-batch dimension, a tuple argument has the wrong
        length, an entry of kernel_size, stride or dilation is not positive, padding is negative or above
        kernel_size // 2, an output size is below 1, or dilation and padding leave a window without an input cell
        (torch returns -inf there).
    TypeError
        If x is not an array of a supported library or has an unsupported dtype (bool, complex, uint16, ...), an
        integer argument is not an int or tuple of ints, or ceil_mode or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.max_pool1d(np.array([[1.0, 3.0, 3.0, 0.0, 5.0]]), 2, return_indices=True)
    (array([[3., 3.]]), array([[1, 2]]))
    """
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


def max_pool2d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    """2-d max pooling of ``x``, as ``torch.nn.functional.max_pool2d``.

    Each output is the maximum of a window of ``kernel_size`` taps spaced ``dilation`` apart, placed every ``stride``
    cells over ``x`` padded with -inf; ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, H, W) or (C, H, W); any array-API array (NumPy, torch, JAX, CuPy, Dask,
        array-api-strict) of a float, int8/16/32/64 or uint8 dtype. Only the batch dimension N may be 0.
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
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OH, OW) or (C, OH, OW) with O = floor((L+2p-d(k-1)-1)/s) + 1
        per spatial axis (ceil with ``ceil_mode``); with ``return_indices``, (``values``, ``indices``) where indices
        are int64 flat positions of the winners in each unpadded (H, W) input plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 3 or 4 dimensions or has an empty non-batch dimension, a tuple argument has the wrong
        length, an entry of kernel_size, stride or dilation is not positive, padding is negative or above
        kernel_size // 2, an output size is below 1, or dilation and padding leave a window without an input cell
        (torch returns -inf there).
    TypeError
        If x is not an array of a supported library or has an unsupported dtype (bool, complex, uint16, ...), an
        integer argument is not an int or tuple of ints, or ceil_mode or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.max_pool2d(np.arange(16.0).reshape(1, 4, 4), 3, 2, 1)
    array([[[ 5.,  7.],
            [13., 15.]]])
    """
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


def max_pool3d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Padding = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False, *, layout: str = "channels_first") -> Any:
    """3-d max pooling of ``x``, as ``torch.nn.functional.max_pool3d``.

    Each output is the maximum of a window of ``kernel_size`` taps spaced ``dilation`` apart, placed every ``stride``
    cells over ``x`` padded with -inf; ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, D, H, W) or (C, D, H, W); any array-API array (NumPy, torch, JAX, CuPy, Dask,
        array-api-strict) of a float, int8/16/32/64 or uint8 dtype. Only the batch dimension N may be 0.
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
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OD, OH, OW) or (C, OD, OH, OW) with O =
        floor((L+2p-d(k-1)-1)/s) + 1 per spatial axis (ceil with ``ceil_mode``); with ``return_indices``,
        (``values``, ``indices``) where indices are int64 flat positions of the winners in each unpadded (D, H, W)
        input plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 4 or 5 dimensions or has an empty non-batch dimension, a tuple argument has the wrong
        length, an entry of kernel_size, stride or dilation is not positive, padding is negative or above
        kernel_size // 2, an output size is below 1, or dilation and padding leave a window without an input cell
        (torch returns -inf there).
    TypeError
        If x is not an array of a supported library or has an unsupported dtype (bool, complex, uint16, ...), an
        integer argument is not an int or tuple of ints, or ceil_mode or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 2)
    array([[[[7.]]]])
    """
    if check_layout("max_pool3d", layout):
        return channels_last(max_pool3d, locals(), 3, ("x",))
    return _forward(3, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


def max_pool1d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`max_pool1d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering, with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OL) or (C, OL); x's dtype, library and device.
    x : array
        The forward's input, shaped (N, C, L) or (C, L).
    kernel_size : int or tuple of int
        The forward's window size, as in :func:`max_pool1d`.
    stride : int, tuple of int or None, default None
        The forward's window step, as in :func:`max_pool1d` (None: kernel_size).
    padding : int, tuple of int, tuple of (int, int) or str, default 0
        The forward's padding, as in :func:`max_pool1d`.
    dilation : int or tuple of int, default 1
        The forward's dilation, as in :func:`max_pool1d`.
    ceil_mode : bool, default False
        The forward's output size rule, as in :func:`max_pool1d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`max_pool1d`), grad_output or indices is not shaped like
        the forward's output, an index lies outside its input plane, or grad_output and x are on different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`max_pool1d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.max_pool1d_backward(np.ones((1, 2)), np.array([[1.0, 3.0, 3.0, 0.0]]), 2)
    array([[0., 1., 1., 0.]])
    """
    if check_layout("max_pool1d_backward", layout):
        return channels_last(max_pool1d_backward, locals(), 1, ("grad_output", "x", "indices"))
    return _backward(1, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


def max_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`max_pool2d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering, with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OH, OW) or (C, OH, OW); x's dtype, library and
        device.
    x : array
        The forward's input, shaped (N, C, H, W) or (C, H, W).
    kernel_size : int or tuple of int
        The forward's window size, as in :func:`max_pool2d`.
    stride : int, tuple of int or None, default None
        The forward's window step, as in :func:`max_pool2d` (None: kernel_size).
    padding : int, tuple of int, tuple of (int, int) or str, default 0
        The forward's padding, as in :func:`max_pool2d`.
    dilation : int or tuple of int, default 1
        The forward's dilation, as in :func:`max_pool2d`.
    ceil_mode : bool, default False
        The forward's output size rule, as in :func:`max_pool2d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`max_pool2d`), grad_output or indices is not shaped like
        the forward's output, an index lies outside its input plane, or grad_output and x are on different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`max_pool2d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.max_pool2d_backward(np.ones((1, 2, 2)), np.array([[[0.0, 0, 0], [0, 9, 0], [0, 0, 0]]]), 2, 1)
    array([[[0., 0., 0.],
            [0., 4., 0.],
            [0., 0., 0.]]])
    """
    if check_layout("max_pool2d_backward", layout):
        return channels_last(max_pool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _backward(2, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


def max_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Padding = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`max_pool3d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering, with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OD, OH, OW) or (C, OD, OH, OW); x's dtype, library
        and device.
    x : array
        The forward's input, shaped (N, C, D, H, W) or (C, D, H, W).
    kernel_size : int or tuple of int
        The forward's window size, as in :func:`max_pool3d`.
    stride : int, tuple of int or None, default None
        The forward's window step, as in :func:`max_pool3d` (None: kernel_size).
    padding : int, tuple of int, tuple of (int, int) or str, default 0
        The forward's padding, as in :func:`max_pool3d`.
    dilation : int or tuple of int, default 1
        The forward's dilation, as in :func:`max_pool3d`.
    ceil_mode : bool, default False
        The forward's output size rule, as in :func:`max_pool3d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`max_pool3d`), grad_output or indices is not shaped like
        the forward's output, an index lies outside its input plane, or grad_output and x are on different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`max_pool3d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> float(poolspec.max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 2)[0, 1, 1, 1])
    1.0
    """
    if check_layout("max_pool3d_backward", layout):
        return channels_last(max_pool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _backward(3, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


# -- adaptive_max_pool1d/2d/3d: the same scan over the windows [floor(i*L/O), ceil((i+1)*L/O)) -------------

@lru_cache(maxsize=512)
def _adaptive_windows(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> Any:
    return adaptive_max_windows(in_spatial, out_spatial)


def _adaptive_forward(n: int, x: Any, output_size: Any, return_indices: bool) -> Any:
    if in_graph(x):
        return graph_op(f"adaptive_max_pool{n}d", dict(output_size=output_size, return_indices=return_indices), x)
    _, _, r = resolve(f"adaptive_max_pool{n}d", x, output_size=output_size, return_indices=return_indices)
    windows = _adaptive_windows(tuple(x.shape[-n:]), r.params["output_size"])
    values, idx = max_pool(windows, x, with_index=r["return_indices"])
    return keep_layout(f"adaptive_max_pool{n}d", x, (values, idx) if r["return_indices"] else values)


def _adaptive_backward(n: int, grad_output: Any, x: Any, output_size: Any, return_indices: bool,
                       indices: Any) -> Any:
    op = f"adaptive_max_pool{n}d"
    if in_graph(x):
        return graph_op(op, dict(output_size=output_size, return_indices=return_indices), x, grad_output, indices)
    _, _, r = resolve_backward(op, grad_output, x, output_size=output_size, return_indices=return_indices)
    return _routed(op, _adaptive_windows(tuple(x.shape[-n:]), r.params["output_size"]), grad_output, x, indices,
                   r.output_shape)


def _are_winners(windows: Any, xp: Any, x: Any, indices: Any) -> bool:
    """Whether ``indices`` are x's winners; taken as True where the values cannot be read. Concrete JAX arrays
    inside a jit trace are compared on the host: jnp operations there are staged, and a branch may never
    read a traced value."""
    if WINNERS[0] or not (readable(indices) and readable(x)):
        return True
    same = xp.all(indices == max_indices(windows, x))
    if is_traced(same):
        host = np.asarray(x).astype(np.float64)  # exact for every float dtype, bfloat16 included
        same = np.all(np.asarray(indices) == max_indices(windows, host))
    return bool(same)


def _routed(op: str, windows: Any, grad_output: Any, x: Any, indices: Any, shape: tuple[int, ...]) -> Any:
    """The VJP at the forward's winners, or at ``indices`` given in their place. The windows' routes rely on
    each index being its output's winner (inside its window); other indices follow torch's rule instead,
    each cotangent added at its index anywhere in the plane (by sorting, :class:`Cells`). Under transforms,
    traces and Dask's lazy graphs, whose values are not read, indices are taken as the winners."""
    if indices is None:
        return max_backward(windows, grad_output, max_indices(windows, x), primal=x)
    xp = check_indices(f"{op}_backward", indices, x, shape)
    if _are_winners(windows, xp, x, indices):
        return max_backward(windows, grad_output, indices, primal=x)
    n = len(windows.in_spatial)
    P, M, lead = math.prod(windows.in_spatial), math.prod(shape[-n:]), tuple(x.shape[:x.ndim - n])
    check_index_range(f"{op}_backward", xp, indices, P)
    grad = max_backward(Cells(P, M), xp.reshape(grad_output, lead + (M,)), xp.reshape(indices, lead + (M,)),
                        primal=xp.reshape(x, lead + (P,)))
    return xp.reshape(grad, tuple(x.shape))


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...,
                        *, layout: str = ...) -> Array: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[True],
                        *, layout: str = ...) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize,
                        return_indices: bool = ..., *, layout: str = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool1d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
    """1-d adaptive max pooling of ``x`` to ``output_size``, as ``torch.nn.functional.adaptive_max_pool1d``.

    Window i of an axis of length L and output size O is [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap and O > L
    is allowed. Ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, L) or (C, L); any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) of a
        float dtype. The spatial dimensions must be non-empty (N and C may be 0).
    output_size : int, None or tuple of int or None
        Output spatial size O: an int or a tuple of one entry; each >= 0 (0 gives an empty output) or None (keeps
        the input's size on that axis).
    return_indices : bool, default False
        Also return the winners' indices.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OL) or (C, OL); with ``return_indices``, (``values``,
        ``indices``) where indices are int64 flat positions of the winners in each length-L input plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 2 or 3 dimensions or has an empty spatial dimension, output_size has the wrong number of
        entries, or an output_size entry is negative.
    TypeError
        If x is not an array of a supported library or not of a float dtype, output_size is not an int, None or a
        tuple of them, or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool1d(np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3, return_indices=True)
    (array([[5., 5., 4.]]), array([[1, 1, 3]]))
    """
    if check_layout("adaptive_max_pool1d", layout):
        return channels_last(adaptive_max_pool1d, locals(), 1, ("x",))
    return _adaptive_forward(1, x, output_size, return_indices)


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...,
                        *, layout: str = ...) -> Array: ...


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize, return_indices: Literal[True],
                        *, layout: str = ...) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize,
                        return_indices: bool = ..., *, layout: str = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool2d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
    """2-d adaptive max pooling of ``x`` to ``output_size``, as ``torch.nn.functional.adaptive_max_pool2d``.

    Window i of an axis of length L and output size O is [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap and O > L
    is allowed. Ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, H, W) or (C, H, W); any array-API array (NumPy, torch, JAX, CuPy, Dask,
        array-api-strict) of a float dtype. The spatial dimensions must be non-empty (N and C may be 0).
    output_size : int, None or tuple of int or None
        Output spatial size O: an int for every spatial axis or a tuple of 2 entries; each >= 0 (0 gives an empty
        output) or None (keeps the input's size on that axis).
    return_indices : bool, default False
        Also return the winners' indices.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OH, OW) or (C, OH, OW); with ``return_indices``, (``values``,
        ``indices``) where indices are int64 flat positions of the winners in each (H, W) input plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 3 or 4 dimensions or has an empty spatial dimension, output_size has the wrong number of
        entries, or an output_size entry is negative.
    TypeError
        If x is not an array of a supported library or not of a float dtype, output_size is not an int, None or a
        tuple of them, or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool2d(np.arange(9.0).reshape(1, 3, 3), 2)
    array([[[4., 5.],
            [7., 8.]]])
    """
    if check_layout("adaptive_max_pool2d", layout):
        return channels_last(adaptive_max_pool2d, locals(), 2, ("x",))
    return _adaptive_forward(2, x, output_size, return_indices)


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...,
                        *, layout: str = ...) -> Array: ...


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize, return_indices: Literal[True],
                        *, layout: str = ...) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize,
                        return_indices: bool = ..., *, layout: str = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool3d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
    """3-d adaptive max pooling of ``x`` to ``output_size``, as ``torch.nn.functional.adaptive_max_pool3d``.

    Window i of an axis of length L and output size O is [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap and O > L
    is allowed. Ties go to the first maximum in row-major order, a NaN wins (the last one).

    Parameters
    ----------
    x : array
        Input shaped (N, C, D, H, W) or (C, D, H, W); any array-API array (NumPy, torch, JAX, CuPy, Dask,
        array-api-strict) of a float dtype. The spatial dimensions must be non-empty (N and C may be 0).
    output_size : int, None or tuple of int or None
        Output spatial size O: an int for every spatial axis or a tuple of 3 entries; each >= 0 (0 gives an empty
        output) or None (keeps the input's size on that axis).
    return_indices : bool, default False
        Also return the winners' indices.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array or tuple of array
        The pooled array in x's dtype, shaped (N, C, OD, OH, OW) or (C, OD, OH, OW); with ``return_indices``,
        (``values``, ``indices``) where indices are int64 flat positions of the winners in each (D, H, W) input
        plane, as torch's.

    Raises
    ------
    ValueError
        If x does not have 4 or 5 dimensions or has an empty spatial dimension, output_size has the wrong number of
        entries, or an output_size entry is negative.
    TypeError
        If x is not an array of a supported library or not of a float dtype, output_size is not an int, None or a
        tuple of them, or return_indices is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 1)
    array([[[[7.]]]])
    """
    if check_layout("adaptive_max_pool3d", layout):
        return channels_last(adaptive_max_pool3d, locals(), 3, ("x",))
    return _adaptive_forward(3, x, output_size, return_indices)


def adaptive_max_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_max_pool1d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering (overlapping windows add up on a shared winner),
    with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OL) or (C, OL); x's dtype, library and device.
    x : array
        The forward's input, shaped (N, C, L) or (C, L).
    output_size : int, None or tuple of int or None
        The forward's output size, as in :func:`adaptive_max_pool1d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`adaptive_max_pool1d`), grad_output or indices is not
        shaped like the forward's output, an index lies outside its input plane, or grad_output and x are on
        different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`adaptive_max_pool1d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool1d_backward(np.ones((1, 3)), np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3)
    array([[0., 2., 0., 1., 0.]])
    """
    if check_layout("adaptive_max_pool1d_backward", layout):
        return channels_last(adaptive_max_pool1d_backward, locals(), 1, ("grad_output", "x", "indices"))
    return _adaptive_backward(1, grad_output, x, output_size, return_indices, indices)


def adaptive_max_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_max_pool2d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering (overlapping windows add up on a shared winner),
    with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OH, OW) or (C, OH, OW); x's dtype, library and
        device.
    x : array
        The forward's input, shaped (N, C, H, W) or (C, H, W).
    output_size : int, None or tuple of int or None
        The forward's output size, as in :func:`adaptive_max_pool2d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`adaptive_max_pool2d`), grad_output or indices is not
        shaped like the forward's output, an index lies outside its input plane, or grad_output and x are on
        different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`adaptive_max_pool2d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool2d_backward(np.ones((1, 1, 1)), np.arange(4.0).reshape(1, 2, 2), 1)
    array([[[0., 0.],
            [0., 1.]]])
    """
    if check_layout("adaptive_max_pool2d_backward", layout):
        return channels_last(adaptive_max_pool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _adaptive_backward(2, grad_output, x, output_size, return_indices, indices)


def adaptive_max_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_max_pool3d` w.r.t. ``x`` (its vector-Jacobian product).

    ``grad_output`` is routed to the forward's winners by gathering (overlapping windows add up on a shared winner),
    with no scatter (bit-identical across runs).

    Parameters
    ----------
    grad_output : array
        The cotangent, shaped like the forward's output (N, C, OD, OH, OW) or (C, OD, OH, OW); x's dtype, library
        and device.
    x : array
        The forward's input, shaped (N, C, D, H, W) or (C, D, H, W).
    output_size : int, None or tuple of int or None
        The forward's output size, as in :func:`adaptive_max_pool3d`.
    return_indices : bool, default False
        The forward's flag; checked to be a bool, it does not change the gradient.
    indices : array or None, default None
        Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
        which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
        cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
        graphs, whose values are not read, indices are taken as the winners.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient w.r.t. x, with x's shape and dtype.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`adaptive_max_pool3d`), grad_output or indices is not
        shaped like the forward's output, an index lies outside its input plane, or grad_output and x are on
        different devices.
    TypeError
        If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
        libraries, or an argument has a wrong type (as in :func:`adaptive_max_pool3d`).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> float(poolspec.adaptive_max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 1).sum())
    1.0
    """
    if check_layout("adaptive_max_pool3d_backward", layout):
        return channels_last(adaptive_max_pool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _adaptive_backward(3, grad_output, x, output_size, return_indices, indices)
