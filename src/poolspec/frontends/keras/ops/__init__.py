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
from ....spec._card import Argument, Port
from ....spec.frontends import FrontendCard, gradient
from ..._common import fail, mirror, resample, tap_table
from .._keras import SYMBOLIC_NOTE, frontend_call
from .._keras import data_format as keras_data_format
from .._registry import FUNCTIONS, SPECS

__all__ = ["max_pool", "average_pool", "adaptive_average_pool", "adaptive_max_pool"]

_MAX: dict[int, Callable[..., Any]] = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}
_AVG: dict[int, Callable[..., Any]] = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_ADAPTIVE_MAX: dict[int, Callable[..., Any]] = {1: adaptive_max_pool1d, 2: adaptive_max_pool2d,
                                                3: adaptive_max_pool3d}
_ADAPTIVE_AVG: dict[int, Callable[..., Any]] = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d,
                                                3: adaptive_avg_pool3d}

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# poolspec's max pool has no uint16/uint32: a wider signed int holds every value (max is a selection: exact)
_WIDEN = {"uint16": "int32", "uint32": "int64"}
_SIGN = -(2**63)


def _inexact(name: str) -> str:
    """The float dtype JAX (x64 enabled) divides an integer array in: float64 for 64-bit ints, else float32."""
    return "float64" if name in ("int64", "uint64") else "float32"


def _rank_of(function: str, shape: tuple[Any, ...]) -> int:
    n = len(shape) - 2
    if n not in (1, 2, 3):
        fail(function, "inputs", shape, "must have 3, 4 or 5 dimensions (batch, channels and 1 to 3 spatial axes)")
    return n


def _spatial_axes(fmt: str, n: int) -> tuple[int, ...]:
    return tuple(range(1, n + 1)) if fmt == "channels_last" else tuple(range(2, n + 2))


