"""roi_pool's conformance record: boxes inside, on half-integer coordinates after scaling (std::round's ties, negative
ones included), partly and wholly outside (empty bins), degenerate, negative and larger than the image; values with
ties, NaN, windows of -inf only and (float64) values below -FLT_MAX; K = 0, many rois on one image, spatial scales;
float64, float32, float16 (torchvision's half arithmetic) and bfloat16; and the refused calls; ps_roi_pool's likewise
(finite values: it averages), channels not a multiple of PH * PW refused. Its reference vectors
come from torchvision 0.29.1 (torch 2.14.1), written by ``scripts/generate_golden_roi_align.py --op roi_pool``
(torch 2.13, which writes the other families', has no torchvision). The list-of-boxes form is tested against these
cases in tests/test_roi_pool.py (a stored case holds the (K, 5) form)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np

from ...conformance.cases import Case, GoldenCase, _as
from ...conformance.families import Family
from .._roi import conformance as roi

# the kinds of boxes a case's synthesis draws, by flag
_KINDS = ("inside", "half", "partly_outside", "outside", "degenerate", "negative", "large")
# the kinds of values, by flag
_VALUES = ("ties", "nan", "neg_inf_window", "below_flt_max")


def _case(shape: tuple[int, ...], K: int, size: object, scale: float, flags: tuple[str, ...]) -> Case:
    return Case("roi_pool", shape, dict(output_size=size, spatial_scale=scale), flags, {"boxes": (K, 5)})


def roi_pool_grid() -> list[Case]:
    """Each kind of box with each kind of values and two output sizes, plus K = 0, many rois on one image, spatial
    scales, a 1 x 1 and a large output, a 1-pixel image."""
    out = []
    for kind, values, size in itertools.product(_KINDS, _VALUES, ((3, 2), 4)):
        out.append(_case((2, 3, 7, 9), 4, size, 1.0, ("boxes_" + kind, "values_" + values)))
    out += [_case((2, 2, 5, 6), 0, 3, 1.0, ("no_rois",)),
            _case((2, 2, 5, 6), 0, (2, 3), 0.5, ("no_rois", "spatial_scale")),
            _case((1, 2, 9, 8), 24, (2, 2), 1.0, ("many_rois", "boxes_mixed", "values_ties")),
            _case((1, 2, 9, 8), 24, (5, 3), 1.0, ("many_rois", "boxes_mixed", "values_nan")),
            _case((2, 3, 12, 10), 5, 7, 0.25, ("spatial_scale", "boxes_mixed", "values_ties")),
            _case((2, 3, 12, 10), 5, (1, 1), 0.5, ("spatial_scale", "boxes_half", "values_ties")),
            _case((2, 3, 12, 10), 6, (3, 3), 2.0, ("spatial_scale", "boxes_half", "values_ties")),
            _case((1, 1, 1, 1), 3, 2, 1.0, ("one_pixel", "boxes_mixed", "values_ties")),
            _case((3, 1, 4, 4), 6, (4, 1), 2.0, ("spatial_scale", "boxes_mixed", "values_neg_inf_window")),
            _case((1, 2, 6, 6), 3, (0, 2), 1.0, ("empty_output", "boxes_mixed", "values_ties"))]
    return out


def roi_pool_random(count: int = 24, seed: int = 127) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        shape, K, size, scale = roi.random_call(r)
        out.append(_case(shape, K, size, scale, ("random", "boxes_mixed", "values_" + r.choice(_VALUES))))
    return out


def _boxes(rng: np.random.Generator, kinds: tuple[str, ...], K: int, N: int, H: int, W: int,
           scale: float) -> np.ndarray:
    """K rois (batch index, x1, y1, x2, y2) in box coordinates (before spatial_scale), on a grid of quarters of the
    scaled coordinates so that they are exact in every float dtype (half: on .5 after scaling, rounding's ties)."""
    out = np.zeros((K, 5))
    for k in range(K):
        kind = kinds[k % len(kinds)]
        if kind == "half":
            a, b = np.sort(rng.integers(-3, W + 2, 2) + 0.5), np.sort(rng.integers(-3, H + 2, 2) + 0.5)
        elif kind == "negative":  # x2 < x1: one cell
            a, b = -np.sort(-rng.uniform(0, W, 2)), -np.sort(-rng.uniform(0, H, 2))
        else:  # the shared kinds (large: larger than the image)
            a, b = roi.corners(rng, kind, W, H)
        a, b = np.round(a * 4) / 4, np.round(b * 4) / 4
        out[k] = [rng.integers(0, N) + rng.choice([0.0, 0.5]), a[0] / scale, b[0] / scale, a[1] / scale,
                  b[1] / scale]
    return out


def _values(rng: np.random.Generator, case: GoldenCase) -> np.ndarray:
    x = np.round(rng.standard_normal(case.shape) * 2) / 4  # a few levels: ties
    pick = rng.random(case.shape)
    if "values_nan" in case.flags:
        x[pick < 0.25] = np.nan
    elif "values_neg_inf_window" in case.flags:
        x[pick < 0.6] = -np.inf
        x[:, :, : max(1, case.shape[2] // 2), :] = -np.inf  # whole windows of -inf
    elif "values_below_flt_max" in case.flags:
        x[pick < 0.5] = -1e300  # below -FLT_MAX in float64 (-inf in the narrower dtypes)
        x[:, :, : max(1, case.shape[2] // 2), :] = -1e300
    return x


def _roi_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    N, _, H, W = case.shape
    kinds = roi.box_kinds(case, _KINDS)
    boxes = _boxes(rng, kinds, case.ports["boxes"][0], N, H, W, case.args["spatial_scale"])
    return {"input": _as(_values(rng, case), case.dtype), "boxes": _as(boxes, case.dtype)}


def _dtype_rule(case: Any, dtype: str) -> tuple[tuple[str, ...], str | None]:
    """bfloat16, which torchvision refuses: the box arithmetic in float32."""
    return (("float32_box_arithmetic",) if dtype == "bfloat16" else ()), None


def _roi_errors() -> list[GoldenCase]:
    return roi.errors("roi_pool", dict(output_size=2, spatial_scale=1.0),
                      [("float output size", (1, 2, 4, 4), (1, 5), dict(output_size=2.0), "TypeError"),
                       ("infinite spatial scale", (1, 2, 4, 4), (1, 5), dict(spatial_scale=float("inf")),
                        "ValueError")])


def _ps_case(shape: tuple[int, ...], K: int, size: object, scale: float, flags: tuple[str, ...]) -> Case:
    return Case("ps_roi_pool", shape, dict(output_size=size, spatial_scale=scale), flags, {"boxes": (K, 5)})


def ps_roi_pool_grid() -> list[Case]:
    """ps_roi_pool: each kind of box (windows reaching the last row and column, where torchvision's forward and
    backward differ, among them) with two output sizes (the second with two output channels), plus K = 0, many rois,
    spatial scales, a 1 x 1 output and a 1-pixel image (every forward window empty)."""
    out = []
    sizes: tuple[tuple[object, int, int], ...] = (((3, 2), 6, 1), (2, 4, 2))  # (output_size, PH * PW, channels)
    for kind, (size, n, co) in itertools.product(_KINDS, sizes):
        out.append(_ps_case((2, n * co, 7, 9), 4, size, 1.0, ("boxes_" + kind,)))
    out += [_ps_case((2, 4, 5, 6), 0, 2, 1.0, ("no_rois",)),
            _ps_case((1, 8, 9, 8), 24, (2, 2), 1.0, ("many_rois", "boxes_mixed")),
            _ps_case((2, 49, 12, 10), 5, 7, 0.25, ("spatial_scale", "boxes_mixed")),
            _ps_case((2, 3, 12, 10), 5, (1, 1), 0.5, ("spatial_scale", "boxes_mixed")),
            _ps_case((1, 4, 1, 1), 3, 2, 1.0, ("one_pixel", "boxes_mixed")),
            _ps_case((3, 4, 4, 4), 6, (4, 1), 2.0, ("spatial_scale", "boxes_mixed"))]
    return out


def ps_roi_pool_random(count: int = 16, seed: int = 131) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(count):
        size = (r.randint(1, 3), r.randint(1, 3))
        shape = (r.randint(1, 3), size[0] * size[1] * r.randint(1, 2), r.randint(1, 9), r.randint(1, 9))
        out.append(_ps_case(shape, r.choice((0, 1, 2, 5)), size, r.choice((1.0, 0.5, 2.0, 0.25)),
                            ("random", "boxes_mixed")))
    return out


def _ps_errors() -> list[GoldenCase]:
    base: dict[str, object] = dict(output_size=2, spatial_scale=1.0)
    e: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, object], str]] = [
        ("channels not a multiple", (1, 6, 4, 4), (1, 5), {}, "ValueError"),
        ("zero output size", (1, 4, 4, 4), (1, 5), dict(output_size=(0, 2)), "ValueError"),
        ("boxes shape", (1, 4, 4, 4), (3, 4), {}, "ValueError"),
        ("input rank", (4, 4, 4), (1, 5), {}, "ValueError"),
        ("infinite spatial scale", (1, 4, 4, 4), (1, 5), dict(spatial_scale=float("inf")), "ValueError")]
    return [GoldenCase(f"ps_roi_pool-e{i:03d}", "ps_roi_pool", x, {**base, **args}, (flag.replace(" ", "_"),),
                       "float64", error=error, ports={"boxes": boxes}) for i, (flag, x, boxes, args, error) in
            enumerate(e)]


RECORD = Family("roi_pool", ("roi_pool", "ps_roi_pool"), lambda: roi_pool_grid() + ps_roi_pool_grid(),
                lambda: roi_pool_random() + ps_roi_pool_random(), _roi_inputs,
                ports=("input", "boxes"), differentiable=("input",),
                dtypes=(("float32", 2), ("float16", 5), ("bfloat16", 7)), dtype_rule=_dtype_rule,
                errors=lambda: _roi_errors() + _ps_errors(), reference="torchvision",
                tolerance={"float64": (1e-12, 1e-12), "float32": (1e-6, 1e-6)})
