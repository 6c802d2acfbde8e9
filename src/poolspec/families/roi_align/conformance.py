"""roi_align's conformance record: aligned both ways, adaptive and fixed sampling ratios, boxes inside, on integer
and half-integer corners, partly and wholly outside, degenerate, negative and larger than the image, K = 0 and
many rois on one image, and the refused calls; ps_roi_align's likewise (its NaN and -0.0 bins, channels not a
multiple of PH * PW refused). Its reference vectors come from torchvision 0.29.1 (torch 2.14.1),
written by ``scripts/generate_golden_roi_align.py`` (torch 2.13, which writes the other families', has no
torchvision)."""

from __future__ import annotations

import itertools
import random

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as
from ...conformance.families import Family
from .._roi import conformance as roi

# the kinds of boxes a case's synthesis draws, by flag
_KINDS = ("inside", "corners", "partly_outside", "outside", "degenerate", "negative", "large")


def _case(shape: tuple[int, ...], K: int, size: object, scale: float, ratio: int, aligned: bool,
          flags: tuple[str, ...]) -> Case:
    return Case("roi_align", shape, dict(output_size=size, spatial_scale=scale, sampling_ratio=ratio,
                                         aligned=aligned), flags + (("aligned",) if aligned else ()), {"boxes": (K, 5)})


def roi_align_grid() -> list[Case]:
    """Each kind of box with aligned both ways and sampling ratios adaptive (-1, 0) and fixed (1, 2), plus K = 0,
    many rois on one image, spatial scales, a 1 x 1 and a large output, a 1-pixel image."""
    out = []
    for kind, aligned, ratio in itertools.product(_KINDS, (False, True), (-1, 0, 2)):
        out.append(_case((2, 3, 7, 9), 4, (3, 2), 1.0, ratio, aligned, ("boxes_" + kind,
                                                                         "adaptive" if ratio <= 0 else "fixed_ratio")))
    out += [_case((2, 2, 5, 6), 0, 3, 1.0, -1, False, ("no_rois",)),
            _case((2, 2, 5, 6), 0, (2, 3), 0.5, 2, True, ("no_rois", "fixed_ratio")),
            _case((1, 2, 9, 8), 24, (2, 2), 1.0, -1, False, ("many_rois", "boxes_mixed", "adaptive")),
            _case((1, 2, 9, 8), 24, (2, 2), 1.0, 1, True, ("many_rois", "boxes_mixed", "fixed_ratio")),
            _case((2, 3, 12, 10), 5, 7, 0.25, -1, True, ("spatial_scale", "boxes_mixed", "adaptive")),
            _case((2, 3, 12, 10), 5, (1, 1), 0.5, 3, False, ("spatial_scale", "boxes_mixed", "fixed_ratio")),
            _case((1, 1, 1, 1), 3, 2, 1.0, -1, False, ("one_pixel", "boxes_mixed", "adaptive")),
            _case((3, 1, 4, 4), 6, (4, 1), 2.0, 0, True, ("spatial_scale", "boxes_mixed", "adaptive"))]
    return out


def roi_align_random(count: int = 24, seed: int = 113) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        shape, K, size, scale = roi.random_call(r)
        out.append(_case(shape, K, size, scale, r.choice((-1, 0, 1, 2, 3)), r.random() < 0.5,
                         ("random", "boxes_mixed")))
    return out


def _boxes(rng: np.random.Generator, kinds: tuple[str, ...], K: int, N: int, H: int, W: int, scale: float,
           aligned: bool) -> np.ndarray:
    """K rois (batch index, x1, y1, x2, y2) in box coordinates (before spatial_scale), on a grid of quarters so
    that they are exact in every float dtype."""
    out = np.zeros((K, 5))
    for k in range(K):
        kind = kinds[k % len(kinds)]
        if kind == "corners":
            a, b = np.sort(rng.integers(-1, 2 * W + 2, 2) / 2), np.sort(rng.integers(-1, 2 * H + 2, 2) / 2)
        elif kind == "negative":  # x2 < x1 (aligned: by less than a bin, which torchvision refuses beyond)
            a, b = -np.sort(-rng.uniform(0, W, 2)), -np.sort(-rng.uniform(0, H, 2))
            if aligned:
                a, b = np.array([a[0], a[0] - 0.5]), np.array([b[0], b[0] - 0.25])
        else:  # the shared kinds (large: many adaptive samples)
            a, b = roi.corners(rng, kind, W, H)
        out[k] = [rng.integers(0, N), a[0] / scale, b[0] / scale, a[1] / scale, b[1] / scale]
    return np.round(out * 4) / 4


