"""``flax.linen``'s pooling functions on poolspec's kernels: ``max_pool``, ``avg_pool``, ``min_pool`` and
``pool`` with flax 0.12.8's names, signatures, layouts and padding rules, on any array-API array.

Inputs are laid out (batch..., window dims..., features) as flax's (any number of batch axes, or none); the
window axes are pooled by poolspec's ``max_pool{n}d`` / ``avg_pool{n}d`` with ``layout="channels_last"`` and
per-axis (low, high) padding, at most three axes per call (box windows are separable). Padding beyond the
window (a window wholly in the padding, which lax.reduce_window computes) is laid down first by concatenating
the reduction's identity; negative padding crops.

>>> import numpy as np
>>> from poolspec.frontends.flax import linen as nn
>>> nn.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), (2, 2), strides=(2, 2))[0, :, :, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._compat import dtype_name, namespace
from ..._types import Array
from ...spec._card import Argument, Gradient, Port
from ...spec.frontends import FrontendCard
from .._common import mirror
from ._pool import check_init, pool_windows, reduction


def pool(inputs: Array, init: Any, reduce_fn: Callable[..., Any], window_shape: Sequence[int],
         strides: Sequence[int] | None, padding: str | Sequence[tuple[int, int]]) -> Array:
    """Reduce each window with lax.max, lax.add or lax.min, as ``flax.linen.pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features): any number of batch axes (none: unbatched); any array-API
        array (float, int8/16/32/64, uint8 or bool for max/min; float or integer for add).
    init : scalar
        The reduction's identity: -inf (or the dtype's lowest value) for lax.max, 0 for lax.add, inf (or the
        dtype's highest value) for lax.min.
    reduce_fn : callable
        ``jax.lax.max``, ``jax.lax.add`` or ``jax.lax.min`` (recognized by identity, or by name for a jax function
        named max, add or min); also the strings "max", "add" and "min".
    window_shape : sequence of int
        The window per window axis, every entry >= 1; any length (more than three axes are pooled three at a
        time).
    strides : sequence of int or None
        The step per window axis (None or empty: 1), every entry >= 1.
    padding : str or sequence of (int, int)
        ``'SAME'`` (lax's: ceil(L / s) outputs, the odd cell at the end), ``'SAME_LOWER'``, ``'VALID'`` (any case),
        or one (low, high) pair per window axis: any size (windows wholly in the padding give the identity);
        negative crops.

    Returns
    -------
    array
        Shaped (batch..., out dims..., features), out = floor((L + low + high - k) / s) + 1 (0 if L + low + high
        < k); the inputs' dtype (an integer sum wraps at the dtype's width, as lax's).

    Raises
    ------
    ValueError
        If inputs has fewer than len(window_shape) + 1 dimensions, strides or padding has the wrong length, an
        entry of window_shape or strides is below 1, padding is an unknown string or has (low, high) pairs with
        more than one batch axis, or init is not the reduction's identity.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, reduce_fn is not lax.max,
        lax.add or lax.min, or window_shape, strides or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from jax import lax
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.pool(np.arange(6.0).reshape(1, 6, 1), 0.0, lax.add, (3,), (3,), "VALID")[0, :, 0]
    array([ 3., 12.])
    """
    function = "flax.linen.pool"
    namespace(inputs, op=function, names=("inputs",))
    kind = reduction(function, reduce_fn)
    check_init(function, kind, init, dtype_name(namespace(inputs), inputs.dtype))
    return pool_windows(function, inputs, kind, window_shape, strides, padding)


def avg_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID", count_include_pad: bool = True) -> Array:
    """Average each window, as ``flax.linen.avg_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float or integer dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size; negative
        crops).
    count_include_pad : bool, default True
        Divide by the window size (padding included) rather than the count of input cells in the window.

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`; a float dtype is kept, integers give float64
        (JAX's default float; float32 on JAX arrays without jax_enable_x64). A window holding no input cell gives
        0 with count_include_pad, NaN without (flax's 0 / 0).

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or is bool or complex, or window_shape, strides or
        padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.avg_pool(np.arange(4.0).reshape(1, 4, 1), (2,), padding="SAME", count_include_pad=False)[0, :, 0]
    array([0.5, 1.5, 2.5, 3. ])
    """
    return pool_windows("flax.linen.avg_pool", inputs, "avg", window_shape, strides, padding, count_include_pad)


def max_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Array:
    """The maximum of each window, as ``flax.linen.max_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float, int8/16/32/64, uint8 or bool dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size: a window
        wholly in the padding gives -inf, or the dtype's lowest value; negative crops).

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`, in the inputs' dtype.

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, or window_shape, strides
        or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.max_pool(np.array([[[1.0], [3.0], [2.0]]]), (2,), padding="SAME")[0, :, 0]
    array([3., 3., 2.])
    """
    return pool_windows("flax.linen.max_pool", inputs, "max", window_shape, strides, padding)


def min_pool(inputs: Array, window_shape: Sequence[int], strides: Sequence[int] | None = None,
             padding: str | Sequence[tuple[int, int]] = "VALID") -> Array:
    """The minimum of each window, as ``flax.linen.pooling.min_pool``.

    Parameters
    ----------
    inputs : array
        Shaped (batch..., window dims..., features) (any number of batch axes, none: unbatched); any array-API
        array of a float, int8/16/32/64, uint8 or bool dtype.
    window_shape : sequence of int
        The window per window axis, every entry >= 1.
    strides : sequence of int or None, default None
        The step per window axis (None: 1), every entry >= 1.
    padding : str or sequence of (int, int), default "VALID"
        ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one (low, high) pair per window axis (any size: a window
        wholly in the padding gives inf, or the dtype's highest value; negative crops).

    Returns
    -------
    array
        Shaped (batch..., out dims..., features) as :func:`pool`, in the inputs' dtype.

    Raises
    ------
    ValueError
        As :func:`pool`.
    TypeError
        If inputs is not an array of a supported library or its dtype has no kernel, or window_shape, strides
        or padding are not sequences of ints.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.flax import linen as nn
    >>> nn.min_pool(np.array([[[1.0], [3.0], [2.0]]]), (2,))[0, :, 0]
    array([1., 2.])
    """
    return pool_windows("flax.linen.pooling.min_pool", inputs, "min", window_shape, strides, padding)


_INPUTS = Argument("inputs", "array", description="(batch..., window dims..., features): any number of batch axes "
                   "(none: unbatched).")
_WINDOW = Argument("window_shape", "tuple[int, ...]", constraints=("entries >= 1",),
                   description="The window per window axis; any number of axes.")
_STRIDES = Argument("strides", "tuple[int, ...] | None", None, constraints=("len == len(window_shape)",
                    "entries >= 1"), description="The step per window axis (None or (): 1).")
_PADDING = Argument("padding", "str | tuple[tuple[int, int], ...]", "VALID", constraints=(
    "'SAME', 'SAME_LOWER', 'VALID' (any case) or one (low, high) pair per window axis",
    "pairs only with at most one batch axis"), description="Padding with the reduction's identity; any size "
    "(negative crops).")
_SHARED = (
    "Layout (batch..., window dims..., features): the number of batch axes is inputs.ndim - len(window_shape) - 1; "
    "none is unbatched (flax adds and removes a batch axis); several are allowed with string padding only (flax "
    "pads ((0, 0),) + pairs + ((0, 0),), one axis short, and lax.reduce_window raises).",
    "padding: lax.padtype_to_pads: 'SAME' pads max((ceil(L / s) - 1) * s + k - L, 0) with the odd cell at the "
    "end, 'SAME_LOWER' at the start, 'VALID' none, case-insensitive. (low, high) pairs are taken as they are: "
    "beyond k - 1 windows lie wholly in the padding (they give the identity: -inf / the dtype's lowest for max, "
    "0 for sums); a negative pad crops.",
    "Output size per window axis floor((L + low + high - k) / s) + 1, or 0 (an empty axis) where L + low + high "
    "< k.",
    "strides None or () means 1 per axis. flax raises TypeError for a list window_shape or strides (it "
    "concatenates tuples); the front-end takes any sequence of ints.",
)
_FLAX_GRADIENT = Gradient(None, torch=("grad", "vjp", "higher-order"), jax=("grad", "vjp", "jvp", "jit"),
                          notes="Gradients w.r.t. inputs through poolspec's max_pool / avg_pool bindings (gathers, "
                                "no scatter-add); padding laid down by concatenation differentiates as a slice. "
                                "Compared with jax.vjp of flax's function.", wrt=("inputs",))
_FLAX_CHECKED = ("conformance/frontend_checks/flax.py against flax 0.12.8 (jax 0.10.2, jax_enable_x64): random "
                 "1-4 window axes, 0-2 batch axes, windows up to one past the input, strides, SAME / SAME_LOWER / "
                 "VALID in any case, (low, high) pairs including negative and beyond-window pads, count_include_pad "
                 "both ways, float64/float32/float16 and integer/bool inputs; outputs on NumPy, JAX and torch and "
                 "gradients against jax.vjp on JAX and torch. conformance/results/frontends/flax.json has the "
                 "counts.")
_MAX_RULES = ("max: lax.reduce_window(max) with init -inf: integer inputs keep their dtype (windows in the padding "
              "give the dtype's lowest value), bool is an any(); the gradient goes to the first maximum of the "
              "window (jax's select_and_scatter_add).",
              "jax's max-pool VJP raises TypeError for negative padding (select_and_scatter_add's slice); "
              "poolspec's has the gradient. XLA aborts the process on a negative pad when every window size is 1 "
              "(its simplifier rewrites the reduce_window to an elementwise max of the wrong shape): not checked "
              "there; the front-end crops.")

CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(
        name="flax.linen.max_pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.max_pool",
        summary="Max pooling over the window axes of a (batch..., window dims..., features) array, flax's padding "
                "rules.",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's maximum."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic", notes=_SHARED + _MAX_RULES,
        refuses=("Dtypes without a poolspec max kernel (uint16/32/64, complex).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.avg_pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.avg_pool",
        summary="Average pooling over the window axes, padding counted or not (count_include_pad).",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING,
                   Argument("count_include_pad", "bool", True, description="Divide by the window size (True) or "
                            "by the count of input cells in the window (False).")),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's mean."),),
        core=("avg_pool1d", "avg_pool2d", "avg_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "count_include_pad=True: the window sum (lax.reduce_window add, init 0) divided by prod(window_shape); "
            "False: divided by the same pool of ones, the count of input cells, so a window wholly in the padding "
            "gives 0 / 0 = NaN (the front-end puts the NaN in by a select: no 1/0 reaches the gradient).",
            "Integer inputs: the window sum in the input's dtype divided by an int, JAX's true division: float64 "
            "under jax_enable_x64 (float32 without). The front-end sums in float64 (float32 on JAX without x64).",
            "More than three window axes: box windows are separable, so the front-end pools three axes at a time "
            "(the divisor is the product of per-axis counts, both ways)."),
        differences=(
            "count_include_pad=False returns JAX's default float dtype (float64 under jax_enable_x64) for "
            "float32/float16 inputs (the pool of jnp.ones() promotes the result): the front-end keeps the input's "
            "float dtype (the check compares flax's result cast back).",
            "Integer window sums wrap at the input's width in flax (int8/int16/uint8 overflow quickly): the "
            "front-end sums exactly (the check keeps the sums in range)."),
        refuses=("bool inputs (flax too: reduce_window_sum needs a number dtype).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.min_pool", version=1, library="flax 0.12.8 (jax 0.10.2)",
        mirrors="flax.linen.pooling.min_pool",
        summary="Min pooling over the window axes (flax.linen.pooling.min_pool; flax.linen does not export it).",
        arguments=(_INPUTS, _WINDOW, _STRIDES, _PADDING),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's minimum."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d"), layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "min: lax.reduce_window(min) with init inf (the dtype's highest value for integers; bool is an all()). "
            "The front-end pools max of the negation (floats) or of the bitwise complement (integers: exact, no "
            "overflow at the dtype's lowest value).",
            "flax 0.12.8 defines min_pool in flax.linen.pooling but does not export it from flax.linen; the front-end "
            "has it in linen (and the check calls flax.linen.pooling.min_pool).") + _MAX_RULES[1:],
        refuses=("Dtypes without a poolspec max kernel (uint16/32/64, complex).",),
        checked=_FLAX_CHECKED),
    FrontendCard(
        name="flax.linen.pool", version=1, library="flax 0.12.8 (jax 0.10.2)", mirrors="flax.linen.pool",
        summary="flax's generic window reduction, for reduce_fn lax.max, lax.add or lax.min with their identity "
                "init: max pooling, window sums, min pooling.",
        arguments=(_INPUTS, Argument("init", "scalar", constraints=("the identity of reduce_fn",),
                                     description="-inf (max), 0 (add), inf (min), or the dtype's extremes."),
                   Argument("reduce_fn", "callable",
                            constraints=("jax.lax.max, jax.lax.add or jax.lax.min (or the names 'max', 'add', 'min')",),
                            description="The reduction."),
                   _WINDOW, Argument("strides", "tuple[int, ...] | None", constraints=("entries >= 1",),
                                     description="The step per window axis (None or (): 1); required positionally "
                                                 "as flax's."),
                   Argument("padding", _PADDING.type, constraints=_PADDING.constraints,
                            description=_PADDING.description)),
        outputs=(Port("y", "array", "(batch..., out dims..., features)", "Each window's reduction."),),
        core=("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d"),
        layout="channels_last (batch..., window dims..., features)",
        gradient=_FLAX_GRADIENT, determinism="deterministic",
        notes=_SHARED + (
            "reduce_fn is recognized by identity (jax.lax.max / add / min) or by name (a jax function named max, "
            "add or min). lax.add is a window sum in the input's dtype (avg_pool with divisor_override=1; integers "
            "summed in int64 and wrapped back to their width, as lax's).",
            "With a non-identity init lax.reduce_window takes its generic path (for add the init is added once and "
            "the padding adds nothing; a Python float init then fails for float32 under x64): no fixed meaning, "
            "refused.") + _MAX_RULES,
        refuses=("reduce_fn other than lax.max / lax.add / lax.min (e.g. jnp.maximum, which flax takes for "
                 "float64 inputs): TypeError.", "An init that is not the reduction's identity: ValueError."),
        checked=_FLAX_CHECKED),
)

__all__ = ["max_pool", "avg_pool", "min_pool", "pool"]
# other names are flax.linen's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "flax.linen", __all__)
