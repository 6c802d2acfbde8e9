"""Deliberately buggy NumPy implementations, one per known-bug class of ``poolspec/data/known_bugs.json``: each
reproduces the one rule an upstream compiler, exporter, runtime or device got wrong, and is otherwise right
(it delegates to poolspec on NumPy arrays, or computes the windows itself where the bug lives in them).

    from known_bugs import implementation   # with conformance/examples on sys.path
    from poolspec.conformance import run
    print(run("numpy", ops=["adaptive_max_pool2d"],
              implementation=implementation("mps-adaptive-max-pool-window-end")).table())

or from the CLI, ``KNOWN_BUG=<id> poolspec conformance --impl conformance/examples/known_bugs.py``.

``implementation(bug, buggy=False)`` is the same adapter with its bug switched off: it passes every case (the
tests check it), so each failure of the buggy one is the bug's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import poolspec
from poolspec.conformance.runner import Implementation


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _rank(op: str) -> int:
    return int(op[-2])


# ------------------------------------------------------------------------------------------- average pools

def _avg_ceil_divisor(op: str, buggy: bool) -> Callable[..., Any]:
    """pytorch#183528: avg_pool with ceil_mode and count_include_pad lowered as a plain pool over an explicitly
    padded input, so a ceil-mode window overhanging the padded end is divided by the whole kernel (torch: by its
    cells inside input plus padding)."""
    right = getattr(poolspec, op)

    def fn(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
           count_include_pad: bool = True, divisor_override: Any = None, **kw: Any) -> Any:
        args = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                    count_include_pad=count_include_pad, divisor_override=divisor_override, **kw)
        if not (buggy and ceil_mode and count_include_pad and divisor_override is None):
            return right(x, **args)
        x = np.asarray(x)
        sums = right(x.astype(np.float64), **dict(args, divisor_override=1))
        y = sums / math.prod(_tuple(kernel_size, _rank(op)))
        return (np.trunc(y) if x.dtype.kind in "iu" else y).astype(x.dtype)
    return fn


def _avg_exclude_pad(op: str, buggy: bool) -> Callable[..., Any]:
    """executorch PR #21862: XNNPACK's average pooling divides by the cells inside the input only, so a delegate
    lowering AvgPool with count_include_pad=True computes count_include_pad=False."""
    right = getattr(poolspec, op)

    def fn(x: Any, *args: Any, **kw: Any) -> Any:
        if buggy and kw.get("count_include_pad", True) and kw.get("divisor_override") is None:
            kw["count_include_pad"] = False
        return right(x, *args, **kw)
    return fn


# ------------------------------------------------------------------------------------------ adaptive pools

def _windows(L: int, O: int, rule: str) -> list[tuple[int, int]]:
    """Per-axis adaptive windows [start, end): torch's (floor(i L / O), ceil((i + 1) L / O)), or a bug's."""
    out = []
    for i in range(O):
        start, end = (i * L) // O, -((-(i + 1) * L) // O)
        if rule == "uniform" and O <= L:  # a plain pool: stride L // O, kernel ceil(L / O)
            start = i * (L // O)
            end = min(L, start - (-L // O))
        elif rule == "floor_end":
            end = max(start + 1, ((i + 1) * L) // O)
        out.append((start, end))
    return out


def _sizes(x: np.ndarray, n: int, output_size: Any) -> tuple[int, ...]:
    size = _tuple(output_size, n)
    return tuple(x.shape[-n + i] if s is None else s for i, s in enumerate(size))


def _adaptive_avg(op: str, buggy: bool) -> Callable[..., Any]:
    """pytorch#180848, #179931: torch.compile's adaptive_avg_pool2d fusions; the class: adaptive windows replaced
    by a uniform pool (stride L // O, kernel ceil(L / O)), right only where O divides L."""
    n = _rank(op)

    def fn(x: Any, output_size: Any) -> Any:
        if not buggy:
            return getattr(poolspec, op)(x, output_size)
        x = np.asarray(x)
        out = _sizes(x, n, output_size)
        if any(s < 0 for s in out) or x.ndim not in (n + 1, n + 2):
            return getattr(poolspec, op)(x, output_size)
        y = x.astype(np.float64)
        for axis, (L, O) in enumerate(zip(x.shape[-n:], out)):
            m = np.zeros((O, L))
            for i, (a, b) in enumerate(_windows(L, O, "uniform")):
                m[i, a:b] = 1.0 / (b - a)
            y = np.moveaxis(np.tensordot(np.moveaxis(y, axis - n, -1), m, axes=([-1], [1])), -1, axis - n)
        return y.astype(x.dtype)
    return fn


def _adaptive_max(op: str, buggy: bool) -> Callable[..., Any]:
    """pytorch#190064: adaptive_max_pool2d on MPS wrong for sizes that do not divide; the class: a window's end
    taken as floor((i + 1) L / O), dropping the cell it shares with the next window (torch: the ceiling)."""
    n = _rank(op)

    def fn(x: Any, output_size: Any, return_indices: bool = False) -> Any:
        if not buggy:
            return getattr(poolspec, op)(x, output_size, return_indices=return_indices)
        x = np.asarray(x)
        out = _sizes(x, n, output_size)
        if any(s < 0 for s in out) or x.ndim not in (n + 1, n + 2):
            return getattr(poolspec, op)(x, output_size, return_indices=return_indices)
        spatial = x.shape[-n:]
        lead = x.shape[:-n]
        values = np.zeros(lead + out, x.dtype)
        indices = np.zeros(lead + out, np.int64)
        axes = [_windows(L, O, "floor_end") for L, O in zip(spatial, out)]
        for pos in itertools.product(*[range(O) for O in out]):
            box = [range(*axes[a][p]) for a, p in enumerate(pos)]
            best = arg = None
            # torch's loop: the first cell, then any strictly greater value or NaN replaces it
            for cell in itertools.product(*box):
                v = x[(...,) + cell]
                flat = int(np.ravel_multi_index(cell, spatial))
                if best is None:
                    best, arg = v.copy(), np.full(v.shape, flat)
                    continue
                take = (v > best) | np.isnan(v) if x.dtype.kind == "f" else v > best
                best, arg = np.where(take, v, best), np.where(take, flat, arg)
            values[(...,) + pos], indices[(...,) + pos] = best, arg
        return (values, indices) if return_indices else values
    return fn


# --------------------------------------------------------------------------------------------- max pools

def _max_nan_skipped(op: str, buggy: bool) -> Callable[..., Any]:
    """A max that skips NaN (SciPy's maximum_filter scipy#9077, TF's MaxPool tensorflow#2501, onnxruntime's
    MaxPool): torch's max is NaN whenever the window holds one."""
    right = getattr(poolspec, op)

    def fn(x: Any, *args: Any, **kw: Any) -> Any:
        x = np.asarray(x)
        if buggy and x.dtype.kind == "f":
            x = np.where(np.isnan(x), -np.inf, x).astype(x.dtype)
        return right(x, *args, **kw)
    return fn


def _max_grad_all_ties(op: str, buggy: bool) -> Callable[..., Any]:
    """pytorch#185509 (interpolate + conv + max_pool gradients under torch.compile); the class: a max pool's
    backward as a mask ``x == max``, which sends the gradient to every tied maximum of a window (torch: to the
    one winner its indices name)."""
    n = _rank(op)

    def backward(g: Any, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 ceil_mode: bool = False, **kw: Any) -> Any:
        args = dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode)
        if not buggy:
            return getattr(poolspec, op + "_backward")(g, x, **args, **kw)
        x, g = np.asarray(x), np.asarray(g)
        y = getattr(poolspec, op)(x, **args)
        k, p, d = _tuple(kernel_size, n), _tuple(padding, n), _tuple(dilation, n)
        s = _tuple(stride, n) if stride not in (None, (), []) else k
        out, spatial = y.shape[-n:], x.shape[-n:]
        ends = [max(L + pi, (O - 1) * si + di * (ki - 1) + 1 - pi) for L, O, si, di, ki, pi in
                zip(spatial, out, s, d, k, p)]
        pads = [(0, 0)] * (x.ndim - n) + [(pi, e - L) for pi, e, L in zip(p, ends, spatial)]
        xp = np.pad(x.astype(np.float64), pads, constant_values=-np.inf)
        gp = np.zeros_like(xp)
        for offset in itertools.product(*[range(ki) for ki in k]):
            sl = (...,) + tuple(slice(o * di, o * di + (O - 1) * si + 1, si)
                                for o, di, O, si in zip(offset, d, out, s))
            taps = xp[sl]
            hit = (taps == y) | (np.isnan(taps) & np.isnan(y))
            gp[sl] += np.where(hit, g, 0.0)
        crop = (...,) + tuple(slice(pi, pi + L) for pi, L in zip(p, spatial))
        return gp[crop].astype(x.dtype)
    return backward


