"""``jax.image`` on poolspec's kernels: ``resize`` and ``scale_and_translate`` with jax 0.10.2's names,
signatures, methods and numerics, on any array-API array.

Each resampled axis is one tap table built on the host in float64 (jax's own weight matrix, rule for rule, in
the dtype jax computes it in) and applied by :func:`poolspec.frontends._common.resample`: a gather whose
gradient is the transposed table (deterministic, no scatter-add) on torch and JAX.

>>> import numpy as np
>>> from poolspec.frontends.jax import image
>>> image.resize(np.array([0.0, 1.0, 2.0, 3.0]), (2,), "linear", antialias=False)
array([0.5, 2.5])
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..._compat import dtype_name, dtype_of, namespace, to_namespace
from ..._types import Array
from ...plans.windows import GatherPlan
from ...spec._card import Argument, Gradient, Port
from ...spec.frontends import FrontendCard
from .._checks import check
from .._common import (
    FLOATS,
    INTS,
    choice,
    dense_table,
    fail,
    ints,
    jax_inexact,
    mirror,
    nonempty,
    resample,
    tap_table,
)
from .._geometry import half_pixel


class ResizeMethod(enum.Enum):
    """Image resize method, as ``jax.image.ResizeMethod`` (the same members and values)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a string names (jax's spellings); a ValueError for any other."""
        name = _STRINGS.get(s)
        if name is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return ResizeMethod[name]


_STRINGS = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR", "trilinear": "LINEAR",
            "triangle": "LINEAR", "lanczos3": "LANCZOS3", "lanczos5": "LANCZOS5", "cubic": "CUBIC",
            "bicubic": "CUBIC", "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
            "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}

_EPS32 = float(np.finfo(np.float32).eps)


def _method(function: str, method: Any) -> str:
    # jax's own ResizeMethod members (or this module's) by name: the two enums are the same list
    if isinstance(method, enum.Enum) and method.name in ResizeMethod.__members__:
        return method.name
    return _STRINGS[choice(function, "method", method, tuple(_STRINGS), f'Unknown resize method "{method}"; known: '
                           + ", ".join(_STRINGS), not_str="must be a ResizeMethod or one of "
                           + ", ".join(repr(s) for s in _STRINGS))]


# ------------------------------------------------------------------------------------------- the kernels

def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(0, 1 - np.abs(x))


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = np.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return np.where(x >= 2.0, 0.0, out).astype(x.dtype)


def _opencv_cubic(x: np.ndarray) -> np.ndarray:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = np.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return np.where(x >= 2.0, 0.0, out).astype(x.dtype)


def _lanczos(radius: float) -> Callable[[np.ndarray], np.ndarray]:
    def kernel(x: np.ndarray) -> np.ndarray:
        y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius)
        out = np.where(x > 1e-3, y / np.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return np.where(x > radius, 0.0, out).astype(x.dtype)
    return kernel


_KERNELS: dict[str, tuple[int, Callable[[np.ndarray], np.ndarray] | None]] = {
    "LINEAR": (1, _triangle), "LANCZOS3": (3, _lanczos(3.0)), "LANCZOS5": (5, _lanczos(5.0)),
    "CUBIC": (2, _keys_cubic), "CUBIC_PYTORCH": (2, _opencv_cubic), "AREA": (1, None)}


@lru_cache(maxsize=1024)
def _table(m: int, n: int, scale: float, translation: float, method: str, antialias: bool,
           dtype: str) -> GatherPlan:
    """jax's (m, n) weight matrix of one axis as a tap table, computed in ``dtype`` (the dtype jax computes it
    in: that of scale and translation), with jax's expressions in jax's order. XLA (CPU) divides by a
    broadcast operand as a multiplication by its reciprocal: so do these (bit for bit in float32)."""
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):  # a zero scale: inf and NaN, which the where()s below turn into zeros
        s, t = dt.type(scale), dt.type(translation)
        inv = dt.type(1.0) / s
        kernel_scale = np.maximum(inv, dt.type(1.0)) if antialias else dt.type(1.0)
        sample_f = half_pixel(n, inv, dt) - t * inv - 0.5
        if method == "CUBIC_PYTORCH" and antialias:
            method = "CUBIC"
        radius, kernel = _KERNELS[method]
        # the opencv cubic without antialias reads the edge-replicated image: k taps beyond each end,
        # folded back onto the edge pixels
        edge = method == "CUBIC_PYTORCH"
        k = radius if edge else 0
        expanded = np.arange(-k, m + k, dtype=dt)
        if kernel is None:  # area: the overlap of the output pixel's footprint with each input pixel
            left = np.arange(n, dtype=dt) * inv - t * inv
            right = left + inv
            lo = np.arange(m, dtype=dt)
            weights = np.maximum(0.0, np.minimum(right[None, :], (lo + 1.0)[:, None])
                                 - np.maximum(left[None, :], lo[:, None])).astype(dt)
        else:
            x = np.abs(sample_f[None, :] - expanded[:, None])
            weights = kernel(x * (dt.type(1.0) / kernel_scale))
        if edge:
            folded = np.zeros((m, n), dtype=dt)
            np.add.at(folded, np.clip(expanded.astype(np.int32), 0, m - 1), weights)
            weights = folded
        total = np.sum(weights, axis=0, keepdims=True, dtype=dt)
        weights = np.where(np.abs(total) > 1000.0 * _EPS32,
                           weights * (dt.type(1.0) / np.where(total != 0, total, dt.type(1.0))), 0)
        if not edge:
            inside = (sample_f >= -0.5) & (sample_f <= dt.type(m - 0.5))
            weights = np.where(inside[None, :], weights, 0)
    return dense_table(np.asarray(weights, dtype=np.float64))


