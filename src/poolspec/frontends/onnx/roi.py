"""ONNX RoiAlign (opset 16 to 22): avg mode on :func:`poolspec.roi_align` (torchvision's rules, which are ONNX's),
max mode on the same sample grid with ONNX's own maximum (of the weighted corner terms, not of the samples).

>>> import numpy as np
>>> X = np.arange(16.0).reshape(1, 1, 4, 4)
>>> RoiAlign(X, np.array([[0.0, 0.0, 2.0, 2.0]]), np.array([0]), output_height=1, output_width=1).ravel().tolist()
[2.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._compat import device, dtype_name, index_dtype, is_dask_array, is_jax_array, namespace, readable, to_host
from ..._types import Array
from ...autodiff import max_select
from ...kernels.cells import Cells
from .._checks import entries
from .._common import fail
from ._args import checked, dtype_of, text

_MAX_OF = ("weighted_taps", "samples")


def _host(a: Any) -> np.ndarray | None:
    """``a``'s values on the host, or None where a trace has none."""
    if is_dask_array(a):
        return np.asarray(a.compute())
    return to_host(a) if readable(a) else None


def _grids(boxes: np.ndarray, pooled: tuple[int, int], scale: float, half: bool, ratio: int) -> np.ndarray:
    """Each roi's sample grid (gh, gw) as ONNX computes it, in the boxes' dtype: ``ratio`` if > 0, else
    ceil(roi size / output size), the roi size clamped to >= 1 in output_half_pixel."""
    if ratio > 0:
        return np.full((boxes.shape[0], 2), ratio, np.int64)
    dt = boxes.dtype.type
    off, sc = dt(0.5 if half else 0.0), dt(scale)
    size = (boxes[:, 2:4] * sc - off) - (boxes[:, 0:2] * sc - off)  # (w, h)
    if not half:
        size = np.maximum(size, dt(1))
    grids = np.ceil(size[:, ::-1] / np.array(pooled, dtype=dt))
    if not np.isfinite(grids).all() or np.abs(grids).max(initial=0) * (1 + max(pooled)) ** 2 > 1 << 36:
        fail("RoiAlign", "rois", "...", "must be finite and ask for at most 2**36 samples")
    return grids.astype(np.int64)


def _checked_inputs(X: Any, rois: Any, batch_indices: Any) -> Any:
    xp = namespace(X, rois, batch_indices, names=("X", "rois", "batch_indices"), op="onnx.RoiAlign")
    dtype_of("RoiAlign", "X", X, "real floating", "must be float16, bfloat16, float32 or float64 (the operator's "
             "type constraint T1)", xp)
    if X.ndim != 4 or any(int(v) == 0 for v in X.shape[1:]):
        fail("RoiAlign", "X", tuple(X.shape), "must be (N, C, H, W) with non-empty C, H and W")
    if rois.ndim != 2 or int(rois.shape[1]) != 4:
        fail("RoiAlign", "rois", tuple(rois.shape), "must be (num_rois, 4): x1, y1, x2, y2 per roi")
    if rois.dtype != X.dtype:
        fail("RoiAlign", "rois", rois.dtype, f"must have X's dtype ({X.dtype}; the operator's T1)", TypeError)
    if batch_indices.ndim != 1 or int(batch_indices.shape[0]) != int(rois.shape[0]):
        fail("RoiAlign", "batch_indices", tuple(batch_indices.shape), "must be (num_rois,), one per roi")
    dtype_of("RoiAlign", "batch_indices", batch_indices, "integral", "must be an integer (int64) tensor", xp)
    return xp


