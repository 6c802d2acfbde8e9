"""The case catalogue: a systematic grid of each op's edge rules plus seeded random configurations.

A case is (op, input shape, arguments, flags naming the rules it exercises). The test suite runs the grids
against torch; ``golden_cases`` picks the cases whose torch reference values ship with poolspec (the
conformance suite and the exports), with their dtypes and inputs. Whether a case is valid is decided by
torch, never here: cases that torch refuses are kept as error cases.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..registry import op as record
from ..registry import ops as registry_ops


@dataclass(frozen=True)
class Case:
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    flags: tuple[str, ...] = ()
    ports: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)  # shapes of other array inputs

    @property
    def id(self) -> str:
        a = ",".join(f"{k}={v}" for k, v in self.args.items())
        return f"{self.op}{list(self.shape)}({a})"


def _lead(n: int, batched: bool = True, batch: int = 2, channels: int = 2) -> tuple[int, ...]:
    return (batch, channels) if batched else (channels,)


def avg_grid() -> list[Case]:
    """Edge rules of docs/TORCH_NUMERICS.md section 1, in every rank."""
    out: list[Case] = []
    # (L, k, s, p, ceil, flags) along one axis
    axis_cases = [
        (7, 2, 3, 0, True, ("ceil_last_window_one_cell",)),
        (5, 3, 2, 1, True, ("ceil_mode", "padding")),
        (6, 3, 2, 1, True, ("ceil_window_start_in_padding_dropped",)),
        (8, 4, 3, 2, True, ("padding_at_limit", "ceil_overhang")),
        (5, 3, 1, 1, False, ("padding_at_limit",)),
        (4, 2, 1, 1, False, ("padding_at_limit", "even_kernel")),
        (2, 3, 1, 1, False, ("kernel_larger_than_input",)),
        (9, 2, 4, 0, False, ("stride_gt_kernel",)),
        (9, 2, 4, 1, True, ("stride_gt_kernel", "ceil_mode", "padding")),
        (6, 1, 1, 0, False, ("kernel_1",)),
        (10, 5, 2, 2, True, ("padding_at_limit", "ceil_mode")),
        (11, 4, 4, 1, True, ("ceil_overhang",)),
    ]
    for n in (1, 2, 3):
        op = f"avg_pool{n}d"
        for L, k, s, p, ceil, flags in axis_cases:
            if n == 3 and L < k:
                continue
            for cip, div in itertools.product((True, False), (None, 3, -2)):
                spatial = (L,) + tuple(min(L, 4) + i for i in range(n - 1))
                kernel = (k,) + (2,) * (n - 1) if n > 1 else k
                stride = (s,) + (1,) * (n - 1) if n > 1 else s
                pad = (p,) + (1,) * (n - 1) if n > 1 else p
                f = flags + (("count_include_pad",) if cip else ("exclude_pad",))
                f += (("divisor_override",) if div is not None else ())
                out.append(Case(op, _lead(n) + spatial, dict(kernel_size=kernel, stride=stride, padding=pad,
                                ceil_mode=ceil, count_include_pad=cip, divisor_override=div), f))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                        ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(kernel_size=2), ("empty_batch",)))
        out.append(Case(op, (1, 1) + (5,) * n, dict(kernel_size=2, stride=None), ("stride_default",)))
    return out


def avg_random(count: int, seed: int = 0) -> list[Case]:
    """Seeded random avg_pool configurations, some invalid on purpose (torch decides which)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = tuple(rng.randint(1, 4) for _ in range(n))
        p = tuple(rng.randint(0, max(0, kk // 2 + (1 if rng.random() < 0.1 else 0))) for kk in k)
        batched = rng.random() < 0.8
        lead = _lead(n, batched, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.2 else s, padding=p,
                    ceil_mode=rng.random() < 0.5, count_include_pad=rng.random() < 0.5,
                    divisor_override=rng.choice((None, None, None, 2, 5, -3)))
        out.append(Case(f"avg_pool{n}d", lead + spatial, args, ("random",)))
    return out


def adaptive_grid(kind: str = "avg") -> list[Case]:
    """Windows that overlap, output larger than input, equal, divisible, to 1, None entries, empty output."""
    out: list[Case] = []
    pairs = [(13, 7, "overlapping"), (7, 13, "output_larger"), (5, 5, "identity"), (12, 4, "divisible"),
             (7, 1, "global"), (1, 3, "upsample_from_1"), (10, 3, "ragged"), (4, 8, "output_multiple"),
             (9, 0, "empty_output")]
    for n in (1, 2, 3):
        op = f"adaptive_{kind}_pool{n}d"
        for L, O, flag in pairs:
            spatial = (L,) + tuple(3 + i for i in range(n - 1))
            size = (O,) + tuple(2 + i for i in range(n - 1)) if n > 1 else O
            out.append(Case(op, _lead(n) + spatial, dict(output_size=size), (flag,)))
        out.append(Case(op, (3,) + (6,) * n, dict(output_size=4), ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(output_size=3), ("empty_batch",)))
        out.append(Case(op, (2, 0) + (5,) * n, dict(output_size=3), ("empty_channels",)))
        if n > 1:
            out.append(Case(op, (1, 2) + (5,) * n, dict(output_size=(None,) + (3,) * (n - 1)), ("none_entry",)))
    return out


def adaptive_random(count: int, seed: int = 1, kind: str = "avg") -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 12 if n < 3 else 7) for _ in range(n))
        size = tuple(rng.randint(1, 12 if n < 3 else 7) for _ in range(n))
        batched = rng.random() < 0.8
        out.append(Case(f"adaptive_{kind}_pool{n}d", _lead(n, batched, rng.choice((1, 2)), rng.choice((1, 3)))
                        + spatial, dict(output_size=size), ("random",)))
    return out


def max_grid() -> list[Case]:
    """Edge rules of docs/TORCH_NUMERICS.md section 2: ceil_mode, padding at the limit (windows next to all-padding
    regions), dilation with ceil_mode, overlapping windows, empty windows (rejected), unbatched, N = 0."""
    out: list[Case] = []
    # (L, k, s, p, d, ceil, flags)
    axis_cases = [
        (7, 2, 3, 0, 1, True, ("ceil_last_window_one_cell",)),
        (6, 3, 2, 1, 1, True, ("ceil_window_start_in_padding_dropped", "padding_at_limit")),
        (5, 3, 1, 1, 1, False, ("overlapping", "padding_at_limit")),
        (4, 2, 1, 1, 1, True, ("padding_adjacent", "even_kernel")),
        (9, 3, 2, 1, 2, True, ("dilation", "ceil_mode")),
        (8, 2, 3, 1, 3, True, ("dilation", "ceil_mode", "padding")),
        (10, 4, 3, 2, 2, False, ("dilation", "padding_at_limit")),
        (1, 2, 3, 1, 2, False, ("empty_window",)),
        (3, 2, 1, 1, 3, False, ("empty_window",)),
        (6, 1, 2, 0, 1, False, ("kernel_1",)),
        (5, 5, 1, 2, 1, True, ("window_wider_than_input",)),
    ]
    for n in (1, 2, 3):
        op = f"max_pool{n}d"
        for L, k, s, p, d, ceil, flags in axis_cases:
            spatial = (L,) + tuple(4 + i for i in range(n - 1))
            rest = n - 1
            args = dict(kernel_size=(k,) + (2,) * rest, stride=(s,) + (1,) * rest, padding=(p,) + (1,) * rest,
                        dilation=(d,) + (1,) * rest, ceil_mode=ceil)
            out.append(Case(op, _lead(n) + spatial, args, flags))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                        ("unbatched",)))
        out.append(Case(op, (0, 2) + (5,) * n, dict(kernel_size=2), ("empty_batch",)))
        out.append(Case(op, (1, 2) + (6,) * n, dict(kernel_size=3, stride=1, padding=1), ("overlapping",)))
    return out


