"""The card of grid_sample: its rules were read from torch 2.13's CPU kernels and checked against live torch
on random configurations (tests/test_grid_sample.py; scripts/grid_sample_rules.py restates the 2-d forward in
NumPy)."""

from __future__ import annotations

from typing import Any

from ...spec._card import Argument, Card, Example, Gradient, Port, Resolved
from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import check_bool, check_dtype, checked_shape, fail
from .. import Family

SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")

_GRID_NOTES = (
    "unnormalisation of a grid value g on an axis of size L: align_corners=True (g + 1) * ((L - 1) / 2) in 2-d, "
    "((g + 1) / 2) * (L - 1) in 3-d; False (g + 1) * (L / 2) - 0.5 in 2-d, ((g + 1) * L - 1) / 2 in 3-d (torch's "
    "vectorised 2-d CPU kernel and its scalar 3-d kernel round differently; each is followed)",
    "grid[..., 0] indexes the last spatial axis (x = W), grid[..., 1] the one before (y = H), grid[..., 2] D",
    "border: the coordinate is clipped to [0, L - 1]; its derivative is 0 where it was clipped, and also AT "
    "the two bounds (torch treats the borders as out of bounds for the gradient)",
    "reflection: about [0, L - 1] (align_corners=True) or [-0.5, L - 0.5] (False), then clipped to "
    "[0, L - 1]; 2-d: |c - lo| folded by the doubled span 2S (extra = a - trunc(a / 2S) * 2S, mirrored where "
    "extra > 2S - extra), 3-d: fmod by S with odd folds mirrored; the derivative is +-1 by the folds (+1 at "
    "c = lo) times the clip's; an axis of size 1 with align_corners=True reflects to 0 with derivative 0",
    "bilinear: taps floor(c) and floor(c) + 1 per axis, weights 1 - t and t (t = c - floor(c)); at an integer "
    "coordinate the grid gradient is the one-sided difference towards floor(c) + 1",
    "nearest: round half to even (nearbyint), then the in-bounds test; the grid gradient is 0",
    "bicubic (4-D only): the coordinate is unnormalised but NOT padded; taps floor(c) - 1 .. floor(c) + 2 with "
    "the cubic convolution A = -0.75; the padding rule is applied to each tap's integer coordinate, so the grid "
    "gradient has no padding factor",
    "zeros: taps outside [0, L - 1] read 0 (also for the clipped-to-range border taps of bilinear)",
    "grid values that are NaN or infinite are outside this card (torch's 2-d and 3-d kernels disagree on them)",
    "float16/bfloat16: coordinates, weights and sums in float32, rounded once",
)