def RoiAlign(X: Array, rois: Array, batch_indices: Array, *, coordinate_transformation_mode: str = "half_pixel",
             mode: str = "avg", output_height: int = 1, output_width: int = 1, sampling_ratio: int = 0,
             spatial_scale: float = 1.0, max_of: str = "weighted_taps") -> Array:
    """ONNX RoiAlign: a grid of bilinear samples pooled per output bin of each roi, as ``onnx`` opset 16 to 22.

    Each roi (x1, y1, x2, y2, times spatial_scale) is split into output_height x output_width bins; each bin
    samples a grid of sampling_ratio x sampling_ratio points (0: ceil(roi size / bins) per axis, from the rois'
    values on the host) bilinearly (points more than one cell outside X read 0) and takes their mean (avg) or
    ONNX's maximum (max). avg is :func:`poolspec.roi_align` (half_pixel is its aligned=True).

    Parameters
    ----------
    X : array
        (N, C, H, W) features; float16, bfloat16, float32 or float64.
    rois : array
        (num_rois, 4) boxes x1, y1, x2, y2 in X's coordinates before spatial_scale; X's dtype and library.
    batch_indices : array
        (num_rois,) integer image of each roi, in [0, N).
    coordinate_transformation_mode : str, default "half_pixel"
        half_pixel: the boxes shifted by -0.5 after scaling; output_half_pixel: not shifted, the roi size clamped
        to at least 1 (opset 10's rule).
    mode : str, default "avg"
        avg or max.
    output_height, output_width : int, default 1
        The bins per roi along each axis (>= 1).
    sampling_ratio : int, default 0
        Samples per bin along each axis; 0: adaptive, ceil(roi size / output size).
    spatial_scale : float, default 1.0
        The factor from roi coordinates to X's cells (> 0); rounded to float32, as an ONNX float attribute.
    max_of : str, default "weighted_taps"
        Not ONNX's: which maximum max mode takes. "weighted_taps": the largest of every sample's four weighted
        corner terms w_i * x_i (the specification, onnx's reference and onnxruntime); "samples": the largest
        bilinear sample (torchvision-style max RoiAlign, onnxruntime#6146).

    Returns
    -------
    array
        (num_rois, C, output_height, output_width), X's namespace, dtype and device.

    Raises
    ------
    ValueError
        If a string attribute is unknown, a shape does not fit, output sizes or spatial_scale are not positive,
        sampling_ratio < 0, a batch index is outside [0, N), or rois are not finite.
    TypeError
        If X is not floating, rois' dtype is not X's, batch_indices is not integer, or an attribute has a wrong
        type.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[[[0.0, 4.0], [8.0, 2.0]]]])
    >>> boxes, mode = np.array([[0.0, 0.0, 1.0, 1.0]]), "output_half_pixel"
    >>> RoiAlign(X, boxes, np.array([0]), coordinate_transformation_mode=mode, mode="max").ravel().tolist()
    [2.0]
    >>> RoiAlign(X, boxes, np.array([0]), coordinate_transformation_mode=mode, mode="max",
    ...          max_of="samples").ravel().tolist()
    [3.5]
    """
    checked("RoiAlign", locals())
    if isinstance(spatial_scale, bool) or not isinstance(spatial_scale, (int, float, np.floating, np.integer)):
        fail("RoiAlign", "spatial_scale", spatial_scale, "must be a float", TypeError)
    scale = float(np.float32(spatial_scale))
    if not (np.isfinite(scale) and scale > 0):
        fail("RoiAlign", "spatial_scale", spatial_scale, "must be a finite float > 0")
    xp = _checked_inputs(X, rois, batch_indices)
    half = text(coordinate_transformation_mode) == "half_pixel"
    pooled = (int(output_height), int(output_width))
    ratio = int(sampling_ratio)
    N = int(X.shape[0])
    bi = _host(batch_indices)
    if bi is not None and bi.size and (bi.min() < 0 or bi.max() >= N):
        fail("RoiAlign", "batch_indices", f"values in [{bi.min()}, {bi.max()}]", f"must lie in [0, {N})")
    host = _host(rois)
    if host is not None:
        host = np.asarray(host, np.float32 if dtype_name(xp, rois.dtype) != "float64" else np.float64)
        if not np.isfinite(host).all():
            fail("RoiAlign", "rois", "...", "must be finite")
    grids = None if host is None else _grids(host, pooled, scale, half, ratio)
    if grids is None and ratio <= 0 and int(rois.shape[0]) > 0:
        fail("RoiAlign", "sampling_ratio", ratio, "0 asks for an adaptive sample grid, read from the rois' values, "
             "which this trace does not have: pass a positive sampling_ratio, or concrete rois")
    if text(mode) == "avg":
        return _avg(xp, X, rois, batch_indices, grids, pooled, scale, half, ratio)
    return _max(xp, X, rois, batch_indices, grids, pooled, scale, half, ratio, text(max_of) == "samples")


