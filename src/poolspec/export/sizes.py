"""interpolate's calls with ``size=`` in place of ``scale_factor`` where that is the same call: what the exporters
write for libraries whose resize takes sizes only (Burn's)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..conformance import golden
from ..plans.resample import ratio


def _nearest_ratio_type(mode: str, dtype: str) -> type:
    if mode in ("nearest", "nearest-exact"):
        return np.float32  # torch computes nearest in float for every dtype
    return np.float64 if dtype == "float64" else np.float32


def size_arguments(case: golden.Golden, input_shape: tuple[int, ...]) -> tuple[dict[str, Any], bool]:
    """The arguments with ``size=`` in place of ``scale_factor`` where that is the same call: the scale does not
    reach the kernel (recompute_scale_factor, area, align_corners) or its reciprocal is L/O in the kernel's
    compute type on every axis. Returns (arguments, whether they are size-only)."""
    args = dict(case.arguments)
    if args.get("scale_factor") is None:  # (interpolate's; no other op has a scale)
        return args, True
    n = len(input_shape) - 2
    sf = args["scale_factor"]
    sfs = tuple(sf) if isinstance(sf, (tuple, list)) else (sf,) * n
    sizes = tuple(int(math.floor(float(L) * s)) for L, s in zip(input_shape[2:], sfs))
    if min(sizes) < 1:  # an error case: there is no size call to compare
        return args, False
    mode, ac = args["mode"], bool(args.get("align_corners"))
    ctype = _nearest_ratio_type(mode, case.dtype)
    reaches = not args.get("recompute_scale_factor") and mode != "area"
    same = not reaches or all(ratio(L, O, ac, s, ctype) == ratio(L, O, ac, None, ctype)
                              for L, O, s in zip(input_shape[2:], sizes, sfs))
    if not same:
        return args, False
    out = {k: v for k, v in args.items() if k not in ("scale_factor", "recompute_scale_factor")}
    out["size"] = sizes
    return out, True
