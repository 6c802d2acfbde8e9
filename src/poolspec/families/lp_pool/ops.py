"""lp_pool1d/2d/3d and their VJPs.

The cards are in ``card.py``. torch's formula (docs/TORCH_NUMERICS.md section 4): S = avg_pool(x^p, k, s, 0,
ceil_mode) * prod(k) and y = S^(1/p) - so a partial ceil_mode window of n cells is scaled by prod(k)/n - with the
derivative of S^(1/p) taken as 0 where S == 0; p = +-inf is +-max_pool(+-|x|). The window sum is the avg family's
``SeparableLinear``; the rest is elementwise, so torch and JAX differentiate the forward natively to any order, and
the explicit backward below is the same chain rule written out (itself differentiable in ``grad_output``)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..._calls import channels_last, check_layout, keep_layout, layout_op, resolve, resolve_backward
from ..._compat import namespace, to_compute
from ..._compat import sign as sign_of
from ..._types import Array
from ...autodiff import compose, graph_op, in_graph, linear, max_backward, max_indices, max_pool
from ...kernels.linear import SeparableLinear, outer_product
from ...kernels.maxes import MaxWindows
from ...plans import windows
from .._docs import Template

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "lp_pool1d_backward", "lp_pool2d_backward", "lp_pool3d_backward"]

Size = int | tuple[int, ...]


@lru_cache(maxsize=512)
def _sum_plan(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...],
              stride: tuple[int, ...]) -> SeparableLinear:
    """avg_pool with padding 0 and count_include_pad: the divisor of a ceil_mode overhang is its cell count."""
    axes = tuple(windows.regular(L, O, k, s, 0) for L, O, k, s in zip(in_spatial, out_spatial, kernel, stride))
    counts = outer_product([windows.avg_counts(L, O, k, s, 0, True)
                            for L, O, k, s in zip(in_spatial, out_spatial, kernel, stride)])
    return SeparableLinear(in_spatial, out_spatial, axes, counts)


@lru_cache(maxsize=512)
def _max_windows(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...], kernel: tuple[int, ...],
                 stride: tuple[int, ...]) -> MaxWindows:
    n = len(kernel)
    return MaxWindows(in_spatial, out_spatial, kernel, stride, (0,) * n, (1,) * n)


def _pow(xp: Any, x: Any, e: float) -> Any:
    """x ** e with torch's CPU special exponents (sqrt for 0.5, products for 2 and 3, reciprocals for -0.5,
    -1 and -2), which differ from pow at signed zeros and infinities (rsqrt(-0) = -inf, pow(-0, -0.5) = inf)."""
    if e == 1:
        return x
    if e == 0:  # a constant: its derivative is 0, not 0 * x^-1 (NaN at x = 0), as torch's pow backward
        return xp.ones_like(x)
    if e == 0.5:
        return xp.sqrt(x)
    if e == 2:
        return x * x
    if e == 3:
        return x * x * x
    if e == -0.5:
        return 1 / xp.sqrt(x)
    if e == -1:
        return 1 / x
    if e == -2:
        return 1 / (x * x)
    return x ** e


def _powers(xp: Any, x: Any, p: float) -> tuple[Any, Any]:
    """x^p and its derivative p*x^(p-1), unmasked as torch's pow backward (1 at x == 0 for p = 1, inf
    for p < 1)."""
    return _pow(xp, x, p), p * _pow(xp, x, p - 1)


def _root_value(xp: Any, s: Any, p: float) -> Any:
    """S^(1/p) alone, as :func:`_root` gives it (the forward needs no derivative)."""
    at_zero = xp.zeros_like(s) if p > 0 else xp.full_like(s, math.inf)
    return xp.where(s == 0, at_zero, _pow(xp, s, 1.0 / p))


def _root(xp: Any, s: Any, p: float) -> tuple[Any, Any]:
    """S^(1/p) and its derivative, taken as 0 where S == 0 (torch's sign/relu chain gives exactly 0)."""
    e = 1.0 / p
    zero = s == 0
    safe = xp.where(zero, xp.ones_like(s), s)
    at_zero = xp.zeros_like(s) if p > 0 else xp.full_like(s, math.inf)
    return xp.where(zero, at_zero, _pow(xp, safe, e)), xp.where(zero, xp.zeros_like(s), e * _pow(xp, safe, e - 1))


# NaN and inf are results here (a negative sum to a fractional power, 0 to a negative one), as in torch, which
# does not warn about them: NumPy's floating-point warnings are silenced inside the formula
_QUIET = np.errstate(divide="ignore", invalid="ignore", over="ignore")


@_QUIET
def _finite_forward(plan: SeparableLinear, scale: int, p: float, x: Any) -> Any:
    xp = namespace(x)
    work = to_compute(xp, x)
    y = _root_value(xp, linear(plan, _pow(xp, work, p)) * scale, p)
    return y if y.dtype == x.dtype else xp.astype(y, x.dtype)


@_QUIET
def _finite_backward(plan: SeparableLinear, scale: int, p: float, g: Any, x: Any) -> Any:
    xp = namespace(x)
    work, gw = to_compute(xp, x), to_compute(xp, g)
    power, dpower = _powers(xp, work, p)
    _, droot = _root(xp, linear(plan, power) * scale, p)
    grad = linear(plan, gw * droot * scale, transpose=True) * dpower
    return grad if grad.dtype == x.dtype else xp.astype(grad, x.dtype)


def _setup(n: int, x: Any, args: dict[str, Any], grad_output: Any = None) -> tuple[Any, float, tuple]:
    op = f"lp_pool{n}d"
    if grad_output is None:
        _, _, r = resolve(op, x, **args)
    else:
        _, _, r = resolve_backward(op, grad_output, x, **args)
    prm = r.params
    key = (tuple(x.shape[-n:]), tuple(r.output_shape[-n:]), prm["kernel_size"], prm["stride"])
    return r, prm["norm_type"], key


def _forward(n: int, x: Any, args: dict[str, Any]) -> Any:
    if in_graph(x):
        return graph_op(f"lp_pool{n}d", args, x)
    r, p, key = _setup(n, x, args)
    xp = namespace(x)
    if math.isinf(p):  # torch's lp_pool is max_pool here, with its layout rule
        sign = 1 if p > 0 else -1
        values, _ = max_pool(_max_windows(*key), sign * xp.abs(x), with_index=False)
        return keep_layout(layout_op(f"lp_pool{n}d", r), x, sign * values)
    return keep_layout(layout_op(f"lp_pool{n}d", r), x,
                       compose(_finite_forward, (_sum_plan(*key), math.prod(key[2]), p), x))


def _backward(n: int, grad_output: Any, x: Any, args: dict[str, Any]) -> Any:
    if in_graph(x):
        return graph_op(f"lp_pool{n}d", args, x, grad_output)
    _, p, key = _setup(n, x, args, grad_output)
    xp = namespace(x)
    if math.isinf(p):
        sign = 1 if p > 0 else -1
        windows_ = _max_windows(*key)
        idx = max_indices(windows_, sign * xp.abs(x))
        # d/dx of sign * max(sign * |x|) is the routed cotangent times sign(x) (0 at x == 0, as torch)
        return max_backward(windows_, grad_output, idx) * sign_of(xp, x)
    return compose(_finite_backward, (_sum_plan(*key), math.prod(key[2]), p), grad_output, x)


def _args(norm_type: float, kernel_size: Size, stride: Size | None, ceil_mode: bool) -> dict[str, Any]:
    return dict(norm_type=norm_type, kernel_size=kernel_size, stride=stride, ceil_mode=ceil_mode)


# the docstring of lp_pool1d/2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d power-average pooling, as ``torch.nn.functional.{op}``.

torch's formula: y = S^(1/p) with S = avg_pool{n}d(x^p, k, s, 0, ceil_mode) * {k} (a partial ceil_mode window of c cells
is scaled by {k} / c); NaN where x^p or S^(1/p) is undefined (e.g. negative x, fractional p), as torch. norm_type = inf
is max pooling of abs(x), -inf the window minimum of abs(x). float16/bfloat16 are computed in float32 and rounded once.

