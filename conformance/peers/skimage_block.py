"""scikit-image: avg / max pools with kernel == stride and no padding as ``block_reduce`` (np.mean / np.max over
blocks, the end padded with ``cval``), adaptive pools whose windows are such blocks, linear / nearest-exact
interpolate as ``transform.resize`` (order 1 / 0, edge mode, no anti-aliasing) and area as ``resize_local_mean``.
Only layout is adapted here (the trailing cells no torch window reads are cut off); scikit-image has no
gradients."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._common import ntuple, pool_out, require

NAME = "skimage"
BACKEND = "numpy"
IMPORTS = ("skimage",)
API = ("skimage.measure.block_reduce (np.mean / np.max, cval), skimage.transform.resize (order 0 / 1, mode='edge', "
       "anti_aliasing=False, clip=False, preserve_range=True), skimage.transform.resize_local_mean")


def version() -> str:
    import skimage

    return f"scikit-image {skimage.__version__}"


# ------------------------------------------------------------------------------------------------ pooling

def _blocks(n: int, x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
            dilation: Any = 1) -> tuple[np.ndarray, tuple[int, ...]]:
    """x cut to the cells torch's windows read, and the block size: blocks are windows with stride == kernel,
    no padding, no dilation. A ceil_mode window that runs past the input is block_reduce's cval-padded end block."""
    k = ntuple(kernel_size, n)
    s = ntuple(stride, n) if stride not in (None, (), []) else k
    require(s == k and not any(ntuple(padding, n)) and set(ntuple(dilation, n)) == {1},
            "block_reduce's blocks are windows with stride == kernel, no padding, no dilation")
    require(min(k) > 0, "block_reduce has no empty block")
    sizes = x.shape[-n:]
    out = [pool_out(L, kk, kk, 0, 1, ceil_mode) for L, kk in zip(sizes, k)]
    require(min(out) > 0, "torch has no window here; block_reduce would pad a whole block")
    return x[(Ellipsis,) + tuple(slice(0, O * kk) for O, kk in zip(out, k))], (1,) * (x.ndim - n) + k


def _avg_pool(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
              count_include_pad: bool = True, divisor_override: Any = None, dilation: Any = 1) -> np.ndarray:
    require(set(ntuple(dilation, n)) == {1}, "dilation: block_reduce's blocks are dense: no dilation")
    from skimage.measure import block_reduce

    xc, block = _blocks(n, x, kernel_size, stride, padding, ceil_mode)
    require(divisor_override in (None, math.prod(block)), "np.mean divides by the block size: no divisor_override")
    require(x.dtype.kind == "f", f"np.mean of {x.dtype} blocks is a float mean (torch truncates in {x.dtype})")
    return block_reduce(xc, block, np.mean, cval=0)


def _max_pool(n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
              ceil_mode: bool = False, return_indices: bool = False) -> Any:
    from skimage.measure import block_reduce

    xc, block = _blocks(n, x, kernel_size, stride, padding, ceil_mode, dilation)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min  # a padded cell never wins
    y = block_reduce(xc, block, np.max, cval=low)
    return (y, None) if return_indices else y  # np.max gives no index


