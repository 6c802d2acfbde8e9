"""The card of affine_grid (the grid grid_sample reads)."""

from __future__ import annotations

from typing import Any

from ...spec._card import Argument, Card, Example, Gradient, Port, Resolved
from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import check_bool, check_dtype, checked_shape, fail, is_int
from .. import Family


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
    theta = checked_shape(op, "theta", shape, (3,))
    if tuple(theta[1:]) != (n, n + 1):
        fail(op, "theta", theta, f"must be (N, {n}, {n + 1}) for a size of {len(size)} entries")
    if not isinstance(theta[0], str) and theta[0] != size[0]:
        fail(op, "theta", theta, f"its batch dimension must equal size[0] ({size[0]})")
    check_dtype(op, dtype, card.dtypes)
    out = (theta[0],) + size[2:] + (n,)
    return Resolved(op, theta, out, dict(size=size, align_corners=align), True)


def _card() -> Card:
    theta_args = (
        Argument("theta", "array", constraints=("(N, 2, 3) for a 4-entry size, (N, 3, 4) for 5", "floating"),
                 description="a batch of affine matrices acting on normalised (x, y[, z], 1)"),
        Argument("size", "tuple[int, ...]", constraints=("(N, C, H, W) or (N, C, D, H, W)", "entries > 0"),
                 description="the size of the image the grid will sample into"),
        Argument("align_corners", "bool | None", None, ("None means False (torch's default, where it warns)",),
                 "as grid_sample's"),
    )
    return Card(
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
        image=False,
        outputs=(Port("grid", "array", "(N, *S, n)", "normalised sampling positions, theta's dtype"),),
        examples=(Example(("N", 2, 3), dict(size=(4, 3, 32, 32))),
                  Example((2, 3, 4), dict(size=(2, 1, 8, 8, 8), align_corners=True))),
        torch_determinism="deterministic (a batched matrix product)",
    )


FAMILY = Family('affine_grid', 'sampled', 21, lambda: [_card()])