Parameters
----------
x : array
    Input shaped {x}, C and the spatial sizes non-empty; any array-API array (NumPy, torch, JAX, CuPy, Dask,
    array-api-strict); float16, bfloat16, float32 or float64 (integers raise, unlike torch).
norm_type : float
    The power p: non-zero and not NaN; inf and -inf allowed (an int is accepted).
kernel_size : int or tuple of int
    The window size k, {sizes}; every entry > 0.
stride : int, tuple of int or None, default None
    The window step s; every entry > 0 (None or (): kernel_size, as torch).
ceil_mode : bool, default False
    Use ceil instead of floor in the output size rule.
{layout}

Returns
-------
array
    Shaped (N, C, {o}) or (C, {o}),{per_axis} O = floor((L - k + (s - 1 if ceil_mode else 0)) / s) + 1, minus 1 if
    ceil_mode and (O - 1) * s >= L; x's namespace, device and dtype.

Raises
------
ValueError
    If x is not {lo}-d or {hi}-d or has an empty non-batch dimension, norm_type is 0 or NaN, a kernel_size or stride
    entry is not > 0, a tuple has the wrong length, {last}.
TypeError
    If x is not an array of a supported library, x's dtype is not floating, norm_type is not a real number (e.g. a
    bool or a string), kernel_size or stride is not an int or tuple of ints, or ceil_mode is not a bool.

