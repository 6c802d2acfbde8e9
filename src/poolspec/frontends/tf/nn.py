"""``tf.nn``'s pools on poolspec's kernels: ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d`` and
``max_pool_with_argmax`` with TensorFlow 2.21's signatures, data formats, padding rules, output sizes and index
convention.

>>> import numpy as np
>>> from poolspec.frontends.tf import nn
>>> nn.avg_pool1d(np.array([[[1.0], [2.0], [4.0]]]), 2, 2, "SAME")[0, :, 0]
array([1.5, 4. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._compat import device, dtype_name, namespace
from ..._types import Array
from ...families.avg_pool.ops import avg_pool1d as _avg1
from ...families.avg_pool.ops import avg_pool2d as _avg2
from ...families.avg_pool.ops import avg_pool3d as _avg3
from ...families.max_pool.ops import max_pool1d as _max1
from ...families.max_pool.ops import max_pool2d as _max2
from ...families.max_pool.ops import max_pool3d as _max3
from ...spec._card import Argument, Port
from ...spec.frontends import FrontendCard, gradient
from .._checks import check
from .._common import FLOATS, at_least, choice, fail, flag, ints, mean_table, mirror, nonempty, resample
from .._geometry import same_output, same_total, spatial_axes, valid_output
from .._tensorflow import NOTE as TENSORFLOW_NOTE
from .._tensorflow import is_tensorflow, on_tensorflow

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
_MAX_DTYPES = {1: ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"),
               3: ("float16", "bfloat16", "float32")}
_MAX_DTYPES[2] = _MAX_DTYPES[1]
_AVG_DTYPES = FLOATS
_MAX = {1: _max1, 2: _max2, 3: _max3}
_NOT_INTS = "must be an int or a list of ints"
_AVG = {1: _avg1, 2: _avg2, 3: _avg3}


def _lengths(n: int) -> str:
    return f"1 or {n + 2}" if n == 1 else f"1, {n} or {n + 2}"


def _sequence(function: str, name: str, value: Any, n: int, channels_first: bool) -> tuple[tuple[int, ...], int]:
    """TF's ``_get_sequence``: an int or a list of 1, n or n + 2 ints (the n + 2 form in the data format's
    order, its batch and channel entries 1, as TF's CPU kernels require); every entry positive. Returns the
    spatial entries and, for the 1-d pools, the entry TF applies to the unit axis it inserts: their 3-entry
    list is prefixed by 1 and read as NHWC (NCHW), so its first entry (second for NCW) pools that axis."""
    listed = isinstance(value, (list, tuple))
    vals = list(ints(function, name, value if listed else (value,), _NOT_INTS, shown=value))
    unit = 1
    if len(vals) == 1:
        vals = vals * n
    elif len(vals) == n + 2:
        if n == 1:
            channel, unit, vals = (vals[0], vals[1], vals[2:]) if channels_first else (vals[2], vals[0], vals[1:2])
            if channel != 1:
                fail(function, name, value, "pooling over the channel axis is not supported (its entry must be 1)")
        else:
            vals = _spatial(function, name, value, vals, channels_first, 1, "pooling over the batch or channel axis "
                            f"is not supported (entries 0 and {1 if channels_first else n + 1} must be 1)")
    return tuple(vals), unit


def _spatial(function: str, name: str, value: Any, entries: list[Any], channels_first: bool, neutral: Any,
             rule: str) -> list[Any]:
    """The spatial entries of a per-axis list in data_format order (TF's n + 2 form), whose batch and channel
    entries must be ``neutral`` (TF's CPU kernels neither pool nor pad those axes)."""
    other = (0, 1) if channels_first else (0, len(entries) - 1)
    if any(entries[i] != neutral for i in other):
        fail(function, name, value, rule)
    return entries[2:] if channels_first else entries[1:-1]


def _padding(function: str, padding: Any, n: int, channels_first: bool, explicit: bool,
             k: tuple[int, ...]) -> Any:
    """"VALID" or "SAME" (TF's spelling, upper case), or for MaxPool a list of n + 2 (low, high) pairs in the
    data format's order with zero batch and channel pairs and each spatial entry below the window size."""
    if isinstance(padding, str) or not explicit:
        return choice(function, "padding", padding, ("VALID", "SAME"), "must be 'VALID' or 'SAME'"
                      + (" or a list of pairs" if explicit else ""),
                      not_str="must be the string 'VALID' or 'SAME'").lower()
    if not isinstance(padding, (list, tuple)):
        fail(function, "padding", padding, "must be the string 'VALID' or 'SAME' or a list of (low, high) pairs",
             TypeError)
    if len(padding) != n + 2 or any(not isinstance(p, (list, tuple)) or len(p) != 2 for p in padding):
        fail(function, "padding", padding, f"must be a list of {n + 2} (low, high) pairs")
    spatial = _spatial(function, "padding", padding, [ints(function, "padding", p, _NOT_INTS, shown=padding)
                                                      for p in padding], channels_first, (0, 0),
                       "the batch and channel pairs must be [0, 0]")
    at_least(function, "padding", padding, [v for p in spatial for v in p], 0, "every entry must be non-negative")
    if any(lo >= kk or hi >= kk for (lo, hi), kk in zip(spatial, k)):
        fail(function, "padding", padding, "each spatial entry must be smaller than the window size")
    return tuple(spatial)


def _out_size(function: str, L: int, k: int, s: int, pad: Any) -> int:
    """TF's GetWindowedOutputSize: SAME ceil(L / s); VALID and explicit (L + lo + hi - k + s) / s truncated
    toward zero, an error if negative (so a window longer than the input by less than s gives 0 outputs)."""
    if pad == "same":
        return same_output(L, s)
    lo, hi = (0, 0) if pad == "valid" else pad
    if L + lo + hi - k + s < 0 and -(L + lo + hi - k + s) >= s:
        fail(function, "ksize", k, f"the computed output size would be negative (input {L}, stride {s})")
    return valid_output(L + lo + hi, k, s)  # the truncation's 0 where the window overhangs by less than s


def _prepare(function: str, n: int, input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any,
             dtypes: tuple[str, ...], explicit: bool) -> tuple[Any, tuple[int, ...], tuple[int, ...], Any, bool,
                                                                 tuple[int, ...]]:
    xp = namespace(input, names=("input",), op=function)
    channels_first = choice(function, "data_format", data_format, _FORMATS[n], f"must be one of {_FORMATS[n]}") \
        .startswith("NC")
    if input.ndim != n + 2:
        fail(function, "input", tuple(input.shape), f"must be {n + 2}-d ({data_format})")
    choice(function, "input.dtype", dtype_name(xp, input.dtype), dtypes, f"must be one of {dtypes}", kind=TypeError)
    # the card's entry counts and bounds (the forms of ksize and strides; their types are _sequence's)
    check(_CARDS[function], {"ksize": ksize, "strides": strides}, function)
    k, unit = _sequence(function, "ksize", ksize, n, channels_first)
    s, _ = _sequence(function, "strides", strides, n, channels_first)
    pad = _padding(function, padding, n, channels_first, explicit, k)
    if unit != 1 and pad != "same":
        # TF's 1-d pools then leave no row on the axis they inserted, and squeezing it fails
        fail(function, "ksize", ksize, "the first entry pools TF's inserted unit axis: with VALID or explicit "
                                       "padding it must be 1")
    spatial = tuple(input.shape[a] for a in spatial_axes(n + 2, n, channels_first))
    per_axis = [pad] * n if isinstance(pad, str) else list(pad)
    out = tuple(_out_size(function, L, kk, ss, p) for L, kk, ss, p in zip(spatial, k, s, per_axis))
    return xp, k, s, pad, channels_first, out


def _empty(xp: Any, x: Any, out: tuple[int, ...], channels_first: bool) -> Any:
    """TF's result when a spatial output size is 0 (or the input has no cell): an empty array, as TF's."""
    n, c = x.shape[0], x.shape[1] if channels_first else x.shape[-1]
    shape = (n, c, *out) if channels_first else (n, *out, c)
    return xp.zeros(shape, dtype=x.dtype, device=device(x))


def _pool(kind: str, n: int, input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any) -> Any:
    function = f"{kind}_pool{n}d"
    if is_tensorflow(input):
        return on_tensorflow(f"tf.nn.{function}",
                             lambda a: _pool(kind, n, a, ksize, strides, padding, data_format), input)
    is_max = kind == "max"
    xp, k, s, pad, channels_first, out = _prepare(function, n, input, ksize, strides, padding, data_format,
                                                  _MAX_DTYPES[n] if is_max else _AVG_DTYPES, is_max and n < 3)
    if 0 in out or 0 in tuple(input.shape[1:]):
        return _empty(xp, input, out, channels_first)
    layout = "channels_first" if channels_first else "channels_last"
    first = spatial_axes(n + 2, n, channels_first)[0]
    x = input
    if n == 3 and pad == "same":
        x, pad = _same3d(xp, x, first, k, s)
    if is_max:
        return _MAX[n](x, k, s, pad, layout=layout)
    spatial = tuple(int(d) for d in x.shape[first:first + n])
    if n == 3 and any(kk > L for kk, L in zip(k, spatial)):
        # poolspec's avg_pool3d wants every extent >= the window; TF's clipped windows as per-axis tables
        pairs = [(0, 0)] * n if pad == "valid" else list(pad)
        plans = tuple(mean_table(L, kk, ss, lo, o) for L, kk, ss, (lo, _), o in zip(spatial, k, s, pairs, out))
        y = resample(x if dtype_name(xp, x.dtype) != "float16" else xp.astype(x, xp.float32),
                     tuple(range(first, first + n)), plans)
        return y if y.dtype == x.dtype else xp.astype(y, x.dtype)
    # TF's AvgPool divides by the cells inside the input: SAME's padding is never counted
    return _AVG[n](x, k, s, pad, count_include_pad=False, layout=layout)


def _same3d(xp: Any, x: Any, first: int, k: tuple[int, ...],
            s: tuple[int, ...]) -> tuple[Any, tuple[tuple[int, int], ...]]:
    """TF's 3-d SAME (Eigen's volume patches): total padding dz = (O - 1) s + k - L is not clamped at 0, so a
    window shorter than the stride starts at trunc(-dz / 2) inside the input; that axis is sliced there (TF's
    oneDNN kernels, which TF may take on x86 CPUs, start it at the edge instead: TF_ENABLE_ONEDNN_OPTS=0 gives
    the portable rule)."""
    pairs, index = [], [slice(None)] * x.ndim
    for i, (kk, ss) in enumerate(zip(k, s)):
        dz = same_total(int(x.shape[first + i]), kk, ss)
        if dz >= 0:
            pairs.append((dz // 2, dz - dz // 2))
        else:
            pairs.append((0, 0))
            index[first + i] = slice((-dz) // 2, None)
    if any(sl != slice(None) for sl in index):
        x = x[tuple(index)]
    return x, tuple(pairs)


_DOC = """{summary}

    {rule}

    Parameters
    ----------
    input : array
        {rank}-d input in ``data_format`` order, e.g. {shape}; any array-API array, dtype {dtypes}.
    ksize : int or list of int
        Window size: an int, or a list of {lengths} ints (the {n2}-entry form in ``data_format`` order: {outer});
        every entry > 0.
    strides : int or list of int
        Window step, in the same forms as ksize.
    padding : str{explicit_type}
        "VALID" (no padding; a window longer than the input gives an empty output) or "SAME" (ceil(L / s)
        outputs, the padding split with the odd cell at the end{same_rule}){explicit}.
    data_format : str, default "{fmt}"
        "{fmt}" (channels last) or "{cf}" (channels first; TF's CPU kernels refuse it, poolspec takes it).
    name : str or None, default None
        Accepted and ignored (TF's op name).

    Returns
    -------
    array
        The pooled array in ``data_format`` order, input's namespace, device and dtype.

    Raises
    ------
    ValueError
        If data_format is not one of the two above, input is not {rank}-d, a ksize or strides entry is not > 0
        (or a batch/channel entry is not 1), padding is not one of the forms above, or an output size would be
        negative.
    TypeError
        If input's dtype is not one of the above or ksize or strides is not an int or a list of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.tf import nn
    >>> {example}
    {result}
    """


def _doc(kind: str, n: int, example: str, result: str) -> str:
    fmt, cf = _FORMATS[n]
    shape = {1: "(N, W, C)", 2: "(N, H, W, C)", 3: "(N, D, H, W, C)"}[n]
    explicit = kind == "max" and n < 3
    rule = ("Each output is its window's maximum (padding never wins); NaN propagates (TF's MaxPool skips it)."
            if kind == "max" else
            "Each output is its window's mean over the cells inside the input (SAME's padding is not counted).")
    return _DOC.format(
        summary=f"{n}-d {'max' if kind == 'max' else 'average'} pooling, as ``tf.nn.{kind}_pool{n}d``.",
        rule=rule, rank=n + 2, shape=shape, n2=n + 2, fmt=fmt, cf=cf, lengths=_lengths(n),
        outer="the first entry pools the unit axis TF inserts, 1 unless padding is SAME, the channel entry 1"
        if n == 1 else "batch and channel entries 1",
        dtypes=", ".join(_MAX_DTYPES[n] if kind == "max" else _AVG_DTYPES),
        explicit_type=" or list of pairs" if explicit else "",
        same_rule=", padded cells never winning" if kind == "max" else ", padded cells not counted",
        explicit=(f"; or a list of {n + 2} [low, high] pairs in data_format order (batch and channel [0, 0], "
                  "each spatial entry < ksize), output (L + low + high - k) // s + 1") if explicit else "",
        example=example, result=result)


def max_pool1d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",
               name: str | None = None) -> Array:
    return _pool("max", 1, input, ksize, strides, padding, data_format)


def max_pool2d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",
               name: str | None = None) -> Array:
    return _pool("max", 2, input, ksize, strides, padding, data_format)


def max_pool3d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC",
               name: str | None = None) -> Array:
    return _pool("max", 3, input, ksize, strides, padding, data_format)


def avg_pool1d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",
               name: str | None = None) -> Array:
    return _pool("avg", 1, input, ksize, strides, padding, data_format)


def avg_pool2d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",
               name: str | None = None) -> Array:
    return _pool("avg", 2, input, ksize, strides, padding, data_format)


