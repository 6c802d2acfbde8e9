"""A counting array-API namespace: wraps any namespace (NumPy through array-api-compat, CuPy, array-api-strict)
and its arrays, and counts every namespace function call, operator and indexing a computation makes on them.
poolspec sees the wrapped arrays as one more array-API library and runs its portable path on them: the paths of
a library it has no special case for, and, with ``launch_bound=True``, the few-operation paths of a GPU.

>>> import numpy as np, poolspec
>>> from poolspec.counting import Counter
>>> counter = Counter()
>>> y = poolspec.avg_pool1d(counter.wrap(np.ones((1, 1, 8))), 2)
>>> counter.calls > 0, type(counter.unwrap(y)).__name__
(True, 'ndarray')
"""

from __future__ import annotations

import collections
import operator
from typing import Any

import array_api_compat


class Counter:
    """Counts the operations made on the arrays it wraps (``calls``; ``by_name`` per operation)."""

    def __init__(self, namespace: Any = None, launch_bound: bool = False) -> None:
        self.inner = namespace
        self.launch_bound = launch_bound
        self.calls = 0
        self.by_name: collections.Counter[str] = collections.Counter()
        self.namespace = _Namespace(self)

    def wrap(self, array: Any) -> Counted:
        """``array`` as a counted array of this counter (its namespace the inner one, by default the array's)."""
        if self.inner is None:
            self.inner = array_api_compat.array_namespace(array)
        return Counted(self, array)

    def unwrap(self, value: Any) -> Any:
        return _unwrap(value)

    def count(self, name: str) -> None:
        self.calls += 1
        self.by_name[name] += 1


def _unwrap(value: Any) -> Any:
    if isinstance(value, Counted):
        return value._a
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def _wrap(counter: Counter, value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(counter, v) for v in value)
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, Counted):
        return Counted(counter, value)
    return value


class _Namespace:
    """The wrapped namespace: every function call counted, its arrays unwrapped in and wrapped out."""

    def __init__(self, counter: Counter) -> None:
        self._counter = counter

    @property
    def __name__(self) -> str:
        return f"counting({self._counter.inner.__name__})"

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._counter.inner, name)
        if not callable(target) or isinstance(target, type) or name in ("isdtype",) or name.startswith("__"):
            return target
        counter = self._counter
        if name in ("finfo", "iinfo", "result_type", "can_cast"):
            return lambda *a, **k: target(*_unwrap(a), **_unwrap(k))

        def call(*args: Any, **kwargs: Any) -> Any:
            counter.count(name)
            return _wrap(counter, target(*_unwrap(args), **_unwrap(kwargs)))

        return call


def _binary(name: str, op: Any, reflected: bool = False) -> Any:
    def method(self: Counted, other: Any) -> Any:
        self._c.count(name)
        a, b = (other, self._a) if reflected else (self._a, other)
        return _wrap(self._c, op(_unwrap(a), _unwrap(b)))

    return method


def _unary(name: str, op: Any) -> Any:
    def method(self: Counted) -> Any:
        self._c.count(name)
        return _wrap(self._c, op(self._a))

    return method


class Counted:
    """An array of a :class:`Counter`: the array-API attributes and operators of the array it wraps."""

    __slots__ = ("_c", "_a")

    def __init__(self, counter: Counter, array: Any) -> None:
        self._c, self._a = counter, array

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        return self._c.namespace

    @property
    def poolspec_launch_bound(self) -> bool:
        return self._c.launch_bound

    shape = property(lambda self: tuple(self._a.shape))
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    device = property(lambda self: array_api_compat.device(self._a))
    T = property(lambda self: _wrap(self._c, self._a.T))
    mT = property(lambda self: _wrap(self._c, array_api_compat.array_namespace(self._a).matrix_transpose(self._a)))

    def __getitem__(self, key: Any) -> Any:
        self._c.count("__getitem__")
        return _wrap(self._c, self._a[_unwrap(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._c.count("__setitem__")
        self._a[_unwrap(key)] = _unwrap(value)

    def to_device(self, device: Any, stream: Any = None) -> Any:
        return _wrap(self._c, array_api_compat.to_device(self._a, device))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        return np.asarray(self._a, dtype=dtype)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._a.__dlpack_device__()

    def __bool__(self) -> bool:
        return bool(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __index__(self) -> int:
        return operator.index(self._a)

    def __len__(self) -> int:
        return len(self._a)

    def __repr__(self) -> str:
        return f"Counted({self._a!r})"

    __hash__ = None  # type: ignore[assignment]


for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
                   ("floordiv", operator.floordiv), ("mod", operator.mod), ("pow", operator.pow),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor), ("lshift", operator.lshift),
                   ("rshift", operator.rshift), ("matmul", operator.matmul)]:
    setattr(Counted, f"__{_name}__", _binary(f"__{_name}__", _op))
    setattr(Counted, f"__r{_name}__", _binary(f"__{_name}__", _op, reflected=True))
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne)]:
    setattr(Counted, f"__{_name}__", _binary(f"__{_name}__", _op))
for _name, _op1 in [("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs), ("invert", operator.invert)]:
    setattr(Counted, f"__{_name}__", _unary(f"__{_name}__", _op1))
