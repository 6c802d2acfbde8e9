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
from .._docs import Template
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


# the docstring of adaptive_max_pool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d adaptive max pooling of ``x`` to ``output_size``, as ``torch.nn.functional.{op}``.

Window i of an axis of length L and output size O is [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap and O > L
is allowed. Ties go to the first maximum in row-major order, a NaN wins (the last one).

Parameters
----------
x : array
    Input shaped {x}; any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) of a float dtype. The
    spatial dimensions must be non-empty (N and C may be 0).
output_size : int, None or tuple of int or None
    Output spatial size O: {output_size}; each >= 0 (0 gives an empty output) or None (keeps the input's size on that
    axis).
return_indices : bool, default False
    Also return the winners' indices.
{layout}

{routed_returns_forward}

Raises
------
ValueError
    If x does not have {lo} or {hi} dimensions or has an empty spatial dimension, output_size has the wrong number of
    entries, or an output_size entry is negative.
TypeError
    If x is not an array of a supported library or not of a float dtype, output_size is not an int, None or a
    tuple of them, or return_indices is not a bool.

{examples}
""", width=116, defaults=dict(values="pooled array"))


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...,
                        *, layout: str = ...) -> Array: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[True],
                        *, layout: str = ...) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize,
                        return_indices: bool = ..., *, layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(output_size="an int or a tuple of one entry", example="""
>>> poolspec.adaptive_max_pool1d(np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3, return_indices=True)
(array([[5., 5., 4.]]), array([[1, 1, 3]]))""")
def adaptive_max_pool1d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
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


@_FORWARD.document(output_size="an int for every spatial axis or a tuple of 2 entries", example="""
>>> poolspec.adaptive_max_pool2d(np.arange(9.0).reshape(1, 3, 3), 2)
array([[[4., 5.],
        [7., 8.]]])""")
def adaptive_max_pool2d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
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


@_FORWARD.document(output_size="an int for every spatial axis or a tuple of 3 entries", example="""
>>> poolspec.adaptive_max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 1)
array([[[[7.]]]])""")
def adaptive_max_pool3d(x: Any, output_size: OutputSize, return_indices: bool = False,
                        *, layout: str = "channels_first") -> Any:
    if check_layout("adaptive_max_pool3d", layout):
        return channels_last(adaptive_max_pool3d, locals(), 3, ("x",))
    return _adaptive_forward(3, x, output_size, return_indices)


# the docstring of adaptive_max_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` w.r.t. ``x`` (its vector-Jacobian product).

``grad_output`` is routed to the forward's winners by gathering (overlapping windows add up on a shared winner),
with no scatter (bit-identical across runs).

Parameters
----------
{routed_arrays}
output_size : int, None or tuple of int or None
    The forward's output size, as in :func:`{op}`.
{routed_backward}

{examples}
""", width=116)


@_BACKWARD.document(example="""
>>> poolspec.adaptive_max_pool1d_backward(np.ones((1, 3)), np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3)
array([[0., 2., 0., 1., 0.]])""")
def adaptive_max_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_max_pool1d_backward", layout):
        return channels_last(adaptive_max_pool1d_backward, locals(), 1, ("grad_output", "x", "indices"))
    return _adaptive_backward(1, grad_output, x, output_size, return_indices, indices)


@_BACKWARD.document(example="""
>>> poolspec.adaptive_max_pool2d_backward(np.ones((1, 1, 1)), np.arange(4.0).reshape(1, 2, 2), 1)
array([[[0., 0.],
        [0., 1.]]])""")
def adaptive_max_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_max_pool2d_backward", layout):
        return channels_last(adaptive_max_pool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _adaptive_backward(2, grad_output, x, output_size, return_indices, indices)


@_BACKWARD.document(example="""
>>> float(poolspec.adaptive_max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 1).sum())
1.0""")
def adaptive_max_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("adaptive_max_pool3d_backward", layout):
        return channels_last(adaptive_max_pool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _adaptive_backward(3, grad_output, x, output_size, return_indices, indices)
