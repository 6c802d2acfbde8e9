"""max_pool1d/2d/3d, adaptive_max_pool1d/2d/3d and their VJPs.

Whole definition: the cards are ``spec.card("max_pool2d")`` etc. (spec/pooling.py: torch's checks, plus a
ValueError for a window that dilation and padding leave without an input cell); the windows and kernels
are ``kernels.maxes.MaxWindows`` (separable max with torch's scan rule; gradient and double backward by
strided slices and selects) and ``kernels.maxes.AdaptiveMaxWindows`` (the same scan over ragged
adaptive windows, by ``take``; evenly dividing axes use ``MaxWindows``); the autodiff bindings are
``autodiff.max_pool`` / ``autodiff.max_backward``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Literal, overload

from .._compat import WINNERS, readable
from .._types import Array
from ..autodiff import graph_op, in_graph, max_backward, max_indices, max_pool
from ..kernels.cells import Cells
from ..kernels.maxes import MaxWindows, adaptive_max_windows
from ._common import check_indices, keep_layout, resolve, resolve_backward

Size = int | tuple[int, ...]
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
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ...) -> Array: ...


@overload
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def max_pool1d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def max_pool1d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Size = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-d max pooling of ``x`` shaped (N, C, L) or (C, L), as ``torch.nn.functional.max_pool1d``.

    >>> import numpy as np, poolspec
    >>> poolspec.max_pool1d(np.array([[1.0, 3.0, 3.0, 0.0, 5.0]]), 2, return_indices=True)
    (array([[3., 3.]]), array([[1, 2]]))
    """
    return _forward(1, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ...) -> Array: ...


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def max_pool2d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def max_pool2d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Size = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-d max pooling of ``x`` shaped (N, C, H, W) or (C, H, W), as ``torch.nn.functional.max_pool2d``;
    indices are flat in the unpadded (H, W) plane.

    >>> import numpy as np, poolspec
    >>> poolspec.max_pool2d(np.arange(16.0).reshape(1, 4, 4), 3, 2, 1)
    array([[[ 5.,  7.],
            [13., 15.]]])
    """
    return _forward(2, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: Literal[False] = ...) -> Array: ...


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., *, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def max_pool3d(x: Array, kernel_size: Size, stride: Size | None = ..., padding: Size = ..., dilation: Size = ...,
               ceil_mode: bool = ..., return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def max_pool3d(x: Any, kernel_size: Size, stride: Size | None = None, padding: Size = 0, dilation: Size = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-d max pooling of ``x`` shaped (N, C, D, H, W) or (C, D, H, W), as ``torch.nn.functional.max_pool3d``.

    >>> import numpy as np, poolspec
    >>> poolspec.max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 2)
    array([[[[7.]]]])
    """
    return _forward(3, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                               ceil_mode=ceil_mode, return_indices=return_indices))


def max_pool1d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None) -> Array:
    """The gradient of :func:`max_pool1d` w.r.t. ``x``: ``grad_output`` routed to the winners by gathering.
    ``indices=`` (from ``return_indices=True``) skips recomputing them.

    >>> import numpy as np, poolspec
    >>> poolspec.max_pool1d_backward(np.ones((1, 2)), np.array([[1.0, 3.0, 3.0, 0.0]]), 2)
    array([[0., 1., 1., 0.]])
    """
    return _backward(1, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


def max_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None) -> Array:
    """The gradient of :func:`max_pool2d` w.r.t. ``x`` (overlapping windows accumulate on shared winners).

    >>> import numpy as np, poolspec
    >>> poolspec.max_pool2d_backward(np.ones((1, 2, 2)), np.array([[[0.0, 0, 0], [0, 9, 0], [0, 0, 0]]]), 2, 1)
    array([[[0., 0., 0.],
            [0., 4., 0.],
            [0., 0., 0.]]])
    """
    return _backward(2, grad_output, x, dict(kernel_size=kernel_size, stride=stride, padding=padding,
                                             dilation=dilation, ceil_mode=ceil_mode,
                                             return_indices=return_indices), indices)


def max_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                        return_indices: bool = False, *, indices: Any = None) -> Array:
    """The gradient of :func:`max_pool3d` w.r.t. ``x``.

    >>> import numpy as np, poolspec
    >>> float(poolspec.max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 2)[0, 1, 1, 1])
    1.0
    """
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


