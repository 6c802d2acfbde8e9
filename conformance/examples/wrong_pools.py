"""A deliberately wrong NumPy implementation of avg_pool1d and max_pool1d, to show what the conformance suite
reports: written from the usual textbook formulas, with two classic mistakes.

1. avg_pool1d's ceil_mode keeps a last window that starts in the right padding (torch drops it).
2. max_pool1d compares with ``>=``, so on ties the *last* maximum wins (torch: the first) and a NaN does not
   win against a later finite value.

Everything else (padding, count_include_pad, divisor_override, dilation, the backward) is right.
"""

from __future__ import annotations

import math

import numpy as np


def _one(v: int | tuple[int, ...] | None) -> int | None:
    return v[0] if isinstance(v, (tuple, list)) else v


def _out(length: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = length + 2 * p - d * (k - 1) - 1
    if span < 0:
        raise ValueError(f"kernel_size {k} with dilation {d} is larger than the padded input ({length + 2 * p})")
    return (math.ceil(span / s) if ceil else span // s) + 1  # mistake 1: no "last window starts in padding" rule


def _windows(length, kernel_size, stride, padding, ceil_mode, dilation=1):
    k, s, p, d = _one(kernel_size), _one(stride) or _one(kernel_size), _one(padding), _one(dilation)
    if p > k // 2:
        raise ValueError(f"padding {p} must be at most half of kernel_size {k}")
    return [range(o * s - p, o * s - p + d * (k - 1) + 1, d) for o in range(_out(length, k, s, p, d, ceil_mode))], p


def avg_pool1d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    x = np.asarray(x)
    windows, p = _windows(x.shape[-1], kernel_size, stride, padding, ceil_mode)
    out = np.zeros(x.shape[:-1] + (len(windows),), x.dtype)
    for o, w in enumerate(windows):
        inside = [i for i in w if 0 <= i < x.shape[-1]]
        padded = [i for i in w if -p <= i < x.shape[-1] + p]
        div = divisor_override or (len(padded) if count_include_pad else len(inside))
        out[..., o] = x[..., inside].sum(-1) / div
    return out


def avg_pool1d_backward(grad_output, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                        divisor_override=None):
    x, g = np.asarray(x), np.asarray(grad_output)
    windows, p = _windows(x.shape[-1], kernel_size, stride, padding, ceil_mode)
    grad = np.zeros_like(x)
    for o, w in enumerate(windows):
        inside = [i for i in w if 0 <= i < x.shape[-1]]
        padded = [i for i in w if -p <= i < x.shape[-1] + p]
        div = divisor_override or (len(padded) if count_include_pad else len(inside))
        for i in inside:
            grad[..., i] += g[..., o] / div
    return grad


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    x = np.asarray(x)
    windows, _ = _windows(x.shape[-1], kernel_size, stride, padding, ceil_mode, dilation)
    values = np.zeros(x.shape[:-1] + (len(windows),), x.dtype)
    indices = np.zeros(values.shape, np.int64)
    for o, w in enumerate(windows):
        inside = [i for i in w if 0 <= i < x.shape[-1]]
        best = x[..., inside[0]].copy()
        arg = np.full(best.shape, inside[0])
        for i in inside[1:]:
            take = x[..., i] >= best  # mistake 2: torch updates on v > m or isnan(v)
            best, arg = np.where(take, x[..., i], best), np.where(take, i, arg)
        values[..., o], indices[..., o] = best, arg
    return (values, indices) if return_indices else values
