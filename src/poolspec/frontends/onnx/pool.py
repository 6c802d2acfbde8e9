"""ONNX's pools (opset 22): AveragePool, LpPool and MaxPool with ONNX's auto_pad, ceil_mode and dilations, the
global pools over every spatial axis, and MaxUnpool with flat indices.

>>> import numpy as np
>>> AveragePool(np.arange(4.0).reshape(1, 1, 4), kernel_shape=[2], strides=[2])[0, 0]
array([0.5, 2.5])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._compat import namespace, on, to_namespace
from ..._types import Array
from ...families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ...families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ...families.max_unpool.ops import max_unpool1d, max_unpool2d, max_unpool3d
from ...plans.windows import avg_counts
from .._common import fail, resample, tap_table
from .._geometry import padded_output, same_output, same_pads, valid_output
from ._args import checked, dtype_of, floating, host, ints, spatial, text

_AVG_POOLS = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX_POOLS = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_UNPOOLS = {1: max_unpool1d, 2: max_unpool2d, 3: max_unpool3d}

Pairs = tuple[tuple[int, int], ...]


# ------------------------------------------------------------------------------------------------ geometry

def _pads(fn: str, auto: str, pads: Any, n: int, k: tuple[int, ...], d: tuple[int, ...]) -> Pairs:
    """NOTSET's explicit (low, high) pads, each in [0, (k - 1) d] (a window of padding only is refused); any
    other auto_pad takes none."""
    p = (0,) * (2 * n) if pads is None or auto != "NOTSET" else ints(fn, "pads", pads, 2 * n, 0)
    pairs = tuple((p[i], p[n + i]) for i in range(n))
    rule = None
    if auto != "NOTSET" and pads is not None and any(int(e) != 0 for e in pads):
        rule = f"cannot be given with auto_pad={auto!r}"
    elif any(e < 0 for e in p):
        rule = "every entry must be >= 0"
    elif any(e > (k[i] - 1) * d[i] for i in range(n) for e in pairs[i]):
        rule = "a pad must be below the (dilated) kernel: (kernel_shape - 1) * dilations at most"
    if rule is not None:
        fail(fn, "pads", pads, rule)
    return pairs


def _geometry(fn: str, X: Any, kernel_shape: Any, strides: Any, dilations: Any, pads: Any, auto_pad: Any,
              ceil_mode: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], Pairs, tuple[int, ...],
                                       bool]:
    """kernel, strides, dilations, (low, high) pads, output sizes and ceil mode by ONNX's rules (the card's
    constraints are checked already)."""
    n = spatial(fn, X)
    k = ints(fn, "kernel_shape", kernel_shape, n, None)
    s = ints(fn, "strides", strides, n, 1)
    d = ints(fn, "dilations", dilations, n, 1)
    auto, ceil = text(auto_pad), bool(ceil_mode)
    L = tuple(int(e) for e in X.shape[2:])
    pairs = _pads(fn, auto, pads, n, k, d)
    if auto.startswith("SAME"):
        pairs = tuple(same_pads(L[i], k[i], s[i], d[i], lower=auto == "SAME_LOWER") for i in range(n))
        return k, s, d, pairs, tuple(same_output(L[i], s[i]) for i in range(n)), False
    for i in range(n):
        padded, span = L[i] + sum(pairs[i]), (k[i] - 1) * d[i] + 1
        if padded < span:
            fail(fn, "kernel_shape", list(k), f"the (dilated) window {span} is longer than the padded axis {i} "
                 f"({padded})" + (" with auto_pad='VALID'" if auto == "VALID" else ""))
    if auto == "VALID":  # the auto_pad rules fix the output size: ceil_mode has no effect
        return k, s, d, pairs, tuple(valid_output(L[i], k[i], s[i], d[i]) for i in range(n)), False
    out = tuple(padded_output(L[i], *pairs[i], k[i], s[i], d[i], ceil) for i in range(n))
    return k, s, d, pairs, out, ceil


def _empty_windows(L: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...], pairs: Pairs,
                   out: tuple[int, ...]) -> np.ndarray | None:
    """(1, 1, *O) True where a window's taps all fall in the padding (dilations > 1), or None where none does."""
    hits = []
    for i in range(len(k)):
        taps = np.arange(out[i])[:, None] * s[i] - pairs[i][0] + np.arange(k[i])[None, :] * d[i]
        hits.append(((taps >= 0) & (taps < L[i])).any(axis=1))
    if all(h.all() for h in hits):
        return None
    empty = np.zeros(out, dtype=bool)
    for i, h in enumerate(hits):
        empty |= ~h.reshape((-1,) + (1,) * (len(k) - 1 - i))
    return empty[None, None]


