"""The card of ``interpolate`` (docs/TORCH_NUMERICS.md section 5): its argument rules and output size."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...spec._card import Argument, Card, Example, Gradient, Port, Resolved
from ...spec._pools import JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import as_int, check_bool, check_dtype, fail, is_int, size_argument
from .. import Family

MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area", "lanczos")
_RANKS = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5), "linear": (3,),
          "bilinear": (4,), "bicubic": (4,), "trilinear": (5,), "lanczos": (4,)}
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear", "lanczos")
FLOATS = ("float16", "bfloat16", "float32", "float64")
_ANTIALIAS = ("bilinear", "bicubic", "lanczos")


def _scale(op: str, value: Any, n: int, mode: str = "") -> tuple[float, ...]:
    def one(v: Any) -> float:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            fail(op, "scale_factor", value, f"must be a float or a tuple of {n} floats", TypeError)
        f = float(v)
        if mode == "area" and f == 0:
            return f  # torch's area mode is adaptive pooling, which accepts an empty output
        if not math.isfinite(f) or f <= 0:
            fail(op, "scale_factor", value, "every entry must be finite and > 0")
        return f

    if isinstance(value, (tuple, list)):
        if len(value) != n:
            fail(op, "scale_factor", value, f"must have {n} entries, one per spatial dimension")
        return tuple(one(v) for v in value)
    return (one(value),) * n


def _resolve_interpolate(card: Card, shape: tuple[Any, ...], dtype: str | None,
                         a: dict[str, Any]) -> Resolved:
    op = card.name
    mode = a["mode"]
    if not isinstance(mode, str) or mode not in MODES:
        fail(op, "mode", mode, f"must be one of {', '.join(MODES)}")
    if len(shape) not in _RANKS[mode]:
        ranks = " or ".join(f"{r}-D" for r in _RANKS[mode])
        fail(op, "x", tuple(shape), f"mode {mode!r} needs a {ranks} input (N, C, *spatial), got {len(shape)}-D")
    n = len(shape) - 2
    spatial = []
    for i, dim in enumerate(shape):
        if isinstance(dim, str):
            if i >= 2:
                fail(op, "x", tuple(shape), f"spatial dimension {i} must be an integer, not a symbol",
                     TypeError)
            continue
        if not is_int(dim) or dim < 0:
            fail(op, "x", tuple(shape), f"dimension {i} must be a non-negative int")
        if dim == 0 and i > 0:
            fail(op, "x", tuple(shape), f"dimension {i} is empty; only the batch dimension may be 0")
        if i >= 2:
            spatial.append(int(dim))
    check_dtype(op, dtype, card.dtypes)
    if dtype is not None and dtype not in FLOATS and mode not in ("nearest", "nearest-exact", "bilinear", "bicubic",
                                                                  "lanczos"):
        fail(op, "x.dtype", dtype, f"is not supported with mode {mode!r}: uint8 input is resampled by nearest, "
                                   "nearest-exact, bilinear, bicubic and lanczos, as torch's (convert to a floating "
                                   "dtype first)", TypeError)
    if dtype is not None and dtype not in FLOATS and mode == "lanczos" and not a["antialias"]:
        fail(op, "x.dtype", dtype, "uint8 lanczos needs antialias=True, as torch's (poolspec's Lanczos-3 without "
                                   "antialias takes floating input)", TypeError)
    size, sf = a["size"], a["scale_factor"]
    if (size is None) == (sf is None):
        fail(op, "size", size, "exactly one of size and scale_factor must be given "
                               f"(scale_factor={sf!r})")
    align = a["align_corners"]
    if align is not None:
        align = check_bool(op, "align_corners", align)
        if mode not in _INTERPOLATING:
            fail(op, "align_corners", align, "can only be set with the interpolating modes: "
                                             "linear | bilinear | bicubic | trilinear")
        if mode == "lanczos" and align:
            fail(op, "align_corners", align, "must be False for lanczos")
    align = bool(align)
    recompute = a["recompute_scale_factor"]
    if recompute is not None:
        recompute = check_bool(op, "recompute_scale_factor", recompute)
    antialias = check_bool(op, "antialias", a["antialias"])
    if antialias and (mode not in _ANTIALIAS or n != 2):
        fail(op, "antialias", antialias, "is restricted to bilinear, bicubic and lanczos modes and "
                                         "requires a 4-D input")
    if size is not None:
        if recompute:
            fail(op, "recompute_scale_factor", recompute, "is not meaningful with an explicit size")
        if is_int(size):
            items = (size,) * n
        elif isinstance(size, (tuple, list)):
            items = tuple(size)
            if len(items) != n:
                fail(op, "size", size, f"must have {n} entries, one per spatial dimension")
        else:
            fail(op, "size", size, f"must be an int or a tuple of {n} ints", TypeError)
        out = tuple(as_int(op, "size", v, size) for v in items)
        if any(o < 0 for o in out) or (mode != "area" and any(o == 0 for o in out)):
            fail(op, "size", size, "every entry must be > 0 (area, an adaptive average pool, also takes 0)")
        scales: tuple[float | None, ...] = (None,) * n
    else:
        sfs = _scale(op, sf, n, mode)
        # torch: O = floor(float(L) * sf), in double precision
        out = tuple(int(math.floor(float(L) * f)) for L, f in zip(spatial, sfs))
        if any(o == 0 for o in out) and mode != "area":
            fail(op, "scale_factor", sf, f"gives output size {out} for input {tuple(spatial)}; "
                                         "every output size must be > 0")
        keep = not recompute and mode != "area"
        scales = sfs if keep else (None,) * n
    params = dict(mode=mode, size=out, scales=scales, align_corners=align, antialias=antialias)
    # torch's area mode is adaptive average pooling, whose memory-format rule it takes
    area = f"adaptive_avg_pool{n}d" if mode == "area" else None
    return Resolved(op, tuple(shape), tuple(shape[:2]) + out, params, True, area)


def _cards() -> list[Card]:
    args = (
        Argument("x", "array", constraints=("(N, C, L), (N, C, H, W) or (N, C, D, H, W), by mode",
                                            "C and spatial dimensions non-empty"),
                 description="the input array"),
        Argument("size", "int | tuple[int, ...] | None", None, ("entries > 0", "exclusive with scale_factor"),
                 "the output spatial size"),
        Argument("scale_factor", "float | tuple[float, ...] | None", None,
                 ("finite, > 0", "exclusive with size"), "multiplier of the spatial size: O = floor(L * sf)"),
        Argument("mode", "str", "nearest", (f"one of {', '.join(MODES)}",), "the resampling kernel"),
        Argument("align_corners", "bool | None", None, ("only with linear, bilinear, bicubic, trilinear",),
                 "map corner pixel centres onto each other"),
        Argument("recompute_scale_factor", "bool | None", None, ("not with size",),
                 "derive the kernel's scale from the output size instead of scale_factor"),
        Argument("antialias", "bool", False, ("bilinear, bicubic, lanczos on 4-D input",),
                 "widen the kernel when downsampling (PIL-style)"),
    )
    return [Card(
        name="interpolate", version=1, category="resampling",
        summary="Resampling in every mode torch has, plus non-antialiased Lanczos-3.",
        spatial_dims=(1, 2, 3), input_ranks=(3, 4, 5),
        dtypes=FLOATS + ("uint8",), arguments=args,
        shape_relation="O = size, or floor(L * scale_factor) per spatial axis; per axis a gather of 1 (nearest), "
                       "2 (linear), 4 (bicubic), 6 (lanczos) or 2*ceil(support)+1 (antialias) taps, or the "
                       "adaptive-average windows (area)",
        determinism="forward and backward gather over per-axis tap tables (the backward over the transposed "
                    "table: each input cell reads the outputs that read it): bit-identical across runs on every "
                    "backend (torch's CUDA backward of linear, bicubic and antialias modes uses atomicAdd)",
        gradient=Gradient("interpolate_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "linear: the backward is the transposed tap tables, its backward the forward; on JAX a "
                          "primitive with those two rules, so forward and reverse mode both stay gather-only"),
        torch_reference="torch.nn.functional.interpolate",
        notes=("canonical rules are torch's generic kernels, whose backward is the true adjoint; where torch's "
               "CPU fast paths differ (docs/TORCH_NUMERICS.md 5.6) see the deviations",
               "uint8: nearest and nearest-exact gather; bilinear and bicubic (with or without antialias) and "
               "lanczos (antialias) follow torch's CPU integer pipeline: float64 weights quantised to int16 with "
               "as many fraction bits as the largest weight allows (at most 22), the innermost axis first, each "
               "pass (2^(p-1) + sum w x) >> p clamped to 0..255; an axis whose size is unchanged is skipped; "
               "linear, trilinear and area refuse uint8, as torch",
               "float16/bfloat16 weights and sums in float32, rounded once",
               "a channels_last torch input gives a channels_last output in every mode but 3-d area, which is "
               "adaptive_avg_pool3d's (contiguous), as torch"),
        _resolve=_resolve_interpolate,
        _infer=lambda c, shape, out: size_argument(c, shape, out, "size", len(shape) - 2, {"mode": "nearest"}),
        outputs=(Port("output", "array", "(N, C, *O)", "the resampled array, x's dtype"),),
        examples=(Example(("N", 3, 224, 224), dict(size=(160, 160), mode="bicubic", antialias=True)),
                  Example(("N", 3, 56, 56), dict(scale_factor=2, mode="bilinear", align_corners=False)),
                  Example(("N", 3, 16), dict(scale_factor=2.5, mode="linear", align_corners=True)),
                  Example(("N", 2, 8, 8, 8), dict(scale_factor=0.5, mode="nearest-exact")),
                  Example(("N", 3, 64, 48), dict(size=(100, 75), mode="lanczos"))),
        torch_determinism="torch's CUDA backward of linear, bilinear, bicubic, trilinear and the antialias modes "
                          "uses atomicAdd (upsample_*_backward raise under use_deterministic_algorithms); "
                          "its CPU nearest backward is not the adjoint of its generic forward",
        channels_last=(4, 5),
    )]


FAMILY = Family('interpolate', 'linear', 10, _cards)
