"""avg_pool's conformance record: the edge rules of docs/TORCH_NUMERICS.md section 1 in every rank, seeded
random configurations, its deviation flags and dtype rules."""

from __future__ import annotations

import inspect
import itertools
import random
from collections.abc import Callable
from typing import Any

from ...conformance.cases import Case, GoldenCase, _lead, _ops, _plain_inputs, _rank, window_draw
from ...conformance.families import HALF_FLAGS, Family, _backward_default, _call_default


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


def avg_dilated_grid() -> list[Case]:
    """poolspec's dilation extension (flag "dilation"), in every rank: spaced taps with each padding form, ceil_mode
    overhangs, strides past the dilated window, and windows of padding taps only (flag "empty_window": NaN without
    count_include_pad). torch's avg_pool has no dilation: the reference is its conv with a ones kernel
    (scripts/oracle.py, ``dilated_avg_pool``)."""
    out: list[Case] = []
    # (L, k, s, d, padding along the first axis, ceil, flags)
    axis_cases: list[tuple[int, int, int, int, object, bool, tuple[str, ...]]] = [
        (9, 3, 1, 2, 0, False, ()),
        (10, 3, 2, 2, 1, True, ("ceil_mode", "padding")),
        (11, 2, 3, 3, 1, False, ("stride_gt_kernel", "padding")),
        (7, 3, 2, 2, (4, 3), True, ("padding_pairs", "ceil_overhang")),
        (8, 2, 2, 3, (0, 3), False, ("padding_pairs",)),
        (6, 2, 1, 3, "same", False, ("same",)),
        (9, 3, 2, 2, "valid", False, ("valid",)),
        (2, 2, 1, 4, (4, 4), False, ("padding_pairs", "empty_window")),
        (5, 3, 1, 1, 1, True, ("dilation_1",)),
    ]
    for n in (1, 2, 3):
        op = f"avg_pool{n}d"
        for L, k, s, d, p, ceil, flags in axis_cases:
            for cip, div in ((True, None), (False, None), (False, 3)):
                spatial = (L,) + tuple(5 + i for i in range(n - 1))
                if isinstance(p, str):
                    pad: object = p
                elif isinstance(p, tuple):
                    pad = (p,) + ((1, 2),) * (n - 1)
                else:
                    pad = (p,) + (1,) * (n - 1)
                f = ("dilation",) + flags + (("count_include_pad",) if cip else ("exclude_pad",))
                f += ("divisor_override",) if div is not None else ()
                if n == 1:
                    one = pad if isinstance(pad, str) or isinstance(p, tuple) else p  # pairs stay ((low, high),)
                    args = dict(kernel_size=k, stride=s, padding=one, dilation=d)
                else:
                    args = dict(kernel_size=(k,) + (2,) * (n - 1), stride=(s,) + (1,) * (n - 1), padding=pad,
                                dilation=(d,) + (2,) * (n - 1))
                args.update(ceil_mode=ceil, count_include_pad=cip, divisor_override=div)
                out.append(Case(op, _lead(n) + spatial, args, f))
        out.append(Case(op, (3,) + (7,) * n, dict(kernel_size=2, stride=2, padding=1, dilation=3, ceil_mode=True),
                        ("dilation", "unbatched")))
    return out