# ---------------------------------------------------------------------------------------------- lp_pool

def _lp_abs(op: str, buggy: bool) -> Callable[..., Any]:
    """ONNX LpPool (onnx#5459, onnxruntime#6302): sums |x|^p; torch sums x^p (odd p keeps the sign)."""
    right = getattr(poolspec, op)

    def fn(x: Any, *args: Any, **kw: Any) -> Any:
        return right(np.abs(np.asarray(x)) if buggy else x, *args, **kw)
    return fn


# ------------------------------------------------------------------------------------------- interpolate

def _interp(rewrite: Callable[[np.ndarray, dict[str, Any]], dict[str, Any] | None],
            post: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> Callable[[str, bool], Any]:
    def make(op: str, buggy: bool) -> Callable[..., Any]:
        def fn(x: Any, **kw: Any) -> Any:
            x = np.asarray(x)
            new = rewrite(x, kw) if buggy else None
            if new is None:
                return poolspec.interpolate(x, **kw)
            if post is None:
                return poolspec.interpolate(x, **new)
            poolspec.interpolate(x, **kw)  # torch's refusals (uint8 in linear, trilinear) stay refusals
            return post(x, poolspec.interpolate(x.astype(np.float64), **new))
        return fn
    return make


def _nearest_half_pixel(x: np.ndarray, kw: dict[str, Any]) -> dict[str, Any] | None:
    """onnxruntime#28085: torch's 'nearest' (asymmetric, floor) run as half-pixel nearest (torch's
    'nearest-exact'): one pixel off wherever the scale is not an integer upsampling."""
    return dict(kw, mode="nearest-exact") if kw.get("mode", "nearest") == "nearest" else None


def _antialias_dropped(x: np.ndarray, kw: dict[str, Any]) -> dict[str, Any] | None:
    """pytorch#128818: torch's antialiased bilinear/bicubic resize against ONNX Resize's; the class: a
    downsampling resize without the widened antialias filter."""
    return dict(kw, antialias=False) if kw.get("antialias") and kw.get("mode") in ("bilinear", "bicubic") else None


def _uint8_truncated(x: np.ndarray, kw: dict[str, Any]) -> dict[str, Any] | None:
    """onnxruntime#7368: uint8 linear resize one below torch's (the exact value truncated, where torch rounds its
    fixed-point sum)."""
    linear = kw.get("mode") in ("linear", "bilinear", "bicubic", "trilinear")
    return dict(kw) if x.dtype == np.uint8 and linear else None


def _truncate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(np.asarray(y)), 0, 255).astype(np.uint8)