@lru_cache(maxsize=1024)
def _nearest_index(m: int, n: int) -> np.ndarray:
    # jax computes the source index (i + 0.5) * m / n in float32 (float64 gave wrong results, b/206898375) inside
    # its jit, where XLA turns the division into a product with the reciprocal and folds the constants:
    # (i + 0.5) * (m * (1 / n)) in float32, floored; its gather clamps
    if n == 0:
        index = np.zeros(0, dtype=np.int64)
    else:
        ratio = np.float32(m) * (np.float32(1.0) / np.float32(n))
        offsets = half_pixel(n, ratio)
        index = np.minimum(np.floor(offsets).astype(np.int64), m - 1)
    index.setflags(write=False)
    return index


@lru_cache(maxsize=1024)
def _nearest_table(m: int, n: int) -> GatherPlan:
    return tap_table(_nearest_index(m, n)[None, :], np.ones((1, n)), m)


# ------------------------------------------------------------------------------------------- arguments

def _shape(function: str, image: Any, shape: Any) -> tuple[int, ...]:
    """The output shape: concrete ints first (a TypeError), then the card's entries >= 0 (jax returns an empty
    axis for a negative one) and one per axis of image."""
    out = ints(function, "shape", shape, "must be a sequence of concrete ints")
    check(next(c for c in CARDS if c.name == function), {"image": image, "shape": out}, function)
    return out


def _inexact(function: str, image: Any) -> tuple[Any, str]:
    """image promoted as jax.numpy promotes to an inexact dtype (the integers of up to 32 bits and bool to
    float32, 64-bit integers to float64; a float is kept)."""
    xp = namespace(image, op=function, names=("image",))
    name = choice(function, "image", dtype_name(xp, image.dtype), FLOATS + ("bool",) + INTS, "dtype must be a real "
                  "float, an integer or bool (complex is not supported)", kind=TypeError)
    if name in FLOATS:
        return image, name
    target = jax_inexact(name, image)
    return xp.astype(image, dtype_of(xp, target)), target