def avg_dilated_random(count: int, seed: int = 0) -> list[Case]:
    """Seeded random dilated avg_pool configurations, valid by construction (torch's avg_pool has no dilation to
    refuse them): symmetric padding at most k // 2, (low, high) pairs at most (k - 1) * d, 'same' or 'valid',
    every output size >= 1 and, in 3-d, every extent >= kernel_size."""
    rng = random.Random(seed)
    out: list[Case] = []
    while len(out) < count:
        n = rng.choice((1, 2, 3))
        spatial = tuple(rng.randint(1, 10 if n < 3 else 7) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = tuple(rng.randint(1, 4) for _ in range(n))
        d = tuple(rng.randint(1, 4) for _ in range(n))
        form = rng.random()
        if form < 0.4:
            pad: object = tuple(rng.randint(0, kk // 2) for kk in k)
        elif form < 0.75:
            pad = tuple((rng.randint(0, (kk - 1) * dd), rng.randint(0, (kk - 1) * dd)) for kk, dd in zip(k, d))
        else:
            pad = rng.choice(("same", "valid"))
        ceil = rng.random() < 0.5
        if not _dilated_valid(spatial, k, s, d, pad, ceil) or n == 3 and any(L < kk for L, kk in zip(spatial, k)):
            continue
        lead = _lead(n, rng.random() < 0.8, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.15 else s, padding=pad, dilation=d,
                    ceil_mode=ceil, count_include_pad=rng.random() < 0.5,
                    divisor_override=rng.choice((None, None, None, 2, -3)))
        if args["stride"] is None and not _dilated_valid(spatial, k, k, d, pad, ceil):
            continue
        out.append(Case(f"avg_pool{n}d", lead + spatial, args, ("dilation", "random")))
    return out


def _dilated_valid(spatial: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...],
                   pad: object, ceil: bool) -> bool:
    """Whether every output size is >= 1 (torch's size rule, the dilated window (k - 1) d + 1; 'same' always)."""
    if pad == "same":
        return True
    for i, L in enumerate(spatial):
        lo, hi = (0, 0) if pad == "valid" else pad[i] if isinstance(pad[i], tuple) else (pad[i], pad[i])  # type: ignore[index]
        total = L + lo + hi - (k[i] - 1) * d[i] - 1
        if total < 0:
            return False
    return True


def avg_random(count: int, seed: int = 0) -> list[Case]:
    """Seeded random avg_pool configurations, some invalid on purpose (torch decides which)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, spatial, k, s = window_draw(rng)
        p = tuple(rng.randint(0, max(0, kk // 2 + (1 if rng.random() < 0.1 else 0))) for kk in k)
        batched = rng.random() < 0.8
        lead = _lead(n, batched, rng.choice((1, 2)), rng.choice((1, 3)))
        args = dict(kernel_size=k, stride=None if rng.random() < 0.2 else s, padding=p,
                    ceil_mode=rng.random() < 0.5, count_include_pad=rng.random() < 0.5,
                    divisor_override=rng.choice((None, None, None, 2, 5, -3)))
        out.append(Case(f"avg_pool{n}d", lead + spatial, args, ("random",)))
    return out


def _avg_flags(case: Case) -> tuple[str, ...]:
    divisor = _rank(case.op) == 1 and case.args.get("divisor_override") is not None
    return ("avg_pool1d_divisor_override",) if divisor else ()


def _avg_dtype_rule(case: Case, dtype: str) -> tuple[tuple[str, ...], str | None]:
    if dtype == "int64" and "empty_window" in case.flags and not case.args.get("count_include_pad", True) \
            and case.args.get("divisor_override") is None:
        return (), "ValueError"  # 0 / 0 in integers: no NaN to give (the card)
    return (("avg_pool3d_half",) if _rank(case.op) == 3 and dtype in ("float16", "bfloat16") else ()), None


def _errors() -> list[GoldenCase]:
    return [GoldenCase(f"avg_pool{n}d-e000", f"avg_pool{n}d", (1, 2) + (5,) * n, dict(kernel_size=2, stride=0),
                       ("stride_0",), "float64", error="ValueError") for n in (1, 2, 3)]


def _takes_dilation(fn: Callable[..., Any], arguments: dict[str, Any]) -> None:
    """poolspec's dilation extension is beyond an implementation whose signature has no ``dilation`` (nor
    ``**kwargs``): its dilated cases are not expressible, neither passed nor failed."""
    if "dilation" not in arguments:
        return
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the call decides
        return
    if not any(p.name == "dilation" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        from ...conformance.runner import NotExpressible

        raise NotExpressible("no dilation argument (poolspec's extension of avg_pool)")


def _avg_call(family: Family, fn: Callable[..., Any], arguments: dict[str, Any],
              arrays: dict[str, Any]) -> tuple[Any, Any]:
    _takes_dilation(fn, arguments)
    return _call_default(family, fn, arguments, arrays)


def _avg_call_backward(family: Family, bw: Callable[..., Any], g: Any, arguments: dict[str, Any],
                       arrays: dict[str, Any], winners: Any, strict: bool) -> tuple[Any, ...]:
    _takes_dilation(bw, arguments)
    return _backward_default(family, bw, g, arguments, arrays, winners, strict)


# the dilated grid comes after the torch grid: its cases are numbered after the stored ones of each op
RECORD = Family("avg_pool", _ops("avg_pool"), lambda: avg_grid() + avg_dilated_grid(),
                lambda: avg_random(60, seed=100), _plain_inputs,
                dtypes=(("float32", 4), ("float16", 9), ("bfloat16", 13), ("int64", 9)), half_flags=HALF_FLAGS,
                deviation_flags=_avg_flags, dtype_rule=_avg_dtype_rule, errors=_errors, call=_avg_call,
                call_backward=_avg_call_backward)