def _corners_aligned(x: np.ndarray, kw: dict[str, Any]) -> dict[str, Any] | None:
    """scipy#10620: scipy.ndimage.zoom (grid_mode=False, its default) maps the corner pixels' centres onto each
    other, i.e. torch's align_corners=True, where interpolate's default is align_corners=False."""
    linear = kw.get("mode") in ("linear", "bilinear", "bicubic", "trilinear")
    if linear and not kw.get("align_corners") and not kw.get("antialias"):
        return dict(kw, align_corners=True)
    return None


# ------------------------------------------------------------------------------ grid_sample, fractional, RoI

def _grid_corners_dropped(op: str, buggy: bool) -> Callable[..., Any]:
    """TensorRT#4646: GridSample wrong at opset 20; the class: align_corners=True lost on the way, the grid
    mapped as align_corners=False."""
    def fn(x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: Any = None) -> Any:
        corners = False if buggy and align_corners else align_corners
        return poolspec.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=corners)
    return fn


def _fractional_axes_swapped(op: str, buggy: bool) -> Callable[..., Any]:
    """pytorch#183249 (fractional_max_pool2d under torch.compile); the class: the samples' axes taken in
    spatial order, where torch's kernel reads sample[..., 0] for the last (width) axis, [..., 1] for height."""
    right = getattr(poolspec, op)

    def fn(x: Any, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
           return_indices: bool = False, _random_samples: Any = None) -> Any:
        samples = _random_samples
        if buggy and samples is not None:
            samples = np.ascontiguousarray(np.asarray(samples)[..., ::-1])
        return right(x, kernel_size, output_size, output_ratio, return_indices, samples)
    return fn


def _roi_aligned_ignored(op: str, buggy: bool) -> Callable[..., Any]:
    """onnxruntime#6921: RoiAlign half a pixel off (aligned=True's -0.5 shift of the box not applied)."""
    def fn(x: Any, boxes: Any, output_size: Any, spatial_scale: float = 1.0, sampling_ratio: int = -1,
           aligned: bool = False) -> Any:
        return poolspec.roi_align(x, boxes, output_size, spatial_scale, sampling_ratio, aligned and not buggy)
    return fn