def _with_index(xp: Any, rois: Any, batch_indices: Any, dtype: Any) -> Any:
    return xp.concat([xp.astype(xp.reshape(batch_indices, (-1, 1)), dtype), rois], axis=1)


def _avg(xp: Any, X: Any, rois: Any, batch_indices: Any, grids: np.ndarray | None, pooled: tuple[int, int],
         scale: float, half: bool, ratio: int) -> Any:
    from ...families.roi_align.ops import roi_align

    boxes = _with_index(xp, rois, batch_indices, rois.dtype)
    if grids is not None and (grids <= 0).any():
        # ONNX: a roi without samples on an axis (half_pixel, adaptive, a negative roi) pools to 0, which
        # torchvision refuses where exactly one axis is negative: such rois become (0, 0, 0, 0), grid 0, output 0
        keep = np.ones((grids.shape[0], 5), bool)
        empty = np.asarray(np.any(grids <= 0, axis=1), dtype=bool)
        keep[:, 1:] = ~empty[:, None]
        boxes = xp.where(xp.asarray(keep, device=device(X)), boxes, xp.zeros_like(boxes))
    return roi_align(X, boxes, pooled, spatial_scale=scale, sampling_ratio=ratio, aligned=half)


def _axis(xp: Any, start: Any, size: Any, grid: int, p: Any, i: Any, L: int) -> tuple[Any, Any, Any, Any, Any]:
    """One axis of samples (k, P, G), torchvision's and ONNX's arithmetic: low and high taps, their weights, and
    whether the sample is read (y < -1 or y > L reads 0)."""
    c = (start + p * size) + (i * size) / float(grid)
    valid = (c >= -1.0) & (c <= float(L))
    c = xp.where(c <= 0, xp.zeros_like(c), c)
    low = xp.floor(c)
    top = low >= L - 1
    low = xp.where(top, xp.full_like(low, L - 1), low)
    c = xp.where(top, low, c)
    high = xp.where(top, low, low + 1)
    lw = c - low
    return low, high, 1 - lw, lw, valid


