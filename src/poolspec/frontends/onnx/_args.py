"""The ONNX front-end's argument readers: the checks its cards do not state (attribute lengths that follow the
input's rank, the input's own shape and dtype, the small tensors read on the host).

>>> import numpy as np
>>> ints("MaxPool", "strides", None, 2, 1)
(1, 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._compat import namespace, to_host
from .._checks import check, entries
from .._common import fail
from .cards import CARD


def checked(fn: str, values: dict[str, Any]) -> None:
    """Refuse what operator ``fn``'s card rules out (``values``: the call's arguments by name)."""
    check(CARD[fn], values)


def text(value: Any) -> str:
    """A string attribute (ONNX attributes may arrive as bytes); the card's choices are checked already."""
    return value.decode() if isinstance(value, bytes) else str(value)


def ints(fn: str, name: str, value: Any, n: int, default: int | None) -> tuple[int, ...]:
    """An ONNX ints attribute of ``n`` entries (None: ``default`` for every axis; required where None)."""
    if value is None and default is not None:
        return (int(default),) * n
    vals = None if value is None else entries(fn, name, value)
    if vals is None or len(vals) != n:
        fail(fn, name, value, "is required" if vals is None else f"must have {n} entries")
    return vals  # type: ignore[return-value]


def shape_of(fn: str, X: Any, ok: bool, rule: str) -> None:
    """Refuse X's shape by ``rule`` unless ``ok``."""
    if not ok:
        fail(fn, "X", tuple(X.shape), rule)


def spatial(fn: str, X: Any, low: int = 1, high: int = 3) -> int:
    """The number of spatial axes of a channels-first (N, C, *spatial) X, from ``low`` to ``high``."""
    n = X.ndim - 2
    shape_of(fn, X, low <= n <= high and all(int(L) > 0 for L in X.shape[1:]),
             f"must be (N, C, *spatial) with {low} to {high} spatial axes, a non-empty channel axis and non-empty "
             "spatial axes")
    return n


def dtype_of(fn: str, name: str, a: Any, kind: str, rule: str, xp: Any) -> None:
    """Refuse ``a`` with a TypeError naming ``rule`` unless its dtype is of ``kind`` (``xp.isdtype``'s names)."""
    if not xp.isdtype(a.dtype, kind):
        fail(fn, name, a.dtype, rule, TypeError)


def floating(fn: str, X: Any) -> Any:
    """X's namespace; X must be floating (the operator's type constraint T)."""
    xp = namespace(X, names=("X",), op=f"onnx.{fn}")
    dtype_of(fn, "X", X, "real floating", "must be float16, bfloat16, float32 or float64 (the operator's type "
             "constraint T)", xp)
    return xp


def host(fn: str, name: str, a: Any, kinds: str, n: int | None = None, note: str = "",
         required: str = "") -> tuple[Any, ...]:
    """A small 1-D tensor (sizes, scales, roi, output_shape) read on the host: it fixes the output's shape.
    ``kinds``: NumPy dtype kinds ("iu" int64, "f" floating); ``n``: its length, with ``note`` saying why;
    ``required``: why None is refused."""
    h = None if a is None else np.asarray(a if isinstance(a, (list, tuple, np.ndarray)) else to_host(a))
    problem: tuple[str, type[Exception]] | None = None
    if h is None:
        problem = (f"is required{required}", ValueError)
    elif h.ndim != 1 or h.dtype.kind not in kinds:
        problem = (f"must be a 1-D {'int64' if kinds == 'iu' else 'floating-point'} tensor", TypeError)
    elif n is not None and h.shape[0] != n:
        problem = (f"must have {n} entries{note}", ValueError)
    if problem is not None:
        fail(fn, name, a, *problem)
    assert h is not None
    return tuple(int(v) if kinds == "iu" else float(v) for v in h)
