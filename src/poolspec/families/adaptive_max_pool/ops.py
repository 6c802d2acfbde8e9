"""adaptive_max_pool1d/2d/3d and their VJPs.

The cards are in ``card.py``; the windows [floor(i*L/O), ceil((i+1)*L/O)) are
``kernels.adaptive_maxes.AdaptiveMaxWindows`` (torch's scan over ragged windows, by ``take``; evenly dividing
axes use ``kernels.maxes.MaxWindows``); the autodiff bindings are ``autodiff.max_pool`` /
``autodiff.max_backward``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, overload

from ..._calls import channels_last, check_layout, keep_layout, resolve, resolve_backward
from ..._types import Array, OutputSize
from ...autodiff import graph_op, in_graph, max_pool
from ...kernels.adaptive_maxes import adaptive_max_windows
from .._routed import routed_vjp

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_backward", "adaptive_max_pool2d_backward", "adaptive_max_pool3d_backward"]


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
    return routed_vjp(op, _adaptive_windows(tuple(x.shape[-n:]), r.params["output_size"]), grad_output, x, indices,
                   r.output_shape)


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