def _max_group(xp: Any, planes: Any, boxes: Any, N: int, H: int, W: int, pooled: tuple[int, int], scale: float,
               half: bool, gh: int, gw: int, samples: bool) -> Any:
    """max mode for rois (k, 5) sharing the grid (gh, gw): (C, k, PH, PW)."""
    PH, PW = pooled
    C, k = int(planes.shape[0]), int(boxes.shape[0])
    dt, dev = boxes.dtype, device(boxes)
    if gh <= 0 or gw <= 0 or k == 0:
        return xp.zeros((C, k, PH, PW), dtype=planes.dtype, device=device(planes))
    off = 0.5 if half else 0.0
    sc = xp.asarray(scale, dtype=dt, device=dev)
    r = [xp.reshape(boxes[:, j], (-1, 1, 1)) for j in range(5)]
    sx, sy = r[1] * sc - off, r[2] * sc - off
    w, h = (r[3] * sc - off) - sx, (r[4] * sc - off) - sy
    if not half:
        w, h = xp.maximum(w, xp.ones_like(w)), xp.maximum(h, xp.ones_like(h))
    bh, bw = h / float(PH), w / float(PW)

    def ar(n: int, shift: float, at: int) -> Any:
        shape = [1, 1, 1]
        shape[at] = n
        return xp.reshape(xp.arange(n, dtype=dt, device=dev) + shift, tuple(shape))

    yl, yh, hy, ly, vy = _axis(xp, sy, bh, gh, ar(PH, 0.0, 1), ar(gh, 0.5, 2), H)
    xl, xh, hx, lx, vx = _axis(xp, sx, bw, gw, ar(PW, 0.0, 1), ar(gw, 0.5, 2), W)

    def Y(a: Any) -> Any:
        return xp.reshape(a, (k, PH, 1, gh, 1, 1))

    def X_(a: Any) -> Any:
        return xp.reshape(a, (k, 1, PW, 1, gw, 1))

    itype = index_dtype(xp, boxes)
    batch = xp.astype(r[0], itype)
    inside = Y(vy) & X_(vx)
    rows = xp.concat([Y(yl), Y(yl), Y(yh), Y(yh)], axis=-1)
    cols = xp.concat([X_(xl), X_(xh), X_(xl), X_(xh)], axis=-1)
    weights = xp.concat([Y(hy) * X_(hx), Y(hy) * X_(lx), Y(ly) * X_(hx), Y(ly) * X_(lx)], axis=-1)
    cells = xp.reshape(batch, (k, 1, 1, 1, 1, 1)) * (H * W) + xp.astype(rows, itype) * W + xp.astype(cols, itype)
    cells = xp.where(inside, cells, xp.full_like(cells, N * H * W))  # outside: reads 0 (its terms are 0)
    cells = xp.reshape(cells, (1, -1))
    vals = max_select(Cells(N * H * W, int(cells.shape[1])), planes, cells)
    terms = xp.reshape(vals, (C, k, PH, PW, gh * gw, 4)) * xp.reshape(weights, (1, k, PH, PW, gh * gw, 4))
    if samples:
        return xp.max(xp.sum(terms, axis=-1), axis=-1)
    return xp.max(xp.reshape(terms, (C, k, PH, PW, gh * gw * 4)), axis=-1)


def _max(xp: Any, X: Any, rois: Any, batch_indices: Any, grids: np.ndarray | None, pooled: tuple[int, int],
         scale: float, half: bool, ratio: int, samples: bool) -> Any:
    if is_dask_array(X):  # images whole, one task per channel block; the rois, small, as NumPy in every task
        import dask.array as da

        r, b = np.asarray(rois.compute()), np.asarray(batch_indices.compute())
        chans = X.chunks[1]
        Xc = X.rechunk(((X.shape[0],), chans, (X.shape[2],), (X.shape[3],)))

        def block(xb: np.ndarray) -> np.ndarray:
            return np.asarray(_max(np, xb, r, b, grids, pooled, scale, half, ratio, samples))

        return da.map_blocks(block, Xc, dtype=X.dtype, meta=np.empty((0, 0, 0, 0), dtype=X.dtype),
                             chunks=((int(rois.shape[0]),), chans, (pooled[0],), (pooled[1],)))
    name = dtype_name(xp, X.dtype)
    low = name in ("float16", "bfloat16")
    Xc = xp.astype(X, xp.float32) if low else X
    rc = xp.astype(rois, xp.float32) if low else rois
    N, C, H, W = (int(v) for v in X.shape)
    K = int(rois.shape[0])
    planes = xp.reshape(xp.permute_dims(Xc, (1, 0, 2, 3)), (C, N * H * W))
    boxes = _with_index(xp, rc, batch_indices, rc.dtype)
    if grids is None:
        grids = np.full((K, 2), ratio, np.int64)
    keys = sorted({(int(a), int(b)) for a, b in grids})
    if len(keys) <= 1:
        gh, gw = keys[0] if keys else (0, 0)
        out = _max_group(xp, planes, boxes, N, H, W, pooled, scale, half, gh, gw, samples)
    else:
        parts, position = [], []
        for gh, gw in keys:
            members = np.flatnonzero((grids[:, 0] == gh) & (grids[:, 1] == gw))
            sel = xp.take(boxes, xp.asarray(members, device=device(X)), axis=0)
            parts.append(_max_group(xp, planes, sel, N, H, W, pooled, scale, half, gh, gw, samples))
            position += members.tolist()
        order = np.empty(K, np.int64)
        order[np.array(position, dtype=np.int64)] = np.arange(K)
        out = xp.take(xp.concat(parts, axis=1), xp.asarray(order, device=device(X)), axis=1)
    out = xp.permute_dims(out, (1, 0, 2, 3))
    if is_jax_array(out) or low:
        out = xp.astype(out, X.dtype)
    return out


