"""Array-API kernels that apply a per-axis plan (and its transpose) along one axis.

Only slicing, concatenation, stack/reshape, ``take`` and elementwise arithmetic are used, so one code path
serves every namespace. Work is O(output x taps) per axis: no dense (input x output) matrices and no
k-fold stacked temporaries.
"""

from __future__ import annotations

from typing import Any

from .._compat import device, to_namespace
from ..plans.windows import GatherPlan, SlicePlan


def _at(axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index, ...)


def full_like_axis(xp: Any, x: Any, axis: int, size: int, value: float | int) -> Any:
    shape = tuple(x.shape[:axis]) + (size,) + tuple(x.shape[axis + 1:])
    dev = device(x)
    kwargs = {} if dev is None else {"device": dev}
    return xp.full(shape, value, dtype=x.dtype, **kwargs)


def pad_axis(xp: Any, x: Any, axis: int, left: int, right: int, value: float | int = 0) -> Any:
    if left == 0 and right == 0:
        return x
    parts = []
    if left:
        parts.append(full_like_axis(xp, x, axis, left, value))
    parts.append(x)
    if right:
        parts.append(full_like_axis(xp, x, axis, right, value))
    return xp.concat(parts, axis=axis)


def slice_sum(xp: Any, x: Any, axis: int, plan: SlicePlan) -> Any:
    """y[o] = sum_t xpad[o*stride + offsets[t]], taps added in order."""
    x = pad_axis(xp, x, axis, plan.pad_left, plan.pad_right)
    span = (plan.out - 1) * plan.stride + 1
    acc = None
    for off in plan.offsets:
        part = x[_at(axis, slice(off, off + span, plan.stride))]
        acc = part if acc is None else acc + part
    return acc


def slice_sum_t(xp: Any, g: Any, axis: int, plan: SlicePlan) -> Any:
    """The transpose of :func:`slice_sum`, by gathering.

    Padded cell P = q*stride + r is read by output o through offset off iff off = r + (q - o)*stride, so
    each residue r is a stride-1 window sum over g with taps m = (off - r) / stride; the residues are then
    interleaved. Cost: taps x output per axis, as the forward.
    """
    s = plan.stride
    reach = plan.pad_left + plan.length
    q_len = -(-reach // s)
    shifts = [[(off - r) // s for off in plan.offsets if off % s == r] for r in range(s)]
    m_max = max(m for ms in shifts for m in ms)
    gp = pad_axis(xp, g, axis, m_max, max(0, q_len - plan.out))
    phases = []
    for ms in shifts:
        acc = None
        for m in ms:
            part = gp[_at(axis, slice(m_max - m, m_max - m + q_len))]
            acc = part if acc is None else acc + part
        phases.append(acc)
    if s == 1:
        y = phases[0]
    else:
        template = next(p for p in phases if p is not None)
        phases = [full_like_axis(xp, template, axis, q_len, 0) if p is None else p for p in phases]
        y = xp.stack(phases, axis=axis + 1)
        shape = tuple(y.shape[:axis]) + (q_len * s,) + tuple(y.shape[axis + 2:])
        y = xp.reshape(y, shape)
    return y[_at(axis, slice(plan.pad_left, plan.pad_left + plan.length))]


def gather_sum(xp: Any, x: Any, axis: int, plan: GatherPlan) -> Any:
    """y[o] = sum_t w[t, o] * x[index[t, o]]; index == length reads an appended zero."""
    if plan.uses_padding_cell:
        x = pad_axis(xp, x, axis, 0, 1)
    trailing = x.ndim - axis - 1
    acc = None
    for t in range(plan.taps):
        part = xp.take(x, to_namespace(plan.index[t], xp, x), axis=axis)
        if plan.weight is not None:
            w = to_namespace(plan.weight[t].reshape((-1,) + (1,) * trailing), xp, x, dtype=x.dtype)
            part = part * w
        acc = part if acc is None else acc + part
    return acc
