"""``keras.ops`` pooling (Keras 3.15, JAX backend) on poolspec's kernels: ``max_pool``, ``average_pool``,
``adaptive_average_pool`` and ``adaptive_max_pool`` with Keras' signatures, defaults, layouts and numerics.

Inputs are always batched, (batch, *spatial, channels) for ``data_format="channels_last"`` (Keras' default
``image_data_format``) or (batch, channels, *spatial), with 1 to 3 spatial axes. ``padding="same"`` is
TensorFlow's rule (ceil(L / s) outputs, the odd cell of padding at the end) and ``average_pool`` divides by the
number of input cells in each window (padding excluded). The adaptive pools use torch's windows
[floor(i * L / O), ceil((i + 1) * L / O)).

>>> import numpy as np
>>> from poolspec.frontends.keras import ops
>>> ops.max_pool(np.arange(8.0).reshape(1, 4, 2), 2)[0]
array([[2., 3.],
       [6., 7.]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ...._compat import dtype_name, dtype_of, index_dtype, is_torch_array, namespace, on, take, to_namespace
from ...._types import Array
from ....families.adaptive_avg_pool.ops import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ....families.adaptive_max_pool.ops import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from ....families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ....families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ....plans.windows import GatherPlan
from ..._common import FLOATS, INTS, at_least, choice, fail, ints, jax_inexact, mean_table, mirror, nonempty, resample
from ..._geometry import same_output, same_pads, spatial_axes, valid_output
from .._keras import data_format as keras_data_format
from .._keras import frontend_call
from .._registry import FUNCTIONS, SPECS
from ._cards import CARDS as CARDS  # the cards, found here by poolspec.spec.frontends

__all__ = ["max_pool", "average_pool", "adaptive_average_pool", "adaptive_max_pool"]

_MAX: dict[int, Callable[..., Any]] = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_AVG: dict[int, Callable[..., Any]] = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_ADAPTIVE_MAX: dict[int, Callable[..., Any]] = {1: adaptive_max_pool1d, 2: adaptive_max_pool2d,
                                                3: adaptive_max_pool3d}
_ADAPTIVE_AVG: dict[int, Callable[..., Any]] = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d,
                                                3: adaptive_avg_pool3d}

# poolspec's max pool has no uint16/uint32: a wider signed int holds every value (max is a selection: exact)
_WIDEN = {"uint16": "int32", "uint32": "int64"}
_SIGN = -(2**63)


def _rank_of(function: str, shape: tuple[Any, ...]) -> int:
    n = len(shape) - 2
    if n not in (1, 2, 3):
        fail(function, "inputs", shape, "must have 3, 4 or 5 dimensions (batch, channels and 1 to 3 spatial axes)")
    return n


def _spatial_axes(fmt: str, n: int) -> tuple[int, ...]:
    return spatial_axes(n + 2, n, fmt == "channels_first")


def _sizes(function: str, name: str, value: Any, n: int, rule: str = "") -> tuple[int, ...]:
    """An int or a tuple/list of exactly n ints (Keras' windows take no broadcast of a 1-tuple), each >= 1."""
    if isinstance(value, (tuple, list)) and len(value) != n:
        fail(function, name, value, f"must have {n} entries, one per spatial axis")
    single = not isinstance(value, (tuple, list))
    vals = ints(function, name, (value,) if single else value, f"must be an int or a tuple of {n} ints", shown=value)
    at_least(function, name, value, vals, rule=rule)
    return vals * n if single else vals


def _padding(function: str, padding: Any) -> str:
    return choice(function, "padding", padding, ("VALID", "SAME"), "must be 'valid' or 'same' (any case)",
                  any_case=True, not_str="must be the string 'valid' or 'same'").lower()


def _pool_args(function: str, x: Any, pool_size: Any, strides: Any, padding: Any,
               data_format: Any) -> tuple[str, int, tuple[int, ...], tuple[int, ...], str, tuple[int, ...]]:
    return _pool_rule(function, tuple(int(d) for d in x.shape), pool_size, strides, padding, data_format)


def _pool_rule(function: str, shape: tuple[Any, ...], pool_size: Any, strides: Any, padding: Any,
               data_format: Any) -> tuple[str, int, tuple[int, ...], tuple[int, ...], str, tuple[Any, ...]]:
    """The checked arguments and the output shape; a spatial size may be None (unknown: so is the output's) or
    symbolic (JAX: the formula, assuming a window fits)."""
    fmt = keras_data_format(function, data_format)
    n = _rank_of(function, shape)
    k = _sizes(function, "pool_size", pool_size, n)
    s = k if strides is None else _sizes(function, "strides", strides, n)
    pad = _padding(function, padding)
    out = list(shape)
    for axis, kk, ss in zip(_spatial_axes(fmt, n), k, s):
        length = shape[axis]
        if length is not None:
            out[axis] = same_output(length, ss) if pad == "same" else valid_output(length, kk, ss)
    return fmt, n, k, s, pad, tuple(out)


def _dtype(function: str, xp: Any, x: Any, allowed: tuple[str, ...]) -> str:
    return _dtype_rule(function, dtype_name(xp, x.dtype), allowed)


def _dtype_rule(function: str, name: str, allowed: tuple[str, ...]) -> str:
    return choice(function, "inputs.dtype", name, allowed, kind=TypeError)


def _empty(xp: Any, x: Any, shape: tuple[int, ...], name: str) -> Any:
    return xp.zeros(shape, dtype=dtype_of(xp, name), **on(x))


def max_pool(inputs: Array, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: str | None = None) -> Array:
    """Max pooling, as ``keras.ops.max_pool`` (Keras 3.15, JAX backend).

    Each output is the maximum of a ``pool_size`` window placed every ``strides`` cells; ``"same"`` pads with -inf
    by TensorFlow's rule. A NaN in a window wins.

    Parameters
    ----------
    inputs : array
        (batch, *spatial, channels) or (batch, channels, *spatial) with 1 to 3 spatial axes; any array-API array;
        float16, bfloat16, float32, float64, int8/16/32/64 or uint8/16/32.
    pool_size : int or tuple of int
        The window size, one int for every spatial axis or one per axis; every entry >= 1.
    strides : int, tuple of int or None, default None
        The window step; None: pool_size.
    padding : str, default "valid"
        "valid" (no padding: floor((L - k) / s) + 1 outputs, 0 if L < k) or "same" (ceil(L / s) outputs, TensorFlow's
        padding, the odd cell at the end); any case.
    data_format : str or None, default None
        "channels_last" or "channels_first" (any case); None: keras.config.image_data_format()
        (Keras' global setting, "channels_last" unless set or in keras.json).

    Returns
    -------
    array
        The pooled array in inputs' layout, namespace and dtype.

    Raises
    ------
    ValueError
        If inputs does not have 3 to 5 dimensions, a pool_size or strides entry is < 1 or a tuple has not one entry
        per spatial axis, padding is not "valid" or "same", or data_format is not one of the two layouts.
    TypeError
        If inputs is not an array of a supported library or has another dtype (bool, uint64, complex), pool_size or
        strides is not an int or a tuple of ints, or padding is not a string.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.keras import ops
    >>> ops.max_pool(np.array([[[1.0], [3.0], [2.0]]]), 2, strides=1, padding="same")[0, :, 0]
    array([3., 3., 2.])
    """
    return frontend_call("keras.ops.max_pool", _max_pool, inputs,
                         dict(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format))


def _max_pool(inputs: Any, pool_size: Any, strides: Any, padding: Any, data_format: str) -> Any:
    f = "keras.ops.max_pool"
    xp = namespace(inputs, names=("inputs",), op=f)
    fmt, n, k, s, pad, shape = _pool_args(f, inputs, pool_size, strides, padding, data_format)
    name = _dtype(f, xp, inputs, FLOATS + INTS[:-1])
    if math.prod(shape) == 0 or math.prod(inputs.shape) == 0:
        return _empty(xp, inputs, shape, name)
    x = xp.astype(inputs, dtype_of(xp, _WIDEN[name])) if name in _WIDEN else inputs
    y = _MAX[n](x, k, s, pad, layout=fmt)
    return xp.astype(y, inputs.dtype) if name in _WIDEN else y


def average_pool(inputs: Array, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None) -> Array:
    """Average pooling, as ``keras.ops.average_pool`` (Keras 3.15, JAX backend).

    Each output is its window's sum over the input divided by the number of input cells in the window (with
    ``"same"``, the padding is not counted). Integer inputs are averaged in float32 (float64 for int64/uint64).

    Parameters
    ----------
    inputs : array
        (batch, *spatial, channels) or (batch, channels, *spatial) with 1 to 3 spatial axes; any array-API array;
        float16, bfloat16, float32, float64 or an int8/16/32/64, uint8/16/32/64 dtype.
    pool_size : int or tuple of int
        The window size, one int for every spatial axis or one per axis; every entry >= 1.
    strides : int, tuple of int or None, default None
        The window step; None: pool_size.
    padding : str, default "valid"
        "valid" (no padding: floor((L - k) / s) + 1 outputs, 0 if L < k) or "same" (ceil(L / s) outputs, TensorFlow's
        padding, the odd cell at the end, not counted in the average); any case.
    data_format : str or None, default None
        "channels_last" or "channels_first" (any case); None: keras.config.image_data_format()
        (Keras' global setting, "channels_last" unless set or in keras.json).

    Returns
    -------
    array
        The pooled array in inputs' layout and namespace; inputs' dtype if floating, else float32 (float64 for 64-bit
        integers).

    Raises
    ------
    ValueError
        If inputs does not have 3 to 5 dimensions, a pool_size or strides entry is < 1 or a tuple has not one entry
        per spatial axis, padding is not "valid" or "same", or data_format is not one of the two layouts.
    TypeError
        If inputs is not an array of a supported library or has another dtype (bool, complex), pool_size or strides
        is not an int or a tuple of ints, or padding is not a string.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.keras import ops
    >>> ops.average_pool(np.array([[[1.0], [3.0], [2.0]]]), 2, strides=2, padding="same")[0, :, 0]
    array([2., 2.])
    """
    return frontend_call("keras.ops.average_pool", _average_pool, inputs,
                         dict(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format))


def _average_pool(inputs: Any, pool_size: Any, strides: Any, padding: Any, data_format: str) -> Any:
    f = "keras.ops.average_pool"
    xp = namespace(inputs, names=("inputs",), op=f)
    fmt, n, k, s, pad, shape = _pool_args(f, inputs, pool_size, strides, padding, data_format)
    name = _dtype(f, xp, inputs, FLOATS + INTS)
    out = name if name in FLOATS else jax_inexact(name)
    if math.prod(shape) == 0 or math.prod(inputs.shape) == 0:
        return _empty(xp, inputs, shape, out)
    x = inputs if out == name else xp.astype(inputs, dtype_of(xp, out))
    axes = _spatial_axes(fmt, n)
    if n == 3 and any(kk > int(x.shape[a]) for a, kk in zip(axes, k)):
        # poolspec's avg_pool3d keeps torch's rule that every extent is >= kernel_size; a box window's mean over
        # its input cells is separable (sum and count are products over the axes), so pool axis by axis
        return resample(x, axes, [_mean_plan(int(x.shape[a]), kk, ss, pad) for a, kk, ss in zip(axes, k, s)])
    return _AVG[n](x, k, s, pad, count_include_pad=False, layout=fmt)


def _mean_plan(length: int, k: int, s: int, pad: str) -> GatherPlan:
    """The mean over each window's input cells along one axis ('same': TensorFlow's padding, not counted)."""
    if pad == "same":
        return mean_table(length, k, s, same_pads(length, k, s)[0], same_output(length, s), at_offset=True)
    return mean_table(length, k, s, 0, valid_output(length, k, s), at_offset=True)


def _adaptive_args(function: str, x: Any, output_size: Any, data_format: Any) -> tuple[str, int, tuple[int, ...]]:
    fmt, n, out, _ = _adaptive_rule(function, tuple(int(d) for d in x.shape), output_size, data_format)
    return fmt, n, out


def _adaptive_rule(function: str, shape: tuple[Any, ...], output_size: Any,
                   data_format: Any) -> tuple[str, int, tuple[int, ...], tuple[Any, ...]]:
    fmt = keras_data_format(function, data_format)
    n = _rank_of(function, shape)
    out = _sizes(function, "output_size", output_size, n, "every entry must be >= 1 (Keras sizes its windows as "
                                                        "ceil(L / O))")
    axes = _spatial_axes(fmt, n)
    nonempty(function, "inputs", shape, axes, lambda a: f"spatial axis {a} is empty: an adaptive window needs a cell")
    result = list(shape)
    for axis, o in zip(axes, out):
        result[axis] = o
    return fmt, n, out, tuple(result)


def adaptive_average_pool(inputs: Array, output_size: Any, data_format: str | None = None) -> Array:
    """Adaptive average pooling to ``output_size``, as ``keras.ops.adaptive_average_pool`` (Keras 3.15, JAX backend).

    Output cell i of each spatial axis averages the input window [floor(i * L / O), ceil((i + 1) * L / O)) (torch's
    windows; they may overlap, and O > L is allowed). Integer inputs are averaged in float32 (float64 for
    int64/uint64).

    Parameters
    ----------
    inputs : array
        (batch, *spatial, channels) or (batch, channels, *spatial) with 1 to 3 non-empty spatial axes; any
        array-API array; float16, bfloat16, float32, float64 or an int8/16/32/64, uint8/16/32/64 dtype.
    output_size : int or tuple of int
        The output spatial size O: one int for every spatial axis or one per axis; every entry >= 1.
    data_format : str or None, default None
        "channels_last" or "channels_first" (any case); None: keras.config.image_data_format()
        (Keras' global setting, "channels_last" unless set or in keras.json).

    Returns
    -------
    array
        The pooled array in inputs' layout and namespace; inputs' dtype if floating, else float32 (float64 for 64-bit
        integers).

    Raises
    ------
    ValueError
        If inputs does not have 3 to 5 dimensions or has an empty spatial axis, output_size has an entry < 1 or a
        tuple has not one entry per spatial axis, or data_format is not one of the two layouts.
    TypeError
        If inputs is not an array of a supported library or has another dtype, or output_size is not an int or a
        tuple of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.keras import ops
    >>> ops.adaptive_average_pool(np.array([[[1.0], [2.0], [6.0]]]), 2)[0, :, 0]
    array([1.5, 4. ])
    """
    return frontend_call("keras.ops.adaptive_average_pool", _adaptive_average_pool, inputs,
                         dict(output_size=output_size, data_format=data_format))


def _adaptive_average_pool(inputs: Any, output_size: Any, data_format: str) -> Any:
    f = "keras.ops.adaptive_average_pool"
    xp = namespace(inputs, names=("inputs",), op=f)
    fmt, n, out = _adaptive_args(f, inputs, output_size, data_format)
    name = _dtype(f, xp, inputs, FLOATS + INTS)
    x = inputs if name in FLOATS else xp.astype(inputs, dtype_of(xp, jax_inexact(name)))
    return _ADAPTIVE_AVG[n](x, out, layout=fmt)


@lru_cache(maxsize=256)
def _adaptive_taps(length: int, out: int) -> np.ndarray:
    """(taps, out) input indices of torch's adaptive windows, each window's last cell repeated to the widest."""
    i = np.arange(out)
    start, end = (i * length) // out, -((-(i + 1) * length) // out)
    taps = int((end - start).max())
    index = np.minimum(start[None, :] + np.arange(taps)[:, None], end[None, :] - 1)
    index.setflags(write=False)
    return index


def _adaptive_max_int(xp: Any, x: Any, axes: tuple[int, ...], out: tuple[int, ...]) -> Any:
    """Integer adaptive max (no gradient): per axis, the maximum of gathered taps; exact for every integer width."""
    name = dtype_name(xp, x.dtype)
    if name in _WIDEN and is_torch_array(x):  # torch's CPU kernels neither compare nor gather uint16/uint32
        return xp.astype(_adaptive_max_int(xp, xp.astype(x, dtype_of(xp, _WIDEN[name])), axes, out), x.dtype)
    if name == "uint64" and is_torch_array(x):
        # nor uint64, which no signed dtype holds: its bits as int64 with the sign bit flipped keep its order
        import torch

        flipped = _adaptive_max_int(xp, x.view(torch.int64) ^ _SIGN, axes, out)
        return (flipped ^ _SIGN).view(torch.uint64)
    for axis, o in zip(axes, out):
        taps = _adaptive_taps(int(x.shape[axis]), o)
        idx = to_namespace(taps, xp, x, index_dtype(xp, x))
        y = take(xp, x, idx[0, :], axis)
        for t in range(1, taps.shape[0]):
            y = xp.maximum(y, take(xp, x, idx[t, :], axis))
        x = y
    return x


def adaptive_max_pool(inputs: Array, output_size: Any, data_format: str | None = None) -> Array:
    """Adaptive max pooling to ``output_size``, as ``keras.ops.adaptive_max_pool`` (Keras 3.15, JAX backend).

    Output cell i of each spatial axis is the maximum of the input window [floor(i * L / O), ceil((i + 1) * L / O))
    (torch's windows). The gradient goes to the first maximum of each window in row-major order (torch's rule).

    Parameters
    ----------
    inputs : array
        (batch, *spatial, channels) or (batch, channels, *spatial) with 1 to 3 non-empty spatial axes; any
        array-API array; float16, bfloat16, float32, float64 or an int8/16/32/64, uint8/16/32/64 dtype.
    output_size : int or tuple of int
        The output spatial size O: one int for every spatial axis or one per axis; every entry >= 1.
    data_format : str or None, default None
        "channels_last" or "channels_first" (any case); None: keras.config.image_data_format()
        (Keras' global setting, "channels_last" unless set or in keras.json).

    Returns
    -------
    array
        The pooled array in inputs' layout, namespace and dtype.

    Raises
    ------
    ValueError
        If inputs does not have 3 to 5 dimensions or has an empty spatial axis, output_size has an entry < 1 or a
        tuple has not one entry per spatial axis, or data_format is not one of the two layouts.
    TypeError
        If inputs is not an array of a supported library or has another dtype, or output_size is not an int or a
        tuple of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.keras import ops
    >>> ops.adaptive_max_pool(np.array([[[1.0], [2.0], [6.0]]]), 2)[0, :, 0]
    array([2., 6.])
    """
    return frontend_call("keras.ops.adaptive_max_pool", _adaptive_max_pool, inputs,
                         dict(output_size=output_size, data_format=data_format))


def _adaptive_max_pool(inputs: Any, output_size: Any, data_format: str) -> Any:
    f = "keras.ops.adaptive_max_pool"
    xp = namespace(inputs, names=("inputs",), op=f)
    fmt, n, out = _adaptive_args(f, inputs, output_size, data_format)
    name = _dtype(f, xp, inputs, FLOATS + INTS)
    if name in INTS:
        return _adaptive_max_int(xp, inputs, _spatial_axes(fmt, n), out)
    return _ADAPTIVE_MAX[n](inputs, out, layout=fmt)


# ------------------------------------------------------------------------------------------- symbolic (Keras)

def _pool_spec(function: str, allowed: tuple[str, ...], integer_out: bool) -> Any:
    def spec(shape: tuple[Any, ...], dtype: str, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Any = None) -> tuple[tuple[Any, ...], str]:
        name = _dtype_rule(function, dtype, allowed)
        out = _pool_rule(function, shape, pool_size, strides, padding, data_format)[-1]
        return out, name if name in FLOATS or integer_out else jax_inexact(name)
    return spec


def _adaptive_spec(function: str, integer_out: bool) -> Any:
    def spec(shape: tuple[Any, ...], dtype: str, output_size: Any,
             data_format: Any = None) -> tuple[tuple[Any, ...], str]:
        name = _dtype_rule(function, dtype, FLOATS + INTS)
        out = _adaptive_rule(function, shape, output_size, data_format)[-1]
        return out, name if name in FLOATS or integer_out else jax_inexact(name)
    return spec


for _name, _fn, _spec in (("keras.ops.max_pool", max_pool,
                           _pool_spec("keras.ops.max_pool", FLOATS + INTS[:-1], True)),
                          ("keras.ops.average_pool", average_pool,
                           _pool_spec("keras.ops.average_pool", FLOATS + INTS, False)),
                          ("keras.ops.adaptive_average_pool", adaptive_average_pool,
                           _adaptive_spec("keras.ops.adaptive_average_pool", False)),
                          ("keras.ops.adaptive_max_pool", adaptive_max_pool,
                           _adaptive_spec("keras.ops.adaptive_max_pool", True))):
    FUNCTIONS[_name], SPECS[_name] = _fn, _spec

from . import image  # noqa: E402  (keras.ops.image, reachable as an attribute)

__all__ = [*__all__, "image"]
# other names are keras.ops's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "keras.ops", __all__)