def _roi_pool_windows(boxes: np.ndarray, pooled: tuple[int, int], scale: float, H: int, W: int) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MaxRoiPool's windows in onnxruntime's float32 arithmetic: (row starts, row ends) (K, PH) and (column starts,
    column ends) (K, PW), clipped to the image."""
    F = np.float32
    b = boxes.astype(F)
    with np.errstate(invalid="ignore"):
        corners = (b[:, 1:5] * F(scale)).astype(F)
    # std::round: half away from zero
    r = (np.sign(corners) * np.floor(np.abs(corners) + F(0.5))).astype(np.int64)
    out = []
    for start, end, n, L in ((r[:, 1], r[:, 3], pooled[0], H), (r[:, 0], r[:, 2], pooled[1], W)):
        size = np.maximum(end - start + 1, 1)
        bin_ = (size.astype(F) / F(n)).astype(F)[:, None]
        p = np.arange(n, dtype=F)[None, :]
        lo = np.floor((p * bin_).astype(F)).astype(np.int64) + start[:, None]
        hi = np.ceil(((p + F(1)) * bin_).astype(F)).astype(np.int64) + start[:, None]
        out += [np.clip(lo, 0, L), np.clip(hi, 0, L)]
    return out[0], out[1], out[2], out[3]


def MaxRoiPool(X: Array, rois: Array, *, pooled_shape: Any = None, spatial_scale: float = 1.0) -> Array:
    """ONNX MaxRoiPool: the maximum of X over each bin of each roi's rounded integer window, as onnxruntime's CPU
    kernel (opset 1 to 22; onnx's reference evaluator has no MaxRoiPool).

    The roi's corners (times spatial_scale, in float32) are rounded half away from zero; the window is
    max(end - start + 1, 1) cells per axis, bin p covers [floor(p * size / P), ceil((p + 1) * size / P)) of it
    (float32), clipped to X; an empty bin is 0. Torchvision's roi_pool rules.

    Parameters
    ----------
    X : array
        (N, C, H, W) features; float16, bfloat16, float32 or float64.
    rois : array
        (num_rois, 5): batch index, x1, y1, x2, y2 (before spatial_scale); X's dtype; read on the host.
    pooled_shape : sequence of 2 int
        (PH, PW), both >= 1; required.
    spatial_scale : float, default 1.0
        The factor from roi coordinates to X's cells (> 0); rounded to float32, as an ONNX float attribute.

    Returns
    -------
    array
        (num_rois, C, PH, PW), X's namespace, dtype and device.

    Raises
    ------
    ValueError
        If a shape does not fit, pooled_shape is missing or not 2 positive ints, spatial_scale is not positive, a
        batch index is outside [0, N) or rois are not finite.
    TypeError
        If X is not floating, rois' dtype is not X's, or an attribute has a wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> MaxRoiPool(X, np.array([[0, 0.0, 0.0, 3.0, 3.0]]), pooled_shape=[2, 2])[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    checked("MaxRoiPool", locals())
    if pooled_shape is None:
        fail("MaxRoiPool", "pooled_shape", pooled_shape, "is required")
    pooled = tuple(int(v) for v in entries("MaxRoiPool", "pooled_shape", pooled_shape) or ())
    if isinstance(spatial_scale, bool) or not isinstance(spatial_scale, (int, float, np.floating, np.integer)):
        fail("MaxRoiPool", "spatial_scale", spatial_scale, "must be a float", TypeError)
    scale = float(np.float32(spatial_scale))
    if not (np.isfinite(scale) and scale > 0):
        fail("MaxRoiPool", "spatial_scale", spatial_scale, "must be a finite float > 0")
    xp = namespace(X, rois, names=("X", "rois"), op="onnx.MaxRoiPool")
    dtype_of("MaxRoiPool", "X", X, "real floating", "must be float16, bfloat16, float32 or float64 (the operator's "
             "type constraint T)", xp)
    if X.ndim != 4 or any(int(v) == 0 for v in X.shape[1:]):
        fail("MaxRoiPool", "X", tuple(X.shape), "must be (N, C, H, W) with non-empty C, H and W")
    if rois.ndim != 2 or int(rois.shape[1]) != 5:
        fail("MaxRoiPool", "rois", tuple(rois.shape), "must be (num_rois, 5): batch index, x1, y1, x2, y2")
    if rois.dtype != X.dtype:
        fail("MaxRoiPool", "rois", rois.dtype, f"must have X's dtype ({X.dtype})", TypeError)
    host = _host(rois)
    if host is None:
        fail("MaxRoiPool", "rois", "traced", "must be concrete: the windows are read from their values")
    assert host is not None
    host = np.asarray(host, np.float64)
    N, C, H, W = (int(v) for v in X.shape)
    if not np.isfinite(host).all():
        fail("MaxRoiPool", "rois", "...", "must be finite")
    batch = np.trunc(host[:, 0]).astype(np.int64)
    if batch.size and (batch.min() < 0 or batch.max() >= N):
        fail("MaxRoiPool", "rois", f"batch indices in [{batch.min()}, {batch.max()}]", f"must lie in [0, {N})")
    K, (PH, PW) = host.shape[0], pooled
    hs, he, ws, we = _roi_pool_windows(host, (PH, PW), scale, H, W)
    kh, kw = max(int((he - hs).max(initial=0)), 1), max(int((we - ws).max(initial=0)), 1)
    rows = hs[:, :, None] + np.arange(kh)[None, None, :]  # (K, PH, kh)
    cols = ws[:, :, None] + np.arange(kw)[None, None, :]  # (K, PW, kw)
    inside = (rows < he[:, :, None])[:, :, None, :, None] & (cols < we[:, :, None])[:, None, :, None, :]
    flat = (batch[:, None, None, None, None] * H + rows[:, :, None, :, None]) * W + cols[:, None, :, None, :]
    cells = np.where(inside, flat, N * H * W).reshape(1, -1)  # (K, PH, PW, kh, kw)
    if is_dask_array(X):
        import dask.array as da

        chans = X.chunks[1]
        Xc = X.rechunk(((N,), chans, (H,), (W,)))
        return da.map_blocks(lambda xb: np.asarray(MaxRoiPool(xb, host.astype(xb.dtype), pooled_shape=pooled,
                                                              spatial_scale=spatial_scale)),
                             Xc, dtype=X.dtype, meta=np.empty((0, 0, 0, 0), dtype=X.dtype),
                             chunks=((K,), chans, (PH,), (PW,)))
    planes = xp.reshape(xp.permute_dims(X, (1, 0, 2, 3)), (C, N * H * W))
    idx = xp.asarray(cells.astype(np.int64), device=device(X))
    idx = xp.astype(idx, index_dtype(xp, X))
    vals = xp.reshape(max_select(Cells(N * H * W, int(cells.shape[1])), planes, idx), (C, K, PH, PW, kh * kw))
    mask = xp.asarray(inside.reshape(1, K, PH, PW, kh * kw), device=device(X))
    low = xp.asarray(-xp.inf, dtype=X.dtype, device=device(X))
    best = xp.max(xp.where(mask, vals, low), axis=-1)
    none = np.asarray(~np.any(inside.reshape(K, PH, PW, kh * kw), axis=-1), dtype=bool)
    empty = xp.asarray(none[None], device=device(X))
    best = xp.where(empty, xp.zeros_like(best), best)
    return xp.permute_dims(best, (1, 0, 2, 3))
