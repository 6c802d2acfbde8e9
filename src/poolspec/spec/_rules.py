"""Checks shared by the cards. Every failure names the op, the argument, its value and the rule."""

from __future__ import annotations

import operator
from functools import cache
from typing import Any

import numpy as np

INT64_MAX = 2**63 - 1


def fail(op: str, name: str, value: Any, rule: str, kind: type[Exception] = ValueError) -> None:
    raise kind(f"{op}: {name}={value!r}: {rule}")


def is_int(value: Any) -> bool:
    """Python and NumPy integers; bools are not sizes."""
    if isinstance(value, (bool, np.bool_)):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def as_int(op: str, name: str, value: Any, whole: Any = None) -> int:
    if not is_int(value):
        fail(op, name, value if whole is None else whole,
             f"must be an int or a tuple of ints, not {type(value).__name__}", TypeError)
    out = operator.index(value)
    if abs(out) > INT64_MAX:
        fail(op, name, whole if whole is not None else value, "does not fit in int64")
    return out


def int_tuple(op: str, name: str, value: Any, n: int, *, allow_single: bool = True) -> tuple[int, ...]:
    """An int, or a sequence of ``n`` ints (or of one int, broadcast, where torch allows it)."""
    if is_int(value):
        return (as_int(op, name, value),) * n
    if isinstance(value, (tuple, list)):
        items = tuple(as_int(op, name, v, value) for v in value)
        if len(items) == n:
            return items
        if len(items) == 1 and allow_single:
            return items * n
        allowed = f"1 or {n}" if allow_single and n > 1 else f"{n}"
        fail(op, name, value, f"must be an int or a tuple of {allowed} ints, got {len(items)}")
    fail(op, name, value, f"must be an int or a tuple of ints, not {type(value).__name__}", TypeError)
    raise AssertionError


def check_bool(op: str, name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        fail(op, name, value, f"must be a bool, not {type(value).__name__}", TypeError)
    return bool(value)


def split_shape(op: str, shape: tuple[Any, ...], n: int, *, allow_empty_channel: bool) -> tuple[bool, tuple[int, ...]]:
    """Accept (C, *S) or (N, C, *S); return (batched, spatial sizes). Spatial sizes must be ints > 0."""
    if len(shape) not in (n + 1, n + 2):
        fail(op, "x", tuple(shape),
             f"must have {n + 1} (unbatched) or {n + 2} (batched) dimensions, got {len(shape)}")
    for i, dim in enumerate(shape):
        if isinstance(dim, str):
            if i >= len(shape) - n:
                fail(op, "x", tuple(shape), f"spatial dimension {i} must be an integer, not a symbol",
                     TypeError)
            continue
        if not is_int(dim):
            fail(op, "x", tuple(shape), f"dimension {i} must be an int or a symbol", TypeError)
        if dim < 0:
            fail(op, "x", tuple(shape), f"dimension {i} is negative")
    batched = len(shape) == n + 2
    spatial = tuple(int(d) for d in shape[-n:])
    for i, dim in enumerate(shape):
        if isinstance(dim, str) or dim != 0:
            continue
        is_batch = batched and i == 0
        is_channel = i == len(shape) - n - 1
        if is_batch or (is_channel and allow_empty_channel):
            continue
        fail(op, "x", tuple(shape), f"dimension {i} is empty; only the batch dimension may be 0")
    return batched, spatial


def check_dtype(op: str, dtype: str | None, allowed: tuple[str, ...]) -> None:
    if dtype is not None and dtype not in allowed:
        fail(op, "x.dtype", dtype, f"is not supported; {op} takes {', '.join(allowed)}", TypeError)


def pool_output_size(L: int, k: int, s: int, p: int, d: int, ceil_mode: bool, high: int | None = None) -> int:
    """torch's pooling output length, including the rule that the last ceil_mode window must start
    inside the input or the left padding (never in the right padding); ``high``: a right padding other than
    ``p``."""
    eff = d * (k - 1) + 1
    out = (L + p + (p if high is None else high) - eff + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= L + p:
        out -= 1
    return out



@cache
def layout_order(rank: int, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(channels-last -> channels-first, and back) axis orders for an array of ``rank`` with ``n`` spatial axes:
    (N, *S, C) <-> (N, C, *S), or unbatched (*S, C) <-> (C, *S)."""
    lead = rank - n - 1  # 1 batched, 0 unbatched
    first = tuple(range(lead)) + (rank - 1,) + tuple(range(lead, rank - 1))
    back = tuple(first.index(i) for i in range(rank))
    return first, back


def checked_shape(op: str, name: str, shape: tuple[Any, ...], ranks: tuple[int, ...]) -> tuple[Any, ...]:
    shape = tuple(shape)
    if len(shape) not in ranks:
        fail(op, name, shape, f"must have {' or '.join(str(r) for r in ranks)} dimensions, got {len(shape)}")
    for i, dim in enumerate(shape):
        if isinstance(dim, str):
            continue
        if not is_int(dim) or dim < 0:
            fail(op, name, shape, f"dimension {i} must be a non-negative int or a symbol", TypeError)
    return shape


def size_argument(card: Any, input_shape: tuple[Any, ...], output_shape: tuple[Any, ...], key: str, n: int,
                  fixed: dict[str, Any] | None = None, reachable: Any = None) -> dict[str, Any]:
    """``{key: output spatial size}``, the argument that makes ``card``'s op map ``input_shape`` to
    ``output_shape`` where the output size is an argument (a card's ``_infer``): only the ``n`` spatial
    dimensions may differ, and the card's own rule (with ``fixed`` arguments, and ``reachable(spatial)``'s
    check first) must give ``output_shape`` back."""
    name = card.name
    if len(input_shape) != len(output_shape):
        fail(name, "output_shape", output_shape, f"must have the rank of input_shape {input_shape}")
    for i, (a, b) in enumerate(zip(input_shape[:-n], output_shape[:-n])):
        if a != b:
            fail(name, "output_shape", output_shape,
                 f"dimension {i} must equal the input's ({a!r}): only spatial dimensions change")
    spatial = output_shape[-n:]
    if not all(is_int(v) for v in spatial):
        fail(name, "output_shape", output_shape, "spatial dimensions must be ints", TypeError)
    arguments: dict[str, Any] = {key: tuple(int(v) for v in spatial), **(fixed or {})}
    if reachable is not None:
        reachable(spatial)
    got = card.resolve(input_shape, None, **arguments).output_shape
    if tuple(got) != output_shape:
        fail(name, "output_shape", output_shape, f"is not reachable (inferred {got})")
    return {key: arguments[key]}
