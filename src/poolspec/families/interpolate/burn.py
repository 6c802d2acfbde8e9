"""interpolate's Burn rule: ``burn_tensor::module::interpolate`` with ``InterpolateOptions`` (2-d, sizes, no
antialias)."""

from __future__ import annotations

import numpy as np

from ...conformance import golden
from ...export.burn import MODES, BurnOp, arr, flag
from ...export.sizes import size_arguments


def _interpolate_call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool, n: int) -> str:
    args = case.arguments
    size = size_arguments(case, shape)[0]["size"]
    options = (f"InterpolateOptions::new(InterpolateMode::{MODES[args['mode']]})"
               f".with_align_corners({flag(args.get('align_corners'))})")
    return f"interpolate({x}, {arr(size, n)}, {options})"


def _interpolate_eligible(case: golden.Golden, a: dict[str, np.ndarray], n: int) -> bool:
    args = case.arguments
    if args.get("antialias") or args["mode"] not in MODES:
        return False
    return size_arguments(case, tuple(a["input"].shape))[1]


RULE = BurnOp(_interpolate_call, _interpolate_eligible, ranks=(2,),
              uses=("use burn_tensor::ops::{InterpolateMode, InterpolateOptions};",))
