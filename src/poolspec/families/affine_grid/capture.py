"""affine_grid's nodes for torch.compile and torch.export: ``poolspec::affine_grid`` and
``poolspec::affine_grid_backward``, carrying the size's spatial entries only (its batch entry, checked at trace
time, is theta's), so that a dynamic batch stays dynamic.

>>> import torch, poolspec
>>> f = torch.compile(lambda t: poolspec.affine_grid(t, (1, 1, 2, 3), False), fullgraph=True, backend="eager")
>>> f(torch.eye(2, 3)[None]).shape
torch.Size([1, 2, 3, 2])
"""

from __future__ import annotations

from typing import Any

import torch

from ...autodiff import torch_graph as g
from ...registry import op as record
from ...spec import card


@torch.library.custom_op("poolspec::affine_grid", mutates_args=())
def affine_grid(theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.affine_grid(theta, (N, 1, *spatial), align_corners)``: the grid depends on the size's
    spatial entries only (its batch entry, checked at trace time, is theta's), so a dynamic batch stays so."""
    kw = g.arguments(spec, sizes)
    return g.eager_function("affine_grid")(theta, (theta.shape[0], 1, *kw["spatial"]), kw["align_corners"]).contiguous()


@torch.library.custom_op("poolspec::affine_grid_backward", mutates_args=())
def affine_grid_backward(grad_grid: torch.Tensor, theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.affine_grid_backward(grad_grid, theta, (N, 1, *spatial), align_corners)``."""
    kw = g.arguments(spec, sizes)
    out = g.eager_function("affine_grid_backward")(grad_grid, theta, (theta.shape[0], 1, *kw["spatial"]),
                                            kw["align_corners"])
    return out.detach().contiguous()


def _resolved(theta: torch.Tensor, kw: dict[str, Any]) -> tuple[Any, ...]:
    """affine_grid's grid shape by its card, theta's batch kept symbolic."""
    ts = tuple("N" if i == 0 else int(s) for i, s in enumerate(theta.shape))  # its batch: checked by sampling
    spatial = tuple(kw["spatial"])
    r = card("affine_grid").resolve(ts, g.dtype_name(theta), size=(1, 1, *spatial), align_corners=kw["align_corners"])
    return (theta.shape[0],) + tuple(r.output_shape[1:])


@affine_grid.register_fake
def _(theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return theta.new_empty(_resolved(theta, g.arguments(spec, sizes)))


@affine_grid_backward.register_fake
def _(grad_grid: torch.Tensor, theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    g.check_grad("affine_grid_backward", grad_grid, _resolved(theta, g.arguments(spec, sizes)), "grad_grid")
    return torch.empty_like(theta, memory_format=torch.contiguous_format)


def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    theta, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(theta)


def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    (theta,) = ctx.saved_tensors
    return affine_grid_backward(grad, theta, ctx.spec, ctx.sizes), None, None


def _backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, _, ctx.spec, ctx.sizes = inputs


def _backward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    """Linear in grad_grid (the transpose of a transpose: affine_grid), constant in theta."""
    return affine_grid(grad, ctx.spec, ctx.sizes), None, None, None


torch.library.register_autograd("poolspec::affine_grid", _vjp, setup_context=_context)
torch.library.register_autograd("poolspec::affine_grid_backward", _backward_vjp,
                                setup_context=_backward_context)


# vmap: the vmapped dimension joins the batch

def _vmap(info: Any, in_dims: tuple[Any, ...], theta: torch.Tensor, spec: str,
                 sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, theta = g.fronts(info, in_dims, "affine_grid", theta)
    return g.unfold(True, info, affine_grid(theta, spec, sizes)), 0


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_grid: torch.Tensor, theta: torch.Tensor,
                          spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, grad_grid, theta = g.fronts(info, in_dims, "affine_grid", grad_grid, theta)
    return g.unfold(True, info, affine_grid_backward(grad_grid, theta, spec, sizes)), 0


torch.library.register_vmap("poolspec::affine_grid", _vmap)
torch.library.register_vmap("poolspec::affine_grid_backward", _backward_vmap)


def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """affine_grid (or its backward) on ``tensors`` as a node."""
    theta = tensors[-1]
    size = tuple(args["size"]) if isinstance(args["size"], (tuple, list)) else args["size"]
    spatial: tuple[Any, ...] = ()
    if isinstance(size, tuple) and len(size) in (4, 5):
        g.same(size[0], theta.shape[0], lambda: f"{op}: theta.shape={tuple(theta.shape)}: its batch dimension "
                                               f"must equal size[0] ({size[0]})")
        if size[1] <= 0:
            raise ValueError(f"{op}: size={size}: every entry must be > 0")
        spatial = size[2:]
    else:  # the card's error, at trace time
        card(record(op).name).resolve(("N", 2, 3), g.dtype_name(theta), size=size, align_corners=args["align_corners"])
    spec, sizes = g.node_args({"spatial": spatial, "align_corners": args["align_corners"]})
    return (affine_grid_backward if backward else affine_grid)(*tensors, spec, sizes)


g.fusible(affine_grid)
g.fusible(affine_grid_backward)
