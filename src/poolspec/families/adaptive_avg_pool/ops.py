"""adaptive_avg_pool1d/2d/3d and their VJPs.

The cards are in ``card.py``; the op is ``kernels.linear.adaptive_avg_plan``, a ``SeparableLinear`` over the
windows [floor(i*L/O), ceil((i+1)*L/O)) (docs/TORCH_NUMERICS.md section 3), and its VJP the transposed gathers.
"""

from __future__ import annotations

from typing import Any

from ..._calls import channels_last, check_layout, keep_layout, resolve, resolve_backward
from ..._types import Array, OutputSize
from ...autodiff import graph_op, in_graph, linear
from ...kernels.linear import adaptive_avg_plan

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_avg_pool1d_backward", "adaptive_avg_pool2d_backward", "adaptive_avg_pool3d_backward"]


def _adaptive_op(n: int, x: Any, output_size: OutputSize, grad_output: Any = None) -> Any:
    name = f"adaptive_avg_pool{n}d"
    if in_graph(x):
        return graph_op(name, {"output_size": output_size}, x, grad_output)
    if grad_output is None:
        _, _, r = resolve(name, x, output_size=output_size)
    else:
        _, _, r = resolve_backward(name, grad_output, x, output_size=output_size)
    plan = adaptive_avg_plan(tuple(x.shape[-n:]), r.params["output_size"])
    if grad_output is None:
        return keep_layout(name, x, linear(plan, x))
    return linear(plan, grad_output, transpose=True, primal=x)


def adaptive_avg_pool1d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    """1-d adaptive average pooling to ``output_size``, as ``torch.nn.functional.adaptive_avg_pool1d``.

    Output cell i of each axis averages the input window [floor(i * L / O), ceil((i + 1) * L / O)); windows may overlap
    and O > L is allowed.

    Parameters
    ----------
    x : array
        Input shaped (N, C, L) or (C, L), L non-empty (N and C may be 0); any array-API array (NumPy, torch, JAX, CuPy,
        Dask, array-api-strict); float16, bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size O: an int or a 1-tuple; entries >= 0 (0 gives an empty output); None, or a None entry,
        keeps the input size.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        Shaped (N, C, O) or (C, O); x's namespace, device and dtype.

    Raises
    ------
    ValueError
        If x is not 2-d or 3-d or has an empty spatial dimension, or output_size has a negative entry or is a tuple
        whose length is not 1.
    TypeError
        If x is not an array of a supported library, x's dtype is not floating, or output_size is not an int, None or a
        tuple of ints or None (e.g. a float or a bool).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool1d(np.arange(5.0)[None], 3)
    array([[0.5, 2. , 3.5]])
    """
    if check_layout("adaptive_avg_pool1d", layout):
        return channels_last(adaptive_avg_pool1d, locals(), 1, ("x",))
    return _adaptive_op(1, x, output_size)


def adaptive_avg_pool2d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    """2-d adaptive average pooling to ``output_size``, as ``torch.nn.functional.adaptive_avg_pool2d``.

    Output cell i of each axis averages the input window [floor(i * L / O), ceil((i + 1) * L / O)); windows may overlap
    and O > L is allowed.

    Parameters
    ----------
    x : array
        Input shaped (N, C, H, W) or (C, H, W), H and W non-empty (N and C may be 0); any array-API array (NumPy, torch,
        JAX, CuPy, Dask, array-api-strict); float16, bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size O: an int (every axis) or a 2-tuple; entries >= 0 (0 gives an empty output); None, or a
        None entry, keeps the input size.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        Shaped (N, C, OH, OW) or (C, OH, OW); x's namespace, device and dtype.

    Raises
    ------
    ValueError
        If x is not 3-d or 4-d or has an empty spatial dimension, or output_size has a negative entry or is a tuple
        whose length is not 2.
    TypeError
        If x is not an array of a supported library, x's dtype is not floating, or output_size is not an int, None or a
        tuple of ints or None (e.g. a float or a bool).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool2d(np.ones((2, 3, 13, 13)), 7).shape
    (2, 3, 7, 7)
    """
    if check_layout("adaptive_avg_pool2d", layout):
        return channels_last(adaptive_avg_pool2d, locals(), 2, ("x",))
    return _adaptive_op(2, x, output_size)


def adaptive_avg_pool3d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    """3-d adaptive average pooling to ``output_size``, as ``torch.nn.functional.adaptive_avg_pool3d``.

    Output cell i of each axis averages the input window [floor(i * L / O), ceil((i + 1) * L / O)); windows may overlap
    and O > L is allowed.

    Parameters
    ----------
    x : array
        Input shaped (N, C, D, H, W) or (C, D, H, W), D, H and W non-empty (N and C may be 0); any array-API array
        (NumPy, torch, JAX, CuPy, Dask, array-api-strict); float16, bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size O: an int (every axis) or a 3-tuple; entries >= 0 (0 gives an empty output); None, or a
        None entry, keeps the input size.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        Shaped (N, C, OD, OH, OW) or (C, OD, OH, OW); x's namespace, device and dtype.

    Raises
    ------
    ValueError
        If x is not 4-d or 5-d or has an empty spatial dimension, or output_size has a negative entry or is a tuple
        whose length is not 3.
    TypeError
        If x is not an array of a supported library, x's dtype is not floating, or output_size is not an int, None or a
        tuple of ints or None (e.g. a float or a bool).

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool3d(np.ones((1, 5, 5, 5)), (2, None, 3)).shape
    (1, 2, 5, 3)
    """
    if check_layout("adaptive_avg_pool3d", layout):
        return channels_last(adaptive_avg_pool3d, locals(), 3, ("x",))
    return _adaptive_op(3, x, output_size)


