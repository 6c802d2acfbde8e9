"""What the front-ends share: resampling along any axes with per-axis tap tables, and the checks of the
arguments other libraries spell their own way."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .._compat import namespace
from ..autodiff import linear
from ..kernels.linear import SeparableLinear
from ..plans.windows import GatherPlan


def tap_table(index: np.ndarray, weight: np.ndarray, length: int) -> GatherPlan:
    """A per-axis tap table: output ``o`` is the sum over taps ``t`` of ``weight[t, o] * x[index[t, o]]``
    (arrays of shape (taps, outputs)); ``index == length`` reads nothing (a tap outside the input). Weights are
    float64 on the host and are rounded once to the compute dtype by the kernels."""
    index = np.ascontiguousarray(np.where(weight != 0, index, length), dtype=np.int64)
    weight = np.ascontiguousarray(np.where(index < length, weight, 0.0), dtype=np.float64)
    keep = ~((index == length).all(axis=1))  # taps no output reads
    if keep.any() and not keep.all():
        index, weight = index[keep], weight[keep]
    index.setflags(write=False)
    weight.setflags(write=False)
    return GatherPlan(length, int(index.shape[1]), index, weight)


def dense_table(matrix: np.ndarray) -> GatherPlan:
    """The tap table of a dense (inputs, outputs) weight matrix: each output's nonzero band."""
    length, out = matrix.shape
    nz = matrix != 0
    if not nz.any():
        return tap_table(np.full((1, out), length), np.zeros((1, out)), length)
    first = np.where(nz.any(axis=0), nz.argmax(axis=0), 0)
    last = np.where(nz.any(axis=0), length - 1 - nz[::-1].argmax(axis=0), -1)
    taps = max(int((last - first).max()) + 1, 1)
    index = first[None, :] + np.arange(taps)[:, None]
    inside = index <= last[None, :]
    safe = np.minimum(index, length - 1)
    weight = np.where(inside, np.take_along_axis(matrix, safe, axis=0), 0.0)
    return tap_table(np.where(inside, index, length), weight, length)


@lru_cache(maxsize=512)
def _separable(in_spatial: tuple[int, ...], out_spatial: tuple[int, ...],
               plans: tuple[GatherPlan | None, ...]) -> SeparableLinear:
    return SeparableLinear(in_spatial, out_spatial, plans, custom_vjp=True)


def resample(x: Any, axes: Sequence[int], plans: Sequence[GatherPlan | None]) -> Any:
    """``x`` with the tap table ``plans[i]`` applied along axis ``axes[i]`` (None: that axis unchanged).

    The axes are moved last through a permuted view and back (no copy to change layout); the kernels gather and
    the gradient is the transposed tables (deterministic, every order, on torch and JAX)."""
    xp = namespace(x)
    axes = [a % x.ndim for a in axes]
    keep = [(a, p) for a, p in zip(axes, plans) if p is not None]
    if not keep:
        return x
    moved = [a for a, _ in keep]
    order = [a for a in range(x.ndim) if a not in moved] + moved
    view = xp.permute_dims(x, tuple(order)) if order != list(range(x.ndim)) else x
    table = _separable(tuple(p.length for _, p in keep), tuple(p.out for _, p in keep), tuple(p for _, p in keep))
    y = linear(table, view)
    if order == list(range(x.ndim)):
        return y
    back = tuple(int(i) for i in np.argsort(order))
    return xp.permute_dims(y, back)


def fail(function: str, name: str, value: Any, rule: str, kind: type[Exception] = ValueError) -> None:
    """Raise ``kind`` naming the front-end function, the argument and the rule it broke."""
    raise kind(f"{function}: {name}={value!r}: {rule}")


def int_tuple(function: str, name: str, value: Any, n: int, allowed: Sequence[int] = ()) -> tuple[int, ...]:
    """An int, or a sequence of 1 or ``n`` ints (or of another length in ``allowed``), as an n-tuple."""
    def one(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fail(function, name, value, "must be an int or a sequence of ints", TypeError)
        return int(v)

    if isinstance(value, (list, tuple)):
        vals = tuple(one(v) for v in value)
        if len(vals) == 1:
            return vals * n
        if len(vals) == n:
            return vals
        if len(vals) in allowed:
            return vals
        fail(function, name, value, f"must have 1 or {n} entries")
    return (one(value),) * n