def _sizes(function: str, name: str, value: Any, n: int) -> tuple[int, ...]:
    """An int or a tuple/list of exactly n ints (Keras' windows take no broadcast of a 1-tuple), each >= 1."""
    def one(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fail(function, name, value, f"must be an int or a tuple of {n} ints", TypeError)
        return int(v)

    if isinstance(value, (tuple, list)):
        if len(value) != n:
            fail(function, name, value, f"must have {n} entries, one per spatial axis")
        vals = tuple(one(v) for v in value)
    else:
        vals = (one(value),) * n
    if min(vals) < 1:
        fail(function, name, value, "every entry must be >= 1")
    return vals


def _padding(function: str, padding: Any) -> str:
    if not isinstance(padding, str):
        fail(function, "padding", padding, "must be the string 'valid' or 'same'", TypeError)
    pad = padding.lower()
    if pad not in ("valid", "same"):
        fail(function, "padding", padding, "must be 'valid' or 'same' (any case)")
    return pad


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
        if length is None:
            continue
        if pad == "same":
            out[axis] = -(-length // ss)
        elif isinstance(length, (int, np.integer)):
            out[axis] = (length - kk) // ss + 1 if length >= kk else 0
        else:
            out[axis] = (length - kk) // ss + 1
    return fmt, n, k, s, pad, tuple(out)


def _dtype(function: str, xp: Any, x: Any, allowed: tuple[str, ...]) -> str:
    return _dtype_rule(function, dtype_name(xp, x.dtype), allowed)


def _dtype_rule(function: str, name: str, allowed: tuple[str, ...]) -> str:
    if name not in allowed:
        fail(function, "inputs.dtype", name, f"must be one of {', '.join(allowed)}", TypeError)
    return name


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
    name = _dtype(f, xp, inputs, _FLOATS + _INTS[:-1])
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
    name = _dtype(f, xp, inputs, _FLOATS + _INTS)
    out = name if name in _FLOATS else _inexact(name)
    if math.prod(shape) == 0 or math.prod(inputs.shape) == 0:
        return _empty(xp, inputs, shape, out)
    x = inputs if out == name else xp.astype(inputs, dtype_of(xp, out))
    axes = _spatial_axes(fmt, n)
    if n == 3 and any(kk > int(x.shape[a]) for a, kk in zip(axes, k)):
        # poolspec's avg_pool3d keeps torch's rule that every extent is >= kernel_size; a box window's mean over
        # its input cells is separable (sum and count are products over the axes), so pool axis by axis
        return resample(x, axes, [_mean_table(int(x.shape[a]), kk, ss, pad) for a, kk, ss in zip(axes, k, s)])
    return _AVG[n](x, k, s, pad, count_include_pad=False, layout=fmt)


@lru_cache(maxsize=256)
def _mean_table(length: int, k: int, s: int, pad: str) -> GatherPlan:
    """The mean over each window's input cells along one axis ('same': TensorFlow's padding, not counted)."""
    out = -(-length // s) if pad == "same" else (length - k) // s + 1
    low = max((out - 1) * s + k - length, 0) // 2 if pad == "same" else 0
    index = (np.arange(out) * s - low)[None, :] + np.arange(k)[:, None]
    inside = (index >= 0) & (index < length)
    weight = inside / inside.sum(axis=0, keepdims=True)
    return tap_table(np.where(inside, index, length), weight, length)


def _output_size(function: str, output_size: Any, n: int) -> tuple[int, ...]:
    def one(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fail(function, "output_size", output_size, f"must be an int or a tuple of {n} ints", TypeError)
        return int(v)

    if isinstance(output_size, (tuple, list)):
        if len(output_size) != n:
            fail(function, "output_size", output_size, f"must have {n} entries, one per spatial axis")
        vals = tuple(one(v) for v in output_size)
    else:
        vals = (one(output_size),) * n
    if min(vals) < 1:
        fail(function, "output_size", output_size, "every entry must be >= 1 (Keras sizes its windows as "
                                                   "ceil(L / O))")
    return vals


def _adaptive_args(function: str, x: Any, output_size: Any, data_format: Any) -> tuple[str, int, tuple[int, ...]]:
    fmt, n, out, _ = _adaptive_rule(function, tuple(int(d) for d in x.shape), output_size, data_format)
    return fmt, n, out


def _adaptive_rule(function: str, shape: tuple[Any, ...], output_size: Any,
                   data_format: Any) -> tuple[str, int, tuple[int, ...], tuple[Any, ...]]:
    fmt = keras_data_format(function, data_format)
    n = _rank_of(function, shape)
    out = _output_size(function, output_size, n)
    result = list(shape)
    for axis, o in zip(_spatial_axes(fmt, n), out):
        if isinstance(shape[axis], (int, np.integer)) and shape[axis] == 0:
            fail(function, "inputs", shape, f"spatial axis {axis} is empty: an adaptive window needs a cell")
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
    name = _dtype(f, xp, inputs, _FLOATS + _INTS)
    x = inputs if name in _FLOATS else xp.astype(inputs, dtype_of(xp, _inexact(name)))
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
    name = _dtype(f, xp, inputs, _FLOATS + _INTS)
    if name in _INTS:
        return _adaptive_max_int(xp, inputs, _spatial_axes(fmt, n), out)
    return _ADAPTIVE_MAX[n](inputs, out, layout=fmt)


# ----------------------------------------------------------------------------------------------------------- cards

_LIBRARY = "keras 3.15.1 (JAX backend, jax 0.10.2)"
_INPUTS = Argument("inputs", "array", description="(batch, *spatial, channels) or (batch, channels, *spatial), "
                                                  "1 to 3 spatial axes")
_FORMAT = Argument("data_format", "str | None", None, ("'channels_last' or 'channels_first', any case",),
                   "None: keras.config.image_data_format() where Keras is imported, else the value of Keras' "
                   "keras.json ($KERAS_HOME or ~/.keras), else 'channels_last'")
_POOL_ARGS = (
    _INPUTS,
    Argument("pool_size", "int | tuple[int, ...]", constraints=("entries >= 1", "a tuple has one entry per spatial "
                                                                               "axis"),
             description="the window size"),
    Argument("strides", "int | tuple[int, ...] | None", None, ("entries >= 1",), "the window step; None: pool_size"),
    Argument("padding", "str", "valid", ("'valid' or 'same', any case",),
             "'same': ceil(L / s) outputs, TensorFlow's padding (the odd cell at the end)"),
    _FORMAT,
)
_ADAPTIVE_ARGS = (
    _INPUTS,
    Argument("output_size", "int | tuple[int, ...]", constraints=("entries >= 1", "a tuple has one entry per "
                                                                                 "spatial axis"),
             description="the output spatial size"),
    _FORMAT,
)
_OUTPUT = Port("outputs", "array", "inputs' batch, channels and layout; the pooled spatial size", "the pooled array")
_LAYOUT = "data_format: channels_last (batch, *spatial, channels), Keras' default, or channels_first; read through a " \
          "permuted view (poolspec's layout='channels_last')"
_CHECKED = ("conformance/frontend_checks/keras.py against keras 3.15.1 on JAX 0.10.2 (x64 enabled): random "
            "configurations over rank 1-3, both data formats, int/tuple/list/None sizes, both paddings in mixed "
            "case, float32/float64/float16 and integer dtypes, empty batch or channel axes; values on NumPy, JAX and "
            "torch, gradients against jax.vjp of the keras op on JAX and torch; counts in "
            "conformance/results/frontends/keras.json")
_ADAPTIVE_SYMBOLIC = ("Keras 3.15.1 on a KerasTensor in channels_last returns a wrong shape ((None, 20, 5, 5, 8) "
                      "for (None, 20, 20, 8) pooled to (5, 5)) and refuses an int or list output_size (TypeError); "
                      "poolspec returns (None, 5, 5, 8) and takes both")
_NO_LISTS = ("Keras on JAX refuses a list pool_size or strides (TypeError: tuple + list in "
             "_convert_to_spatial_operand) and a NumPy-integer scalar (tuple + np.int64 broadcasts to an array); "
             "poolspec takes both as its documentation says.")
_STRIDES_NONE = ("Keras on JAX fails on its own default strides=None (TypeError: inconsistent window_strides): "
                 "it converts pool_size to the padded window shape and then converts that again as strides; "
                 "poolspec uses pool_size, as Keras documents and its other backends do.")
_INT_WRAP = ("Keras sums integer inputs in their own dtype, so a window sum past the dtype's range wraps (int8 "
             "[100, 100] averages to -28.0); poolspec converts to float first (100.0); the checks keep sums in range")
_POOL_REFUSES = ("inputs with 0 or 4+ spatial axes (Keras reduces any rank: 2-d input is returned unchanged; "
                 "poolspec's pools have 1 to 3 spatial axes)",
                 "a bool pool_size or strides entry (Keras takes True as 1)",
                 "a tuple pool_size of the wrong length is refused by both")
CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(
        name="keras.ops.max_pool", version=1, library=_LIBRARY, mirrors="keras.ops.max_pool",
        summary="Max pooling with Keras' 'valid'/'same' padding and data formats.",
        arguments=_POOL_ARGS, outputs=(_OUTPUT,), core=("max_pool1d", "max_pool2d", "max_pool3d"), layout=_LAYOUT,
        gradient=gradient("the gradient goes to the first maximum of each window in row-major "
                                              "order (Keras on JAX: the same for ties without NaN)"),
        determinism="bit-identical across runs; backward gathers (no scatter)",
        notes=(SYMBOLIC_NOTE,
               "lax.reduce_window max with -inf init (integers: the dtype's minimum) and 'SAME'/'VALID' padding: "
               "'valid' gives floor((L - k) / s) + 1 outputs, 0 where L < k (an empty array, not an error); 'same' "
               "ceil(L / s), padding max((O - 1) * s + k - L, 0) split low = total // 2",
               "integer inputs keep their dtype; uint16/uint32 are pooled as int32/int64 (exact) and cast back",
               "padding and data_format are lower-cased first, as Keras does"),
        differences=(_STRIDES_NONE, _NO_LISTS,
                     "JAX's max gradient (select_and_scatter_add, >=) in a window holding NaN goes to the largest "
                     "tap after the last NaN; poolspec's to the NaN (torch's rule)"),
        refuses=_POOL_REFUSES + ("uint64 and bool inputs (poolspec's max pool has no such dtype)",),
        checked=_CHECKED),
    FrontendCard(
        name="keras.ops.average_pool", version=1, library=_LIBRARY, mirrors="keras.ops.average_pool",
        summary="Average pooling with Keras' 'valid'/'same' padding (padding not counted) and data formats.",
        arguments=_POOL_ARGS, outputs=(_OUTPUT,), core=("avg_pool1d", "avg_pool2d", "avg_pool3d"), layout=_LAYOUT,
        gradient=gradient("linear: the transposed window sum"),
        determinism="bit-identical across runs; backward gathers (no scatter)",
        notes=(SYMBOLIC_NOTE,
               "'valid': window sum / prod(pool_size); 'same': window sum / the number of input cells in the window "
               "(a second reduce_window over ones), i.e. count_include_pad=False",
               "integer inputs are averaged in float32 (float64 for int64/uint64), the dtype JAX's division gives "
               "with x64 enabled",
               "float16/bfloat16: poolspec accumulates in float32 and rounds once; Keras' reduce_window in the "
               "input dtype (within float16 tolerance)"),
        differences=(_STRIDES_NONE, _NO_LISTS, _INT_WRAP),
        refuses=_POOL_REFUSES + ("bool inputs",),
        checked=_CHECKED),
    FrontendCard(
        name="keras.ops.adaptive_average_pool", version=1, library=_LIBRARY,
        mirrors="keras.ops.adaptive_average_pool",
        summary="Adaptive average pooling to a given output size over torch's floor/ceil windows.",
        arguments=_ADAPTIVE_ARGS, outputs=(_OUTPUT,),
        core=("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"), layout=_LAYOUT,
        gradient=gradient("linear: the transposed window average"),
        determinism="bit-identical across runs; backward gathers (no scatter)",
        notes=(SYMBOLIC_NOTE,
               "Keras' 'two-pool gather': per spatial axis (first to last) a stride-1 mean over windows of ceil(L / O) "
               "and ceil(L / O) + 1 cells, then a gather at start_i = floor(i * L / O), the big one where "
               "ceil((i + 1) * L / O) - start_i is the bigger size: exactly torch's windows [floor(i L / O), "
               "ceil((i + 1) L / O)), which always have one of those two sizes; O > L allowed",
               "Keras averages one axis after another (rounding between axes); poolspec averages each window once",
               "integer inputs are averaged in float32 (float64 for int64/uint64), as JAX's division with x64",
               "Keras computes the window starts in floating point (float32 without x64): for L * O beyond 2^24 "
               "they may differ from the exact integer rule poolspec uses"),
        differences=(_ADAPTIVE_SYMBOLIC,
                     "Keras takes a 1-d output_size tuple of any length and uses its first entry; poolspec "
                     "requires one entry per spatial axis",
                     "Keras raises ZeroDivisionError for an output size of 0; poolspec a ValueError",
                     _INT_WRAP + " (Keras: along the first spatial axis)"),
        refuses=("a 1-d output_size tuple with more than one entry (Keras uses the first)",
                 "bool inputs"),
        checked=_CHECKED),
    FrontendCard(
        name="keras.ops.adaptive_max_pool", version=1, library=_LIBRARY, mirrors="keras.ops.adaptive_max_pool",
        summary="Adaptive max pooling to a given output size over torch's floor/ceil windows.",
        arguments=_ADAPTIVE_ARGS, outputs=(_OUTPUT,),
        core=("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"), layout=_LAYOUT,
        gradient=gradient("the gradient goes to the first maximum of each window in row-major "
                                              "order (torch's rule)"),
        determinism="bit-identical across runs; backward gathers (no scatter)",
        notes=(SYMBOLIC_NOTE,
               "windows as adaptive_average_pool (torch's); Keras reduces one spatial axis after another with "
               "stride-1 reduce_window max (-inf init) and a gather",
               "integer inputs keep their dtype (Keras' reduce_window takes them); poolspec takes the maximum of "
               "gathered taps per axis for them (exact for every width; no gradient); on torch, whose CPU kernels "
               "neither compare nor gather uint16/32/64, uint16/uint32 are pooled as int32/int64 and uint64 as "
               "int64 bits with the sign bit flipped (order-preserving: exact)"),
        differences=(_ADAPTIVE_SYMBOLIC,
                     "Keras' per-axis reduction sends the gradient among tied maxima to the first in column-major "
                     "order (last axis outermost); poolspec to the first in row-major order (torch's)",
                     "in a window holding NaN Keras' gradient (JAX's select_and_scatter_add, >=) goes to the largest "
                     "tap after the last NaN; poolspec's to the NaN (torch's rule)",
                     "Keras takes a 1-d output_size tuple of any length and uses its first entry; poolspec "
                     "requires one entry per spatial axis",
                     "Keras raises ZeroDivisionError for an output size of 0; poolspec a ValueError"),
        refuses=("a 1-d output_size tuple with more than one entry (Keras uses the first)", "bool inputs"),
        checked=_CHECKED),
)


# ------------------------------------------------------------------------------------------- symbolic (Keras)

def _pool_spec(function: str, allowed: tuple[str, ...], integer_out: bool) -> Any:
    def spec(shape: tuple[Any, ...], dtype: str, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Any = None) -> tuple[tuple[Any, ...], str]:
        name = _dtype_rule(function, dtype, allowed)
        out = _pool_rule(function, shape, pool_size, strides, padding, data_format)[-1]
        return out, name if name in _FLOATS or integer_out else _inexact(name)
    return spec


def _adaptive_spec(function: str, integer_out: bool) -> Any:
    def spec(shape: tuple[Any, ...], dtype: str, output_size: Any,
             data_format: Any = None) -> tuple[tuple[Any, ...], str]:
        name = _dtype_rule(function, dtype, _FLOATS + _INTS)
        out = _adaptive_rule(function, shape, output_size, data_format)[-1]
        return out, name if name in _FLOATS or integer_out else _inexact(name)
    return spec


for _name, _fn, _spec in (("keras.ops.max_pool", max_pool,
                           _pool_spec("keras.ops.max_pool", _FLOATS + _INTS[:-1], True)),
                          ("keras.ops.average_pool", average_pool,
                           _pool_spec("keras.ops.average_pool", _FLOATS + _INTS, False)),
                          ("keras.ops.adaptive_average_pool", adaptive_average_pool,
                           _adaptive_spec("keras.ops.adaptive_average_pool", False)),
                          ("keras.ops.adaptive_max_pool", adaptive_max_pool,
                           _adaptive_spec("keras.ops.adaptive_max_pool", True))):
    FUNCTIONS[_name], SPECS[_name] = _fn, _spec

from . import image  # noqa: E402  (keras.ops.image, reachable as an attribute)

__all__ = [*__all__, "image"]
# other names are keras.ops's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "keras.ops", __all__)
