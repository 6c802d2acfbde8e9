"""interpolate's conformance record: every mode's edge rules (sizes, scales, align_corners, antialias), seeded
random configurations, the quirk zones of torch's CPU fast paths (docs/TORCH_NUMERICS.md 5.6), its dtype rules."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from ...conformance.cases import Case, GoldenCase, _plain_inputs
from ...conformance.families import HALF_FLAGS, Family

# (mode, antialias, ranks) of every interpolate mode: torch's ranks; lanczos without antialias is poolspec's
INTERP_MODES = [("nearest", False, (3, 4, 5)), ("nearest-exact", False, (3, 4, 5)), ("area", False, (3, 4, 5)),
                ("linear", False, (3,)), ("bilinear", False, (4,)), ("bicubic", False, (4,)),
                ("trilinear", False, (5,)), ("bilinear", True, (4,)), ("bicubic", True, (4,)),
                ("lanczos", True, (4,)), ("lanczos", False, (4,))]


_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


def interp_grid() -> list[Case]:
    """Every mode x rank x (size, scale_factor, recompute True/False) x align_corners (None, False, True where the
    mode takes it) x direction (up, down, equal, to 1). Axis 0 of 'up' is scaled by 2.1 (O == 2L with
    sf != 2: nearest's shortcut zone) and 'equal' by 1.1 (O == L with sf != 1: the equal-size zones)."""
    base = (7, 5, 4)
    directions = {
        "up": ((2.1, 1.5, 1.75), lambda L, i: 2 * L + 1 if i == 0 else L + 3),
        "down": ((0.6, 0.5, 0.75), lambda L, i: max(1, L // 2)),
        "equal": ((1.1, 1.1, 1.1), lambda L, i: L),
        "to_1": ((0.15, 0.2, 0.25), lambda L, i: 1),
    }
    out: list[Case] = []
    for mode, aa, ranks in INTERP_MODES:
        for rank in ranks:
            n = rank - 2
            spatial = base[:n]
            shape = (1, 2) + spatial
            corners = (None, False, True) if mode in _INTERPOLATING else (None,)
            for direction, (sfs, size_of) in directions.items():
                sized = tuple(size_of(L, i) for i, L in enumerate(spatial))
                specs: list[tuple[str, dict[str, Any]]] = [("size", dict(size=sized)),
                         ("scale", dict(scale_factor=sfs[:n])),
                         ("scale_recompute", dict(scale_factor=sfs[:n], recompute_scale_factor=True)),
                         ("scale_no_recompute", dict(scale_factor=sfs[:n], recompute_scale_factor=False))]
                for spec_name, spec in specs:
                    for ac in corners:
                        args = dict(spec, mode=mode)
                        if aa:
                            args["antialias"] = True
                        if ac is not None:
                            args["align_corners"] = ac
                        flags: tuple[str, ...] = (mode + ("_antialias" if aa else ""), direction, spec_name)
                        flags += (("align_corners",) if ac else ())
                        out.append(Case("interpolate", shape, args, flags))
    # a 1-element axis, N = 0, one channel
    out.append(Case("interpolate", (1, 1, 1, 6), dict(size=(3, 4), mode="bicubic"), ("input_1",)))
    out.append(Case("interpolate", (0, 2, 4, 4), dict(scale_factor=2, mode="bilinear"), ("empty_batch",)))
    out.append(Case("interpolate", (1, 1, 9, 9), dict(size=(1, 1), mode="bilinear", antialias=True),
                    ("to_1", "antialias")))
    out.append(Case("interpolate", (1, 2, 6, 5), dict(size=(3, 1), mode="bicubic", antialias=True),
                    ("antialias_width_one",)))
    return out


def interp_random(count: int, seed: int = 5) -> list[Case]:
    """Seeded random interpolate calls, some invalid on purpose (torch decides which)."""
    rng = random.Random(seed)
    out: list[Case] = []
    while len(out) < count:
        mode, aa, ranks = rng.choice(INTERP_MODES)
        rank = rng.choice(ranks) if rng.random() < 0.9 else rng.choice((3, 4, 5))
        n = rank - 2
        spatial = tuple(rng.randint(1, 10 if n < 3 else 6) for _ in range(n))
        args: dict[str, Any] = dict(mode=mode)
        if aa:
            args["antialias"] = True
        if mode in _INTERPOLATING and rng.random() < 0.6:
            args["align_corners"] = rng.random() < 0.5
        if rng.random() < 0.5:
            args["size"] = tuple(rng.randint(1, 14) for _ in range(n))
        else:
            sf = tuple(rng.choice((0.3, 0.5, 0.75, 0.9, 1.0, 1.1, 1.5, 1.7, 2.0, 2.1, 3.0, 1.25)) for _ in range(n))
            args["scale_factor"] = sf if rng.random() < 0.8 else sf[0]
            if rng.random() < 0.5:
                args["recompute_scale_factor"] = rng.random() < 0.5
        out.append(Case("interpolate", (rng.choice((1, 2)), rng.choice((1, 3))) + spatial, args, ("random",)))
    return out


def interp_axes(shape: tuple[int, ...], args: dict[str, Any]) -> list[tuple[int, int, float | None]]:
    """(L, O, the scale factor given for the axis or None) per spatial axis, with torch's output size rule."""
    n = len(shape) - 2

    def per_axis(value: Any) -> tuple[Any, ...]:
        return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n

    if args.get("size") is not None:
        return [(L, int(O), None) for L, O in zip(shape[2:], per_axis(args["size"]))]
    return [(L, int(math.floor(float(L) * sf)), sf) for L, sf in zip(shape[2:], per_axis(args["scale_factor"]))]


def interp_quirks(shape: tuple[int, ...], args: dict[str, Any]) -> dict[str, set[str]]:
    """Which recorded deviations (docs/TORCH_NUMERICS.md 5.6) put an interpolate call in a zone where torch's direct CPU
    call differs from its generic per-axis rule: {"forward": ids, "backward": ids}. Zones only: whether the
    numbers differ also depends on the data."""
    mode, aa = args["mode"], bool(args.get("antialias"))
    axes = interp_axes(shape, args)
    reaches = (args.get("scale_factor") is not None and not args.get("recompute_scale_factor")
               and mode != "area")
    fwd: set[str] = set()
    bwd: set[str] = set()

    def shortcut_differs(L: int, O: int, sf: float | None) -> bool:
        assert sf is not None  # an axis reached by the shortcut has its scale
        generic = [min(math.floor(float(np.float32(i) * np.float32(1.0 / sf))), L - 1) for i in range(O)]
        short = list(range(O)) if O == L else [i >> 1 for i in range(O)]
        return generic != short

    if mode == "nearest" and reaches:
        if any(O in (L, 2 * L) and shortcut_differs(L, O, sf) for L, O, sf in axes):
            bwd.add("interpolate_nearest_shortcut")
            if len(shape) == 4 and sum(O for _, O, _ in axes) <= 128:
                fwd.add("interpolate_nearest_shortcut")
    if mode == "bicubic" and not aa and reaches and all(O == L for L, O, _ in axes):
        bwd.add("interpolate_bicubic_equal_size_backward")
    if aa and reaches and any(O == L and sf != 1.0 for L, O, sf in axes):
        bwd.add("interpolate_antialias_equal_size_backward")
    if aa and axes[-1][1] == 1 and axes[0][1] != axes[0][0]:
        fwd.add("interpolate_antialias_width_one")
    return {"forward": fwd, "backward": bwd}


def _interp_flags(case: Case) -> tuple[str, ...]:
    q = interp_quirks(case.shape, case.args)
    out = sorted(q["forward"] | q["backward"])
    if case.args["mode"] == "lanczos" and not case.args.get("antialias"):
        out.append("interpolate_lanczos_without_antialias")
    return tuple(out)


def _interp_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    if dtype == "uint8" and case.args["mode"] not in ("nearest", "nearest-exact"):
        # torch's integer pipeline (int16 weights, each pass rounded and clamped); the other modes refuse uint8
        fixed = case.args["mode"] in ("bilinear", "bicubic") or (case.args["mode"] == "lanczos"
                                                                 and case.args.get("antialias"))
        return (("uint8_fixed_point",), None) if fixed else (("uint8_refused",), "TypeError")
    return (("interpolate_antialias_half",) if case.args.get("antialias") and dtype in ("float16", "bfloat16")
            else ()), None


def _errors() -> list[GoldenCase]:
    return [
        GoldenCase("interpolate-e000", "interpolate", (1, 2, 5, 5), dict(size=3, mode="area"),
                   ("uint8_refused",), "uint8", error="TypeError"),
        GoldenCase("interpolate-e001", "interpolate", (1, 2, 5, 5), dict(size=3, scale_factor=2.0, mode="bilinear"),
                   ("size_and_scale_factor",), "float64", error="ValueError"),
        GoldenCase("interpolate-e002", "interpolate", (1, 2, 5), dict(size=3, mode="bilinear"),
                   ("wrong_rank",), "float64", error="ValueError"),
        GoldenCase("interpolate-e003", "interpolate", (1, 2, 5, 5), dict(size=3, mode="nearest", align_corners=False),
                   ("align_corners_with_nearest",), "float64", error="ValueError"),
    ]


RECORD = Family("interpolate", ("interpolate",), interp_grid, lambda: interp_random(100, seed=106), _plain_inputs,
                dtypes=(("float32", 3), ("float16", 11), ("bfloat16", 13), ("uint8", 5)), half_flags=HALF_FLAGS,
                deviation_flags=_interp_flags, dtype_rule=_interp_dtype_rule, errors=_errors,
                reference="torch+quirk-matrices", store_by_mode=True)