def _adaptive_k(n: int, x: np.ndarray, output_size: Any) -> tuple[int, ...]:
    """Adaptive windows are blocks of L / O cells where O divides L."""
    sizes = x.shape[-n:]
    out = [L if o is None else o for o, L in zip(ntuple(output_size, n), sizes)]
    require(all(o > 0 and L % o == 0 for o, L in zip(out, sizes)),
            f"adaptive windows {tuple(sizes)} -> {tuple(out)} are not blocks (O must divide L)")
    return tuple(L // o for o, L in zip(out, sizes))


for _n in (1, 2, 3):
    globals()[f"avg_pool{_n}d"] = lambda x, *a, _n=_n, **kw: _avg_pool(_n, x, *a, **kw)
    globals()[f"max_pool{_n}d"] = lambda x, *a, _n=_n, **kw: _max_pool(_n, x, *a, **kw)
    globals()[f"adaptive_avg_pool{_n}d"] = lambda x, output_size, _n=_n: _avg_pool(
        _n, x, _adaptive_k(_n, x, output_size))
    globals()[f"adaptive_max_pool{_n}d"] = lambda x, output_size, return_indices=False, _n=_n: _max_pool(
        _n, x, _adaptive_k(_n, x, output_size), return_indices=return_indices)


# ------------------------------------------------------------------------------------------- interpolate

_ORDER = {"linear": (1, 1), "bilinear": (1, 2), "trilinear": (1, 3), "nearest-exact": (0, None), "area": (None, None)}


def _same_ratio(sizes: Any, out: Any, sf: Any, dtype: np.dtype, linear: bool) -> bool:
    """Whether torch's ratio 1/scale_factor equals the L/O it uses for the explicit size on every axis, in its
    compute type (float64 for float64 linear modes, else float32; linear modes copy an axis with O == L)."""
    t = np.float64 if dtype == np.float64 and linear else np.float32
    return all(t(1.0 / f) == t(L) / t(o) or (linear and o == L) for L, o, f in zip(sizes, out, sf))


def interpolate(x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> np.ndarray:
    from skimage.transform import resize, resize_local_mean

    n = x.ndim - 2
    # resize samples at (i + 1/2) L/O - 1/2 (scipy's zoom, grid_mode): order 1 is torch's linear modes with
    # align_corners=False, order 0 rounds half up (nearest-exact); order 3 is a B-spline and anti_aliasing a
    # Gaussian, neither torch's
    require(mode in _ORDER and not antialias and not align_corners, f"resize has no mode like torch's {mode!r}"
            + (" with align_corners" if align_corners else ""))
    order, rank = _ORDER[mode]
    require(rank in (None, n), f"torch's {mode} is {rank}-d")
    require((size is None) != (scale_factor is None), "resize takes one output shape")
    sf = ntuple(scale_factor, n) if scale_factor is not None else None
    out = list(ntuple(size, n)) if size is not None else [math.floor(float(L) * f) for L, f in zip(x.shape[2:], sf)]
    if sf is not None and not recompute_scale_factor and mode != "area":
        require(_same_ratio(x.shape[2:], out, sf, x.dtype, order == 1), f"resize samples at L/O, torch at 1/{sf}")
    shape = x.shape[:2] + tuple(out)
    if mode == "area":
        # resize_local_mean weighs partly covered pixels by coverage; torch's adaptive windows are whole pixels,
        # the same where O divides L or L divides O
        require(all(L % o == 0 or o % L == 0 for L, o in zip(x.shape[2:], out) if o > 0),
                "resize_local_mean covers pixels fractionally")
        y = resize_local_mean(x, shape, grid_mode=True, preserve_range=True)
    else:
        y = resize(x, shape, order=order, mode="edge", clip=False, preserve_range=True, anti_aliasing=False)
    # scikit-image computes float16 in float32 (as torch does) and returns that: rounded once back
    return y.astype(x.dtype) if x.dtype == np.float16 else y


FINDINGS: list[dict[str, Any]] = [
    {"ops": ["avg_pool1d", "avg_pool2d", "avg_pool3d"], "flags": ["random"], "checks": ["output"],
     "rule": "block_reduce pads a partial end block (ceil_mode) with cval=0 and np.mean divides by the whole block "
             "size, where torch divides by the cells inside the input",
     "upstream": "https://github.com/scikit-image/scikit-image/issues/4940"},
    {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
     "rule": "resize (order 1, any rank) and resize_local_mean take uint8 images (returning float64 with "
             "preserve_range), where torch refuses uint8 in linear, trilinear and area",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["uint8_fixed_point"],
     "rule": "resize (order 1) with preserve_range returns float64 for uint8 images, the bilinear value unrounded "
             "(up to 0.81 from torch's), where torch returns uint8 from int16 fixed-point weights, each axis's pass "
             "rounded",
     "upstream": "new"},
    {"ops": ["interpolate"], "flags": ["empty_batch"],
     "rule": "resize divides each input extent by the output extent, so a zero-length batch axis gives 0/0 and it "
             "raises ValueError ('cannot convert float NaN to integer') instead of returning an empty array",
     "upstream": "new"},
]
