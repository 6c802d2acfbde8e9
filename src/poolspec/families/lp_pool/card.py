"""The cards of lp_pool1d/2d/3d (docs/TORCH_NUMERICS.md section 3)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...spec._card import REQUIRED, Argument, Card, Example, Gradient, Resolved
from ...spec._pools import (
    FLOATS,
    JAX_TRANSFORMS,
    OUT_FORMULA,
    TORCH_TRANSFORMS,
    example_shape,
    input_argument,
    output_port,
    ranks_of,
    stride_of,
    window_argument,
    window_checks,
)
from ...spec._rules import check_bool, check_dtype, fail, int_tuple, split_shape
from .. import Family


def _resolve_lp(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    norm = a["norm_type"]
    if isinstance(norm, (bool, np.bool_)) or not isinstance(norm, (int, float, np.integer, np.floating)):
        fail(op, "norm_type", norm, "must be a real number", TypeError)
    norm = float(norm)
    if norm == 0 or math.isnan(norm):
        fail(op, "norm_type", norm, "must be non-zero and not NaN (torch raises ZeroDivisionError for 0)")
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = stride_of(op, a["stride"], k, n)
    ceil_mode = check_bool(op, "ceil_mode", a["ceil_mode"])
    out, _, _ = window_checks(op, n, spatial, k, s, (0,) * n, (1,) * n, ceil_mode)
    if n == 3 and math.isfinite(norm) and any(spatial[i] < k[i] for i in range(n)):
        fail(op, "kernel_size", k, f"is larger than the input {spatial} along some axis (lp_pool3d inherits "
                                   "avg_pool3d's rule for finite norm_type: every input extent >= kernel_size)")
    params = dict(norm_type=norm, kernel_size=k, stride=s, ceil_mode=ceil_mode)
    # p = +-inf is max pooling of |x|, whose memory-format rule it takes (as torch)
    maxed = f"max_pool{n}d" if math.isinf(norm) else None
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched, maxed)


def _lp_card(n: int) -> Card:
    name = f"lp_pool{n}d"
    args = (
        input_argument(n),
        Argument("norm_type", "float", REQUIRED, ("!= 0", "inf and -inf allowed"), "the power p"),
        window_argument("kernel_size", n, REQUIRED, "the window size k", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0",), "the window step s"),
        Argument("ceil_mode", "bool", False, (), "use ceil instead of floor in the output size rule"),
    )
    return Card(
        name=name, version=1, category="pooling", summary=f"{n}-d power-average pooling.",
        spatial_dims=(n,), input_ranks=ranks_of(n), dtypes=FLOATS, arguments=args,
        shape_relation=f"per spatial axis: {OUT_FORMULA} with p = 0, d = 1; y = S^(1/p), "
                       "S = avg_pool(x^p) * prod(k) (partial ceil windows scaled by K/n as torch)",
        determinism="deterministic; gradient 0 where the window sum is 0",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "native autodiff over torch's formula (the window sum is the avg family's linear "
                          "op; p = +-inf routes through max_pool); jvp works for finite norm_type"),
        torch_reference=f"torch.nn.functional.lp_pool{n}d", _resolve=_resolve_lp,
        notes=(f"norm_type = +-inf is max_pool{n}d of |x| (sign-flipped for -inf), as torch, and takes "
               f"max_pool{n}d's memory-format rule",),
        outputs=(output_port(n),),
        examples=(Example(example_shape(n, 32), dict(norm_type=2.0, kernel_size=3, stride=2)),
                  Example(example_shape(n, 7), dict(norm_type=float("inf"), kernel_size=2, ceil_mode=True))),
        torch_determinism="torch composes avg_pool (and max_pool for p = inf): "
                          + ("avg_pool3d's CUDA backward is atomic" if n == 3 else "deterministic"),
        channels_last=(4,) if n == 2 else (),
    )


FAMILY = Family('lp_pool', 'composed', 6, lambda: [_lp_card(n) for n in (1, 2, 3)])
