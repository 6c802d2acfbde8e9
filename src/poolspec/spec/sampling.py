"""Cards of the ops that read at data-dependent positions: grid_sample, affine_grid (its grid) and
fractional_max_pool2d/3d (windows placed by random samples).

Their rules were read from torch 2.13's CPU kernels and checked against live torch on random configurations
(tests/test_grid_sample.py; scripts/grid_sample_rules.py restates the 2-d forward in NumPy).
"""

from __future__ import annotations

from typing import Any

from ._card import Argument, Card, Example, Gradient, Port, Resolved
from ._rules import check_bool, check_dtype, fail, int_tuple, is_int, split_shape
from .pooling import JAX_TRANSFORMS, TORCH_TRANSFORMS

FLOATS = ("float16", "bfloat16", "float32", "float64")
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


def _shape(op: str, name: str, shape: tuple[Any, ...], ranks: tuple[int, ...]) -> tuple[Any, ...]:
    shape = tuple(shape)
    if len(shape) not in ranks:
        fail(op, name, shape, f"must have {' or '.join(str(r) for r in ranks)} dimensions, got {len(shape)}")
    for i, dim in enumerate(shape):
        if isinstance(dim, str):
            continue
        if not is_int(dim) or dim < 0:
            fail(op, name, shape, f"dimension {i} must be a non-negative int or a symbol", TypeError)
    return shape


