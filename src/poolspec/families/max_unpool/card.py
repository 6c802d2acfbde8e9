"""The cards of max_unpool1d/2d/3d (docs/TORCH_NUMERICS.md section 4)."""

from __future__ import annotations

from typing import Any

from ...spec._card import REQUIRED, Argument, Card, Example, Gradient, Resolved
from ...spec._pools import (
    FLOATS,
    INTS,
    JAX_TRANSFORMS,
    TORCH_TRANSFORMS,
    example_shape,
    input_argument,
    output_port,
    ranks_of,
    stride_of,
    window_argument,
)
from ...spec._rules import as_int, check_dtype, fail, int_tuple, split_shape
from .. import Family


def _resolve_unpool(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    check_dtype(op, dtype, card.dtypes)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    s = stride_of(op, a["stride"], k, n)
    p = int_tuple(op, "padding", a["padding"], n)
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", k, "every entry must be > 0")
    if any(v <= 0 for v in s):
        fail(op, "stride", s, "every entry must be > 0")
    if any(v < 0 for v in p):
        fail(op, "padding", p, "every entry must be >= 0")
    default = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    size = a["output_size"]
    if size is None:
        out = default
        if any(o < 0 for o in out):
            fail(op, "kernel_size", k, f"with stride={s}, padding={p} the default output size {out} is negative")
    else:
        if not isinstance(size, (tuple, list)):
            fail(op, "output_size", size, "must be None or a tuple of ints", TypeError)
        items = tuple(as_int(op, "output_size", v, size) for v in size)
        if len(items) not in (n, n + 2):
            fail(op, "output_size", size, f"must have {n} entries (or {n + 2}, whose first two are ignored, "
                                          f"as torch), got {len(items)}")
        out = items[-n:]
        if any(o < 0 for o in out):
            fail(op, "output_size", size, "spatial entries must be >= 0")
        for i in range(n):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < out[i] < hi:
                fail(op, "output_size", size, f"entry {i} must lie strictly between {lo} and {hi} "
                                              f"(default {default[i]} +- stride {s[i]})")
    params = dict(kernel_size=k, stride=s, padding=p, output_size=out)
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def _unpool_card(n: int) -> Card:
    name = f"max_unpool{n}d"
    args = (
        input_argument(n),
        Argument("indices", "int64 array", constraints=("same shape as x", "values in [0, prod(output_size))"),
                 description="flat indices as returned by max_pool with return_indices=True"),
        window_argument("kernel_size", n, REQUIRED, "the pooling window size", "every entry > 0"),
        Argument("stride", f"int | tuple[int x {n}] | None", None, ("every entry > 0",), "the pooling step"),
        window_argument("padding", n, 0, "the pooling padding", ">= 0"),
        Argument("output_size", f"tuple[int x {n}] | None", None,
                 ("default - stride < entry < default + stride",), "the output spatial size"),
    )
    return Card(
        name=name, version=1, category="unpooling", summary=f"{n}-d partial inverse of max_pool{n}d.",
        spatial_dims=(n,), input_ranks=ranks_of(n), dtypes=FLOATS + INTS, arguments=args,
        shape_relation="per spatial axis: default O = (L - 1)*s - 2p + k",
        determinism="duplicate indices resolve to one documented winner; computed by gathering, "
                    "so it is deterministic (torch raises under use_deterministic_algorithms)",
        gradient=Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "linear in x: the backward is a gather at the indices (winners only), its "
                          "backward the unpool again"),
        torch_reference=f"torch.nn.functional.max_unpool{n}d", _resolve=_resolve_unpool,
        outputs=(output_port(n, "zeros, with x at the indices"),),
        examples=(Example(example_shape(n, 16), dict(kernel_size=2)),
                  Example(example_shape(n, 8), dict(kernel_size=3, stride=2, padding=1, output_size=(16,) * n))),
        torch_determinism="torch's max_unpool forward scatters, and raises under use_deterministic_algorithms "
                          "even on CPU (max_unpooling2d/3d_forward_out); the winner of duplicates is unspecified",
        channels_last=(4,) if n == 2 else (),
    )


FAMILY = Family('max_unpool', 'linear', 5, lambda: [_unpool_card(n) for n in (1, 2, 3)], fused_vjp=False)