def avg_pool3d(input: Array, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC",
               name: str | None = None) -> Array:
    return _pool("avg", 3, input, ksize, strides, padding, data_format)


max_pool1d.__doc__ = _doc("max", 1, 'nn.max_pool1d(np.array([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID")[0, :, 0]',
                          "array([3., 3.])")
max_pool2d.__doc__ = _doc("max", 2, 'nn.max_pool2d(np.arange(9.0).reshape(1, 3, 3, 1), 2, 2, "SAME")[0, :, :, 0]',
                          "array([[4., 5.],\n           [7., 8.]])")
max_pool3d.__doc__ = _doc("max", 3,
                          'nn.max_pool3d(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2, 1), 2, 2, "VALID").ravel()',
                          "array([7.], dtype=float32)")
avg_pool1d.__doc__ = _doc("avg", 1, 'nn.avg_pool1d(np.array([[[1.0], [3.0], [2.0]]]), 2, 2, "SAME")[0, :, 0]',
                          "array([2., 2.])")
avg_pool2d.__doc__ = _doc("avg", 2, 'nn.avg_pool2d(np.arange(9.0).reshape(1, 3, 3, 1), 2, 2, "SAME")[0, :, :, 0]',
                          "array([[2. , 3.5],\n           [6.5, 8. ]])")