def _roi_sampling_fixed(op: str, buggy: bool) -> Callable[..., Any]:
    """openvino#37826: RoiAlign's sampling_ratio read as 1 where the call asks for the adaptive count (torch's
    sampling_ratio <= 0: ceil(roi size / output size) points per bin and axis)."""
    right = getattr(poolspec, op)

    def fn(x: Any, boxes: Any, output_size: Any, spatial_scale: float = 1.0, sampling_ratio: int = -1,
           **kw: Any) -> Any:
        ratio = 1 if buggy and isinstance(sampling_ratio, int) and sampling_ratio <= 0 else sampling_ratio
        return right(x, boxes, output_size, spatial_scale, ratio, **kw)
    return fn


# ------------------------------------------------------------------------------------------------ registry

_POOLS = tuple(f"avg_pool{n}d" for n in (1, 2, 3))
_MAX = tuple(f"max_pool{n}d" for n in (1, 2, 3))
# bug id -> (ops, maker of the forward (or, for "backward" bugs, of the explicit backward))
BUGS: dict[str, tuple[tuple[str, ...], Callable[[str, bool], Callable[..., Any]], str]] = {
    "export-avg-pool-ceil-count-include-pad": (_POOLS, _avg_ceil_divisor, "forward"),
    "xnnpack-avg-pool-count-include-pad": (_POOLS, _avg_exclude_pad, "forward"),
    "inductor-adaptive-avg-pool-uniform-windows": (tuple(f"adaptive_avg_pool{n}d" for n in (1, 2, 3)),
                                                   _adaptive_avg, "forward"),
    "mps-adaptive-max-pool-window-end": (tuple(f"adaptive_max_pool{n}d" for n in (1, 2, 3)), _adaptive_max,
                                         "forward"),
    "max-pool-nan-skipped": (_MAX, _max_nan_skipped, "forward"),
    "compile-max-pool-grad-all-ties": (_MAX, _max_grad_all_ties, "backward"),
    "onnx-lp-pool-abs": (tuple(f"lp_pool{n}d" for n in (1, 2, 3)), _lp_abs, "forward"),
    "ort-nearest-half-pixel": (("interpolate",), _interp(_nearest_half_pixel), "forward"),
    "onnx-antialias-dropped": (("interpolate",), _interp(_antialias_dropped), "forward"),
    "ort-uint8-linear-truncated": (("interpolate",), _interp(_uint8_truncated, _truncate), "forward"),
    "scipy-zoom-corners-aligned": (("interpolate",), _interp(_corners_aligned), "forward"),
    "trt-grid-sample-align-corners": (("grid_sample",), _grid_corners_dropped, "forward"),
    "compile-fractional-max-pool-samples-axes": (("fractional_max_pool2d",), _fractional_axes_swapped, "forward"),
    "ort-roi-align-half-pixel": (("roi_align",), _roi_aligned_ignored, "forward"),
    "openvino-roi-align-sampling-ratio": (("roi_align", "ps_roi_align"), _roi_sampling_fixed, "forward"),
}


def implementation(bug: str, buggy: bool = True) -> Implementation:
    """The adapter reproducing known-bug class ``bug`` (``buggy=False``: the same adapter, bug switched off). It
    offers the class's ops only (the suite skips the others)."""
    ops, make, where = BUGS[bug]
    forward = {op: (make(op, buggy) if where == "forward" else getattr(poolspec, op)) for op in ops}
    backward = {op: make(op, buggy) for op in ops} if where == "backward" else {}
    return Implementation(f"known_bugs:{bug}{'' if buggy else ' (bug off)'}", forward.get, backward.get)


def __getattr__(name: str) -> Any:
    """As a module for ``--impl``: the functions of the class the environment variable KNOWN_BUG names
    (``KNOWN_BUG=ort-nearest-half-pixel poolspec conformance --impl conformance/examples/known_bugs.py``)."""
    import os

    bug = os.environ.get("KNOWN_BUG")
    if bug is None or bug not in BUGS or name.startswith("__"):
        raise AttributeError(name)
    impl = implementation(bug)
    fn = impl.backward(name.removesuffix("_backward")) if name.endswith("_backward") else impl.forward(name)
    if fn is None:
        raise AttributeError(name)
    return fn
