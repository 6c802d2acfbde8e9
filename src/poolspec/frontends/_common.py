"""What the front-ends share: resampling along any axes with per-axis tap tables, and the checks of the
arguments other libraries spell their own way."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .._compat import is_jax_array, namespace
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


def symbolic_axes(x: Any) -> list[int]:
    """The axes of a JAX array whose sizes are symbolic (jax.export's shape polymorphism, Keras' symbolic build
    on JAX); none on other arrays (torch's symbolic sizes are handled by its own capture)."""
    if not is_jax_array(x):
        return []
    return [a for a, d in enumerate(x.shape) if not isinstance(d, (int, np.integer))]


def over_symbolic_axes(function: str, fn: Callable[[Any], Any], x: Any, spatial: Sequence[int]) -> Any:
    """``fn(x)`` for a JAX array ``x`` whose non-spatial axes may have symbolic sizes: each such axis is mapped
    over with ``jax.vmap`` (kept with size 1 inside), so that ``fn`` sees static shapes and its plans are built as
    usual; ``fn`` must keep that axis in place in each of its results. Spatial sizes must be static: the plans
    are functions of them."""
    free = symbolic_axes(x)
    if not free:
        return fn(x)
    fixed = {a % x.ndim for a in spatial}
    bad = [a for a in free if a in fixed]
    if bad:
        fail(function, "inputs", tuple(x.shape), f"spatial axis {bad[0]} has a symbolic size: the windows and taps "
                                                 "are built from static spatial sizes (batch and channel axes may "
                                                 "be symbolic)")
    import jax
    import jax.numpy as jnp

    axis = free[0]

    def one(xi: Any) -> Any:
        out = over_symbolic_axes(function, fn, jnp.expand_dims(xi, axis), spatial)
        return jax.tree_util.tree_map(lambda y: jnp.squeeze(y, axis), out)

    return jax.vmap(one, in_axes=axis, out_axes=axis)(x)


def mirror(module: str, original: str, names: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a front-end module that mirrors ``names`` of the module
    ``original``: every other public name is the original's own, imported on first use where it is installed, so
    that changing the import prefix is the whole port; ``dir()`` lists the mirrored names."""
    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        try:
            library = importlib.import_module(original)
        except ImportError as e:
            raise AttributeError(f"module {module!r} has no attribute {name!r}: it mirrors {', '.join(names)} of "
                                 f"{original}, whose other names it passes on, but {original} is not installed "
                                 f"({e})") from None
        try:
            return getattr(library, name)
        except AttributeError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}, nor has {original}") from None

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__


FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def fail(function: str, name: str, value: Any, rule: str, kind: type[Exception] = ValueError) -> None:
    """Raise ``kind`` naming the front-end function, the argument and the rule it broke."""
    raise kind(f"{function}: {name}={value!r}: {rule}")


def ints(function: str, name: str, value: Any, rule: str = "must be a sequence of ints",
         kind: type[Exception] = TypeError, shown: Any = None) -> tuple[int, ...]:
    """The entries of the sequence ``value`` as ints; ``kind`` (naming ``shown``, default ``value``) if it is not a
    sequence or an entry is not an int (bools and floats are refused: a size is never a truth value).

    >>> ints("f", "size", [2, np.int64(3)])
    (2, 3)
    """
    try:
        vals = tuple(value)
    except TypeError:
        vals = (None,)
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in vals):
        fail(function, name, value if shown is None else shown, rule, kind)
    return tuple(int(v) for v in vals)


def at_least(function: str, name: str, value: Any, vals: Sequence[int], low: int = 1, rule: str = "") -> None:
    """Refuse ``value`` (ValueError) unless every entry of ``vals`` (its ints) is >= ``low``."""
    if any(v < low for v in vals):
        fail(function, name, value, rule or f"every entry must be >= {low}")


def choice(function: str, name: str, value: Any, allowed: Sequence[str], rule: str = "", any_case: bool = False,
           not_str: str = "", kind: type[Exception] = ValueError) -> str:
    """``value``, one of the strings ``allowed`` (``any_case``: compared upper-cased, returned as given); ``kind``
    naming ``rule`` (default: the list) otherwise, or a TypeError with ``not_str`` for a value that is not a
    string where that rule is given (a dtype's name is checked as ``kind=TypeError``).

    >>> choice("f", "padding", "same", ("VALID", "SAME"), any_case=True)
    'same'
    """
    if not isinstance(value, str) and not_str:
        fail(function, name, value, not_str, TypeError)
    if not isinstance(value, str) or (value.upper() if any_case else value) not in allowed:
        fail(function, name, value, rule or f"must be one of {', '.join(allowed)}", kind)
    return str(value)


def nonempty(function: str, name: str, shape: Sequence[Any], axes: Sequence[int],
             rule: str | Callable[[int], str]) -> None:
    """Refuse (ValueError, naming the shape) an array whose axis in ``axes`` has no cell; ``rule`` may be a
    function of that axis. Symbolic sizes pass."""
    for a in axes:
        if isinstance(shape[a], (int, np.integer)) and shape[a] == 0:
            fail(function, name, tuple(shape), rule if isinstance(rule, str) else rule(a))


def flag(function: str, name: str, value: Any) -> bool:
    """``value``, a bool (NumPy's included), else a TypeError: flags are not truthy objects."""
    if not isinstance(value, (bool, np.bool_)):
        fail(function, name, value, "must be a bool", TypeError)
    return bool(value)


def jax_default_float(x: Any) -> str:
    """JAX's default float dtype, which its true division of integers gives: float64 under jax_enable_x64 (and
    off JAX, where nothing narrows it), float32 on JAX arrays without it."""
    if not is_jax_array(x):
        return "float64"
    import jax

    return "float64" if jax.config.read("jax_enable_x64") else "float32"


def jax_inexact(name: str, x: Any = None) -> str:
    """The float dtype jax.numpy promotes the integer or bool dtype ``name`` to: float32, float64 for 64-bit
    integers (JAX's default float where ``x``, the array, is given: float32 on JAX without jax_enable_x64).

    >>> jax_inexact("int16"), jax_inexact("uint64")
    ('float32', 'float64')
    """
    if name not in ("int64", "uint64"):
        return "float32"
    return "float64" if x is None else jax_default_float(x)


@lru_cache(maxsize=512)
def mean_table(length: int, kernel: int, stride: int, low: int, out: int, at_offset: bool = False) -> GatherPlan:
    """One axis of a box average whose padding is not counted (TensorFlow's AvgPool, Keras' "same"): output
    ``o`` averages the input cells of [o s - low, o s - low + k) inside [0, length). Its taps start at the first
    cell inside, or with ``at_offset`` tap t reads window cell t (padding taps read nothing): the same products
    in the same order, kept apart because a sum led by a padding tap's +0 turns an all -0.0 window's -0.0 to 0.0.

    >>> mean_table(3, 2, 2, 0, 2).weight.tolist()
    [[0.5, 1.0], [0.5, 0.0]]
    """
    index = np.full((kernel, out), length, dtype=np.int64)
    weight = np.zeros((kernel, out))
    for o in range(out):
        a, b = max(o * stride - low, 0), min(o * stride - low + kernel, length)
        t = a - (o * stride - low) if at_offset else 0
        index[t:t + b - a, o] = np.arange(a, b)
        weight[t:t + b - a, o] = 1.0 / (b - a)
    return tap_table(index, weight, length)