def _pooled(X: Any, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...], pairs: Pairs, out: tuple[int, ...],
            ceil: bool, include_pad: bool, divisor: int | None) -> Any:
    """poolspec.avg_pool{n}d with ONNX's (low, high) pads and dilations: the window means (``divisor`` None) or
    sums (``divisor`` 1); a window of padding only gives 0 (the mean of no cell: 0 / 0 in the core)."""
    n = len(k)
    L = tuple(int(e) for e in X.shape[2:])
    if n == 3 and any(L[i] < k[i] for i in range(n)):
        y = _pooled_3d_padded(X, k, s, d, pairs, out, ceil, include_pad, divisor)
    else:
        y = _AVG_POOLS[n](X, k, s, pairs, ceil, include_pad, divisor, dilation=d)
    if tuple(int(e) for e in y.shape[2:]) != out:  # poolspec's size rule is ONNX's: a guard against drift
        raise AssertionError(f"output size {tuple(y.shape[2:])}, ONNX's rule gives {out}")
    empty = _empty_windows(L, k, s, d, pairs, out) if divisor is None and not include_pad else None
    if empty is None:
        return y
    xp = namespace(X)
    return xp.where(to_namespace(empty, xp, y), xp.zeros((), dtype=y.dtype, **on(y)), y)


def _pooled_3d_padded(X: Any, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...], pairs: Pairs,
                      out: tuple[int, ...], ceil: bool, include_pad: bool, divisor: int | None) -> Any:
    """A 3-d pool where an extent is below the kernel, which avg_pool3d refuses (torch's rule) and ONNX's pads
    allow: enough of the pads laid down as zero cells (the low side first, which keeps the windows where they
    were), the window sums by avg_pool3d with divisor_override=1 (a ceil-mode window the high cells let in is
    cut off), then the means by the per-axis counts of ONNX's own axes."""
    xp = namespace(X)
    L = tuple(int(e) for e in X.shape[2:])
    new_pairs = []
    for i in range(3):
        short = max(k[i] - L[i], 0)
        low = min(short, pairs[i][0])
        high = short - low  # <= pairs[i][1]: the padded axis holds the dilated window, longer than k
        if low or high:
            parts = [xp.zeros(X.shape[:2 + i] + (e,) + X.shape[3 + i:], dtype=X.dtype, **on(X)) if e else None
                     for e in (low, high)]
            X = xp.concat([p for p in (parts[0], X, parts[1]) if p is not None], axis=2 + i)
        new_pairs.append((pairs[i][0] - low, pairs[i][1] - high))
    y = avg_pool3d(X, k, s, tuple(new_pairs), ceil, True, 1, dilation=d)
    y = y[(..., slice(0, out[0]), slice(0, out[1]), slice(0, out[2]))]
    if divisor is not None:
        return y
    counts = np.ones((), dtype=np.float64)
    for i in range(3):
        counts = np.multiply.outer(counts, avg_counts(L[i], out[i], k[i], s[i], pairs[i][0], include_pad,
                                                      pairs[i][1], d[i]))
    return y / to_namespace(np.maximum(counts, 1.0), xp, y, dtype=y.dtype)  # a window of padding only: 0 / 1