def _roi_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    N, _, H, W = case.shape
    kinds = roi.box_kinds(case, _KINDS)
    if "aligned" in case.flags and "boxes_mixed" in case.flags:
        kinds = tuple(k for k in _KINDS if k != "negative")  # mixed aligned boxes: no refused ones by chance
    boxes = _boxes(rng, kinds, case.ports["boxes"][0], N, H, W, case.args["spatial_scale"], "aligned" in case.flags)
    x = np.round(rng.standard_normal(case.shape) * 4) / 4
    return {"input": _as(x, case.dtype), "boxes": _as(boxes, case.dtype)}


def _roi_errors() -> list[GoldenCase]:
    return roi.errors("roi_align", dict(output_size=2, spatial_scale=1.0, sampling_ratio=-1, aligned=False),
                      [("float sampling ratio", (1, 2, 4, 4), (1, 5), dict(sampling_ratio=2.0), "TypeError")])


def _ps_case(shape: tuple[int, ...], K: int, size: object, scale: float, ratio: int, flags: tuple[str, ...]) -> Case:
    return Case("ps_roi_align", shape, dict(output_size=size, spatial_scale=scale, sampling_ratio=ratio), flags,
                {"boxes": (K, 5)})


def ps_roi_align_grid() -> list[Case]:
    """ps_roi_align: each kind of box (degenerate and negative ones give NaN and -0.0 bins with an adaptive grid)
    with adaptive (-1, 0) and fixed (2, two output channels) sampling ratios, plus K = 0, many rois,
    spatial scales, a 1 x 1 output and a 1-pixel image."""
    out = []
    for kind, ratio in itertools.product(_KINDS, (-1, 0, 2)):
        co = 2 if ratio == 2 else 1  # (one and two output channels; the golden store stays small)
        out.append(_ps_case((2, 6 * co, 7, 9), 4, (3, 2), 1.0, ratio, (
            "boxes_" + kind, "adaptive" if ratio <= 0 else "fixed_ratio")))
    out += [_ps_case((2, 4, 5, 6), 0, 2, 1.0, -1, ("no_rois",)),
            _ps_case((1, 8, 9, 8), 24, (2, 2), 1.0, -1, ("many_rois", "boxes_mixed", "adaptive")),
            _ps_case((1, 4, 9, 8), 24, (2, 2), 1.0, 1, ("many_rois", "boxes_mixed", "fixed_ratio")),
            _ps_case((2, 49, 12, 10), 5, 7, 0.25, -1, ("spatial_scale", "boxes_mixed", "adaptive")),
            _ps_case((2, 3, 12, 10), 5, (1, 1), 0.5, 3, ("spatial_scale", "boxes_mixed", "fixed_ratio")),
            _ps_case((1, 4, 1, 1), 3, 2, 1.0, -1, ("one_pixel", "boxes_mixed", "adaptive")),
            _ps_case((3, 4, 4, 4), 6, (4, 1), 2.0, 0, ("spatial_scale", "boxes_mixed", "adaptive"))]
    return out


def ps_roi_align_random(count: int = 16, seed: int = 127) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        size = (r.randint(1, 3), r.randint(1, 3))
        shape = (r.randint(1, 3), size[0] * size[1] * r.randint(1, 2), r.randint(1, 9), r.randint(1, 9))
        out.append(_ps_case(shape, r.choice((0, 1, 2, 5)), size, r.choice((1.0, 0.5, 2.0, 0.25)),
                            r.choice((-1, 0, 1, 2, 3)), ("random", "boxes_mixed")))
    return out


def _ps_errors() -> list[GoldenCase]:
    base = dict(output_size=2, spatial_scale=1.0, sampling_ratio=-1)
    e: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, object], str]] = [
        ("channels not a multiple", (1, 6, 4, 4), (1, 5), {}, "ValueError"),
        ("zero output size", (1, 4, 4, 4), (1, 5), dict(output_size=(0, 2)), "ValueError"),
        ("boxes shape", (1, 4, 4, 4), (3, 4), {}, "ValueError"),
        ("input rank", (4, 4, 4), (1, 5), {}, "ValueError"),
        ("float sampling ratio", (1, 4, 4, 4), (1, 5), dict(sampling_ratio=2.0), "TypeError")]
    return [GoldenCase(f"ps_roi_align-e{i:03d}", "ps_roi_align", x, {**base, **args}, (flag.replace(" ", "_"),),
                       "float64", error=error, ports={"boxes": boxes}) for i, (flag, x, boxes, args, error) in
            enumerate(e)]


RECORD = Family("roi_align", ("roi_align", "ps_roi_align"), lambda: roi_align_grid() + ps_roi_align_grid(),
                lambda: roi_align_random() + ps_roi_align_random(), _roi_inputs,
                ports=("input", "boxes"), differentiable=("input",),
                dtypes=(("float32", 2), ("float16", 7), ("bfloat16", 7)),
                half_flags=("float32_compute",), errors=lambda: _roi_errors() + _ps_errors(), reference="torchvision",
                tolerance={"float64": (1e-12, 1e-12), "float32": (2e-5, 5e-5)})