def _resolve_grid_sample(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    mode, padding = a["mode"], a["padding_mode"]
    if not isinstance(mode, str) or mode not in SAMPLE_MODES:
        fail(op, "mode", mode, f"must be one of {', '.join(SAMPLE_MODES)}")
    if not isinstance(padding, str) or padding not in PADDING_MODES:
        fail(op, "padding_mode", padding, f"must be one of {', '.join(PADDING_MODES)}")
    align = a["align_corners"] is not None and check_bool(op, "align_corners", a["align_corners"])
    shape = checked_shape(op, "x", shape, (4, 5))
    n = len(shape) - 2
    grid = a["grid"]
    if not isinstance(grid, (tuple, list)):
        fail(op, "grid", grid, "must be given as the grid's shape (a tuple)", TypeError)
    grid = checked_shape(op, "grid.shape", grid, (n + 2,))
    if mode == "bicubic" and n != 2:
        fail(op, "mode", mode, "bicubic needs a 4-D input (N, C, H, W), as torch")
    for i in range(2, n + 2):
        if isinstance(shape[i], str):
            fail(op, "x", shape, f"spatial dimension {i} must be an integer, not a symbol", TypeError)
        if shape[i] == 0:
            fail(op, "x", shape, f"spatial dimension {i} is empty; grid_sample reads a non-empty image")
    if grid[-1] != n:
        fail(op, "grid.shape", grid, f"the last dimension must be {n} (one coordinate per spatial axis of x)")
    if not (isinstance(grid[0], str) or isinstance(shape[0], str)) and grid[0] != shape[0]:
        fail(op, "grid.shape", grid, f"the batch dimension must equal x's ({shape[0]})")
    if isinstance(grid[0], str) and isinstance(shape[0], str) and grid[0] != shape[0]:
        fail(op, "grid.shape", grid, f"the batch symbol must equal x's ({shape[0]!r})")
    for i in range(1, n + 1):
        if isinstance(grid[i], str):
            fail(op, "grid.shape", grid, f"output dimension {i} must be an integer, not a symbol", TypeError)
    check_dtype(op, dtype, card.dtypes)
    out = tuple(shape[:2]) + tuple(int(v) for v in grid[1:-1])
    params = dict(mode=mode, padding_mode=padding, align_corners=align, grid=tuple(grid),
                  in_spatial=tuple(int(v) for v in shape[2:]), out_spatial=out[2:])
    return Resolved(op, shape, out, params, True)


def _infer_grid(c: Card, shape: tuple[Any, ...], out: tuple[Any, ...]) -> dict[str, Any]:
    """The grid's shape (N, *O, n) that samples ``shape`` into ``out``."""
    if len(out) != len(shape):
        fail(c.name, "output_shape", out, f"must have the rank of input_shape {shape}")
    grid = (shape[0],) + out[2:] + (len(shape) - 2,)
    got = c.resolve(shape, None, grid=grid).output_shape
    if tuple(got) != out:
        fail(c.name, "output_shape", out, f"is not reachable (inferred {got})")
    return {"grid": grid}


def _card() -> Card:
    grid_args = (
        Argument("x", "array", constraints=("(N, C, H, W) or (N, C, D, H, W)", "spatial dimensions non-empty"),
                 description="the image (values are read from it)"),
        Argument("grid", "array", constraints=("(N, *O, n) with n spatial dimensions of x",
                                               "x's batch size, dtype and device"),
                 description="sampling positions, normalised to [-1, 1] per axis (x, y[, z] order)", like="x"),
        Argument("mode", "str", "bilinear", (f"one of {', '.join(SAMPLE_MODES)}", "bicubic: 4-D only"),
                 "the interpolation kernel"),
        Argument("padding_mode", "str", "zeros", (f"one of {', '.join(PADDING_MODES)}",),
                 "what positions outside the image read"),
        Argument("align_corners", "bool | None", None, ("None means False (torch's default, where it warns)",),
                 "-1 and 1 are the centres (True) or the outer edges (False) of the corner pixels"),
    )
    return Card(
        name="grid_sample", version=1, category="sampling",
        summary="Samples an image at data-dependent positions (spatial transformers, flow warping).",
        spatial_dims=(2, 3), input_ranks=(4, 5), dtypes=FLOATS, arguments=grid_args,
        shape_relation="(N, C, *S) sampled at grid (N, *O, n) gives (N, C, *O); per output point 1 (nearest), "
                       "2^n (bilinear) or 16 (bicubic) taps",
        determinism="the forward gathers; the input gradient is the transpose of a data-dependent gather, "
                    "computed as a sort of the tap indices and a segmented sum (no scatter, no atomics): "
                    "bit-identical across runs on every backend; the grid gradient gathers. Points are sampled "
                    "about 16 MiB of taps at a time (chunks fixed by the shapes; the input gradient adds the "
                    "chunks' sums in order; on JAX one step of a loop each, recomputed for the gradient), so "
                    "a dense grid costs O(grid + input + output) memory",
        gradient=Gradient("grid_sample_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "w.r.t. x and grid, to any order (both are differentiable inputs); forward mode "
                          "too, which torch lacks for grid_sampler", wrt=("x", "grid")),
        torch_reference="torch.nn.functional.grid_sample",
        notes=_GRID_NOTES,
        _resolve=_resolve_grid_sample,
        _infer=_infer_grid,
        outputs=(Port("output", "array", "(N, C, *O)", "x sampled at each grid point, x's dtype"),),
        examples=(Example(("N", 3, 64, 64), dict(grid=("N", 32, 32, 2))),
                  Example(("N", 1, 16, 16, 16), dict(grid=("N", 8, 8, 8, 3), padding_mode="border")),
                  Example((2, 3, 20, 30), dict(grid=(2, 7, 9, 2), mode="bicubic", align_corners=True))),
        torch_determinism="torch's CUDA backward of grid_sampler_2d/3d adds with atomicAdd and raises under "
                          "use_deterministic_algorithms(True) (pytorch#68959); its CPU backward is serial",
        shaped_ports=("grid",),
    )


FAMILY = Family('grid_sample', 'sampled', 20, lambda: [_card()])
