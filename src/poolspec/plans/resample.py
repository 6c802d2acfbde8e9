"""Per-axis interpolation plans (docs/TORCH_NUMERICS.md section 5): for each output, the input cells it reads and
their weights, as a :class:`~poolspec.plans.windows.GatherPlan` - or ``None`` where the axis is the
identity. Host-side NumPy, cached.

The arithmetic is torch's own, in torch's compute type (``ctype``: float32 for float16/bfloat16/float32,
float64 for float64), so the indices a float32 plan picks are the ones torch picks: ``np.float32`` scalars
and arrays reproduce C++ ``float`` arithmetic, and the places where torch's C++ promotes to ``double`` (a
``0.5`` literal, ``floorf`` of a double) are written out where they happen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .windows import GatherPlan

CUBIC_A = -0.75  # torch's bicubic (Keys with A = -0.75)
AA_CUBIC_A = -0.5  # torch's antialiased bicubic (PIL)
LANCZOS_LOBES = 3


def _ctype(name: str) -> type:
    return np.float64 if name == "float64" else np.float32


def _floorf(v: np.ndarray) -> np.ndarray:
    """C's ``floorf`` applied to a float or double value: the argument is rounded to float first."""
    return np.floor(v.astype(np.float32)).astype(np.int64)


def _frozen(index: np.ndarray, weight: np.ndarray | None, length: int) -> GatherPlan:
    unused = (index == length).all(axis=1)
    if weight is not None:
        unused &= (weight == 0).all(axis=1)
    if unused.any() and not unused.all():  # taps every output reads as padding add nothing: drop them
        index, weight = index[~unused], None if weight is None else weight[~unused]
    index = np.ascontiguousarray(index, dtype=np.int64)
    index.setflags(write=False)
    if weight is not None:
        weight = np.ascontiguousarray(weight)
        weight.setflags(write=False)
    return GatherPlan(length, int(index.shape[1]), index, weight)


def ratio(length: int, out: int, align_corners: bool, scale: float | None, ctype: type) -> np.floating:
    """torch's ``area_pixel_compute_scale``: (L-1)/(O-1) with align_corners (0 for O = 1), else the reciprocal of
    a scale factor that reaches the kernel (computed in double, then cast), else L/O in the compute type."""
    if align_corners:
        return ctype(length - 1) / ctype(out - 1) if out > 1 else ctype(0)
    if scale is not None and scale > 0:
        return ctype(1.0 / scale)
    return ctype(length) / ctype(out)


def _source(r: np.floating, out: int, align_corners: bool, cubic: bool, ctype: type) -> np.ndarray:
    """torch's ``area_pixel_compute_source_index`` for every output index, in the compute type."""
    i: np.ndarray = np.arange(out, dtype=np.int64).astype(ctype)
    if align_corners:
        return r * i
    x = r * (i + ctype(0.5)) - ctype(0.5)
    return x if cubic else np.maximum(x, ctype(0))


def _index_and_lambda(x: np.ndarray, length: int, ctype: type) -> tuple[np.ndarray, np.ndarray]:
    """torch's ``guard_index_and_lambda``: i0 = min(floorf(x), L-1), lambda = clamp(x - i0, 0, 1)."""
    i0 = np.minimum(_floorf(x), length - 1)
    lam = np.clip(x - i0.astype(ctype), ctype(0), ctype(1)).astype(ctype)
    return i0, lam


@lru_cache(maxsize=1024)
def nearest(length: int, out: int, scale: float | None, exact: bool) -> GatherPlan:
    """nearest: j = min(floor(i * r), L-1), with r and the product in float32 (torch computes nearest in float
    for every dtype); nearest-exact: j = min(floor((i + 0.5) * r), L-1), the product in double rounded to float.
    No shortcut for O == L or O == 2L: this is torch's generic kernel (deviation interpolate_nearest_shortcut)."""
    r = ratio(length, out, False, scale, np.float32)
    i = np.arange(out, dtype=np.int64)
    if exact:
        src = _floorf((i + 0.5) * np.float64(r))
    else:
        src = np.floor(i.astype(np.float32) * r).astype(np.int64)
    return _frozen(np.minimum(src, length - 1)[None, :], None, length)


@lru_cache(maxsize=1024)
def linear(length: int, out: int, scale: float | None, align_corners: bool, ctype_name: str) -> GatherPlan | None:
    """linear: y = (1 - l) x[i0] + l x[i1], i1 = i0 + 1 inside the input; an axis with O == L is the identity."""
    if out == length:
        return None
    ctype = _ctype(ctype_name)
    r = ratio(length, out, align_corners, scale, ctype)
    i0, lam = _index_and_lambda(_source(r, out, align_corners, False, ctype), length, ctype)
    i1 = i0 + (i0 < length - 1)
    return _frozen(np.stack([i0, i1]), np.stack([ctype(1) - lam, lam]).astype(ctype), length)