avg_pool3d.__doc__ = _doc("avg", 3, 'nn.avg_pool3d(np.arange(8.0).reshape(1, 2, 2, 2, 1), 2, 2, "VALID").ravel()',
                          "array([3.5])")


def _index_dtype(output_dtype: Any) -> str:
    name = output_dtype if isinstance(output_dtype, str) else getattr(output_dtype, "name", None)
    if not isinstance(name, str):
        try:
            name = np.dtype(output_dtype).name
        except TypeError:
            name = str(output_dtype)
    name = name.removeprefix("torch.")
    if name not in ("int32", "int64"):
        fail("max_pool_with_argmax", "output_dtype", output_dtype, "must be int32 or int64", TypeError)
    return name


def max_pool_with_argmax(input: Array, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",
                         output_dtype: Any = "int64", include_batch_in_index: bool = False,
                         name: str | None = None) -> tuple[Array, Array]:
    """2-d max pooling with TF's flat argmax, as ``tf.nn.max_pool_with_argmax``.

    The winner at ``[b, y, x, c]`` is reported as ``(y * W + x) * C + c``, plus ``b * H * W * C`` with
    include_batch_in_index; a window's first maximum wins (no ties in TF's order are reordered), padding never
    wins, NaN propagates (value and index).

    Parameters
    ----------
    input : array
        (N, H, W, C) input, N * H * W * C > 0; any array-API array of a float, int8/16/32/64 or uint8 dtype.
    ksize : int or list of int
        Window size: an int, or a list of 1, 2 or 4 ints (the 4-entry form NHWC, batch and channel entries 1).
    strides : int or list of int
        Window step, in the same forms.
    padding : str
        "VALID" or "SAME" (ceil(H / s) outputs, the odd padding cell at the end, padded cells never winning).
    data_format : str, default "NHWC"
        Only "NHWC", as TF.
    output_dtype : dtype or str, default "int64"
        The index dtype, int32 or int64 (``tf.int64``, ``np.int32``, "int32", ... are taken).
    include_batch_in_index : bool, default False
        Count the batch in the flat index.
    name : str or None, default None
        Accepted and ignored.

    Returns
    -------
    tuple of array
        (output, argmax), both (N, OH, OW, C): output in input's dtype, argmax in output_dtype.

    Raises
    ------
    ValueError
        If data_format is not "NHWC", input is not 4-d or is empty, ksize/strides/padding break the rules above
        or an output size would be negative.
    TypeError
        If input's dtype is not supported, padding is not a str, output_dtype is not int32/int64 or
        include_batch_in_index is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.tf import nn
    >>> out, arg = nn.max_pool_with_argmax(np.arange(9.0).reshape(1, 3, 3, 1), 2, 2, "SAME")
    >>> arg[0, :, :, 0]
    array([[4, 5],
           [7, 8]])
    """
    if is_tensorflow(input):
        return on_tensorflow("tf.nn.max_pool_with_argmax", lambda a: max_pool_with_argmax(
            a, ksize, strides, padding, data_format, output_dtype, include_batch_in_index), input)
    function = "max_pool_with_argmax"
    choice(function, "data_format", data_format, ("NHWC",), "only 'NHWC' is supported")
    flag(function, "include_batch_in_index", include_batch_in_index)
    index = _index_dtype(output_dtype)
    xp, k, s, pad, _, out = _prepare(function, 2, input, ksize, strides, padding, "NHWC", _MAX_DTYPES[2], False)
    nonempty(function, "input", tuple(input.shape), range(input.ndim), "must not be empty (TF's MaxPoolWithArgmax)")
    if 0 in out:
        empty = _empty(xp, input, out, False)
        return empty, xp.astype(empty, getattr(xp, index))
    values, idx = _max2(input, k, s, pad, return_indices=True, layout="channels_last")
    n, h, w, c = (int(d) for d in input.shape)
    dev = device(idx)
    flat = idx * c + xp.arange(c, dtype=idx.dtype, device=dev)
    if include_batch_in_index:
        flat = flat + xp.reshape(xp.arange(n, dtype=idx.dtype, device=dev), (n, 1, 1, 1)) * (h * w * c)
    return values, xp.astype(flat, getattr(xp, index))


