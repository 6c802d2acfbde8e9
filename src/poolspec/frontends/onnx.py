"""ONNX's pooling and resampling operators (opset 22 semantics), one function per operator, named as the operator:
inputs positional (an optional input as None), attributes as keyword arguments with ONNX's names and defaults.

Arrays are channels first (N, C, *spatial), as ONNX's. The pools map onto poolspec's pools with (low, high) pads,
Resize onto per-axis tap tables built on the host from ONNX's coordinate and coefficient rules, GridSample and
AffineGrid onto :func:`poolspec.grid_sample` and :func:`poolspec.affine_grid`. Where onnx's reference evaluator
and onnxruntime disagree, the ONNX specification (and the reference where it follows it) is the rule; each
function's card names the other's difference.

>>> import numpy as np
>>> from poolspec.frontends import onnx
>>> onnx.MaxPool(np.arange(16.0).reshape(1, 1, 4, 4), kernel_shape=[2, 2], strides=[2, 2])[0][0, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .._compat import namespace, to_host, to_namespace
from .._types import Array
from ..families.affine_grid.ops import affine_grid as _affine_grid
from ..families.grid_sample.ops import grid_sample as _grid_sample
from ..families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ..families.max_unpool.ops import max_unpool1d, max_unpool2d, max_unpool3d
from ..spec._card import Argument, Port
from ..spec.frontends import FrontendCard, gradient
from ._common import fail, resample, tap_table

__all__ = ["AffineGrid", "AveragePool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "LpPool",
           "MaxPool", "MaxUnpool", "Resize"]

_MAX_POOLS = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_UNPOOLS = {1: max_unpool1d, 2: max_unpool2d, 3: max_unpool3d}
_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


# ------------------------------------------------------------------------------------------------ arguments

def _ints(fn: str, name: str, value: Any, n: int, default: int | None) -> tuple[int, ...]:
    """An ONNX ints attribute: a list of n ints (None: ``default`` for every axis)."""
    if value is None:
        if default is None:
            fail(fn, name, value, "is required")
        return (int(default),) * n  # type: ignore[arg-type]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple, np.ndarray)):
        fail(fn, name, value, "must be a list of ints", TypeError)
    vals = list(value)
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fail(fn, name, value, "must be a list of ints", TypeError)
    if len(vals) != n:
        fail(fn, name, value, f"must have {n} entries")
    return tuple(int(v) for v in vals)


def _flag(fn: str, name: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) not in (0, 1):
        fail(fn, name, value, "must be 0 or 1", TypeError if not isinstance(value, (int, np.integer)) else ValueError)
    return bool(value)


def _choice(fn: str, name: str, value: Any, allowed: Sequence[str]) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str) or value not in allowed:
        fail(fn, name, value, f"must be one of {', '.join(allowed)}")
    return str(value)


def _spatial(fn: str, X: Any, low: int = 1, high: int = 3) -> int:
    n = X.ndim - 2
    if not low <= n <= high:
        fail(fn, "X", tuple(X.shape), f"must be (N, C, *spatial) with {low} to {high} spatial axes")
    if any(int(L) == 0 for L in X.shape[1:]):
        fail(fn, "X", tuple(X.shape), "must have a non-empty channel axis and non-empty spatial axes")
    return n


def _host_ints(fn: str, name: str, a: Any) -> tuple[int, ...]:
    """A small int64 input tensor (sizes, output_shape) read on the host: it fixes the output's shape."""
    h = np.asarray(a if isinstance(a, (list, tuple, np.ndarray)) else to_host(a))
    if h.ndim != 1 or h.dtype.kind not in "iu":
        fail(fn, name, a, "must be a 1-D int64 tensor", TypeError)
    return tuple(int(v) for v in h)


def _host_floats(fn: str, name: str, a: Any) -> tuple[float, ...]:
    h = np.asarray(a if isinstance(a, (list, tuple, np.ndarray)) else to_host(a))
    if h.ndim != 1 or h.dtype.kind != "f":
        fail(fn, name, a, "must be a 1-D floating-point tensor", TypeError)
    return tuple(float(v) for v in h)


def _floating(fn: str, X: Any) -> None:
    xp = namespace(X, names=("X",), op=f"onnx.{fn}")
    if not xp.isdtype(X.dtype, "real floating"):
        fail(fn, "X", X.dtype, "must be float16, bfloat16, float32 or float64 (the operator's type constraint T)",
             TypeError)


# ------------------------------------------------------------------------------------------------ pool geometry

