"""Test configurations: a systematic grid of each op's edge rules plus seeded random ones.

A case is (op, input shape, arguments, flags). Whether a case is valid is decided by torch in the tests,
never here.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    op: str
    shape: tuple[int, ...]
    args: dict[str, Any] = field(hash=False)
    flags: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        a = ",".join(f"{k}={v}" for k, v in self.args.items())
        return f"{self.op}{list(self.shape)}({a})"


def _lead(n: int, batched: bool = True, batch: int = 2, channels: int = 2) -> tuple[int, ...]:
    return (batch, channels) if batched else (channels,)


def avg_grid() -> list[Case]:
    """Edge rules of TORCH_NUMERICS section 1, in every rank."""
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
    """Edge rules of TORCH_NUMERICS section 2: ceil_mode, padding at the limit (windows next to all-padding
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
    """TORCH_NUMERICS section 4: the ceil_mode K/n scaling of partial windows, windows whose sum is 0
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
            shape = (2, 3) + spatial
            corners = (None, False, True) if mode in _INTERPOLATING else (None,)
            for direction, (sfs, size_of) in directions.items():
                specs = [("size", dict(size=tuple(size_of(L, i) for i, L in enumerate(spatial)))),
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
                        flags = (mode + ("_antialias" if aa else ""), direction, spec_name)
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
    out = []
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