def _cubic1(x: np.ndarray, a: float, ctype: type) -> np.ndarray:
    a = ctype(a)
    return ((a + ctype(2)) * x - (a + ctype(3))) * x * x + ctype(1)


def _cubic2(x: np.ndarray, a: float, ctype: type) -> np.ndarray:
    a = ctype(a)
    return ((a * x - ctype(5) * a) * x + ctype(8) * a) * x - ctype(4) * a


@lru_cache(maxsize=1024)
def cubic(length: int, out: int, scale: float | None, align_corners: bool, ctype_name: str) -> GatherPlan:
    """bicubic: four taps i0-1 .. i0+2 clamped to the input (border replication: clamped taps keep their own
    weights), Keys weights with A = -0.75, no clamp of the source coordinate and no O == L shortcut."""
    ctype = _ctype(ctype_name)
    r = ratio(length, out, align_corners, scale, ctype)
    i0, t = _index_and_lambda(_source(r, out, align_corners, True, ctype), length, ctype)
    # torch: x1 + 1.0 and x2 + 1.0 are double, cast back to the compute type for the call
    weights = np.stack([_cubic2((t.astype(np.float64) + 1.0).astype(ctype), CUBIC_A, ctype),
                        _cubic1(t, CUBIC_A, ctype),
                        _cubic1(ctype(1) - t, CUBIC_A, ctype),
                        _cubic2(((ctype(1) - t).astype(np.float64) + 1.0).astype(ctype), CUBIC_A, ctype)])
    index = np.clip(i0[None, :] + np.arange(-1, 3, dtype=np.int64)[:, None], 0, length - 1)
    return _frozen(index, weights.astype(ctype), length)


def _triangle(x: np.ndarray, ctype: type) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < ctype(1), ctype(1) - x, ctype(0)).astype(ctype)


def _aa_cubic(x: np.ndarray, ctype: type, a: float = AA_CUBIC_A) -> np.ndarray:
    """Keys' cubic on |x| (torch's ``aa_filter``): A = -0.5 for antialiasing, -0.75 for uint8 bicubic."""
    x = np.abs(x)
    return np.where(x < ctype(1), _cubic1(x, a, ctype),
                    np.where(x < ctype(2), _cubic2(x, a, ctype), ctype(0))).astype(ctype)


def _sinpi(x: np.ndarray) -> np.ndarray:
    """sin(pi x), exactly 0 at the integers (argument reduced to [-1/2, 1/2] first)."""
    n = np.round(x)
    return np.sin(np.pi * (x - n)) * np.where(np.fmod(n, 2) == 0, 1.0, -1.0)


def lanczos_kernel(x: np.ndarray) -> np.ndarray:
    """Lanczos-3: sinc(x) sinc(x/3) = 3 sin(pi x) sin(pi x / 3) / (pi x)^2 on |x| < 3 (1 at 0), else 0; float64."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    inside = x < LANCZOS_LOBES
    safe = np.where(x == 0, 1.0, x)
    value = LANCZOS_LOBES * _sinpi(safe) * _sinpi(safe / LANCZOS_LOBES) / (np.pi * safe) ** 2
    return np.where(inside, np.where(x == 0, 1.0, value), 0.0)


def _lanczos(x: np.ndarray, ctype: type) -> np.ndarray:
    return lanczos_kernel(x.astype(np.float64)).astype(ctype)


_AA_FILTERS = {"bilinear": (2, _triangle), "bicubic": (4, _aa_cubic), "lanczos": (6, _lanczos)}


@lru_cache(maxsize=1024)
def antialias(length: int, out: int, scale: float | None, align_corners: bool, mode: str,
              ctype_name: str) -> GatherPlan | None:
    """torch's separable antialias (PIL's rule): the filter widened by max(r, 1), taps [lo, hi) around the
    centre r (i + 1/2), weights normalised to sum 1; an axis with O == L is the identity (torch's forward skips
    it). Taps past a window's end read the padding cell with weight 0, so every output has the same tap count."""
    if out == length:
        return None
    ctype = _ctype(ctype_name)
    size, fn = _AA_FILTERS[mode]
    r = ratio(length, out, align_corners, scale, ctype)
    # support, centre and the inverse scale are formed in double and stored in the compute type
    support = ctype(size * 0.5 * float(r)) if r >= 1 else ctype(size * 0.5)
    taps = int(math.ceil(float(support))) * 2 + 1
    inv = ctype(1.0 / float(r)) if r >= 1 else ctype(1)
    i = np.arange(out, dtype=np.int64)
    center: np.ndarray = (float(r) * (i + 0.5)).astype(ctype)
    lo = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    hi = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64), length)
    count = np.clip(hi - lo, 0, taps)
    j = np.arange(taps, dtype=np.int64)[:, None]
    arg = (((j + lo[None, :]).astype(ctype) - center[None, :]).astype(np.float64) + 0.5) * float(inv)
    w: np.ndarray = np.where(j < count[None, :], fn(arg.astype(ctype), ctype), ctype(0)).astype(ctype)
    total: np.ndarray = np.zeros(out, dtype=ctype)
    for t in range(taps):  # torch accumulates the total tap by tap in the compute type
        total = (total + w[t]).astype(ctype)
    w = np.where(total != 0, w / np.where(total != 0, total, ctype(1)), w).astype(ctype)
    index = np.where(j < count[None, :], j + lo[None, :], length)
    return _frozen(index, w, length)


