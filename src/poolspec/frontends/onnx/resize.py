"""ONNX Resize (opset 19 to 22): nearest, linear and cubic resampling of any axes on per-axis tap tables built on
the host from ONNX's coordinate and coefficient rules.

>>> import numpy as np
>>> Resize(np.array([[1.0, 3.0]]), sizes=np.array([1, 3]), mode="linear")
array([[1., 2., 3.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..._compat import to_namespace
from ..._types import Array
from .._checks import entries
from .._common import fail, resample, tap_table
from ._args import checked, floating, host, shape_of, text


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


@lru_cache(maxsize=512)
def _resize_axis(L: int, O: int, scale: float, mode: str, ctm: str, nearest: str, a: float, exclude: bool,
                 antialias: bool, roi: tuple[float, float]) -> tuple[Any, np.ndarray | None]:
    """One axis's tap table and (tf_crop_and_resize) the mask of extrapolated outputs, by ONNX's rules."""
    i = np.arange(O, dtype=np.float64)
    width = scale * L  # ONNX's output_width: the unrounded L * scale
    if ctm == "align_corners":
        x = np.zeros(O) if width == 1 else i * (L - 1) / (width - 1)
    elif ctm == "asymmetric":
        x = i / scale
    elif ctm == "tf_crop_and_resize":
        x = (np.full(O, (roi[1] - roi[0]) * (L - 1) / 2) if width == 1
             else i * (roi[1] - roi[0]) * (L - 1) / (width - 1))
        x = x + roi[0] * (L - 1)
    elif ctm == "pytorch_half_pixel":
        x = np.zeros(O) if O == 1 else (i + 0.5) / scale - 0.5  # the spec's 0 (the reference: -0.5)
    elif ctm == "half_pixel":
        x = (i + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        x = L / 2 * (1 - O / width) + (i + 0.5) / scale - 0.5
    mask = ((x < 0) | (x > L - 1)) if ctm == "tf_crop_and_resize" else None
    # the taps start left of x: at an integer x the window is shifted one cell left and the fraction is 1
    base = np.floor(x)
    integral = base == x
    base = np.where(integral, x - 1, base)
    r = x - base  # in (0, 1]
    if mode == "nearest":
        taps = np.arange(2)[:, None]
        if nearest == "round_prefer_floor":
            right = r > 0.5
        elif nearest == "round_prefer_ceil":
            right = r >= 0.5
        elif nearest == "floor":
            right = np.zeros(O, bool)
        else:
            right = np.ones(O, bool)
        right = right | integral
        w = np.stack([~right, right]).astype(np.float64)
    else:
        sc = min(scale, 1.0) if antialias else 1.0
        support = 1.0 if mode == "linear" else 2.0
        start = math.floor(-support / sc) + 1  # the filter's taps left of base (1 - count / 2 of them)
        count = 2 - 2 * start
        taps = np.arange(start, start + count)[:, None]
        t = (taps - r[None, :]) * sc
        w = np.clip(1 - np.abs(t), 0, 1) if mode == "linear" else _cubic(t, a)
        if antialias:
            w = w / w.sum(axis=0, keepdims=True)
    index = base[None, :].astype(np.int64) + taps
    if mode != "nearest" and exclude:
        w = np.where((index < 0) | (index >= L), 0.0, w)
        total = w.sum(axis=0, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    index = np.clip(index, 0, L - 1)  # edge padding: a tap outside reads the border cell
    # merge taps that read the same cell (the clamped ones) so that each table column has distinct indices
    dense = np.zeros((L, O))
    np.add.at(dense, (index, np.broadcast_to(np.arange(O), index.shape)), w)
    taps_n = index.shape[0]
    lo = index.min(axis=0)
    idx = lo[None, :] + np.arange(taps_n)[:, None]
    inside = idx < L
    ww = np.where(inside, dense[np.minimum(idx, L - 1), np.arange(O)[None, :]], 0.0)
    return tap_table(np.where(inside, idx, L), ww, L), mask


def Resize(X: Array, roi: Any = None, scales: Any = None, sizes: Any = None, *, antialias: int = 0,
           axes: Sequence[int] | None = None, coordinate_transformation_mode: str = "half_pixel",
           cubic_coeff_a: float = -0.75, exclude_outside: int = 0, extrapolation_value: float = 0.0,
           keep_aspect_ratio_policy: str = "stretch", mode: str = "nearest",
           nearest_mode: str = "round_prefer_floor") -> Array:
    """ONNX Resize: nearest, linear or cubic resampling of any axes, as ``onnx`` opset 19 to 22.

    Parameters
    ----------
    X : array
        Any rank >= 1, non-empty axes; float16, bfloat16, float32 or float64.
    roi : array, sequence of float or None, default None
        Starts then ends (2 per resized axis), read on the host: the crop of ``tf_crop_and_resize`` in normalised
        coordinates (ignored by the other modes; None: [0, 1] per axis).
    scales : array, sequence of float or None, default None
        One scale per resized axis (float32 in ONNX): output extent floor(L * scale). Exactly one of scales and
        sizes.
    sizes : array, sequence of int or None, default None
        One output extent per resized axis (int64); the scale is sizes / L.
    antialias : int, default 0
        1: linear and cubic widen their filter by 1 / scale when downsampling (weights normalised).
    axes : list of int or None, default None
        The axes scales / sizes / roi refer to (negative counts from the end; None: every axis).
    coordinate_transformation_mode : str, default "half_pixel"
        half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric or tf_crop_and_resize.
    cubic_coeff_a : float, default -0.75
        The cubic kernel's a.
    exclude_outside : int, default 0
        1: taps outside the input get weight 0 and the rest are renormalised (else they read the border cell).
    extrapolation_value : float, default 0.0
        The value of outputs that tf_crop_and_resize maps outside [0, L - 1].
    keep_aspect_ratio_policy : str, default "stretch"
        With sizes: stretch, not_larger (the smallest of the axes' scales for all of them) or not_smaller (the
        largest); the extents are then round(scale * L), halves up.
    mode : str, default "nearest"
        nearest, linear or cubic.
    nearest_mode : str, default "round_prefer_floor"
        round_prefer_floor, round_prefer_ceil, floor or ceil (mode nearest).

    Returns
    -------
    array
        X resized, X's namespace and dtype.

    Raises
    ------
    ValueError
        If both or neither of scales and sizes are given, their length is not the number of axes, a scale is not
        positive, an extent is < 1, axes repeat or are out of range, an attribute is unknown, or antialias comes
        with nearest.
    TypeError
        If X is not floating or an argument has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> Resize(np.array([[1.0, 3.0]]), scales=np.array([1, 2], np.float32), mode="linear")
    array([[1. , 1.5, 2.5, 3. ]])
    """
    fn = "Resize"
    xp = floating(fn, X)
    shape_of(fn, X, X.ndim >= 1 and all(int(e) > 0 for e in X.shape), "must have rank >= 1 and no empty axis")
    checked(fn, locals())
    mode_, ctm = text(mode), text(coordinate_transformation_mode)
    if antialias and mode_ == "nearest":
        fail(fn, "antialias", antialias, "applies to the linear and cubic modes only")
    ax = _axes(fn, axes, X.ndim)
    L, out, sc = _extents(fn, X, ax, scales, sizes, text(keep_aspect_ratio_policy))
    rois = [(0.0, 1.0)] * len(ax)
    if ctm == "tf_crop_and_resize":
        rv = host(fn, "roi", roi, "f", 2 * len(ax), " (starts, then ends)",
                  " with coordinate_transformation_mode='tf_crop_and_resize'")
        rois = [(rv[i], rv[len(ax) + i]) for i in range(len(ax))]
    found = [_axis_plan(Li, Oi, si, ri, mode_, ctm, text(nearest_mode), float(cubic_coeff_a), bool(exclude_outside),
                        bool(antialias)) for Li, Oi, si, ri in zip(L, out, sc, rois)]
    return _extrapolate(xp, resample(X, ax, [f[0] for f in found]), ax, [f[1] for f in found], extrapolation_value)


def _axis_plan(L: int, O: int, scale: float, roi: tuple[float, float], mode: str, ctm: str, nearest: str, a: float,
               exclude: bool, antialias: bool) -> tuple[Any, np.ndarray | None]:
    """One axis's tap table and extrapolation mask; (None, None) for the identity (ONNX skips the axis)."""
    if math.isclose(scale, 1.0) and O == L and math.isclose(roi[0], 0.0) and math.isclose(roi[1], 1.0):
        return None, None
    return _resize_axis(L, O, float(scale), mode, ctm, nearest, a, exclude, antialias, roi)