def _concrete(function: str, name: str, value: Any, count: int) -> tuple[np.ndarray, bool]:
    """A scale or translation as host float values, and whether it is a strong (array) dtype. Traced values
    have no host values: the weights are built on the host, so they are refused."""
    if "jax" in sys.modules:
        import jax

        if isinstance(value, jax.core.Tracer):
            fail(function, name, value, "must be concrete values: the weights are built on the "
                 "host, so a traced value (inside jax.jit/grad/vmap) is not supported", TypeError)
    weak = isinstance(value, (list, tuple)) or isinstance(value, (int, float))
    try:
        host = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
    except Exception:
        fail(function, name, value, "must be concrete numbers (an array, list or tuple)", TypeError)
    if host.ndim != 1 or host.dtype.kind not in "biuf":
        fail(function, name, value, "must be a 1-d sequence of real numbers, one entry per spatial dim", TypeError)
    if host.shape[0] != count:
        fail(function, name, value, f"must have len(spatial_dims) = {count} entries")
    if host.dtype.kind == "f":
        return host, not weak
    wide = host.dtype.itemsize == 8
    return host.astype(np.float64 if wide or weak else np.float32), not weak


def _weights_dtype(scale: tuple[np.ndarray, bool], translation: tuple[np.ndarray, bool]) -> str:
    """jax's result_type of the two promoted arrays: a Python list defers to an array's dtype."""
    strong = [a.dtype for a, s in (scale, translation) if s]
    if not strong:
        return "float64"
    return str(np.result_type(*strong))


# ------------------------------------------------------------------------------------------- functions

def _apply(x: Any, dims: list[int], plans: list[GatherPlan]) -> Any:
    # an axis whose every sample falls outside the image (a shift or mirror off it) has a table whose every
    # tap reads the padding cell: zeros, with a zero gradient
    return resample(x, dims, plans)


def _nearest(function: str, image: Any, shape: tuple[int, ...]) -> Any:
    xp = namespace(image, op=function, names=("image",))
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    nonempty(function, "image", tuple(image.shape), dims, lambda d: f"axis {d} is empty and cannot be resized to "
                                                                    f"{shape[d]}")
    name = dtype_name(xp, image.dtype)
    if name in FLOATS:
        return resample(image, dims, [_nearest_table(image.shape[d], shape[d]) for d in dims])
    out = image  # integers and bool: a plain gather (no gradient to keep deterministic)
    for d in dims:
        index = to_namespace(_nearest_index(image.shape[d], shape[d]), xp, image, dtype=xp.int64)
        out = xp.take(out, index, axis=d)
    return out


def resize(image: Array, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = None) -> Array:
    """Image resize, as ``jax.image.resize``: every axis whose size changes is resampled.

    Parameters
    ----------
    image : array
        The image, any rank (batch and channel axes are axes like the others: keep their size in ``shape``); any
        array-API array of a float, integer or bool dtype.
    shape : sequence of int
        The output shape, one entry >= 0 per axis of ``image``.
    method : str or ResizeMethod
        ``"nearest"``; ``"linear"`` (``"bilinear"``, ``"trilinear"``, ``"triangle"``); ``"cubic"``
        (``"bicubic"``, ``"tricubic"``: Keys, a = -0.5); ``"cubic-pytorch"`` (``"bicubic-pytorch"``: a = -0.75 and
        edge replication without antialias); ``"lanczos3"``; ``"lanczos5"``; ``"area"``; or a ``ResizeMethod``
        member (this module's or jax's).
    antialias : bool, default True
        Widen the kernel by the downscale factor when downsampling (no effect when upsampling, nearest or area).
    precision : Any, default None
        Accepted and ignored: the tables are applied at full precision of the compute dtype (jax's default is
        ``lax.Precision.HIGHEST``).

    Returns
    -------
    array
        Shaped ``shape``. Nearest keeps image's dtype; the other methods return jax's inexact promotion: a float
        dtype is kept, bool and integers of up to 32 bits give float32, 64-bit integers float64.

    Raises
    ------
    ValueError
        If ``shape`` has the wrong length or a negative entry, ``method`` is an unknown string, or an empty axis is
        resized.
    TypeError
        If ``image`` is not an array of a supported library or is complex, ``shape`` is not a sequence of ints, or
        ``method`` is neither a string nor a ResizeMethod.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.jax import image
    >>> image.resize(np.array([[0.0, 4.0]]), (1, 4), "linear")
    array([[0., 1., 3., 4.]])
    """
    function = "jax.image.resize"
    namespace(image, op=function, names=("image",))
    out_shape = _shape(function, image, shape)
    name = _method(function, method)
    if name == "NEAREST":
        return _nearest(function, image, out_shape)
    x, _ = _inexact(function, image)
    dims = [d for d in range(x.ndim) if x.shape[d] != out_shape[d]]
    nonempty(function, "image", tuple(image.shape), dims, lambda d: f"axis {d} is empty and cannot be resized to "
                                                                    f"{out_shape[d]} (jax divides by zero)")
    sizes = [(int(x.shape[d]), out_shape[d]) for d in dims]
    return _apply(x, dims, [_table(m, n, 1.0 if n == 0 else n / m, 0.0, name, bool(antialias), "float64")
                            for m, n in sizes])