def adaptive_avg_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_avg_pool1d` with respect to ``x`` for the cotangent ``grad_output``.

    Linear in grad_output: each input cell gathers g / count from the windows that contain it; its own gradient is
    :func:`adaptive_avg_pool1d` again.

    Parameters
    ----------
    grad_output : array
        The cotangent of :func:`adaptive_avg_pool1d`'s output: shaped (N, C, O) or (C, O) like it, with x's namespace,
        device and dtype.
    x : array
        The forward's input, shaped (N, C, L) or (C, L); its shape, dtype and device define the result's; float16,
        bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size, as in :func:`adaptive_avg_pool1d`.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient with respect to x: x's shape, namespace, device and dtype.

    Raises
    ------
    ValueError
        If the arguments break :func:`adaptive_avg_pool1d`'s rules, grad_output's shape is not the forward output's, or
        grad_output is on another device than x.
    TypeError
        If :func:`adaptive_avg_pool1d` would raise it, x's dtype is not floating, grad_output's dtype differs from x's,
        or the arrays come from different libraries.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 3)), 2)
    array([[0.5, 1. , 0.5]])
    """
    if check_layout("adaptive_avg_pool1d_backward", layout):
        return channels_last(adaptive_avg_pool1d_backward, locals(), 1, ("grad_output", "x"))
    return _adaptive_op(1, x, output_size, grad_output)


def adaptive_avg_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_avg_pool2d` with respect to ``x`` for the cotangent ``grad_output``.

    Linear in grad_output: each input cell gathers g / count from the windows that contain it; its own gradient is
    :func:`adaptive_avg_pool2d` again.

    Parameters
    ----------
    grad_output : array
        The cotangent of :func:`adaptive_avg_pool2d`'s output: shaped (N, C, OH, OW) or (C, OH, OW) like it, with x's
        namespace, device and dtype.
    x : array
        The forward's input, shaped (N, C, H, W) or (C, H, W); its shape, dtype and device define the result's; float16,
        bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size, as in :func:`adaptive_avg_pool2d`.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient with respect to x: x's shape, namespace, device and dtype.

    Raises
    ------
    ValueError
        If the arguments break :func:`adaptive_avg_pool2d`'s rules, grad_output's shape is not the forward output's, or
        grad_output is on another device than x.
    TypeError
        If :func:`adaptive_avg_pool2d` would raise it, x's dtype is not floating, grad_output's dtype differs from x's,
        or the arrays come from different libraries.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 1)
    array([[[0.25, 0.25],
            [0.25, 0.25]]])
    """
    if check_layout("adaptive_avg_pool2d_backward", layout):
        return channels_last(adaptive_avg_pool2d_backward, locals(), 2, ("grad_output", "x"))
    return _adaptive_op(2, x, output_size, grad_output)


def adaptive_avg_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    """The gradient of :func:`adaptive_avg_pool3d` with respect to ``x`` for the cotangent ``grad_output``.

    Linear in grad_output: each input cell gathers g / count from the windows that contain it; its own gradient is
    :func:`adaptive_avg_pool3d` again.

    Parameters
    ----------
    grad_output : array
        The cotangent of :func:`adaptive_avg_pool3d`'s output: shaped (N, C, OD, OH, OW) or (C, OD, OH, OW) like it,
        with x's namespace, device and dtype.
    x : array
        The forward's input, shaped (N, C, D, H, W) or (C, D, H, W); its shape, dtype and device define the result's;
        float16, bfloat16, float32 or float64.
    output_size : int, None or tuple of (int or None)
        The output spatial size, as in :func:`adaptive_avg_pool3d`.
    layout : str, default "channels_first"
        "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
        images are: every array argument and result in that layout, read through a permuted view (nothing is
        copied to change layout); indices keep their meaning (flat positions in each spatial plane).

    Returns
    -------
    array
        The gradient with respect to x: x's shape, namespace, device and dtype.

    Raises
    ------
    ValueError
        If the arguments break :func:`adaptive_avg_pool3d`'s rules, grad_output's shape is not the forward output's, or
        grad_output is on another device than x.
    TypeError
        If :func:`adaptive_avg_pool3d` would raise it, x's dtype is not floating, grad_output's dtype differs from x's,
        or the arrays come from different libraries.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> float(poolspec.adaptive_avg_pool3d_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 2, 2, 2)), 1).sum())
    1.0
    """
    if check_layout("adaptive_avg_pool3d_backward", layout):
        return channels_last(adaptive_avg_pool3d_backward, locals(), 3, ("grad_output", "x"))
    return _adaptive_op(3, x, output_size, grad_output)
