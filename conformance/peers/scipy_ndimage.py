"""SciPy ndimage: pools as a uniform / maximum filter whose ``origin`` puts the window of output j at j - padding,
read at every stride-th position (a strided slice: layout only), and linear / nearest-exact interpolate as
``zoom`` (order 1 / 0, grid_mode). Only where the filter's windows, padding value and divisor, or zoom's
sampling points, are torch's; anything else raises NotExpressible. SciPy has no gradients."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._common import NotExpressible, ntuple, pool_out, require

NAME = "scipy"
BACKEND = "numpy"
IMPORTS = ("scipy",)
API = ("scipy.ndimage.uniform_filter (mode='constant'), maximum_filter (size / dilated footprint, cval=-inf), "
       "origin + strided read; scipy.ndimage.zoom (order 1 / 0, grid_mode, mode='nearest')")


def version() -> str:
    import scipy

    return f"scipy {scipy.__version__}"


def _ndi(fn: str, x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    import scipy.ndimage as ndi

    try:
        return getattr(ndi, fn)(x, *args, **kwargs)
    except RuntimeError as e:  # "array type dtype('float16') not supported"
        if "not supported" in str(e):
            raise NotExpressible(f"scipy.ndimage.{fn} has no {x.dtype} kernel") from e
        raise


# ------------------------------------------------------------------------------------------------ pooling

def _plan(n: int, x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    """Per axis (L, k, s, p, d, O); torch's O decides the slice, and the last window must be anchored inside the
    filtered array (a window starting in the right padding has no filter output to read)."""
    k, p, d = ntuple(kernel_size, n), ntuple(padding, n), ntuple(dilation, n)
    s = ntuple(stride, n) if stride not in (None, (), []) else k
    require(min(k + s + d) > 0 and min(p) >= 0, "a strided read of a filter has no zero or negative step")
    sizes = x.shape[-n:]
    axes = [(L, kk, ss, pp, dd, pool_out(L, kk, ss, pp, dd, ceil_mode)) for L, kk, ss, pp, dd in
            zip(sizes, k, s, p, d)]
    for L, kk, ss, pp, dd, O in axes:
        eff = dd * (kk - 1) + 1
        require(O >= 1 and pp <= eff // 2, "torch refuses this call; a filter has no such rule")
        require((O - 1) * ss <= L - 1, "the last window starts in the right padding: no filter output there")
    return axes


def _read(y: np.ndarray, axes: Any) -> np.ndarray:
    """Every stride-th filter output, O of them per axis."""
    return y[(Ellipsis,) + tuple(slice(0, (O - 1) * s + 1, s) for _, _, s, _, _, O in axes)]


def _avg_pool(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
              count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> np.ndarray:
    require(set(ntuple(dilation, n)) == {1}, "dilation (poolspec's extension): uniform_filter's window is dense")
    axes = _plan(n, x, kernel_size, stride, padding, 1, ceil_mode)
    k = [kk for _, kk, *_ in axes]
    if divisor_override is None:
        # uniform_filter divides every window by its size k, zeros outside: torch's divisor where no window
        # reaches past the padding (count_include_pad) or past the input (exclude_pad)
        for L, kk, s, p, _, O in axes:
            end = (O - 1) * s - p + kk
            require(end <= L + p if count_include_pad else p == 0 and end <= L,
                    "a window's torch divisor is not its size k (padding left out, or a ceil_mode overhang)")
    else:
        require(divisor_override == math.prod(k), "uniform_filter divides by the window size: no divisor_override")
    origin = [p - kk // 2 for _, kk, _, p, _, _ in axes]
    y = _ndi("uniform_filter", x, size=k, mode="constant", cval=0.0, origin=origin, axes=tuple(range(-n, 0)))
    return _read(y, axes)


def _max_pool(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
              ceil_mode: bool = False, return_indices: bool = False) -> Any:
    axes = _plan(n, x, kernel_size, stride, padding, dilation, ceil_mode)
    # padding that never wins: -inf, or the integer dtype's lowest (torch skips taps outside the input)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    footprint = np.zeros([d * (kk - 1) + 1 for _, kk, _, _, d, _ in axes], dtype=bool)
    footprint[tuple(slice(None, None, d) for _, _, _, _, d, _ in axes)] = True
    origin = [p - (d * (kk - 1) + 1) // 2 for _, kk, _, p, d, _ in axes]
    y = _ndi("maximum_filter", x, footprint=footprint, mode="constant", cval=low, origin=origin,
             axes=tuple(range(-n, 0)))
    y = _read(y, axes)
    return (y, None) if return_indices else y


def _adaptive_k(n: int, x: np.ndarray, output_size: Any) -> list[int]:
    """Adaptive windows are pool windows with kernel = stride = L / O where O divides L."""
    sizes = x.shape[-n:]
    out = [L if o is None else o for o, L in zip(ntuple(output_size, n), sizes)]
    require(all(o > 0 and L % o == 0 for o, L in zip(out, sizes)),
            f"adaptive windows {tuple(sizes)} -> {tuple(out)} are not one filter's windows (O must divide L)")
    return [L // o for o, L in zip(out, sizes)]


for _n in (1, 2, 3):
    globals()[f"avg_pool{_n}d"] = lambda x, *a, _n=_n, **kw: _avg_pool(_n, x, *a, **kw)
    globals()[f"max_pool{_n}d"] = lambda x, *a, _n=_n, **kw: _max_pool(_n, x, *a, **kw)
    globals()[f"adaptive_avg_pool{_n}d"] = lambda x, output_size, _n=_n: _avg_pool(
        _n, x, _adaptive_k(_n, x, output_size), count_include_pad=False)
    globals()[f"adaptive_max_pool{_n}d"] = lambda x, output_size, return_indices=False, _n=_n: _max_pool(
        _n, x, _adaptive_k(_n, x, output_size), return_indices=return_indices)


# ------------------------------------------------------------------------------------------- interpolate

_ORDER = {"linear": (1, 1), "bilinear": (1, 2), "trilinear": (1, 3), "nearest-exact": (0, None)}


def same_ratio(sizes: Any, out: Any, sf: Any, dtype: np.dtype, linear: bool) -> bool:
    """Whether torch's ratio 1/scale_factor equals the L/O it uses for the explicit size on every axis, in its
    compute type (float64 for float64 linear modes, else float32; linear modes copy an axis with O == L)."""
    t = np.float64 if dtype == np.float64 and linear else np.float32
    return all(t(1.0 / f) == t(L) / t(o) or (linear and o == L) for L, o, f in zip(sizes, out, sf))


def interpolate(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> np.ndarray:
    n = x.ndim - 2
    order, rank = _ORDER.get(mode, (None, None))
    # zoom's order 0 rounds (i + 1/2) L/O - 1/2 half up: torch's nearest-exact; order 3 is a B-spline, not Keys
    require(order is not None and not antialias, f"zoom has no mode like torch's {mode!r}")
    require(rank in (None, n), f"torch's {mode} is {rank}-d")
    require((size is None) != (scale_factor is None), "zoom's output shape comes from one size")
    sf = ntuple(scale_factor, n) if scale_factor is not None else None
    out = list(ntuple(size, n)) if size is not None else [math.floor(float(L) * f) for L, f in zip(x.shape[2:], sf)]
    if sf is not None and not recompute_scale_factor and not align_corners:
        # zoom samples at L/O (align_corners: (L-1)/(O-1)) from the shapes; torch at 1/scale_factor
        require(same_ratio(x.shape[2:], out, sf, x.dtype, order == 1), f"zoom samples at L/O, torch at 1/{sf}")
    # grid_mode: (i + 1/2) L/O - 1/2, torch's align_corners=False; mode="nearest" clamps to the edge as torch does
    return _ndi("zoom", x, [1, 1] + [o / L for o, L in zip(out, x.shape[2:])], order=order, mode="nearest",
                grid_mode=not align_corners, prefilter=False)


def grid_sample(x: np.ndarray, grid: np.ndarray, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> np.ndarray:
    raise NotExpressible("map_coordinates takes pixel coordinates; turning torch's [-1, 1] grid into them is "
                         "torch's rule, not a SciPy call")


FINDINGS: list[dict[str, Any]] = [
    {"ops": ["max_pool1d", "max_pool2d", "max_pool3d"], "flags": ["max_pool_empty_window"],
     "rule": "maximum_filter takes a dilated window that misses the input and returns its cval (-inf, or the "
             "integer lowest) there, where the reference refuses the call (torch returns -inf)",
     "upstream": "new"},
    {"ops": ["max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
             "adaptive_max_pool3d"], "flags": [], "dtypes": ["float64", "float32"], "checks": ["output"],
     "rule": "maximum_filter keeps a window's first tap and replaces it only by a strictly greater value (axis by "
             "axis for a box footprint), so a NaN wins only as the first tap it meets; torch's max is NaN whenever "
             "the window holds one",
     "upstream": "https://github.com/scipy/scipy/issues/9077"},
    {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
     "rule": "zoom interpolates uint8 arrays of any rank with order 1 (torch's 1-d linear and 3-d trilinear), where "
             "torch refuses uint8 in linear and trilinear",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"], "checks": ["output"],
     "rule": "zoom interpolates uint8 in float64, both axes before one rounding to uint8, where torch resamples one "
             "axis at a time with int16 fixed-point weights and rounds after each pass, so a few pixels are 1 apart",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["random"], "checks": ["raises"],
     "rule": "zoom takes an output length 0 (a scale_factor that truncates an axis to nothing) and returns an empty "
             "array, where torch raises",
     "upstream": "new"},
]