def _resolve_grid_sample(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    mode, padding = a["mode"], a["padding_mode"]
    if not isinstance(mode, str) or mode not in SAMPLE_MODES:
        fail(op, "mode", mode, f"must be one of {', '.join(SAMPLE_MODES)}")
    if not isinstance(padding, str) or padding not in PADDING_MODES:
        fail(op, "padding_mode", padding, f"must be one of {', '.join(PADDING_MODES)}")
    align = a["align_corners"] is not None and check_bool(op, "align_corners", a["align_corners"])
    shape = _shape(op, "x", shape, (4, 5))
    n = len(shape) - 2
    grid = a["grid"]
    if not isinstance(grid, (tuple, list)):
        fail(op, "grid", grid, "must be given as the grid's shape (a tuple)", TypeError)
    grid = _shape(op, "grid.shape", grid, (n + 2,))
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


def _resolve_affine_grid(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    size = a["size"]
    if not isinstance(size, (tuple, list)) or not all(is_int(v) for v in size):
        fail(op, "size", size, "must be a tuple of 4 or 5 ints (N, C, H, W) or (N, C, D, H, W)", TypeError)
    size = tuple(int(v) for v in size)
    if len(size) not in (4, 5):
        fail(op, "size", size, "must have 4 (2-d) or 5 (3-d) entries, as torch")
    if min(size) <= 0:
        fail(op, "size", size, "every entry must be > 0")
    align = a["align_corners"] is not None and check_bool(op, "align_corners", a["align_corners"])
    n = len(size) - 2
    theta = _shape(op, "theta", shape, (3,))
    if tuple(theta[1:]) != (n, n + 1):
        fail(op, "theta", theta, f"must be (N, {n}, {n + 1}) for a size of {len(size)} entries")
    if not isinstance(theta[0], str) and theta[0] != size[0]:
        fail(op, "theta", theta, f"its batch dimension must equal size[0] ({size[0]})")
    check_dtype(op, dtype, card.dtypes)
    out = (theta[0],) + size[2:] + (n,)
    return Resolved(op, theta, out, dict(size=size, align_corners=align), True)


def _resolve_fractional(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    n = card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", a["kernel_size"], "every entry must be > 0 (torch accepts 0 and returns -inf)")
    size, ratio = a["output_size"], a["output_ratio"]
    if size is None and ratio is None:
        fail(op, "output_size", None, "one of output_size and output_ratio must be given")
    if size is not None:
        out = int_tuple(op, "output_size", size, n)
        if any(v < 0 for v in out):
            fail(op, "output_size", size, "every entry must be >= 0")
    else:
        items = ratio if isinstance(ratio, (tuple, list)) else (ratio,) * n
        if len(items) != n or not all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in items):
            fail(op, "output_ratio", ratio, f"must be a float or a tuple of {n} floats", TypeError)
        if not all(0 < float(r) < 1 for r in items):
            fail(op, "output_ratio", ratio, "every entry must be in (0, 1)")
        out = tuple(int(L * float(r)) for L, r in zip(spatial, items))  # torch: int(L * ratio)
    for i in range(n):
        # torch's rule: O + k - 1 <= S in 2-d, but O + k - 1 < S in 3-d
        if out[i] + k[i] - 1 > spatial[i] - (n == 3):
            rel = "<=" if n == 2 else "<"
            fail(op, "kernel_size", a["kernel_size"], f"is too large for the output: axis {i} needs output_size + "
                                                       f"kernel_size - 1 {rel} input size, got {out[i]} + {k[i]} - 1 "
                                                       f"and {spatial[i]} (torch's rule)")
    samples = a["_random_samples"]
    if samples is not None:
        if not isinstance(samples, (tuple, list)):
            fail(op, "_random_samples", samples, "must be given as its shape (a tuple)", TypeError)
        want = ((shape[0] if batched else 1), shape[-n - 1], n)
        samples = tuple(samples)
        if len(samples) != 3 or any(not isinstance(w, str) and not isinstance(s, str) and s != w
                                    for s, w in zip(samples, want)):
            fail(op, "_random_samples.shape", samples, f"must be (N, C, {n}) = {want} (N = 1 for an unbatched "
                                                       "input), one sample per plane and axis")
    ret = check_bool(op, "return_indices", a["return_indices"])
    check_dtype(op, dtype, card.dtypes)
    params = dict(kernel_size=k, output_size=out, return_indices=ret, in_spatial=spatial)
    return Resolved(op, tuple(shape), tuple(shape[:-n]) + out, params, batched)


def _fractional_cards() -> list[Card]:
    cards = []
    for n in (2, 3):
        dims = "(H, W)" if n == 2 else "(D, H, W)"
        order = "(W, H)" if n == 2 else "(D, H, W)"
        args = (
            Argument("x", "array", constraints=(f"(N, C, *S) or (C, *S), S = {dims}", "C and S non-empty"),
                     description="the input array"),
            Argument("kernel_size", "int | tuple[int, ...]",
                     constraints=("entries > 0", "output_size + kernel_size - 1 " + ("<= S" if n == 2 else "< S "
                                                                                      "(3-d: strictly, as torch)")),
                     description="the window size"),
            Argument("output_size", "int | tuple[int, ...] | None", None, ("exclusive with output_ratio",),
                     "the output spatial size"),
            Argument("output_ratio", "float | tuple[float, ...] | None", None, ("entries in (0, 1)",),
                     "output size int(S * ratio) (a single float is accepted; torch 2.13 needs a tuple)"),
            Argument("return_indices", "bool", False, (), "also return int64 flat indices into the input plane"),
            Argument("_random_samples", "array | None", None,
                     (f"(N, C, {n}) in [0, 1], x's dtype (N = 1 unbatched)",),
                     f"one sample per plane and axis, axis order {order} as torch; drawn when None", like="x"),
        )
        cards.append(Card(
            name=f"fractional_max_pool{n}d", version=1, category="pooling",
            summary=f"{n}-d fractional max pooling (windows at pseudo-random fractional strides).",
            spatial_dims=(n,), input_ranks=(n + 1, n + 2), dtypes=FLOATS, arguments=args,
            shape_relation="O = output_size, or int(S * output_ratio); window i of an axis starts at "
                           "int((i + u) * alpha) - int(u * alpha), alpha = (S - k) / (O - 1), the last at S - k",
            determinism="the windows are fixed by the samples; the forward scans them axis by axis (torch's "
                        "rule, O(input) memory whatever the window) and the backward routes each gradient to its "
                        "winner by a sort and a segmented sum (overlapping windows share winners): bit-identical "
                        "on every backend (torch's CUDA backward uses atomicAdd)",
            gradient=Gradient(f"fractional_max_pool{n}d_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                              "routes to the winners; its derivative gathers at them"),
            torch_reference=f"torch.nn.functional.fractional_max_pool{n}d",
            notes=("window starts per axis, in x's dtype as torch computes them: alpha = (S - k) / (O - 1), "
                   "start_i = int((i + u) * alpha) - int(u * alpha) for i < O - 1, start_{O-1} = S - k "
                   "(O = 1: S - k)",
                   f"sample u of an axis: _random_samples[n, c, j], j indexing the axes in the order {order}",
                   "the first maximum in row-major window order wins; a NaN wins over numbers and the last "
                   "NaN wins (torch's `val > max || isnan(val)`)",
                   "when _random_samples is None: on torch torch.rand((N, C, n), dtype, device) from torch's "
                   "global generator (torch's own draw, so torch.manual_seed reproduces torch's windows); "
                   "elsewhere numpy.random.default_rng(rng) on the host (rng: None, an int seed or a "
                   "Generator), or jax.random.uniform(rng, ...) when rng is a JAX key (required under jax.jit)",
                   "kernel_size 0 and samples outside [0, 1] are rejected (torch returns -inf or reads out of "
                   "bounds)"),
            _resolve=_resolve_fractional,
            outputs=(Port("output", "array", "(N, C, *O) or (C, *O)", "the window maxima, x's dtype"),
                     Port("indices", "int64 array", "(N, C, *O) or (C, *O)",
                          "with return_indices=True: the flat index of each winner in the input plane")),
            examples=(Example(("N", 16, 32, 32) if n == 2 else ("N", 4, 16, 16, 16),
                              dict(kernel_size=3 if n == 2 else 2, output_ratio=0.5)),
                      Example((2, 3) + (9,) * n, dict(kernel_size=2, output_size=5))),
            torch_determinism="torch's CUDA backward of fractional_max_pool2d/3d uses atomicAdd",
            shaped_ports=("_random_samples",),
        ))
    return cards


def sampling_cards() -> list[Card]:
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
    theta_args = (
        Argument("theta", "array", constraints=("(N, 2, 3) for a 4-entry size, (N, 3, 4) for 5", "floating"),
                 description="a batch of affine matrices acting on normalised (x, y[, z], 1)"),
        Argument("size", "tuple[int, ...]", constraints=("(N, C, H, W) or (N, C, D, H, W)", "entries > 0"),
                 description="the size of the image the grid will sample into"),
        Argument("align_corners", "bool | None", None, ("None means False (torch's default, where it warns)",),
                 "as grid_sample's"),
    )
    return [
        Card(
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
            outputs=(Port("output", "array", "(N, C, *O)", "x sampled at each grid point, x's dtype"),),
            examples=(Example(("N", 3, 64, 64), dict(grid=("N", 32, 32, 2))),
                      Example(("N", 1, 16, 16, 16), dict(grid=("N", 8, 8, 8, 3), padding_mode="border")),
                      Example((2, 3, 20, 30), dict(grid=(2, 7, 9, 2), mode="bicubic", align_corners=True))),
            torch_determinism="torch's CUDA backward of grid_sampler_2d/3d adds with atomicAdd and raises under "
                              "use_deterministic_algorithms(True) (pytorch#68959); its CPU backward is serial",
            shaped_ports=("grid",),
        ),
        Card(
            name="affine_grid", version=1, category="sampling",
            summary="The sampling grid of a batch of affine transforms (with grid_sample: a spatial transformer).",
            spatial_dims=(2, 3), input_ranks=(3,), dtypes=FLOATS, arguments=theta_args,
            shape_relation="theta (N, n, n + 1) and size (N, C, *S) give a grid (N, *S, n)",
            determinism="a matrix product with a fixed base grid: deterministic on every backend",
            gradient=Gradient("affine_grid_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                              "linear in theta: the backward is the base grid's transpose product"),
            torch_reference="torch.nn.functional.affine_grid",
            notes=("the base grid on an axis of size L: torch.linspace(-1, 1, L) (its symmetric formula: from -1 "
                   "for the first half of the points, from 1 for the rest), times (L - 1) / L when "
                   "align_corners=False; an axis of size 1 is the single point 0",
                   "grid[n, ..., i] = sum_k base[..., k] * theta[n, i, k], base = (x, y[, z], 1)"),
            _resolve=_resolve_affine_grid,
            outputs=(Port("grid", "array", "(N, *S, n)", "normalised sampling positions, theta's dtype"),),
            examples=(Example(("N", 2, 3), dict(size=(4, 3, 32, 32))),
                      Example((2, 3, 4), dict(size=(2, 1, 8, 8, 8), align_corners=True))),
            torch_determinism="deterministic (a batched matrix product)",
        ),
    ] + _fractional_cards()