# ------------------------------------------------------------------------------------------------- cards

_VERSION = "tensorflow 2.21"
_NAN = ("TF's MaxPool (and MaxPool3D) reduce with Eigen's max from the lowest finite value, which skips NaN: a "
        "window holding NaN gives the max of its other cells (and MaxPoolWithArgmax lets a NaN win only as the "
        "window's first tap); poolspec's max propagates NaN (upstream tensorflow/tensorflow#2501)")


_GRAD3D = ("TF's MaxPool3DGrad and AvgPool3DGrad do not follow their forward's 3-d SAME windows where the window is "
           "shorter than the stride (dz < 0): the forward reads cells shifted by trunc(-dz / 2), the gradient goes "
           "to the unshifted cells (AvgPool3DGrad) or nowhere (MaxPool3DGrad gives zeros); poolspec's gradient is "
           "the forward's (the checks compare gradients only where the windows are not shifted)")
_EMPTY_GRAD = ("where the output is empty (a VALID window longer than the input), TF's MaxPoolGrad returns "
               "uninitialised memory as the input gradient; poolspec returns zeros")


def _args(kind: str, n: int) -> tuple[Argument, ...]:
    fmt, cf = _FORMATS[n]
    explicit = kind == "max" and n < 3
    dtypes = _MAX_DTYPES[n] if kind == "max" else _AVG_DTYPES
    return (
        Argument("input", "array", description=f"{n + 2}-d input in data_format order ({', '.join(dtypes)})"),
        Argument("ksize", "int | list[int]", constraints=(f"{_lengths(n)} entries", "entries > 0",
                                                          "batch and channel entries 1"),
                 description="window size"),
        Argument("strides", "int | list[int]", constraints=(f"{_lengths(n)} entries", "entries > 0"),
                 description="window step"),
        Argument("padding", "str" + (" | list[list[int]]" if explicit else ""),
                 constraints=("'VALID' or 'SAME'",) + ((f"or {n + 2} [low, high] pairs, batch/channel [0, 0], "
                                                        "spatial entries < ksize",) if explicit else ()),
                 description="TF's padding"),
        Argument("data_format", "str", fmt, (f"'{fmt}' or '{cf}'",), "layout of input and output"),
        Argument("name", "str | None", None, (), "accepted and ignored"),
    )