def scale_and_translate(image: Array, shape: Sequence[int], spatial_dims: Sequence[int], scale: Any,
                        translation: Any, method: str | ResizeMethod, antialias: bool = True,
                        precision: Any = None) -> Array:
    """Apply a scale and translation to an image, as ``jax.image.scale_and_translate``.

    Output pixel ``i`` of axis ``spatial_dims[k]`` samples the input at ``(i + 0.5 - translation[k]) / scale[k]
    - 0.5`` (half-pixel centres); a sample outside ``[-0.5, size - 0.5]`` gives zero.

    Parameters
    ----------
    image : array
        The image, any rank; any array-API array of a float, integer or bool dtype.
    shape : sequence of int
        The output shape, one entry per axis of ``image``; the axes not in ``spatial_dims`` keep their size.
    spatial_dims : sequence of int
        The K axes to resample (negative counts from the end), distinct.
    scale : array or sequence of float
        K concrete scale factors (host values: not traced).
    translation : array or sequence of float
        K concrete translations in output pixels (host values: not traced).
    method : str or ResizeMethod
        As for :func:`resize`, but not nearest.
    antialias : bool, default True
        Widen the kernel by 1 / scale where scale < 1.
    precision : Any, default None
        Accepted and ignored (jax's default is ``lax.Precision.HIGHEST``).

    Returns
    -------
    array
        Shaped ``shape``, in jax's inexact promotion of image's dtype (see :func:`resize`).

    Raises
    ------
    ValueError
        If ``shape`` has the wrong length or a negative entry or changes an axis not in ``spatial_dims``, an axis
        of ``spatial_dims`` is out of range or repeated, ``scale`` or ``translation`` does not have K entries, or
        ``method`` is nearest or an unknown string.
    TypeError
        If ``image`` is not an array of a supported library or is complex, ``scale`` or ``translation`` is traced
        or not a 1-d sequence of real numbers, or ``method`` is neither a string nor a ResizeMethod.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.jax import image
    >>> image.scale_and_translate(np.array([1.0, 2.0, 3.0]), (3,), (0,), np.array([1.0]), np.array([1.0]),
    ...                           "linear")
    array([0., 1., 2.])
    """
    function = "jax.image.scale_and_translate"
    namespace(image, op=function, names=("image",))
    out_shape = _shape(function, image, shape)
    name = _method(function, method)
    if name == "NEAREST":
        fail(function, "method", method, "Nearest neighbor resampling is not currently supported for "
             "scale_and_translate (as jax)")
    try:
        dims = [int(d) for d in spatial_dims]
    except TypeError:
        fail(function, "spatial_dims", spatial_dims, "must be a sequence of ints", TypeError)
    for d in dims:
        if not -image.ndim <= d < image.ndim:
            fail(function, "spatial_dims", spatial_dims, f"axis {d} is out of bounds for {image.ndim} dimensions")
    dims = [d % image.ndim for d in dims]
    if len(set(dims)) != len(dims):
        fail(function, "spatial_dims", spatial_dims, "must name distinct axes")
    for d in range(image.ndim):
        if d not in dims and out_shape[d] != image.shape[d]:
            fail(function, "shape", shape, f"axis {d} is not in spatial_dims, so its size must stay "
                 f"{image.shape[d]} (jax keeps the input's size there)")
    s = _concrete(function, "scale", scale, len(dims))
    t = _concrete(function, "translation", translation, len(dims))
    dtype = _weights_dtype(s, t)
    x, _ = _inexact(function, image)
    plans = [_table(int(x.shape[d]), out_shape[d], float(s[0][i]), float(t[0][i]), name, bool(antialias), dtype)
             for i, d in enumerate(dims)]
    return _apply(x, dims, plans)