{examples}
""", defaults=dict(k="prod(k)", per_axis=" per spatial axis", last="or an output size is < 1"))


@_FORWARD.document(k="k", per_axis="", example="""
>>> poolspec.lp_pool1d(np.array([[3.0, 4.0, 1.0]]), 2, 2, ceil_mode=True)
array([[5.        , 1.41421356]])""")
def lp_pool1d(x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool1d", layout):
        return channels_last(lp_pool1d, locals(), 1, ("x",))
    return _forward(1, x, _args(norm_type, kernel_size, stride, ceil_mode))


@_FORWARD.document(example="""
>>> poolspec.lp_pool2d(np.full((1, 2, 2), 2.0), 1, 2)
array([[[8.]]])""")
def lp_pool2d(x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool2d", layout):
        return channels_last(lp_pool2d, locals(), 2, ("x",))
    return _forward(2, x, _args(norm_type, kernel_size, stride, ceil_mode))


@_FORWARD.document(per_axis=" per spatial axis\n",
                   last="an output size is < 1, or norm_type is finite and an input extent is < kernel_size",
                   example="""
>>> poolspec.lp_pool3d(-np.arange(8.0).reshape(1, 2, 2, 2), float("inf"), 2)
array([[[[7.]]]])""")
def lp_pool3d(x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
              ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool3d", layout):
        return channels_last(lp_pool3d, locals(), 3, ("x",))
    return _forward(3, x, _args(norm_type, kernel_size, stride, ceil_mode))


# the docstring of lp_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` with respect to ``x`` for the cotangent ``grad_output``.

The chain rule of torch's formula, with the derivative of S^(1/p) taken as 0 where S == 0; for norm_type = +-inf
each window's cotangent goes to its winner, times sign(x).

Parameters
----------
{linear_arrays}
norm_type : float
    The power p, as in :func:`{op}`.
kernel_size : int or tuple of int
    The window size, as in :func:`{op}`.
stride : int, tuple of int or None, default None
    The window step, as in :func:`{op}` (None: kernel_size).
ceil_mode : bool, default False
    Ceil instead of floor in the output size rule, as in :func:`{op}`.
{layout}

{linear_returns}

{examples}
""")


@_BACKWARD.document(example="""
>>> poolspec.lp_pool1d_backward(np.ones((1, 1)), np.array([[3.0, 4.0]]), 2, 2)
array([[0.6, 0.8]])""")
def lp_pool1d_backward(grad_output: Array, x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
                       ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool1d_backward", layout):
        return channels_last(lp_pool1d_backward, locals(), 1, ("grad_output", "x"))
    return _backward(1, grad_output, x, _args(norm_type, kernel_size, stride, ceil_mode))


@_BACKWARD.document(example="""
>>> poolspec.lp_pool2d_backward(np.ones((1, 1, 1)), np.zeros((1, 2, 2)), 2, 2)
array([[[0., 0.],
        [0., 0.]]])""")
def lp_pool2d_backward(grad_output: Array, x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
                       ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool2d_backward", layout):
        return channels_last(lp_pool2d_backward, locals(), 2, ("grad_output", "x"))
    return _backward(2, grad_output, x, _args(norm_type, kernel_size, stride, ceil_mode))


@_BACKWARD.document(example="""
>>> float(poolspec.lp_pool3d_backward(np.ones((1, 1, 1, 1)), np.ones((1, 2, 2, 2)), 1, 2).sum())
8.0""")
def lp_pool3d_backward(grad_output: Array, x: Array, norm_type: float, kernel_size: Size, stride: Size | None = None,
                       ceil_mode: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("lp_pool3d_backward", layout):
        return channels_last(lp_pool3d_backward, locals(), 3, ("grad_output", "x"))
    return _backward(3, grad_output, x, _args(norm_type, kernel_size, stride, ceil_mode))