@lru_cache(maxsize=1024)
def lanczos(length: int, out: int, scale: float | None, ctype_name: str) -> GatherPlan:
    """Lanczos-3 without antialiasing (jax.image.resize "lanczos3", Burn): source c = r (i + 1/2) - 1/2, the six
    taps floor(c) - 2 .. floor(c) + 3 weighted by the kernel at c - j; taps outside the input are dropped and
    the rest renormalised to sum 1."""
    ctype = _ctype(ctype_name)
    r = float(ratio(length, out, False, scale, ctype))
    c = r * (np.arange(out, dtype=np.float64) + 0.5) - 0.5
    j = np.floor(c).astype(np.int64)[None, :] + np.arange(-2, 4, dtype=np.int64)[:, None]
    inside = (j >= 0) & (j < length)
    w = np.where(inside, lanczos_kernel(c[None, :] - j), 0.0)
    total = w.sum(axis=0)
    w = np.where(total != 0, w / np.where(total != 0, total, 1.0), 0.0)
    return _frozen(np.where(inside, j, length), w.astype(ctype), length)


@dataclass(frozen=True, eq=False)
class FixedPoint:
    """One axis of torch's uint8 resampling: integer weights (int16 values) with ``precision`` fraction bits;
    y = clamp((2^(precision-1) + sum_t w_t x_t) >> precision, 0, 255)."""

    plan: GatherPlan
    precision: int


@lru_cache(maxsize=1024)
def fixed_point(length: int, out: int, scale: float | None, align_corners: bool, mode: str,
                antialiased: bool) -> FixedPoint | None:
    """torch's uint8 bilinear / bicubic / lanczos along one axis (its CPU kernels for uint8, after Pillow): float64
    weights, quantised to int16 with as many fraction bits as the largest weight allows (at most 22), rounded
    half away from zero. With antialias the weights are those of :func:`antialias` in float64; without, the 2 or
    4 taps around the source index (Keys' cubic with A = -0.75), taps outside the input added onto the edge cell.
    An axis with O == L is skipped, as torch skips it."""
    if out == length:
        return None
    if antialiased:
        table = antialias(length, out, scale, align_corners, mode, "float64")
        assert table is not None
        index, w = table.index, np.asarray(table.weight, dtype=np.float64)
        raw = w.sum(axis=0) == 0  # a row whose weights summed to 0 is kept raw, as torch, but not counted
        wt_max = float(np.where(raw[None, :], 0.0, w).max(initial=0.0))
    else:
        taps = 2 if mode == "bilinear" else 4
        r = ratio(length, out, align_corners, scale, np.float64)
        i0, lam = _index_and_lambda(_source(r, out, align_corners, taps == 4, np.float64), length, np.float64)
        half = taps // 2
        first = i0 - half + 1  # the first tap's cell, before clamping
        lo = np.maximum(first, 0)
        count = np.clip(np.minimum(i0 + half + 1, length) - lo, 0, taps)
        w = np.zeros((taps, out))
        slot = np.zeros(out, dtype=np.int64)
        cols = np.arange(out)
        wt_max = 0.0
        for t in range(taps):  # a tap outside the input adds its weight onto the edge cell's
            cell = first + t
            slot = np.where(cell <= 0, 0, np.where(cell >= length - 1, count - 1, slot))
            d = t + 1 - half - lam
            w[slot, cols] += _triangle(d, np.float64) if taps == 2 else _aa_cubic(d, np.float64, CUBIC_A)
            wt_max = max(wt_max, float(w[slot, cols].max(initial=0.0)))
            slot = slot + 1
        index = np.where(np.arange(taps)[:, None] < count[None, :], lo[None, :] + np.arange(taps)[:, None], length)
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = w * float(1 << precision)
    q = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64)
    q = q.astype(np.int16).astype(np.int64)  # torch stores the weights as int16
    q = np.where(index < length, q, 0)
    return FixedPoint(_frozen(index, q, length), precision)