def _routed(op: str, windows: Any, grad_output: Any, x: Any, indices: Any, shape: tuple[int, ...]) -> Any:
    """The VJP at the forward's winners, or at ``indices`` given in their place. The windows' routes rely on
    each index being its output's winner (inside its window); other indices follow torch's rule instead,
    each cotangent added at its index anywhere in the plane (by sorting, :class:`Cells`). Under transforms,
    traces and Dask's lazy graphs, whose values are not read, indices are taken as the winners."""
    if indices is None:
        return max_backward(windows, grad_output, max_indices(windows, x), primal=x)
    xp = check_indices(f"{op}_backward", indices, x, shape)
    if WINNERS[0] or not (readable(indices) and readable(x)) or bool(xp.all(indices == max_indices(windows, x))):
        return max_backward(windows, grad_output, indices, primal=x)
    n = len(windows.in_spatial)
    P, M, lead = math.prod(windows.in_spatial), math.prod(shape[-n:]), tuple(x.shape[:x.ndim - n])
    if bool(xp.any((indices < 0) | (indices >= P))):
        raise ValueError(f"{op}_backward: indices must lie in [0, {P}) (flat positions in each input plane)")
    grad = max_backward(Cells(P, M), xp.reshape(grad_output, lead + (M,)), xp.reshape(indices, lead + (M,)),
                        primal=xp.reshape(x, lead + (P,)))
    return xp.reshape(grad, tuple(x.shape))


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...) -> Array: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool1d(x: Array, output_size: OutputSize,
                        return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool1d(x: Any, output_size: OutputSize, return_indices: bool = False) -> Any:
    """1-d adaptive max pooling of ``x`` shaped (N, C, L) or (C, L), as
    ``torch.nn.functional.adaptive_max_pool1d``: window i is [floor(i*L/O), ceil((i+1)*L/O)).

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool1d(np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3, return_indices=True)
    (array([[5., 5., 4.]]), array([[1, 1, 3]]))
    """
    return _adaptive_forward(1, x, output_size, return_indices)


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...) -> Array: ...


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool2d(x: Array, output_size: OutputSize,
                        return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool2d(x: Any, output_size: OutputSize, return_indices: bool = False) -> Any:
    """2-d adaptive max pooling of ``x`` shaped (N, C, H, W) or (C, H, W); indices are flat in (H, W).

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool2d(np.arange(9.0).reshape(1, 3, 3), 2)
    array([[[4., 5.],
            [7., 8.]]])
    """
    return _adaptive_forward(2, x, output_size, return_indices)


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize, return_indices: Literal[False] = ...) -> Array: ...


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize, return_indices: Literal[True]) -> tuple[Array, Array]: ...


@overload
def adaptive_max_pool3d(x: Array, output_size: OutputSize,
                        return_indices: bool = ...) -> Array | tuple[Array, Array]: ...


def adaptive_max_pool3d(x: Any, output_size: OutputSize, return_indices: bool = False) -> Any:
    """3-d adaptive max pooling of ``x`` shaped (N, C, D, H, W) or (C, D, H, W).

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 1)
    array([[[[7.]]]])
    """
    return _adaptive_forward(3, x, output_size, return_indices)


def adaptive_max_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None) -> Array:
    """The gradient of :func:`adaptive_max_pool1d` w.r.t. ``x``, by gathering (overlapping windows add up on
    a shared winner).

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool1d_backward(np.ones((1, 3)), np.array([[1.0, 5.0, 2.0, 4.0, 3.0]]), 3)
    array([[0., 2., 0., 1., 0.]])
    """
    return _adaptive_backward(1, grad_output, x, output_size, return_indices, indices)


def adaptive_max_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None) -> Array:
    """The gradient of :func:`adaptive_max_pool2d` w.r.t. ``x``.

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_max_pool2d_backward(np.ones((1, 1, 1)), np.arange(4.0).reshape(1, 2, 2), 1)
    array([[[0., 0.],
            [0., 1.]]])
    """
    return _adaptive_backward(2, grad_output, x, output_size, return_indices, indices)


def adaptive_max_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize, return_indices: bool = False,
                                 *, indices: Any = None) -> Array:
    """The gradient of :func:`adaptive_max_pool3d` w.r.t. ``x``.

    >>> import numpy as np, poolspec
    >>> float(poolspec.adaptive_max_pool3d_backward(np.ones((1, 1, 1, 1)), np.arange(8.0).reshape(1, 2, 2, 2), 1).sum())
    1.0
    """
    return _adaptive_backward(3, grad_output, x, output_size, return_indices, indices)
