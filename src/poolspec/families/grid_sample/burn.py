"""grid_sample's Burn rule: ``Tensor::grid_sample_2d`` (bilinear and nearest). Burn's grid_sample_2d has no
autodiff (burn#4723): its backward tests are emitted ignored, with the vectors a porter needs to implement it."""

from __future__ import annotations

import numpy as np

from ...conformance import golden
from ...export.burn import MAX_ELEMENTS, MODES, PADDING, BurnOp, flag


def _grid_call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool, n: int) -> str:
    args = case.arguments
    grid = "grid" if x == "x" else "grid.clone()"
    return (f"{x}.grid_sample_2d({grid}, GridSampleOptions::new(InterpolateMode::{MODES[args['mode']]})"
            f".with_padding_mode(GridSamplePaddingMode::{PADDING[args['padding_mode']]})"
            f".with_align_corners({flag(args.get('align_corners'))}))")


def _grid_eligible(case: golden.Golden, a: dict[str, np.ndarray], n: int) -> bool:  # the modes Burn has
    return (case.arguments["mode"] in ("bilinear", "nearest")
            and a["grid"].size + a["input"].size + a["output"].size <= MAX_ELEMENTS)


RULE = BurnOp(_grid_call, _grid_eligible, ranks=(2,), module_fn=False,
              uses=("use burn_tensor::ops::{GridSampleOptions, GridSamplePaddingMode, InterpolateMode};",),
              no_autodiff="burn#4723: grid_sample_2d has no autodiff backward yet")