def max_random(count: int, seed: int = 2) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = tuple(rng.randint(1, 4) for _ in range(n))
        d = tuple(rng.choice((1, 1, 2, 3)) for _ in range(n))
        p = tuple(rng.randint(0, max(0, kk // 2 + (1 if rng.random() < 0.1 else 0))) for kk in k)
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.2 else s, padding=p, dilation=d,
                    ceil_mode=rng.random() < 0.5)
        out.append(Case(f"max_pool{n}d", lead + spatial, args, ("random",)))
    return out


def unpool_grid() -> list[Case]:
    """max_unpool after max_pool (overlapping windows give duplicate indices), the default and explicit
    output sizes at both ends of torch's +-stride window, padding, unbatched, N = 0. ``pool`` holds the
    max_pool arguments that make the indices; ``indices`` says how the test makes them."""
    out: list[Case] = []
    # (L, k, s, p, output_size delta or None, indices kind, flags)
    axis_cases = [
        (8, 2, 2, 0, None, "pool", ("tiling",)),
        (7, 3, 2, 1, None, "pool", ("padding", "duplicates_possible")),
        (7, 3, 2, 1, 1, "pool", ("output_size_above_default",)),
        (9, 3, 3, 0, -2, "pool", ("output_size_at_lower_limit",)),
        (6, 3, 1, 1, None, "pool", ("overlapping", "duplicates")),
        (5, 2, 2, 0, None, "permutation", ("arbitrary_indices",)),
        (5, 2, 2, 0, None, "duplicates", ("duplicates", "winner_rule")),
        (4, 4, 1, 0, 0, "pool", ("output_size_equals_default",)),
    ]
    for n in (1, 2, 3):
        op = f"max_unpool{n}d"
        for L, k, s, p, delta, kind, flags in axis_cases:
            spatial = (L,) + tuple(3 + i for i in range(n - 1))
            rest = n - 1
            args = dict(kernel_size=(k,) + (2,) * rest, stride=(s,) + (1,) * rest, padding=(p,) + (0,) * rest)
            shape = _lead(n) + spatial
            pooled = tuple((spatial[i] + 2 * args["padding"][i] - args["kernel_size"][i]) // args["stride"][i] + 1
                           for i in range(n))
            if delta is not None:
                default = [(pooled[i] - 1) * args["stride"][i] - 2 * args["padding"][i] + args["kernel_size"][i]
                           for i in range(n)]
                args["output_size"] = (default[0] + delta,) + tuple(default[1:])
            out.append(Case(op, shape, dict(args, indices=kind), flags))
        out.append(Case(op, (3,) + (6,) * n, dict(kernel_size=2, indices="pool"), ("unbatched",)))
        out.append(Case(op, (0, 2) + (6,) * n, dict(kernel_size=2, indices="pool"), ("empty_batch",)))
    return out


def unpool_random(count: int, seed: int = 3) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(2, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, min(3, L)) for L in spatial)
        s = tuple(rng.randint(1, 3) for _ in range(n))
        p = tuple(rng.randint(0, kk // 2) for kk in k)
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        kind = rng.choice(("pool", "pool", "permutation", "duplicates"))
        out.append(Case(f"max_unpool{n}d", lead + spatial, dict(kernel_size=k, stride=s, padding=p, indices=kind),
                        ("random",)))
    return out


def lp_grid() -> list[Case]:
    """docs/TORCH_NUMERICS.md section 4: the ceil_mode K/n scaling of partial windows, windows whose sum is 0
    (gradient 0), negative sums with non-integer 1/p (NaN), p = 1 with negative sums, p = +-inf, negative
    and fractional p, a 1-tuple kernel on 1d, unbatched and N = 0."""
    out: list[Case] = []
    norms = [(1.0, "p_1"), (2.0, "p_2"), (3.0, "odd_p"), (1.5, "fractional_p"), (0.5, "p_below_1"),
             (-1.0, "negative_p"), (float("inf"), "p_inf"), (float("-inf"), "p_minus_inf")]
    for n in (1, 2, 3):
        op = f"lp_pool{n}d"
        spatial = (7,) + tuple(4 + i for i in range(n - 1))
        for p, flag in norms:
            for ceil in (False, True):
                args = dict(norm_type=p, kernel_size=(2,) + (2,) * (n - 1), stride=(3,) + (1,) * (n - 1),
                            ceil_mode=ceil)
                out.append(Case(op, _lead(n) + spatial, args, (flag,) + (("ceil_partial_window",) if ceil else ())))
        out.append(Case(op, _lead(n) + spatial, dict(norm_type=2, kernel_size=3), ("int_norm_type",)))
        out.append(Case(op, (3,) + (5,) * n, dict(norm_type=2.0, kernel_size=2, ceil_mode=True), ("unbatched",)))
        out.append(Case(op, (0, 2) + (4,) * n, dict(norm_type=2.0, kernel_size=2), ("empty_batch",)))
    out.append(Case("lp_pool1d", (2, 2, 7), dict(norm_type=2.0, kernel_size=(3,), stride=(2,)), ("tuple_kernel",)))
    return out


def lp_random(count: int, seed: int = 4) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 9 if n < 3 else 6) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = tuple(rng.randint(1, 4) for _ in range(n))
        p = rng.choice((1.0, 2.0, 3.0, 4.0, 0.5, 1.5, 2.5, -1.0, -2.0, float("inf"), float("-inf")))
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(norm_type=p, kernel_size=k, stride=None if rng.random() < 0.2 else s,
                    ceil_mode=rng.random() < 0.5)
        out.append(Case(f"lp_pool{n}d", lead + spatial, args, ("random",)))
    return out


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


# ------------------------------------------------------------------------------------------- torch's quirk zones

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


# ------------------------------------------------------------------------------------------------ golden cases

@dataclass(frozen=True)
class GoldenCase:
    """A catalogue case with its stored reference vectors: ``name`` is stable and file-name safe, ``error`` the
    exception class a conforming implementation raises (None for a numeric case)."""

    name: str
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    flags: tuple[str, ...]
    dtype: str
    cotangent: str = "random"  # or "ones"
    error: str | None = None
    ports: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())


def _error_cases() -> list[GoldenCase]:
    """Calls a conforming implementation refuses, each a recorded deviation or a rule torch shares."""
    out = []
    for n in (1, 2, 3):
        lead = (1, 2)
        out += [
            GoldenCase(f"max_pool{n}d-e000", f"max_pool{n}d", lead + (1,) * n,
                       dict(kernel_size=2, stride=3, padding=1, dilation=2), ("empty_window", "max_pool_empty_window"),
                       "float64", error="ValueError"),
            GoldenCase(f"max_pool{n}d-e001", f"max_pool{n}d", lead + (5,) * n, dict(kernel_size=2, padding=2),
                       ("padding_over_half",), "float64", error="ValueError"),
            GoldenCase(f"lp_pool{n}d-e000", f"lp_pool{n}d", lead + (4,) * n, dict(norm_type=2.0, kernel_size=2),
                       ("lp_pool_integer_input",), "int64", error="TypeError"),
            GoldenCase(f"max_unpool{n}d-e000", f"max_unpool{n}d", lead + (2,) * n, dict(kernel_size=2, stride=0),
                       ("max_unpool_argument_rules",), "float64", error="ValueError"),
            GoldenCase(f"avg_pool{n}d-e000", f"avg_pool{n}d", lead + (5,) * n, dict(kernel_size=2, stride=0),
                       ("stride_0",), "float64", error="ValueError"),
            GoldenCase(f"adaptive_max_pool{n}d-e000", f"adaptive_max_pool{n}d", lead + (5,) * n,
                       dict(output_size=2), ("integer_input",), "int64", error="TypeError"),
        ]
    out += [
        GoldenCase("interpolate-e000", "interpolate", (1, 2, 5, 5), dict(size=3, mode="area"),
                   ("uint8_refused",), "uint8", error="TypeError"),
        GoldenCase("interpolate-e001", "interpolate", (1, 2, 5, 5), dict(size=3, scale_factor=2.0, mode="bilinear"),
                   ("size_and_scale_factor",), "float64", error="ValueError"),
        GoldenCase("interpolate-e002", "interpolate", (1, 2, 5), dict(size=3, mode="bilinear"),
                   ("wrong_rank",), "float64", error="ValueError"),
        GoldenCase("interpolate-e003", "interpolate", (1, 2, 5, 5), dict(size=3, mode="nearest", align_corners=False),
                   ("align_corners_with_nearest",), "float64", error="ValueError"),
    ]
    return out


def has_empty_window(case: Case) -> bool:
    """Whether dilation and padding leave some max_pool window without an input cell (torch: -inf and an
    out-of-range index; poolspec: ValueError, deviation max_pool_empty_window). Integer arithmetic only."""
    n = _rank(case.op)

    def tup(v: Any, default: Any) -> tuple[int, ...]:
        v = default if v is None or v == () else v
        return tuple(v) * (n if len(v) == 1 else 1) if isinstance(v, (tuple, list)) else (v,) * n

    a = case.args
    k, d = tup(a["kernel_size"], 1), tup(a.get("dilation", 1), 1)
    s, p = tup(a.get("stride"), a["kernel_size"]), tup(a.get("padding", 0), 0)
    axes = []
    for L, kk, ss, pp, dd in zip(case.shape[-n:], k, s, p, d):
        eff = dd * (kk - 1) + 1
        if min(ss, kk, dd) <= 0 or pp < 0 or pp > kk // 2 or pp > eff // 2:
            return False  # refused for another reason
        out = (L + 2 * pp - eff + (ss - 1 if a.get("ceil_mode") else 0)) // ss + 1
        if a.get("ceil_mode") and (out - 1) * ss >= L + pp:
            out -= 1
        if out < 1:
            return False
        axes.append((L, kk, ss, pp, dd, out))
    return any(not any(0 <= o * ss - pp + t * dd < L for t in range(kk))
               for L, kk, ss, pp, dd, out in axes for o in range(out))


def _rank(op: str) -> int:
    return record(op).fixed_rank


# the recorded deviations a numeric case of each family touches (besides the dtype rules, added per dtype)

def _max_flags(case: Case) -> tuple[str, ...]:
    return ("max_pool_empty_window",) if has_empty_window(case) else ()


def _interp_flags(case: Case) -> tuple[str, ...]:
    q = interp_quirks(case.shape, case.args)
    out = sorted(q["forward"] | q["backward"])
    if case.args["mode"] == "lanczos" and not case.args.get("antialias"):
        out.append("interpolate_lanczos_without_antialias")
    return tuple(out)


def _lp_flags(case: Case) -> tuple[str, ...]:
    tuple_kernel = _rank(case.op) == 1 and isinstance(case.args.get("kernel_size"), tuple)
    return ("lp_pool1d_tuple_kernel",) if tuple_kernel else ()


def _avg_flags(case: Case) -> tuple[str, ...]:
    divisor = _rank(case.op) == 1 and case.args.get("divisor_override") is not None
    return ("avg_pool1d_divisor_override",) if divisor else ()


def _unpool_flags(case: Case) -> tuple[str, ...]:
    return ("max_unpool_duplicate_indices",) if case.args.get("indices") == "duplicates" else ()


def _adaptive_flags(case: Case) -> tuple[str, ...]:
    empty = len(case.shape) == _rank(case.op) + 2 and case.shape[1] == 0
    return ("adaptive_pool3d_empty_channels",) if empty else ()


def golden_cases(ops: list[str] | None = None) -> list[GoldenCase]:
    """The cases whose torch reference vectors ship with poolspec, in a stable order: every grid case in
    float64, the first seeded random ones, a spread of the grid in the other dtypes torch's rules depend on,
    and error cases, family by family (``families.families()``). Names are ``<op>-g###`` (grid), ``-r###``
    (random), ``-<dtype>-###`` and ``-e###``."""
    from .families import families

    order: list[str] = []
    by_op: dict[str, list[GoldenCase]] = {}
    for fam in families():
        counters: dict[str, int] = {}
        for case in fam.grid():
            k = counters.get(case.op, 0)
            counters[case.op] = k + 1
            flags = case.flags + fam.deviation_flags(case)
            empty = "ValueError" if "max_pool_empty_window" in flags else None
            by_op.setdefault(case.op, []).append(GoldenCase(
                f"{case.op}-g{k:03d}", case.op, case.shape, case.args, flags, "float64",
                "ones" if k % 5 == 4 else "random", error=empty, ports=case.ports))
            for dtype, every in fam.dtypes:
                if k % every == every // 2:
                    extra = fam.half_flags if dtype in ("float16", "bfloat16") else ()
                    more, error = fam.dtype_rule(case, dtype)
                    extra, error = (more, error) if error is not None else (extra + more, empty)
                    by_op[case.op].append(GoldenCase(f"{case.op}-{dtype}-{k:03d}", case.op, case.shape, case.args,
                                                     flags + (dtype,) + extra, dtype, error=error, ports=case.ports))
        counters = {}
        for case in fam.random():
            k = counters.get(case.op, 0)
            counters[case.op] = k + 1
            flags = case.flags + fam.deviation_flags(case)
            by_op.setdefault(case.op, []).append(GoldenCase(
                f"{case.op}-r{k:03d}", case.op, case.shape, case.args, flags, "float64",
                error="ValueError" if "max_pool_empty_window" in flags else None, ports=case.ports))
        for case in fam.errors():
            by_op.setdefault(case.op, []).append(case)
        order += sorted(op for op in by_op if op in fam.ops and op not in order)
    chosen = order if ops is None else [op for op in order if op in ops]
    return [c for op in chosen for c in by_op[op]]


# ---------------------------------------------------------------------------------------------------- inputs

def inputs(case: GoldenCase) -> dict[str, np.ndarray]:
    """The input arrays of a case (seeded, NumPy only), by stored name (``input``, then the family's other
    ports). Values are exactly representable in the case's dtype."""
    from .families import family

    fam = family(case.op)
    if case.error is not None:  # the call must be refused before the values matter
        out = {"input": np.zeros(case.shape, dtype=np.float32 if case.dtype == "bfloat16" else case.dtype)}
        for port in fam.ports[1:]:
            out[port] = np.zeros(case.ports.get(port, case.shape), dtype=np.int64 if port == "indices" else
                                 out["input"].dtype)
        return out
    return fam.inputs(case, np.random.default_rng(case.seed))


def _max_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Max-family data: full of ties, NaN and -inf (integers: the padding value itself)."""
    dtype = case.dtype
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(np.dtype(dtype))
        ints = rng.integers(max(info.min, -6), min(info.max, 6) + 1, case.shape)
        ints[rng.random(case.shape) < 0.1] = info.min  # the padding value itself
        return {"input": ints.astype(dtype)}
    x = np.round(rng.standard_normal(case.shape) * 2) / 2  # many ties
    if case.seed % 3:  # two cases in three also hold NaN and -inf
        x[rng.random(case.shape) < 0.08] = np.nan
        x[rng.random(case.shape) < 0.04] = -np.inf
    return {"input": _as(x, dtype)}


def _lp_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = np.round(rng.standard_normal(case.shape) * 4) / 4
    if x.ndim and x.shape[-1] > 2:
        x[..., :2] = 0.0  # a window of zeros: S == 0, gradient 0
    p = case.args["norm_type"]
    if math.isfinite(p) and p != int(p) and case.seed % 2:
        x = np.abs(x)  # half of the fractional-p cases without the NaNs of negative powers
    return {"input": _as(x, case.dtype)}


def _plain_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    dtype = case.dtype
    if dtype == "uint8":
        return {"input": rng.integers(0, 256, case.shape).astype(np.uint8)}
    if dtype.startswith("int"):
        return {"input": np.round(rng.standard_normal(case.shape) * 20).astype(dtype)}
    return {"input": _as(rng.standard_normal(case.shape), dtype)}


def _as(x: np.ndarray, dtype: str) -> np.ndarray:
    """``x`` rounded to ``dtype``; bfloat16 values are held in float32 (NumPy has no bfloat16)."""
    if dtype == "bfloat16":
        bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)  # round half to even
        out = rounded.view(np.float32)
        return np.where(np.isnan(x), np.float32(np.nan), out)
    return np.asarray(x).astype(dtype)


def unpool_indices(rng: np.random.Generator, kind: str, planes: int, m: int, size: int) -> np.ndarray:
    """(planes, m) int64 indices into an unpool plane of ``size`` cells: distinct per plane ("permutation",
    where the plane is large enough), else uniform with at least one duplicate per plane."""
    flat = np.empty((planes, m), dtype=np.int64)
    for row in flat:
        if kind == "permutation" and size >= m:
            row[:] = rng.permutation(size)[:m]
        else:
            row[:] = rng.integers(0, max(size, 1), m)
            if m > 1:
                row[-1] = row[0]  # at least one duplicate per plane
    return flat


def _unpool_inputs(case: GoldenCase, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Values shaped as max_pool's output on the case's shape and int64 indices into the unpool output: from a
    max pool of tie-free data ("pool"), distinct per plane ("permutation"), or with duplicates."""
    n = _rank(case.op)
    args = {k: v for k, v in case.args.items() if k != "indices"}

    def tup(v: Any, default: Any) -> tuple[int, ...]:
        v = default if v is None else v
        return (v,) * n if isinstance(v, int) else tuple(v)

    k, s, p = tup(args["kernel_size"], 1), tup(args.get("stride"), args["kernel_size"]), tup(args.get("padding"), 0)
    spatial = case.shape[-n:]
    pooled = tuple((spatial[i] + 2 * p[i] - k[i]) // s[i] + 1 for i in range(n))
    lead = case.shape[:-n]
    default = tuple((pooled[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    out_spatial = tuple(args["output_size"][-n:]) if args.get("output_size") else default
    size, m = math.prod(out_spatial), math.prod(pooled)
    planes = math.prod(lead)
    kind = case.args["indices"]
    if kind == "pool":
        from .. import max_pool1d, max_pool2d, max_pool3d  # the winners of a pool are the natural input

        pool = (max_pool1d, max_pool2d, max_pool3d)[n - 1]
        data = rng.permutation(math.prod(case.shape)).reshape(case.shape).astype(np.float64)
        _, idx = pool(data, args["kernel_size"], args.get("stride"), args.get("padding", 0), return_indices=True)
    else:
        idx = unpool_indices(rng, kind, planes, m, size).reshape(lead + pooled)
    x = rng.standard_normal(lead + pooled)
    if case.dtype.startswith("int"):
        x = np.round(x * 4)
    return {"input": _as(x, case.dtype), "indices": np.asarray(idx, dtype=np.int64)}


# ------------------------------------------------------------------------------------------- family records

def _errors_of(*ops: str) -> Any:
    return lambda: [c for c in _error_cases() if c.op in ops]


def _ops(family: str) -> tuple[str, ...]:
    return tuple(d.name for d in registry_ops(family))


def _avg_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    return (("avg_pool3d_half",) if _rank(case.op) == 3 and dtype in ("float16", "bfloat16") else ()), None


def _max_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    integer = _rank(case.op) == 1 and dtype.startswith(("int", "uint"))
    return (("max_pool1d_integer_values",) if integer else ()), None


def _interp_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    if dtype == "uint8" and case.args["mode"] not in ("nearest", "nearest-exact"):
        # torch's integer pipeline (int16 weights, each pass rounded and clamped); the other modes refuse uint8
        fixed = case.args["mode"] in ("bilinear", "bicubic") or (case.args["mode"] == "lanczos"
                                                                 and case.args.get("antialias"))
        return (("uint8_fixed_point",), None) if fixed else (("uint8_refused",), "TypeError")
    return (("interpolate_antialias_half",) if case.args.get("antialias") and dtype in ("float16", "bfloat16")
            else ()), None


def _unpool_backward(family: Any, bw: Any, g: Any, arguments: dict[str, Any], arrays: dict[str, Any],
                     winners: Any, strict: bool) -> tuple[Any, ...]:
    return (bw(g, arrays["input"], arrays["indices"], **arguments),)


def _records() -> list[Any]:
    from .families import Family

    half = ("half_backward_float32_accumulation",)
    return [
        Family("avg_pool", _ops("avg_pool"), avg_grid, lambda: avg_random(60, seed=100), _plain_inputs,
               dtypes=(("float32", 4), ("float16", 9), ("bfloat16", 13), ("int64", 9)), half_flags=half,
               deviation_flags=_avg_flags, dtype_rule=_avg_dtype_rule, errors=_errors_of(*_ops("avg_pool"))),
        Family("adaptive_avg_pool", _ops("adaptive_avg_pool"), lambda: adaptive_grid("avg"),
               lambda: adaptive_random(40, seed=101), _plain_inputs,
               dtypes=(("float32", 3), ("float16", 5), ("bfloat16", 7)), half_flags=half,
               deviation_flags=_adaptive_flags, errors=_errors_of(*_ops("adaptive_avg_pool"))),
        Family("max_pool", _ops("max_pool"), max_grid, lambda: max_random(60, seed=102), _max_inputs, indexed=True,
               dtypes=(("float32", 4), ("int32", 5), ("uint8", 7), ("float16", 9)), half_flags=half,
               deviation_flags=_max_flags, dtype_rule=_max_dtype_rule, errors=_errors_of(*_ops("max_pool"))),
        Family("adaptive_max_pool", _ops("adaptive_max_pool"), lambda: adaptive_grid("max"),
               lambda: adaptive_random(40, seed=103, kind="max"), _max_inputs, indexed=True,
               dtypes=(("float32", 3), ("float16", 7)), half_flags=half, deviation_flags=_adaptive_flags,
               errors=_errors_of(*_ops("adaptive_max_pool"))),
        Family("max_unpool", _ops("max_unpool"), unpool_grid, lambda: unpool_random(40, seed=104), _unpool_inputs,
               ports=("input", "indices"), dtypes=(("float32", 3), ("int64", 5)), deviation_flags=_unpool_flags,
               errors=_errors_of(*_ops("max_unpool")), reference="torch+unpool-rule", call_backward=_unpool_backward),
        Family("lp_pool", _ops("lp_pool"), lp_grid, lambda: lp_random(60, seed=105), _lp_inputs,
               dtypes=(("float32", 3), ("float16", 7)), half_flags=("lp_pool_half_precision",),
               deviation_flags=_lp_flags, errors=_errors_of(*_ops("lp_pool")), second_order=("input",),
               reference="torch+lp-forward-mode"),
        Family("interpolate", ("interpolate",), interp_grid, lambda: interp_random(100, seed=106), _plain_inputs,
               dtypes=(("float32", 3), ("float16", 11), ("bfloat16", 13), ("uint8", 5)), half_flags=half,
               deviation_flags=_interp_flags, dtype_rule=_interp_dtype_rule, errors=_errors_of("interpolate"),
               reference="torch+quirk-matrices", store_by_mode=True),
    ]


FAMILIES = _records()
