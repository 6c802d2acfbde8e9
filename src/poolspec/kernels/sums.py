"""Array-API kernels that apply a per-axis plan (and its transpose) along one axis.

Only slicing, concatenation, stack/reshape, ``take`` and elementwise arithmetic are used, so one code path
serves every namespace. Work is O(output x taps) per axis: no dense (input x output) matrices and no
k-fold stacked temporaries.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._compat import device, dtype_name, to_namespace, writable_module
from ..plans.windows import GatherPlan, Phases, SlicePlan


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
    if plan.phases is not None:
        return phase_sum(xp, x, axis, plan.phases)
    return take_sum(xp, x, axis, plan)


def phase_sum(xp: Any, x: Any, axis: int, ph: Phases) -> Any:
    """:func:`gather_sum` over a periodic run: each phase is a sum of strided slices times scalar weights
    (the same products, added in the same order, as the take path), the phases are interleaved, and the
    few border outputs gather. NumPy, CuPy and torch write every phase straight into its strided place in
    one output buffer; the other backends stack, reshape and concatenate."""
    host = np.dtype(dtype_name(xp, x.dtype)) if ph.weights is not None else None
    span = ph.step * (ph.count - 1) + 1
    inner_len = ph.count * ph.period
    out_len = ph.start + inner_len + (0 if ph.right is None else ph.right.out)
    mod = writable_module(x)

    def taps(r: int) -> Any:
        for t, s in enumerate(ph.first[r]):
            part = x[_at(axis, slice(s, s + span, ph.step))]
            w = None if ph.weights is None else float(host.type(ph.weights[r][t]))  # rounded as take's
            yield part, w

    if mod is None:
        columns = []
        for r in range(ph.period):
            acc = None
            for part, w in taps(r):
                part = part if w is None else part * w
                acc = part if acc is None else acc + part
            columns.append(acc)
        inner = columns[0]
        if ph.period > 1:
            inner = xp.stack(columns, axis=axis + 1)
            inner = xp.reshape(inner, tuple(inner.shape[:axis]) + (inner_len,) + tuple(inner.shape[axis + 2:]))
        parts = [take_sum(xp, x, axis, ph.left)] if ph.left is not None else []
        parts.append(inner)
        if ph.right is not None:
            parts.append(take_sum(xp, x, axis, ph.right))
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=axis)

    shape = tuple(x.shape[:axis]) + (out_len,) + tuple(x.shape[axis + 1:])
    kw = {"device": x.device} if mod.__name__ == "torch" else {}
    out = mod.empty(shape, dtype=x.dtype, **kw)
    tmp = None
    for r in range(ph.period):
        view = out[_at(axis, slice(ph.start + r, ph.start + inner_len, ph.period))]
        for t, (part, w) in enumerate(taps(r)):
            if t == 0:
                if w is None:
                    view[...] = part
                else:
                    mod.multiply(part, w, out=view)
                continue
            if w is not None:
                if tmp is None:
                    tmp = mod.empty(tuple(part.shape), dtype=x.dtype, **kw)
                mod.multiply(part, w, out=tmp)
                part = tmp
            mod.add(view, part, out=view)
    if ph.left is not None:
        out[_at(axis, slice(0, ph.start))] = take_sum(xp, x, axis, ph.left)
    if ph.right is not None:
        out[_at(axis, slice(ph.start + inner_len, out_len))] = take_sum(xp, x, axis, ph.right)
    return out


def take_sum(xp: Any, x: Any, axis: int, plan: GatherPlan) -> Any:
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
