"""The cards of :mod:`poolspec.frontends.keras.ops`' pools: Keras' rules as established against Keras 3.15 on
JAX, and where poolspec differs.

>>> [c.name for c in CARDS][:2]
['keras.ops.max_pool', 'keras.ops.average_pool']
"""

from __future__ import annotations

from ....spec._card import Argument, Port
from ....spec.frontends import FrontendCard, gradient
from .._keras import SYMBOLIC_NOTE

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