def _card(kind: str, n: int) -> FrontendCard:
    fn = f"{kind}_pool{n}d"
    explicit = kind == "max" and n < 3
    fmt, cf = _FORMATS[n]
    notes = [
        f"ksize and strides as TF's _get_sequence: an int or a list of {_lengths(n)} ints; TF's CPU kernels "
        "refuse pooling over the batch axis" + (" and over channels" if kind == "avg" else
                                                  " (MaxPool's depthwise channel pooling is not mirrored)"),
        "SAME: ceil(L / s) outputs, total padding max((O - 1) s + k - L, 0), the odd cell at the end; VALID: "
        "(L - k + s) / s truncated toward zero (0 outputs where the window is longer than the input by less than "
        "the stride, an error below that)",
        "padding is case-sensitive: 'same' is refused as TF's attr check does",
        f"data_format '{cf}': TF's CPU kernels refuse it ('only supports {fmt} on device type CPU'); poolspec "
        "takes it (channels_first) and the checks do not generate it",
    ]
    if kind == "max":
        notes.append("padded cells never win (TF pads with the lowest value); gradient to the window's winner")
    else:
        notes.append("the divisor counts only the cells inside the input (SAME's padding is never counted), "
                     "poolspec's count_include_pad=False")
    if n == 1:
        notes.append("a 3-entry ksize/strides list is prefixed with 1 and read as NHWC (NCHW for NCW): its first "
                     "entry (second for NCW) pools the unit axis TF inserts: no effect with SAME, refused otherwise "
                     "(TF's squeeze of the emptied axis fails)")
    if n == 3:
        notes.append("3-d SAME (MaxPool3D/AvgPool3D, Eigen's volume patches): the total padding "
                     "dz = (O - 1) s + k - L is not clamped at 0, so where the window is shorter than the stride the "
                     "windows start trunc(-dz / 2) cells into the input (the 2-d pools start at 0); mirrored by "
                     "slicing that axis")
    if explicit:
        notes.append(f"explicit padding: a list of {n + 2} [low, high] pairs in data_format order (max_pool1d's "
                     "[[0, 0], [lo, hi], [0, 0]]), batch and channel pairs [0, 0], each spatial entry smaller than "
                     "the window; output (L + lo + hi - k) // s + 1")
    else:
        notes.append("padding must be a string: TF's op refuses a list (TypeError)")
    dtypes = _MAX_DTYPES[n] if kind == "max" else _AVG_DTYPES
    notes.append(f"dtypes: {', '.join(dtypes)}" + (" (TF's CPU has no float16 kernel for 3-d pools; float64 is "
                                                    "refused by MaxPool3D's attr and has no CPU AvgPool3D kernel)"
                                                    if n == 3 else ""))
    return FrontendCard(
        name=f"tf.nn.{fn}", version=1, library=_VERSION, mirrors=f"tf.nn.{fn}",
        summary=f"{n}-d {'max' if kind == 'max' else 'average'} pooling with TensorFlow's signature, "
                "data formats and SAME/VALID" + ("/explicit" if explicit else "") + " padding.",
        arguments=_args(kind, n),
        outputs=(Port("output", "array", "(N, *O, C) in data_format order", "pooled values, input's dtype"),),
        core=(f"{kind}_pool{n}d",) + (("frontends._common.resample (windows longer than the input)",)
                                      if kind == "avg" and n == 3 else ()),
        layout=f"{fmt} (channels_last); {cf} accepted",
        gradient=gradient("poolspec's deterministic gradient of the core op; TF's MaxPoolGrad/AvgPoolGrad agree "
                          "where windows hold no ties or NaN"),
        determinism="deterministic (gather-only forward and backward)",
        notes=(TENSORFLOW_NOTE, *notes),
        differences=((_NAN,) if kind == "max" else ()) + ((_GRAD3D,) if n == 3 else ()) + (_EMPTY_GRAD,),
        refuses=("pooling over the batch or channel axis (ksize or strides entries other than 1 there)",)
        + (("uint16 input (TypeError): poolspec's max_pool has no uint16 kernel (TF has)",)
           if kind == "max" and n < 3 else ()),
        checked="random configurations against tf.nn in conformance/frontend_checks/tensorflow.py "
                "(values on NumPy, torch and JAX; gradients against tf.GradientTape on torch and JAX); counts in "
                "conformance/results/frontends/tensorflow.json",
    )