_IMAGE = Argument("image", "array", description="The image, any rank, float/integer/bool dtype; every axis "
                  "may be resampled (batch and channel axes too).")
_SHAPE = Argument("shape", "tuple[int, ...]", constraints=("len(shape) == image.ndim", "entries >= 0"),
                  description="The output shape.")
_METHOD = Argument("method", "str | ResizeMethod", constraints=(
    "nearest, linear/bilinear/trilinear/triangle, cubic/bicubic/tricubic, cubic-pytorch/bicubic-pytorch, "
    "lanczos3, lanczos5, area, or a ResizeMethod member",), description="The resampling kernel.")
_ANTIALIAS = Argument("antialias", "bool", True, description="Widen the kernel by the downscale factor when "
                      "downsampling.")
_PRECISION = Argument("precision", "Any", None, description="Accepted and ignored (jax: lax.Precision.HIGHEST, "
                      "the einsum's precision); the tables are applied at the compute dtype's full precision.")

_RULES = (
    "Weights per resampled axis (jax's compute_weight_mat): inv = 1 / scale; sample_f = (i + 0.5) * inv - "
    "translation * inv - 0.5; kernel evaluated at |sample_f - j| / kernel_scale with kernel_scale = max(inv, 1) "
    "if antialias else 1; each output's weights divided by their sum where |sum| > 1000 * float32 eps, else 0; "
    "outputs whose sample_f lies outside [-0.5, size - 0.5] are zero.",
    "Kernels: linear max(0, 1 - |x|) (radius 1); cubic Keys a = -0.5 (radius 2); lanczos3/lanczos5 "
    "r sin(pi x) sin(pi x / r) / (pi x)^2 (1 for x <= 1e-3, 0 beyond r); area: the overlap of the output pixel's "
    "footprint [i / scale - t / scale, (i + 1) / scale - t / scale] with each input pixel, then normalized.",
    "cubic-pytorch: with antialias it is cubic; without, the a = -0.75 kernel on the edge-replicated image (taps up "
    "to 2 beyond each end folded onto the edge pixels), normalized, and no zeroing of outside samples.",
    "XLA divides by a broadcast operand (kernel_scale, the per-output weight sums) as a product with its "
    "reciprocal; the front-end does the same, so float32 tables match jax's bit for bit.",
    "The weights are computed in result_type(scale, translation): float64 for resize under jax_enable_x64 (float32 "
    "without); for scale_and_translate the dtype of the scale/translation arrays. The front-end computes them on "
    "the host with the same expressions in that dtype, then applies them in the image's compute dtype (jax rounds "
    "them to the image's dtype; for float16/bfloat16 images poolspec computes in float32 and rounds once).",
)
_DTYPES = ("Output dtype: jax's promote_dtypes_inexact of the image: floats kept; bool and integers of up to 32 bits "
           "give float32; 64-bit integers float64 (float32 on JAX arrays without jax_enable_x64).")
_GRADIENT = Gradient(None, torch=("grad", "vjp", "jvp", "higher-order"), jax=("grad", "vjp", "jvp", "vmap", "jit"),
                     notes="Gradients w.r.t. image: the transposed tap tables (a gather, no scatter-add), "
                           "compared with jax.vjp. None w.r.t. scale or translation (host values).", wrt=("image",))
_CHECKED = ("conformance/frontend_checks/jax.py against jax 0.10.2 (jax_enable_x64): random ranks 1-4, random axes "
            "resized (batch/channel included), every method and spelling (ResizeMethod members too), antialias both "
            "ways, up- and downsampling, float32/float64/float16 and integer/bool images; outputs on NumPy, torch, "
            "JAX, array-api-strict and Dask and gradients against jax.vjp on torch and JAX. "
            "conformance/results/frontends/jax.json has the counts.")

CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(
        name="jax.image.resize", version=1, library="jax 0.10.2", mirrors="jax.image.resize",
        summary="Resize an image of any rank to a new shape with jax's kernels (nearest, linear, cubic, "
                "cubic-pytorch, lanczos3/5, area), antialiased when downsampling.",
        arguments=(_IMAGE, _SHAPE, _METHOD, _ANTIALIAS, _PRECISION),
        outputs=(Port("y", "array", "shape", "The resized image."),),
        core=("frontends._common.resample",), layout="any: every axis whose size changes is resampled",
        gradient=_GRADIENT, determinism="deterministic: a fixed-order gather per axis, forward and backward",
        notes=("Only the axes whose size changes are resampled (scale = new / old, translation 0); the others are "
               "untouched (every kernel interpolates).",) + _RULES + (
            "nearest: source index floor((i + 0.5) * m / n) computed in float32 (jax's rule: float64 gave wrong "
            "results on CPU/GPU, b/206898375) inside resize's jit, where XLA (CPU) evaluates it as "
            "(i + 0.5) * (m * (1 / n)) in float32 (a division by a constant becomes a product with its reciprocal "
            "and the constants fold): that expression, bit for bit, picks the index (the true quotient differs "
            "in 40 of 2301 (m, n) pairs up to 39 x 59); clamped to m - 1 as jax's gather; keeps the image's dtype "
            "(integers and bool included); antialias and precision ignored.", _DTYPES,
            "A new size of 0 gives an empty axis; resizing an empty axis raises (jax: ZeroDivisionError for the "
            "kernels, a gather error for nearest)."),
        refuses=("A negative entry of shape (jax returns an empty axis).", "Complex images."),
        checked=_CHECKED),
    FrontendCard(
        name="jax.image.scale_and_translate", version=1, library="jax 0.10.2",
        mirrors="jax.image.scale_and_translate",
        summary="Resample the chosen axes of an image under the map x -> x * scale + translation with jax's "
                "kernels (not nearest), antialiased where scale < 1; samples outside the image give zero.",
        arguments=(_IMAGE, _SHAPE,
                   Argument("spatial_dims", "tuple[int, ...]", constraints=("distinct axes of image",),
                            description="The K axes to resample."),
                   Argument("scale", "array[K] (host values)", constraints=("concrete, not traced",),
                            description="Per-axis scale."),
                   Argument("translation", "array[K] (host values)", constraints=("concrete, not traced",),
                            description="Per-axis translation in output pixels."),
                   Argument("method", "str | ResizeMethod", constraints=("not nearest (jax raises)",),
                            description="The resampling kernel, as resize."),
                   _ANTIALIAS, _PRECISION),
        outputs=(Port("y", "array", "shape", "The resampled image."),),
        core=("frontends._common.resample",), layout="any: the spatial_dims axes are resampled",
        gradient=_GRADIENT, determinism="deterministic: a fixed-order gather per axis, forward and backward",
        notes=_RULES + (
            "Every axis of spatial_dims is resampled, even with scale 1 and translation 0 (the table is then the "
            "identity). method is required (no default), as jax's signature.",
            "scale and translation must be arrays in jax (a list or tuple raises 'Cannot determine dtype'); the "
            "front-end also takes lists (as float64). A zero scale gives zeros (jax's NaN weights fail the "
            "normalization test); a negative scale mirrors the image.", _DTYPES),
        refuses=("Traced scale or translation (inside jax.jit/grad/vmap): the weights are built on the host; jax "
                 "builds them in the graph. A TypeError says so.",
                 "A shape that changes an axis not in spatial_dims (jax silently returns the input's size there), "
                 "repeated spatial_dims (jax contracts the axis twice) and a negative shape entry.",
                 "Complex images."),
        checked=_CHECKED),
)

__all__ = ["resize", "scale_and_translate", "ResizeMethod"]
# other names are jax.image's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "jax.image", __all__)
