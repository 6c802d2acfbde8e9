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
from .._docs import Template

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


# the docstring of adaptive_avg_pool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d adaptive average pooling to ``output_size``, as ``torch.nn.functional.{op}``.

Output cell i of each axis averages the input window [floor(i * L / O), ceil((i + 1) * L / O)); windows may overlap
and O > L is allowed.

Parameters
----------
x : array
    Input shaped {x}, {dims_and} non-empty (N and C may be 0); any array-API array (NumPy, torch, JAX, CuPy, Dask,
    array-api-strict); float16, bfloat16, float32 or float64.
output_size : int, None or tuple of (int or None)
    The output spatial size O: an int{every} or a {n}-tuple; entries >= 0 (0 gives an empty output); None, or a None
    entry, keeps the input size.
{layout}

Returns
-------
array
    Shaped (N, C, {o}) or (C, {o}); x's namespace, device and dtype.

Raises
------
ValueError
    If x is not {lo}-d or {hi}-d or has an empty spatial dimension, or output_size has a negative entry or is a tuple
    whose length is not {n}.
TypeError
    If x is not an array of a supported library, x's dtype is not floating, or output_size is not an int, None or a
    tuple of ints or None (e.g. a float or a bool).

{examples}
""", defaults=dict(every=" (every axis)"))


@_FORWARD.document(every="", example="""
>>> poolspec.adaptive_avg_pool1d(np.arange(5.0)[None], 3)
array([[0.5, 2. , 3.5]])""")
def adaptive_avg_pool1d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool1d", layout):
        return channels_last(adaptive_avg_pool1d, locals(), 1, ("x",))
    return _adaptive_op(1, x, output_size)


@_FORWARD.document(example="""
>>> poolspec.adaptive_avg_pool2d(np.ones((2, 3, 13, 13)), 7).shape
(2, 3, 7, 7)""")
def adaptive_avg_pool2d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool2d", layout):
        return channels_last(adaptive_avg_pool2d, locals(), 2, ("x",))
    return _adaptive_op(2, x, output_size)


@_FORWARD.document(example="""
>>> poolspec.adaptive_avg_pool3d(np.ones((1, 5, 5, 5)), (2, None, 3)).shape
(1, 2, 5, 3)""")
def adaptive_avg_pool3d(x: Array, output_size: OutputSize, *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool3d", layout):
        return channels_last(adaptive_avg_pool3d, locals(), 3, ("x",))
    return _adaptive_op(3, x, output_size)


# the docstring of adaptive_avg_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` with respect to ``x`` for the cotangent ``grad_output``.

Linear in grad_output: each input cell gathers g / count from the windows that contain it; its own gradient is
:func:`{op}` again.

Parameters
----------
{linear_arrays}
output_size : int, None or tuple of (int or None)
    The output spatial size, as in :func:`{op}`.
{layout}

{linear_returns}

{examples}
""")


@_BACKWARD.document(example="""
>>> poolspec.adaptive_avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 3)), 2)
array([[0.5, 1. , 0.5]])""")
def adaptive_avg_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool1d_backward", layout):
        return channels_last(adaptive_avg_pool1d_backward, locals(), 1, ("grad_output", "x"))
    return _adaptive_op(1, x, output_size, grad_output)


@_BACKWARD.document(example="""
>>> poolspec.adaptive_avg_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 1)
array([[[0.25, 0.25],
        [0.25, 0.25]]])""")
def adaptive_avg_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool2d_backward", layout):
        return channels_last(adaptive_avg_pool2d_backward, locals(), 2, ("grad_output", "x"))
    return _adaptive_op(2, x, output_size, grad_output)


@_BACKWARD.document(example="""
>>> float(poolspec.adaptive_avg_pool3d_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 2, 2, 2)), 1).sum())
1.0""")
def adaptive_avg_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize,
                                 *, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_avg_pool3d_backward", layout):
        return channels_last(adaptive_avg_pool3d_backward, locals(), 3, ("grad_output", "x"))
    return _adaptive_op(3, x, output_size, grad_output)