_ARGMAX_CARD = FrontendCard(
    name="tf.nn.max_pool_with_argmax", version=1, library=_VERSION, mirrors="tf.nn.max_pool_with_argmax",
    summary="2-d max pooling returning TF's flat (y * W + x) * C + c argmax.",
    arguments=(
        Argument("input", "array", description="(N, H, W, C) non-empty input"),
        Argument("ksize", "int | list[int]", constraints=("1, 2 or 4 entries", "entries > 0")),
        Argument("strides", "int | list[int]", constraints=("1, 2 or 4 entries", "entries > 0")),
        Argument("padding", "str", constraints=("'VALID' or 'SAME'",)),
        Argument("data_format", "str", "NHWC", ("'NHWC' only",)),
        Argument("output_dtype", "dtype | str", "int64", ("int32 or int64",), "the argmax dtype"),
        Argument("include_batch_in_index", "bool", False, (), "add b * H * W * C to the index"),
        Argument("name", "str | None", None, (), "accepted and ignored"),
    ),
    outputs=(Port("output", "array", "(N, OH, OW, C)", "pooled values, input's dtype"),
             Port("argmax", "array", "(N, OH, OW, C)", "flat winner index, output_dtype")),
    core=("max_pool2d",), layout="NHWC (channels_last)",
    gradient=gradient("of output: poolspec's deterministic gradient (argmax is an integer output)"),
    determinism="deterministic",
    indices="((y * W + x) * C + c), plus b * H * W * C with include_batch_in_index; always inside the input",
    notes=(TENSORFLOW_NOTE,
           "data_format other than 'NHWC' is refused by tf.nn.max_pool_with_argmax itself (ValueError)",
           "padding: 'VALID' or 'SAME' only (a list is a TypeError)",
           "an empty input is refused ('tensor_in must not be empty', tensorflow/tensorflow#21338)",
           "the winner is the window's first maximum in row-major order; padding never wins",
           "output_dtype int32 or int64 (Targmax)"),
    differences=(_NAN,),
    refuses=("uint16 input (poolspec's max_pool has no uint16 kernel)",),
    checked="random configurations against tf.nn.max_pool_with_argmax (values, indices on NumPy, torch and JAX; "
            "gradients of the values against tf.GradientTape)",
)

CARDS: tuple[FrontendCard, ...] = tuple(_card(kind, n) for kind in ("max", "avg") for n in (1, 2, 3)) + (
    _ARGMAX_CARD,)
_CARDS = {c.name.removeprefix("tf.nn."): c for c in CARDS}  # by the name the messages give

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "max_pool_with_argmax"]
# other names are tensorflow.nn's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "tensorflow.nn", __all__)