def _geometry(fn: str, X: Any, kernel_shape: Any, strides: Any, dilations: Any, pads: Any, auto_pad: Any,
              ceil_mode: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                       tuple[tuple[int, int], ...], tuple[int, ...], bool]:
    """kernel, strides, dilations, (low, high) pads and output sizes by ONNX's rules."""
    n = _spatial(fn, X)
    k = _ints(fn, "kernel_shape", kernel_shape, n, None)
    s = _ints(fn, "strides", strides, n, 1)
    d = _ints(fn, "dilations", dilations, n, 1)
    auto = _choice(fn, "auto_pad", auto_pad, _AUTO_PADS)
    ceil = _flag(fn, "ceil_mode", ceil_mode)
    for name, v in (("kernel_shape", k), ("strides", s), ("dilations", d)):
        if any(e < 1 for e in v):
            fail(fn, name, list(v), "every entry must be >= 1")
    L = tuple(int(e) for e in X.shape[2:])
    span = tuple((kk - 1) * dd + 1 for kk, dd in zip(k, d))
    if auto == "NOTSET":
        p = (0,) * (2 * n) if pads is None else _ints(fn, "pads", pads, 2 * n, 0)
        if any(e < 0 for e in p):
            fail(fn, "pads", list(p), "every entry must be >= 0")
        pairs = tuple((p[i], p[n + i]) for i in range(n))
        out = []
        for i in range(n):
            total = L[i] + pairs[i][0] + pairs[i][1] - span[i]
            if total < 0:
                fail(fn, "kernel_shape", list(k), f"the (dilated) window {span[i]} is longer than the padded "
                     f"axis {i} ({L[i] + pairs[i][0] + pairs[i][1]})")
            o = (-(-total // s[i]) if ceil else total // s[i]) + 1
            if ceil and (o - 1) * s[i] >= L[i] + pairs[i][0]:  # a window that starts in the end padding is dropped
                o -= 1
            out.append(o)
    else:
        if pads is not None and any(int(e) != 0 for e in pads):
            fail(fn, "pads", pads, f"cannot be given with auto_pad={auto!r}")
        pairs_l, out = [], []
        for i in range(n):
            if auto == "VALID":
                if L[i] < span[i]:
                    fail(fn, "kernel_shape", list(k), f"the (dilated) window {span[i]} is longer than axis {i} "
                         f"({L[i]}) with auto_pad='VALID'")
                o = (L[i] - span[i]) // s[i] + 1
                pairs_l.append((0, 0))
            else:
                o = -(-L[i] // s[i])
                total = max((o - 1) * s[i] + span[i] - L[i], 0)
                small = total // 2
                pairs_l.append((small, total - small) if auto == "SAME_UPPER" else (total - small, small))
            out.append(o)
        pairs = tuple(pairs_l)
        ceil = False  # the auto_pad rules fix the output size
    for i in range(n):
        if any(e > (k[i] - 1) * d[i] for e in pairs[i]) and auto == "NOTSET":
            fail(fn, "pads", list(pads), "a pad must be below the (dilated) kernel: (kernel_shape - 1) * dilations "
                 "at most")
    return k, s, d, pairs, tuple(out), ceil


@lru_cache(maxsize=512)
def _window_table(L: int, O: int, k: int, s: int, d: int, low: int, high: int, average: bool, include_pad: bool
                  ) -> Any:
    """The sum (or average) over each window of one axis: taps o*s - low + t*d, t < k."""
    idx = np.arange(O)[None, :] * s - low + np.arange(k)[:, None] * d
    inside = (idx >= 0) & (idx < L)
    w = inside.astype(np.float64)
    if average:
        counted = (idx >= -low) & (idx < L + high) if include_pad else inside
        w = w / np.maximum(counted.sum(axis=0, keepdims=True), 1)
    return tap_table(np.where(inside, idx, L), w, L)


def _pooled_sum(X: Any, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...],
                pairs: tuple[tuple[int, int], ...], out: tuple[int, ...], average: bool, include_pad: bool) -> Any:
    n = len(k)
    plans = [_window_table(int(X.shape[2 + i]), out[i], k[i], s[i], d[i], pairs[i][0], pairs[i][1], average,
                           include_pad) for i in range(n)]
    return resample(X, list(range(2, 2 + n)), plans)


def _pow_abs(xp: Any, X: Any, p: int) -> Any:
    a = xp.abs(X)
    return a if p == 1 else a * a if p == 2 else a ** p


def _root(xp: Any, S: Any, p: int) -> Any:
    return S if p == 1 else xp.sqrt(S) if p == 2 else S ** (1.0 / p)


def _lp_p(fn: str, p: Any) -> int:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        fail(fn, "p", p, "must be an int (ONNX's p is an int attribute)", TypeError)
    if int(p) < 1:
        fail(fn, "p", p, "must be >= 1 (the p-norm of each window)")
    return int(p)


# ------------------------------------------------------------------------------------------------ pools

def AveragePool(X: Array, *, auto_pad: str = "NOTSET", ceil_mode: int = 0, count_include_pad: int = 0,
                dilations: Sequence[int] | None = None, kernel_shape: Sequence[int],
                pads: Sequence[int] | None = None, strides: Sequence[int] | None = None) -> Array:
    """ONNX AveragePool: the mean of each (dilated) window, as ``onnx`` opset 22.

    Parameters
    ----------
    X : array
        (N, C, *spatial) with 1 to 3 spatial axes; float16, bfloat16, float32 or float64.
    auto_pad : str, default "NOTSET"
        NOTSET (explicit ``pads``), SAME_UPPER / SAME_LOWER (ceil(L / s) outputs, the odd padding cell at the end /
        the start) or VALID (no padding).
    ceil_mode : int, default 0
        1: ceil instead of floor in the output size rule (a window starting in the end padding is dropped).
    count_include_pad : int, default 0
        1: the divisor counts the padding cells (not the ceil-mode overhang past the end padding).
    dilations : list of int or None, default None
        The spacing of each window's taps (None: 1).
    kernel_shape : list of int
        The window size, one entry per spatial axis.
    pads : list of int or None, default None
        Begins then ends, 2 entries per spatial axis, each at most (kernel - 1) * dilation (None: 0).
    strides : list of int or None, default None
        The window step (None: 1).

    Returns
    -------
    array
        (N, C, *O), X's namespace and dtype.

    Raises
    ------
    ValueError
        If X has not 1 to 3 non-empty spatial axes, an attribute has the wrong length or a value out of range, the
        window is longer than the padded input, or pads come with an auto_pad other than NOTSET.
    TypeError
        If X is not floating or an attribute has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> AveragePool(np.arange(4.0).reshape(1, 1, 4), kernel_shape=[2], pads=[1, 1], strides=[2])[0, 0]
    array([0. , 1.5, 3. ])
    """
    fn = "AveragePool"
    _floating(fn, X)
    k, s, d, pairs, out, _ = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    include = _flag(fn, "count_include_pad", count_include_pad)
    return _pooled_sum(X, k, s, d, pairs, out, True, include)


def LpPool(X: Array, *, auto_pad: str = "NOTSET", ceil_mode: int = 0, dilations: Sequence[int] | None = None,
           kernel_shape: Sequence[int], p: int = 2, pads: Sequence[int] | None = None,
           strides: Sequence[int] | None = None) -> Array:
    """ONNX LpPool: the p-norm (sum |x|^p)^(1/p) of each (dilated) window, as ``onnx`` opset 22.

    Parameters
    ----------
    X : array
        (N, C, *spatial) with 1 to 3 spatial axes; float16, bfloat16, float32 or float64.
    auto_pad : str, default "NOTSET"
        NOTSET, SAME_UPPER, SAME_LOWER or VALID, as in :func:`AveragePool`.
    ceil_mode : int, default 0
        1: ceil instead of floor in the output size rule.
    dilations : list of int or None, default None
        The spacing of each window's taps (None: 1).
    kernel_shape : list of int
        The window size, one entry per spatial axis.
    p : int, default 2
        The norm's order, >= 1.
    pads : list of int or None, default None
        Begins then ends (zeros: they add nothing to the sum).
    strides : list of int or None, default None
        The window step (None: 1).

    Returns
    -------
    array
        (N, C, *O), X's namespace and dtype.

    Raises
    ------
    ValueError
        As :func:`AveragePool`, or if p < 1.
    TypeError
        If X is not floating or an attribute has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> LpPool(np.array([[[3.0, -4.0, 0.0]]]), kernel_shape=[2], p=2)[0, 0]
    array([5., 4.])
    """
    fn = "LpPool"
    _floating(fn, X)
    k, s, d, pairs, out, _ = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    pp = _lp_p(fn, p)
    xp = namespace(X)
    return _root(xp, _pooled_sum(_pow_abs(xp, X, pp), k, s, d, pairs, out, False, False), pp)


def MaxPool(X: Array, *, auto_pad: str = "NOTSET", ceil_mode: int = 0, dilations: Sequence[int] | None = None,
            kernel_shape: Sequence[int], pads: Sequence[int] | None = None, storage_order: int = 0,
            strides: Sequence[int] | None = None) -> tuple[Array, Array]:
    """ONNX MaxPool: the maximum of each (dilated) window and its flat index, as ``onnx`` opset 22.

    Parameters
    ----------
    X : array
        (N, C, *spatial) with 1 to 3 spatial axes; a float dtype, int8 or uint8.
    auto_pad : str, default "NOTSET"
        NOTSET, SAME_UPPER, SAME_LOWER or VALID, as in :func:`AveragePool`.
    ceil_mode : int, default 0
        1: ceil instead of floor in the output size rule.
    dilations : list of int or None, default None
        The spacing of each window's taps (None: 1).
    kernel_shape : list of int
        The window size, one entry per spatial axis.
    pads : list of int or None, default None
        Begins then ends (-inf: never a maximum).
    storage_order : int, default 0
        0: Indices count row-major over each spatial plane; 1: column-major (the first spatial axis fastest).
    strides : list of int or None, default None
        The window step (None: 1).

    Returns
    -------
    tuple of array
        (Y, Indices): Y (N, C, *O) in X's dtype; Indices int64, flat over the whole input tensor:
        (n * C + c) * prod(spatial) plus the winner's position in its plane. Ties: the first in row-major order.

    Raises
    ------
    ValueError
        As :func:`AveragePool`, or if a window holds no input cell.
    TypeError
        If X has another dtype or an attribute has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> y, i = MaxPool(np.array([[[1.0, 3.0, 2.0, 0.0]]]), kernel_shape=[2], strides=[2])
    >>> y[0, 0], i[0, 0]
    (array([3., 2.]), array([1, 2]))
    """
    fn = "MaxPool"
    k, s, d, pairs, out, ceil = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    order = _flag(fn, "storage_order", storage_order)
    xp = namespace(X)
    n = len(k)
    y, local = _MAX_POOLS[n](X, k, s, pairs, d, ceil, return_indices=True)
    if tuple(int(e) for e in y.shape[2:]) != out:  # poolspec's size rule is ONNX's: a guard against drift
        fail(fn, "kernel_shape", list(k), "output size mismatch")
    L = tuple(int(e) for e in X.shape[2:])
    if order:  # row-major position -> column-major: reverse the axes' significance
        coords, rest = [], local
        for e in reversed(L):
            coords.append(rest % e)
            rest = rest // e
        coords = coords[::-1]  # coords[i] along spatial axis i
        local = coords[-1]
        for i in range(n - 2, -1, -1):
            local = local * L[i] + coords[i]
    plane = math.prod(L)
    N, C = int(X.shape[0]), int(X.shape[1])
    offsets = np.arange(N * C, dtype=np.int64).reshape((N, C) + (1,) * n) * plane
    return y, local + to_namespace(offsets, xp, local, local.dtype)


def _global_table(L: int, weight: float) -> Any:
    return tap_table(np.arange(L)[:, None], np.full((L, 1), weight), L)


def GlobalAveragePool(X: Array) -> Array:
    """ONNX GlobalAveragePool: the mean of each (n, c) plane, kept as (N, C, 1, ..., 1).

    Parameters
    ----------
    X : array
        (N, C, *spatial), one or more non-empty spatial axes; float16, bfloat16, float32 or float64.

    Returns
    -------
    array
        (N, C, 1, ..., 1), X's namespace and dtype.

    Raises
    ------
    ValueError
        If X has no spatial axis or an empty one.
    TypeError
        If X is not floating.

    Examples
    --------
    >>> import numpy as np
    >>> GlobalAveragePool(np.arange(6.0).reshape(1, 2, 3))[:, :, 0]
    array([[1., 4.]])
    """
    fn = "GlobalAveragePool"
    _floating(fn, X)
    n = _spatial(fn, X, 1, 64)
    return resample(X, list(range(2, 2 + n)), [_global_table(int(L), 1.0 / int(L)) for L in X.shape[2:]])


def GlobalLpPool(X: Array, *, p: int = 2) -> Array:
    """ONNX GlobalLpPool: the p-norm (sum |x|^p)^(1/p) of each (n, c) plane, kept as (N, C, 1, ..., 1).

    Parameters
    ----------
    X : array
        (N, C, *spatial), one or more non-empty spatial axes; float16, bfloat16, float32 or float64.
    p : int, default 2
        The norm's order, >= 1.

    Returns
    -------
    array
        (N, C, 1, ..., 1), X's namespace and dtype.

    Raises
    ------
    ValueError
        If X has no spatial axis or an empty one, or p < 1.
    TypeError
        If X is not floating or p not an int.

    Examples
    --------
    >>> import numpy as np
    >>> GlobalLpPool(np.array([[[3.0, -4.0]]]))[0, 0]
    array([5.])
    """
    fn = "GlobalLpPool"
    _floating(fn, X)
    n = _spatial(fn, X, 1, 64)
    pp = _lp_p(fn, p)
    xp = namespace(X)
    S = resample(_pow_abs(xp, X, pp), list(range(2, 2 + n)), [_global_table(int(L), 1.0) for L in X.shape[2:]])
    return _root(xp, S, pp)


def GlobalMaxPool(X: Array) -> Array:
    """ONNX GlobalMaxPool: the maximum of each (n, c) plane, kept as (N, C, 1, ..., 1).

    Parameters
    ----------
    X : array
        (N, C, *spatial), one or more non-empty spatial axes; float16, bfloat16, float32 or float64.

    Returns
    -------
    array
        (N, C, 1, ..., 1), X's namespace and dtype; a NaN in a plane is its maximum.

    Raises
    ------
    ValueError
        If X has no spatial axis or an empty one.
    TypeError
        If X is not floating.

    Examples
    --------
    >>> import numpy as np
    >>> GlobalMaxPool(np.array([[[[1.0, 5.0], [2.0, 0.0]]]]))[0, 0]
    array([[5.]])
    """
    fn = "GlobalMaxPool"
    _floating(fn, X)
    n = _spatial(fn, X, 1, 64)
    xp = namespace(X)
    N, C = int(X.shape[0]), int(X.shape[1])
    plane = math.prod(int(L) for L in X.shape[2:])
    flat = xp.reshape(X, (N, C, plane))
    y = max_pool1d(flat, plane)
    return xp.reshape(y, (N, C) + (1,) * n)


def MaxUnpool(X: Array, I: Array, output_shape: Any = None, *, kernel_shape: Sequence[int],  # noqa: E741
              pads: Sequence[int] | None = None, strides: Sequence[int] | None = None) -> Array:
    """ONNX MaxUnpool: zeros with X's values at the flat indices I (MaxPool's Indices), as ``onnx`` opset 22.

    Parameters
    ----------
    X : array
        (N, C, *spatial) with 1 to 3 spatial axes; a float dtype, int8/16/32/64 or uint8.
    I : array
        int64, X's shape: flat indices over the whole output tensor, (n * C + c) * prod(output spatial) plus the
        position in the plane (row-major), as MaxPool's (storage_order 0); each inside its own (n, c) plane.
    output_shape : array, sequence of int or None, default None
        The output's full shape (N, C, *S), read on the host; None: per axis (L - 1) * stride - (begin + end pads)
        + kernel.
    kernel_shape : list of int
        The pooling window size, one entry per spatial axis.
    pads : list of int or None, default None
        The pooling pads, begins then ends (None: 0).
    strides : list of int or None, default None
        The pooling step (None: 1).

    Returns
    -------
    array
        (N, C, *S), X's namespace and dtype.

    Raises
    ------
    ValueError
        If X has not 1 to 3 non-empty spatial axes, an attribute is out of range, output_shape's batch and channel
        entries are not X's, an output extent is < 1, or an index is outside its (n, c) plane.
    TypeError
        If X's dtype is not supported, I is not an integer array, or an attribute has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> MaxUnpool(np.array([[[3.0, 5.0]]]), np.array([[[1, 2]]]), kernel_shape=[2], strides=[2])[0, 0]
    array([0., 3., 5., 0.])
    """
    fn = "MaxUnpool"
    n = _spatial(fn, X)
    k = _ints(fn, "kernel_shape", kernel_shape, n, None)
    s = _ints(fn, "strides", strides, n, 1)
    p = _ints(fn, "pads", pads, 2 * n, 0) if pads is not None else (0,) * (2 * n)
    for name, v in (("kernel_shape", k), ("strides", s)):
        if any(e < 1 for e in v):
            fail(fn, name, list(v), "every entry must be >= 1")
    if any(e < 0 for e in p):
        fail(fn, "pads", list(p), "every entry must be >= 0")
    L = tuple(int(e) for e in X.shape[2:])
    N, C = int(X.shape[0]), int(X.shape[1])
    if output_shape is None:
        S = tuple((L[i] - 1) * s[i] - p[i] - p[n + i] + k[i] for i in range(n))
    else:
        full = _host_ints(fn, "output_shape", output_shape)
        if len(full) != n + 2 or full[:2] != (N, C):
            fail(fn, "output_shape", full, f"must be (N, C, *spatial) with X's N = {N} and C = {C}")
        S = full[2:]
    if any(e < 1 for e in S):
        fail(fn, "output_shape", S, "every output extent must be >= 1")
    xp = namespace(X, I, names=("X", "I"), op=f"onnx.{fn}")
    if not xp.isdtype(I.dtype, "integral"):
        fail(fn, "I", I.dtype, "must be an int64 array", TypeError)
    plane = math.prod(S)
    offsets = np.arange(N * C, dtype=np.int64).reshape((N, C) + (1,) * n) * plane
    local = I - to_namespace(offsets, xp, I, I.dtype)
    # poolspec's unpool reads its output size from its window arguments: a stride-1 window of the right length
    # (with padding where S < L) gives exactly S
    pad = tuple(max(-(-(Li - Si) // 2), 0) for Li, Si in zip(L, S))
    kern = tuple(Si - Li + 1 + 2 * pi for Li, Si, pi in zip(L, S, pad))
    return _UNPOOLS[n](X, local, kern, 1, pad)


# ------------------------------------------------------------------------------------------------ Resize

_CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
         "tf_crop_and_resize")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_POLICIES = ("stretch", "not_larger", "not_smaller")


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


@lru_cache(maxsize=512)
def _resize_axis(L: int, O: int, scale: float, mode: str, ctm: str, nearest: str, a: float, exclude: bool,
                 antialias: bool, roi: tuple[float, float]) -> tuple[Any, np.ndarray | None]:
    """One axis's tap table and (tf_crop_and_resize) the mask of extrapolated outputs, by ONNX's rules."""
    i = np.arange(O, dtype=np.float64)
    width = scale * L  # ONNX's output_width: the unrounded L * scale
    if ctm == "align_corners":
        x = np.zeros(O) if width == 1 else i * (L - 1) / (width - 1)
    elif ctm == "asymmetric":
        x = i / scale
    elif ctm == "tf_crop_and_resize":
        x = (np.full(O, (roi[1] - roi[0]) * (L - 1) / 2) if width == 1
             else i * (roi[1] - roi[0]) * (L - 1) / (width - 1))
        x = x + roi[0] * (L - 1)
    elif ctm == "pytorch_half_pixel":
        x = np.zeros(O) if O == 1 else (i + 0.5) / scale - 0.5  # the spec's 0 (the reference: -0.5)
    elif ctm == "half_pixel":
        x = (i + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        x = L / 2 * (1 - O / width) + (i + 0.5) / scale - 0.5
    mask = ((x < 0) | (x > L - 1)) if ctm == "tf_crop_and_resize" else None
    # the taps start left of x: at an integer x the window is shifted one cell left and the fraction is 1
    base = np.floor(x)
    integral = base == x
    base = np.where(integral, x - 1, base)
    r = x - base  # in (0, 1]
    if mode == "nearest":
        taps = np.arange(2)[:, None]
        if nearest == "round_prefer_floor":
            right = r > 0.5
        elif nearest == "round_prefer_ceil":
            right = r >= 0.5
        elif nearest == "floor":
            right = np.zeros(O, bool)
        else:
            right = np.ones(O, bool)
        right = right | integral
        w = np.stack([~right, right]).astype(np.float64)
    else:
        sc = min(scale, 1.0) if antialias else 1.0
        support = 1.0 if mode == "linear" else 2.0
        start = math.floor(-support / sc) + 1  # the filter's taps left of base (1 - count / 2 of them)
        count = 2 - 2 * start
        taps = np.arange(start, start + count)[:, None]
        t = (taps - r[None, :]) * sc
        w = np.clip(1 - np.abs(t), 0, 1) if mode == "linear" else _cubic(t, a)
        if antialias:
            w = w / w.sum(axis=0, keepdims=True)
    index = base[None, :].astype(np.int64) + taps
    if mode != "nearest" and exclude:
        w = np.where((index < 0) | (index >= L), 0.0, w)
        total = w.sum(axis=0, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    index = np.clip(index, 0, L - 1)  # edge padding: a tap outside reads the border cell
    # merge taps that read the same cell (the clamped ones) so that each table column has distinct indices
    dense = np.zeros((L, O))
    np.add.at(dense, (index, np.broadcast_to(np.arange(O), index.shape)), w)
    taps_n = index.shape[0]
    lo = index.min(axis=0)
    idx = lo[None, :] + np.arange(taps_n)[:, None]
    inside = idx < L
    ww = np.where(inside, dense[np.minimum(idx, L - 1), np.arange(O)[None, :]], 0.0)
    return tap_table(np.where(inside, idx, L), ww, L), mask


def Resize(X: Array, roi: Any = None, scales: Any = None, sizes: Any = None, *, antialias: int = 0,
           axes: Sequence[int] | None = None, coordinate_transformation_mode: str = "half_pixel",
           cubic_coeff_a: float = -0.75, exclude_outside: int = 0, extrapolation_value: float = 0.0,
           keep_aspect_ratio_policy: str = "stretch", mode: str = "nearest",
           nearest_mode: str = "round_prefer_floor") -> Array:
    """ONNX Resize: nearest, linear or cubic resampling of any axes, as ``onnx`` opset 19 to 22.

    Parameters
    ----------
    X : array
        Any rank >= 1, non-empty axes; float16, bfloat16, float32 or float64.
    roi : array, sequence of float or None, default None
        Starts then ends (2 per resized axis), read on the host: the crop of ``tf_crop_and_resize`` in normalised
        coordinates (ignored by the other modes; None: [0, 1] per axis).
    scales : array, sequence of float or None, default None
        One scale per resized axis (float32 in ONNX): output extent floor(L * scale). Exactly one of scales and
        sizes.
    sizes : array, sequence of int or None, default None
        One output extent per resized axis (int64); the scale is sizes / L.
    antialias : int, default 0
        1: linear and cubic widen their filter by 1 / scale when downsampling (weights normalised).
    axes : list of int or None, default None
        The axes scales / sizes / roi refer to (negative counts from the end; None: every axis).
    coordinate_transformation_mode : str, default "half_pixel"
        half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric or tf_crop_and_resize.
    cubic_coeff_a : float, default -0.75
        The cubic kernel's a.
    exclude_outside : int, default 0
        1: taps outside the input get weight 0 and the rest are renormalised (else they read the border cell).
    extrapolation_value : float, default 0.0
        The value of outputs that tf_crop_and_resize maps outside [0, L - 1].
    keep_aspect_ratio_policy : str, default "stretch"
        With sizes: stretch, not_larger (the smallest of the axes' scales for all of them) or not_smaller (the
        largest); the extents are then round(scale * L), halves up.
    mode : str, default "nearest"
        nearest, linear or cubic.
    nearest_mode : str, default "round_prefer_floor"
        round_prefer_floor, round_prefer_ceil, floor or ceil (mode nearest).

    Returns
    -------
    array
        X resized, X's namespace and dtype.

    Raises
    ------
    ValueError
        If both or neither of scales and sizes are given, their length is not the number of axes, a scale is not
        positive, an extent is < 1, axes repeat or are out of range, an attribute is unknown, or antialias comes
        with nearest.
    TypeError
        If X is not floating or an argument has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> Resize(np.array([[1.0, 3.0]]), scales=np.array([1, 2], np.float32), mode="linear")
    array([[1. , 1.5, 2.5, 3. ]])
    """
    fn = "Resize"
    _floating(fn, X)
    rank = X.ndim
    if rank < 1 or any(int(e) == 0 for e in X.shape):
        fail(fn, "X", tuple(X.shape), "must have rank >= 1 and no empty axis")
    mode_ = _choice(fn, "mode", mode, ("nearest", "linear", "cubic"))
    ctm = _choice(fn, "coordinate_transformation_mode", coordinate_transformation_mode, _CTMS)
    near = _choice(fn, "nearest_mode", nearest_mode, _NEAREST)
    policy = _choice(fn, "keep_aspect_ratio_policy", keep_aspect_ratio_policy, _POLICIES)
    aa = _flag(fn, "antialias", antialias)
    exclude = _flag(fn, "exclude_outside", exclude_outside)
    if aa and mode_ == "nearest":
        fail(fn, "antialias", antialias, "applies to the linear and cubic modes only")
    for name, v in (("cubic_coeff_a", cubic_coeff_a), ("extrapolation_value", extrapolation_value)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
            fail(fn, name, v, "must be a float", TypeError)
    if axes is None:
        ax = list(range(rank))
    else:
        ax = [int(a) for a in _ints(fn, "axes", axes, len(list(axes)), None)]
        if any(not -rank <= a < rank for a in ax):
            fail(fn, "axes", axes, f"every entry must be in [-{rank}, {rank})")
        ax = [a % rank for a in ax]
        if len(set(ax)) != len(ax):
            fail(fn, "axes", axes, "must not repeat an axis")
    if (scales is None) == (sizes is None):
        fail(fn, "scales", scales, "exactly one of scales and sizes must be given")
    L = [int(X.shape[a]) for a in ax]
    if scales is not None:
        sc = list(_host_floats(fn, "scales", scales))
        if len(sc) != len(ax):
            fail(fn, "scales", sc, f"must have {len(ax)} entries (one per axis in axes)")
        if any(not e > 0 for e in sc):
            fail(fn, "scales", sc, "every scale must be > 0")
        out = [int(math.floor(e * Li)) for e, Li in zip(sc, L)]
    else:
        sz = list(_host_ints(fn, "sizes", sizes))
        if len(sz) != len(ax):
            fail(fn, "sizes", sz, f"must have {len(ax)} entries (one per axis in axes)")
        sc = [e / Li for e, Li in zip(sz, L)]
        out = sz
        if policy != "stretch":
            one = min(sc) if policy == "not_larger" else max(sc)
            sc = [one] * len(ax)
            out = [int(one * Li + 0.5) for Li in L]
    if any(e < 1 for e in out):
        fail(fn, "scales" if scales is not None else "sizes", out, "every output extent must be >= 1")
    if ctm == "tf_crop_and_resize":
        if roi is None:
            fail(fn, "roi", roi, "is required with coordinate_transformation_mode='tf_crop_and_resize'")
        rv = _host_floats(fn, "roi", roi)
        if len(rv) != 2 * len(ax):
            fail(fn, "roi", rv, f"must have {2 * len(ax)} entries (starts, then ends)")
        rois = [(rv[i], rv[len(ax) + i]) for i in range(len(ax))]
    else:
        rois = [(0.0, 1.0)] * len(ax)
    xp = namespace(X)
    plans: list[Any] = []
    masks: list[np.ndarray | None] = []
    for Li, Oi, si, ri in zip(L, out, sc, rois):
        if math.isclose(si, 1.0) and Oi == Li and math.isclose(ri[0], 0.0) and math.isclose(ri[1], 1.0):
            plans.append(None)  # the identity (ONNX skips the axis)
            masks.append(None)
            continue
        plan, mask = _resize_axis(Li, Oi, float(si), mode_, ctm, near, float(cubic_coeff_a), exclude, aa, ri)
        plans.append(plan)
        masks.append(mask)
    y = resample(X, ax, plans)
    if any(m is not None and m.any() for m in masks):
        full = np.zeros([1] * rank, bool)
        for a, m in zip(ax, masks):
            if m is not None:
                shape_a = [1] * rank
                shape_a[a] = m.size
                full = full | m.reshape(shape_a)
        fill = to_namespace(np.array(float(extrapolation_value)), xp, y, y.dtype)
        y = xp.where(to_namespace(full, xp, y), fill, y)
    return y


# ------------------------------------------------------------------------------------------------ sampling

_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest", "cubic": "bicubic",
               "bicubic": "bicubic"}


def GridSample(X: Array, grid: Array, *, align_corners: int = 0, mode: str = "linear",
               padding_mode: str = "zeros") -> Array:
    """ONNX GridSample: X sampled at the normalised positions ``grid``, as ``onnx`` opset 20 to 22.

    Parameters
    ----------
    X : array
        (N, C, H, W) or (N, C, D, H, W), non-empty spatial axes; float16, bfloat16, float32 or float64.
    grid : array
        (N, *O, n) positions in [-1, 1], ``grid[..., 0]`` along the last axis (W); X's dtype.
    align_corners : int, default 0
        1: -1 and 1 are the centres of the corner cells; 0: their outer edges.
    mode : str, default "linear"
        linear, nearest (round half to even) or cubic (4-D X only); opset 16's bilinear and bicubic too.
    padding_mode : str, default "zeros"
        zeros, border or reflection.

    Returns
    -------
    array
        (N, C, *O), X's namespace and dtype.

    Raises
    ------
    ValueError
        If a mode is unknown, X is not 4-D or 5-D, cubic comes with 5-D X, or grid does not fit X.
    TypeError
        If X or grid is not floating or align_corners is not 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> GridSample(np.arange(4.0).reshape(1, 1, 2, 2), np.zeros((1, 1, 1, 2)), align_corners=1)
    array([[[[1.5]]]])
    """
    fn = "GridSample"
    m = _choice(fn, "mode", mode, tuple(_GRID_MODES))
    pad = _choice(fn, "padding_mode", padding_mode, ("zeros", "border", "reflection"))
    align = _flag(fn, "align_corners", align_corners)
    return _grid_sample(X, grid, mode=_GRID_MODES[m], padding_mode=pad, align_corners=align)


def AffineGrid(theta: Array, size: Any, *, align_corners: int = 0) -> Array:
    """ONNX AffineGrid: the normalised sampling grid of the affine maps ``theta``, as ``onnx`` opset 20 to 22.

    Parameters
    ----------
    theta : array
        (N, 2, 3) for 2-d, (N, 3, 4) for 3-d; float16, bfloat16, float32 or float64.
    size : array or sequence of int
        (N, C, H, W) or (N, C, D, H, W), int64, read on the host; N must be theta's.
    align_corners : int, default 0
        1: the grid runs from -1 to 1 through the corner cells' centres; 0: (L - 1) / L of that.

    Returns
    -------
    array
        (N, H, W, 2) or (N, D, H, W, 3), theta's namespace and dtype; a size-1 axis samples at 0.

    Raises
    ------
    ValueError
        If size has not 4 or 5 entries, an entry is < 1, or theta does not fit it.
    TypeError
        If theta is not floating, size is not integer, or align_corners is not 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> AffineGrid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), np.array([1, 1, 1, 2]))[0, 0].tolist()
    [[-0.5, 0.0], [0.5, 0.0]]
    """
    fn = "AffineGrid"
    align = _flag(fn, "align_corners", align_corners)
    shape = _host_ints(fn, "size", size)
    return _affine_grid(theta, shape, align_corners=align)


# ------------------------------------------------------------------------------------------------ cards

_LIB = "onnx 1.23.2 (reference evaluator), onnxruntime 1.32.0 (CPU)"
_CHECKED = ("random configurations against onnx's reference evaluator and onnxruntime on one-node opset 22 models "
            "(conformance/frontend_checks/onnx_reference.py and onnxruntime.py; counts in "
            "conformance/results/frontends/onnx_reference.json and onnxruntime.json), NumPy, JAX and torch backends")
_X = Argument("X", "array", description="(N, C, *spatial), channels first")
_FWD = gradient("poolspec's deterministic gradient through the ops it calls (gathers, transposed tables); ONNX "
                "runtimes have no gradients, so only the forward is compared with them")
_DET = "deterministic: gathers with fixed tables, no atomics"
_POOL_ARGS = (Argument("auto_pad", "str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
              Argument("ceil_mode", "int", 0, ("0 or 1",)),
              Argument("dilations", "list[int] | None", None, (">= 1",)),
              Argument("kernel_shape", "list[int]", constraints=(">= 1",)),
              Argument("pads", "list[int] | None", None, ("begins then ends", "<= (kernel - 1) * dilation")),
              Argument("strides", "list[int] | None", None, (">= 1",)))
_POOL_RULES = ("explicit pads: O = floor((L + begin + end - ((k - 1) d + 1)) / s) + 1 (ceil with ceil_mode, a "
               "window that would start in the end padding dropped)",
               "SAME_UPPER / SAME_LOWER: O = ceil(L / s), total padding max((O - 1) s + (k - 1) d + 1 - L, 0), the odd "
               "cell at the end / the start; VALID: O = ceil((L - (k - 1) d) / s); ceil_mode has no effect with "
               "auto_pad")
_SAME_BUGS = ("onnx's reference sizes SAME_* and VALID without the dilation, puts SAME padding wrongly (SAME_LOWER "
              "can give an empty output, SAME_UPPER shifted windows) and refuses ceil_mode with auto_pad on "
              "AveragePool/LpPool; onnxruntime sizes SAME_* padding without the dilation and applies ceil_mode to "
              "VALID (left out of the random configurations)")


def _card(name: str, summary: str, arguments: tuple[Argument, ...], outputs: tuple[Port, ...], core: tuple[str, ...],
          notes: tuple[str, ...], differences: tuple[str, ...] = (), refuses: tuple[str, ...] = (),
          indices: str = "") -> FrontendCard:
    return FrontendCard(name=f"onnx.{name}", version=1, library=_LIB, mirrors=f"onnx {name} (opset 22)",
                        summary=summary, arguments=arguments, outputs=outputs, core=core,
                        layout="channels first (N, C, *spatial), as ONNX", gradient=_FWD, determinism=_DET,
                        indices=indices, notes=notes, differences=differences, refuses=refuses, checked=_CHECKED)


CARDS: tuple[FrontendCard, ...] = (
    _card("AveragePool", "ONNX AveragePool on per-axis window tables", (_X,) + _POOL_ARGS[:2] + (
        Argument("count_include_pad", "int", 0, ("0 or 1",)),) + _POOL_ARGS[2:],
        (Port("Y", "array", "(N, C, *O)", "the window means"),), ("frontends._common.resample",),
        _POOL_RULES + ("the divisor is the window's in-input cells, or with count_include_pad the cells inside "
                       "[-begin, L + end) (not the ceil-mode overhang past the end padding)",
                       "dilations (opset 19+) are supported: the window sum is separable, one tap table per axis"),
        (_SAME_BUGS, "onnx's reference shifts the windows in ceil mode when the last one overhangs the padded "
                     "input (left out of its random configurations, checked against onnxruntime)"),
        ("float64 is computed (onnxruntime has no float64 AveragePool kernel)",
                        "pads above (kernel - 1) * dilation (a window of padding only)")),
    _card("LpPool", "ONNX LpPool: (sum |x|^p)^(1/p) per window on per-axis window tables", (_X,) + _POOL_ARGS[:4] + (
        Argument("p", "int", 2, (">= 1",)),) + _POOL_ARGS[4:],
        (Port("Y", "array", "(N, C, *O)", "the window p-norms"),), ("frontends._common.resample",),
        _POOL_RULES + ("|x|^p, ONNX's p-norm (torch's lp_pool pools signed x^p); pads and the ceil-mode overhang "
                       "add nothing, and a partial window is not rescaled (onnxruntime agrees; torch rescales by "
                       "prod(k) / n)",),
        (_SAME_BUGS, "onnx's reference shifts the windows in ceil mode when the last one overhangs the padded input "
                     "(it splits the overhang over both ends; left out of its random configurations, checked "
                     "against onnxruntime)"),
        ("p < 1 (ONNX's p is an int attribute)",)),
    _card("MaxPool", "ONNX MaxPool with Indices on poolspec.max_pool (low, high) pads", (_X,) + _POOL_ARGS[:5] + (
        Argument("storage_order", "int", 0, ("0 or 1",)),) + _POOL_ARGS[5:],
        (Port("Y", "array", "(N, C, *O)", "the window maxima"), Port("Indices", "int64 array", "(N, C, *O)",
                                                                     "flat positions of the winners")),
        ("max_pool1d", "max_pool2d", "max_pool3d"),
        _POOL_RULES + ("ties: the first maximum in row-major window order",),
        (_SAME_BUGS, "onnx's reference takes a generic path when every stride and dilation is 1 (pads only 2-D "
                     "input, miscounts the output size, decodes the argmax with the output's shape); left out of its "
                     "random configurations",
         "NaN: both runtimes start from the window's first cell and take only strictly greater values, so a NaN "
         "wins only as that first cell; poolspec's NaN wins (torch's rule)"),
        ("a window that dilation and padding leave without an input cell (the runtimes give NaN or the lowest "
         "value with index -1)",),
        indices="Indices = (n * C + c) * prod(spatial) + the position in the (n, c) plane: row-major with "
                "storage_order 0, column-major (the first spatial axis fastest) with storage_order 1; established "
                "against both runtimes"),
    _card("GlobalAveragePool", "ONNX GlobalAveragePool: each plane's mean", (_X,),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane means"),), ("frontends._common.resample",),
          ("every spatial axis (any number) reduced, kept as extent 1",), (),
          ("float64 is computed (onnxruntime has no float64 kernel)",)),
    _card("GlobalLpPool", "ONNX GlobalLpPool: each plane's p-norm", (_X, Argument("p", "int", 2, (">= 1",))),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane p-norms"),), ("frontends._common.resample",),
          ("(sum |x|^p)^(1/p) over every spatial axis",),
          ("onnx's reference evaluator has no GlobalLpPool (checked against onnxruntime only, at opset 21: it "
           "registers none at 22, which only adds bfloat16)",)),
    _card("GlobalMaxPool", "ONNX GlobalMaxPool: each plane's maximum", (_X,),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane maxima"),), ("max_pool1d",),
          ("every spatial axis (any number) reduced, kept as extent 1; a NaN is the maximum",),
          ("onnx's reference reduces the last two axes whatever the rank (3-D input loses its channel axis; "
           "checked against it on 4-D input only)", "onnxruntime skips NaN")),
    _card("MaxUnpool", "ONNX MaxUnpool on poolspec.max_unpool", (
        _X, Argument("I", "int64 array", description="MaxPool's Indices, flat over the whole output tensor"),
        Argument("output_shape", "array | None", None, ("(N, C, *S), read on the host",)),
        Argument("kernel_shape", "list[int]", constraints=(">= 1",)),
        Argument("pads", "list[int] | None", None, (">= 0",)), Argument("strides", "list[int] | None", None)),
        (Port("Y", "array", "(N, C, *S)", "zeros with X at I"),), ("max_unpool1d", "max_unpool2d", "max_unpool3d"),
        ("default S = (L - 1) * stride - (begin + end) + kernel", "I is flat over the whole (N, C, *S) output, "
         "row-major; each index must lie in its own (n, c) plane"),
        ("onnx's reference scatters into the default shape before padding to a larger output_shape (onnx#2398; "
         "checked against onnxruntime there)",),
        ("an index outside its own (n, c) plane", "float64 is computed (onnxruntime has no float64 kernel)")),
    _card("Resize", "ONNX Resize (opset 19+): per-axis tap tables from ONNX's coordinate and coefficient rules", (
        _X, Argument("roi", "array | None", None), Argument("scales", "array | None", None),
        Argument("sizes", "array | None", None), Argument("antialias", "int", 0),
        Argument("axes", "list[int] | None", None), Argument("coordinate_transformation_mode", "str", "half_pixel",
                                                             _CTMS),
        Argument("cubic_coeff_a", "float", -0.75), Argument("exclude_outside", "int", 0),
        Argument("extrapolation_value", "float", 0.0), Argument("keep_aspect_ratio_policy", "str", "stretch",
                                                                _POLICIES),
        Argument("mode", "str", "nearest", ("nearest", "linear", "cubic")),
        Argument("nearest_mode", "str", "round_prefer_floor", _NEAREST)),
        (Port("Y", "array", "X resized", "the resampled array"),), ("frontends._common.resample",),
        ("extent floor(L * scale) from scales, sizes as given (keep_aspect_ratio_policy: one scale, min or max of "
         "the axes', extents round(scale * L) halves up); scale = sizes / L in float64",
         "coordinates use the unrounded L * scale as the output width (align_corners, half_pixel_symmetric, "
         "tf_crop_and_resize), as the reference and the spec",
         "taps start left of x: at an integral x the window moves one cell left with fraction 1; nearest picks by "
         "nearest_mode, an integral x is itself; out-of-range taps read the border cell unless exclude_outside",
         "antialias widens linear / cubic by 1 / scale when downsampling, weights normalised",
         "tf_crop_and_resize: outputs mapped outside [0, L - 1] on any axis are extrapolation_value",
         "an axis with scale 1, the same extent and the whole roi is the identity"),
        ("onnx's reference computes cubic weights in float32 (cubic_coeff_a arrives as float32), mis-permutes "
         "negative axes and puts a pytorch_half_pixel output of extent 1 at -0.5 (or, when L * scale is not 1, at "
         "(0.5 / scale) - 0.5) where the spec (and onnxruntime) put it at 0 (poolspec: 0; left out of its random "
         "configurations)", "SAME_* auto_pad where (O - 1) s + (k - 1) d + 1 < L (a stride longer than the window): "
         "the spec's pad formula goes negative and onnxruntime shifts the windows by that negative padding; poolspec "
         "pads 0 there (TensorFlow's SAME); left out of onnxruntime's random configurations",
         "onnxruntime copies X when the output shape equals X's under a scale != 1, computes coordinates in "
         "float32, restricts linear / cubic to 2-D, 3-D or 4-D with the outer axes kept and exclude_outside to "
         "cubic, mis-sizes keep_aspect_ratio_policy with negative axes, and takes the rounded output extent (not "
         "L * scale) as the output width of align_corners, half_pixel_symmetric, pytorch_half_pixel and "
         "tf_crop_and_resize under scales (left out of its random configurations); tf_crop_and_resize and "
         "antialias: onnxruntime disagrees with the reference, not yet diagnosed (not compared against "
         "onnxruntime)"),
        ("integer dtypes (the runtimes round or truncate differently; poolspec resamples floating arrays)",)),
    _card("GridSample", "ONNX GridSample on poolspec.grid_sample", (
        _X, Argument("grid", "array", description="(N, *O, n) in [-1, 1]"), Argument("align_corners", "int", 0),
        Argument("mode", "str", "linear", tuple(_GRID_MODES)),
        Argument("padding_mode", "str", "zeros", ("zeros", "border", "reflection"))),
        (Port("Y", "array", "(N, C, *O)", "the samples"),), ("grid_sample",),
        ("opset 20 names linear/nearest/cubic and opset 16's bilinear/bicubic; nearest rounds half to even; border "
         "clamps each cubic tap (onnxruntime and torch)",),
        ("onnx's reference clamps an out-of-range coordinate before its cubic taps with border padding, divides by "
         "zero over a size-1 axis with reflection and align_corners, and knows only opset 20's mode names",
         "both runtimes denormalise the grid in float32 (float64 results within ~1e-6)"),
        ("cubic on 5-D input (onnxruntime refuses it too)",)),
    _card("AffineGrid", "ONNX AffineGrid on poolspec.affine_grid", (
        Argument("theta", "array", description="(N, 2, 3) or (N, 3, 4)"),
        Argument("size", "array", description="(N, C, H, W) or (N, C, D, H, W), read on the host"),
        Argument("align_corners", "int", 0)),
        (Port("Y", "array", "(N, *spatial, n)", "the grid"),), ("affine_grid",),
        ("grid points linspace(-1, 1, L), times (L - 1) / L without align_corners; a size-1 axis at 0",),
        ("onnx's reference returns float32 whatever theta's dtype and puts a size-1 axis with align_corners at -1; "
         "onnxruntime puts it at +1 (left out of the random configurations)",)),
)


def __dir__() -> list[str]:
    return sorted(__all__)