def _axes(fn: str, axes: Any, rank: int) -> list[int]:
    """The resized axes, each in [0, rank) (None: every axis)."""
    if axes is None:
        return list(range(rank))
    ax = list(entries(fn, "axes", axes))
    if any(not -rank <= a < rank for a in ax) or len({a % rank for a in ax}) != len(ax):
        fail(fn, "axes", axes, f"must be distinct axes in [-{rank}, {rank})")
    return [a % rank for a in ax]


def _extents(fn: str, X: Any, ax: list[int], scales: Any, sizes: Any, policy: str
             ) -> tuple[list[int], list[int], list[float]]:
    """The input extents, output extents and scales of the resized axes, from scales or sizes (and
    keep_aspect_ratio_policy)."""
    if (scales is None) == (sizes is None):
        fail(fn, "scales", scales, "exactly one of scales and sizes must be given")
    L = [int(X.shape[a]) for a in ax]
    if scales is not None:
        sc = list(host(fn, "scales", scales, "f", len(ax), " (one per axis in axes)"))
        out = [int(math.floor(e * Li)) if e > 0 else 0 for e, Li in zip(sc, L)]  # a scale <= 0 (or NaN) is refused
    else:
        out = list(host(fn, "sizes", sizes, "iu", len(ax), " (one per axis in axes)"))
        sc = [e / Li for e, Li in zip(out, L)]
        if policy != "stretch":
            one = min(sc) if policy == "not_larger" else max(sc)
            sc = [one] * len(ax)
            out = [int(one * Li + 0.5) for Li in L]
    bad_scale = scales is not None and any(not e > 0 for e in sc)
    if bad_scale or any(e < 1 for e in out):
        fail(fn, "scales" if scales is not None else "sizes", sc if bad_scale else out,
             "every scale must be > 0" if bad_scale else "every output extent must be >= 1")
    return L, out, sc


def _extrapolate(xp: Any, y: Any, ax: list[int], masks: list[np.ndarray | None], value: float) -> Any:
    """tf_crop_and_resize: ``value`` where an axis's output maps outside its input."""
    if not any(m is not None and m.any() for m in masks):
        return y
    full = np.zeros([1] * y.ndim, bool)
    for a, m in zip(ax, masks):
        if m is not None:
            shape_a = [1] * y.ndim
            shape_a[a] = m.size
            full = full | m.reshape(shape_a)
    fill = to_namespace(np.array(float(value)), xp, y, y.dtype)
    return xp.where(to_namespace(full, xp, y), fill, y)