def _pow_abs(xp: Any, X: Any, p: int) -> Any:
    a = xp.abs(X)
    return a if p == 1 else a * a if p == 2 else a ** p


def _root(xp: Any, S: Any, p: int) -> Any:
    return S if p == 1 else xp.sqrt(S) if p == 2 else S ** (1.0 / p)



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
        (N, C, *O), X's namespace and dtype (:func:`poolspec.avg_pool2d` and its ranks with ONNX's pads as (low,
        high) pairs); 0 where a window's taps all fall in the padding without count_include_pad.

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
    floating(fn, X)
    checked(fn, locals())
    k, s, d, pairs, out, ceil = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    return _pooled(X, k, s, d, pairs, out, ceil, bool(count_include_pad), None)


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
    xp = floating(fn, X)
    checked(fn, locals())
    k, s, d, pairs, out, ceil = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    # the window sums of |x|^p: pads and the ceil-mode overhang are zeros, which add nothing
    return _root(xp, _pooled(_pow_abs(xp, X, int(p)), k, s, d, pairs, out, ceil, True, 1), int(p))


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
    checked(fn, locals())
    k, s, d, pairs, out, ceil = _geometry(fn, X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    xp = namespace(X)
    n = len(k)
    y, local = _MAX_POOLS[n](X, k, s, pairs, d, ceil, return_indices=True)
    if tuple(int(e) for e in y.shape[2:]) != out:  # poolspec's size rule is ONNX's: a guard against drift
        raise AssertionError(f"MaxPool: output size {tuple(y.shape[2:])}, ONNX's rule gives {out}")
    L = tuple(int(e) for e in X.shape[2:])
    if storage_order:  # row-major position -> column-major: reverse the axes' significance
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
    floating(fn, X)
    n = spatial(fn, X, 1, 64)
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
    xp = floating(fn, X)
    n = spatial(fn, X, 1, 64)
    checked(fn, locals())
    pp = int(p)
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
    xp = floating(fn, X)
    n = spatial(fn, X, 1, 64)
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
    n = spatial(fn, X)
    checked(fn, locals())
    k = ints(fn, "kernel_shape", kernel_shape, n, None)
    s = ints(fn, "strides", strides, n, 1)
    p = ints(fn, "pads", pads, 2 * n, 0)
    L = tuple(int(e) for e in X.shape[2:])
    N, C = int(X.shape[0]), int(X.shape[1])
    S = tuple((L[i] - 1) * s[i] - p[i] - p[n + i] + k[i] for i in range(n))
    full = None if output_shape is None else host(fn, "output_shape", output_shape, "iu")
    rule: str | None = None
    if full is not None and (len(full) != n + 2 or full[:2] != (N, C)):
        rule = f"must be (N, C, *spatial) with X's N = {N} and C = {C}"
    else:
        S = S if full is None else full[2:]
        rule = None if all(e >= 1 for e in S) else "every output extent must be >= 1"
    if rule is not None:
        fail(fn, "output_shape", full if full is not None else S, rule)
    xp = namespace(X, I, names=("X", "I"), op=f"onnx.{fn}")
    dtype_of(fn, "I", I, "integral", "must be an int64 array", xp)
    plane = math.prod(S)
    offsets = np.arange(N * C, dtype=np.int64).reshape((N, C) + (1,) * n) * plane
    local = I - to_namespace(offsets, xp, I, I.dtype)
    # poolspec's unpool reads its output size from its window arguments: a stride-1 window of the right length
    # (with padding where S < L) gives exactly S
    pad = tuple(max(-(-(Li - Si) // 2), 0) for Li, Si in zip(L, S))
    kern = tuple(Si - Li + 1 + 2 * pi for Li, Si, pi in zip(L, S, pad))
    return _UNPOOLS[n](X, local, kern, 1, pad)
