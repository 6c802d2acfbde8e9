"""The average-pooling family: avg_pool1d/2d/3d and adaptive_avg_pool1d/2d/3d, with their VJPs.

Whole definition in one place: the cards are ``spec.card("avg_pool2d")`` etc. (spec/pooling.py), the
per-axis plans come from ``plans.windows`` (regular windows, adaptive bounds), and both ops are a
``SeparableLinear`` - per-axis window sums and one division by the product of per-axis counts
(docs/TORCH_NUMERICS.md sections 1 and 3). The VJP is the transposed plan chain; its VJP is the forward again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .._types import Array
from ..autodiff import graph_op, in_graph, linear
from ..kernels.linear import SeparableLinear, outer_product
from ..plans import windows
from ._common import keep_layout, resolve, resolve_backward

Size = int | tuple[int, ...]
OutputSize = int | None | tuple[int | None, ...]


@lru_cache(maxsize=512)
def _avg_plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...],
              stride: tuple[int, ...], padding: tuple[int, ...], count_include_pad: bool,
              divisor_override: int | None) -> SeparableLinear:
    axes = tuple(windows.regular(L, O, k, s, p) for L, O, k, s, p in
                 zip(in_spatial, out_spatial, kernel, stride, padding))
    if divisor_override is not None:
        divisor: Any = divisor_override
    else:
        divisor = outer_product([windows.avg_counts(L, O, k, s, p, count_include_pad) for L, O, k, s, p in
                                 zip(in_spatial, out_spatial, kernel, stride, padding)])
    return SeparableLinear(in_spatial, out_spatial, axes, divisor)


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
                     p["padding"], p["count_include_pad"], p["divisor_override"])
    if grad_output is None:
        return keep_layout(name, x, linear(plan, x))
    return linear(plan, grad_output, transpose=True, primal=x)


@lru_cache(maxsize=512)
def _adaptive_plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> SeparableLinear:
    # custom_vjp on every shape, not only ragged ones, so JAX's transforms do not depend on L % O
    if 0 in out_spatial:
        return SeparableLinear(in_spatial, out_spatial, (), custom_vjp=True)
    axes = tuple(windows.adaptive(L, O) for L, O in zip(in_spatial, out_spatial))
    counts = []
    for L, O in zip(in_spatial, out_spatial):
        start, end = windows.adaptive_bounds(L, O)
        counts.append(end - start)
    return SeparableLinear(in_spatial, out_spatial, axes, outer_product(counts), custom_vjp=True)


def _adaptive_op(n: int, x: Any, output_size: OutputSize, grad_output: Any = None) -> Any:
    name = f"adaptive_avg_pool{n}d"
    if in_graph(x):
        return graph_op(name, {"output_size": output_size}, x, grad_output)
    if grad_output is None:
        _, _, r = resolve(name, x, output_size=output_size)
    else:
        _, _, r = resolve_backward(name, grad_output, x, output_size=output_size)
    plan = _adaptive_plan(tuple(x.shape[-n:]), r.params["output_size"])
    if grad_output is None:
        return keep_layout(name, x, linear(plan, x))
    return linear(plan, grad_output, transpose=True, primal=x)


def avg_pool1d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Array:
    """1-d average pooling of ``x`` shaped (N, C, L) or (C, L), as ``torch.nn.functional.avg_pool1d``
    (plus ``divisor_override``).

    >>> import numpy as np, poolspec
    >>> poolspec.avg_pool1d(np.arange(5.0)[None], 2, ceil_mode=True)
    array([[0.5, 2.5, 4. ]])
    """
    return _avg_op(1, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override))


def avg_pool2d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Array:
    """2-d average pooling of ``x`` shaped (N, C, H, W) or (C, H, W), as ``torch.nn.functional.avg_pool2d``.

    >>> import numpy as np, poolspec
    >>> poolspec.avg_pool2d(np.ones((1, 3, 3)), 2, stride=1, padding=1, count_include_pad=False).shape
    (1, 4, 4)
    """
    return _avg_op(2, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override))


def avg_pool3d(x: Array, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Array:
    """3-d average pooling of ``x`` shaped (N, C, D, H, W) or (C, D, H, W), as
    ``torch.nn.functional.avg_pool3d``.

    >>> import numpy as np, poolspec
    >>> poolspec.avg_pool3d(np.ones((2, 1, 4, 4, 4)), 2).shape
    (2, 1, 2, 2, 2)
    """
    return _avg_op(3, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override))


def avg_pool1d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Array:
    """The gradient of :func:`avg_pool1d` w.r.t. ``x`` for cotangent ``grad_output`` (x's shape and dtype).

    >>> import numpy as np, poolspec
    >>> poolspec.avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 4)), 2)
    array([[0.5, 0.5, 0.5, 0.5]])
    """
    return _avg_op(1, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override),
                   grad_output)


def avg_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Array:
    """The gradient of :func:`avg_pool2d` w.r.t. ``x`` for cotangent ``grad_output``.

    >>> import numpy as np, poolspec
    >>> poolspec.avg_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 2)
    array([[[0.25, 0.25],
            [0.25, 0.25]]])
    """
    return _avg_op(2, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override),
                   grad_output)


def avg_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, stride: Size | None = None,
                        padding: Size = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Array:
    """The gradient of :func:`avg_pool3d` w.r.t. ``x`` for cotangent ``grad_output``.

    >>> import numpy as np, poolspec
    >>> float(poolspec.avg_pool3d_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 2, 2, 2)), 2).sum())
    1.0
    """
    return _avg_op(3, x, dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad, divisor_override=divisor_override),
                   grad_output)


def adaptive_avg_pool1d(x: Array, output_size: OutputSize) -> Array:
    """1-d adaptive average pooling to ``output_size``, as ``torch.nn.functional.adaptive_avg_pool1d``.

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool1d(np.arange(5.0)[None], 3)
    array([[0.5, 2. , 3.5]])
    """
    return _adaptive_op(1, x, output_size)


def adaptive_avg_pool2d(x: Array, output_size: OutputSize) -> Array:
    """2-d adaptive average pooling to ``output_size`` (an int, or per-axis ints or None).

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool2d(np.ones((2, 3, 13, 13)), 7).shape
    (2, 3, 7, 7)
    """
    return _adaptive_op(2, x, output_size)


def adaptive_avg_pool3d(x: Array, output_size: OutputSize) -> Array:
    """3-d adaptive average pooling to ``output_size``.

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool3d(np.ones((1, 5, 5, 5)), (2, None, 3)).shape
    (1, 2, 5, 3)
    """
    return _adaptive_op(3, x, output_size)


def adaptive_avg_pool1d_backward(grad_output: Array, x: Array, output_size: OutputSize) -> Array:
    """The gradient of :func:`adaptive_avg_pool1d` w.r.t. ``x``: each cell gathers g/count from the
    windows that contain it.

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool1d_backward(np.ones((1, 2)), np.zeros((1, 3)), 2)
    array([[0.5, 1. , 0.5]])
    """
    return _adaptive_op(1, x, output_size, grad_output)


def adaptive_avg_pool2d_backward(grad_output: Array, x: Array, output_size: OutputSize) -> Array:
    """The gradient of :func:`adaptive_avg_pool2d` w.r.t. ``x``.

    >>> import numpy as np, poolspec
    >>> poolspec.adaptive_avg_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 1)
    array([[[0.25, 0.25],
            [0.25, 0.25]]])
    """
    return _adaptive_op(2, x, output_size, grad_output)


def adaptive_avg_pool3d_backward(grad_output: Array, x: Array, output_size: OutputSize) -> Array:
    """The gradient of :func:`adaptive_avg_pool3d` w.r.t. ``x``.

    >>> import numpy as np, poolspec
    >>> float(poolspec.adaptive_avg_pool3d_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 2, 2, 2)), 1).sum())
    1.0
    """
    return _adaptive_op(3, x, output_size, grad_output)
