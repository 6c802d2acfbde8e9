"""grid_sample's nodes for torch.compile and torch.export: ``poolspec::grid_sample`` and its explicit backward
``poolspec::grid_sample_backward``, with their shapes at trace time from the card, their derivatives (the
backward's, w.r.t. grad_output, as the transpose of (grad_x, grad_grid)) and their vmap rules.

>>> import torch, poolspec
>>> x, grid = torch.ones(1, 1, 3, 3), torch.zeros(1, 2, 2, 2)
>>> torch.compile(poolspec.grid_sample, fullgraph=True, backend="eager")(x, grid, align_corners=False).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

from typing import Any

import torch

from ...autodiff import torch_graph as g
from ...spec import card


@torch.library.custom_op("poolspec::grid_sample", mutates_args=())
def grid_sample(x: torch.Tensor, grid: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.grid_sample(x, grid, **g.arguments(spec, sizes))``."""
    return g.eager_function("grid_sample")(x, grid, **g.arguments(spec, sizes)).contiguous()


@torch.library.custom_op("poolspec::grid_sample_backward", mutates_args=())
def grid_sample_backward(grad_output: torch.Tensor, x: torch.Tensor, grid: torch.Tensor, spec: str,
                         sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """``poolspec.grid_sample_backward(grad_output, x, grid, ...)``: (grad_x, grad_grid)."""
    gx, gg = g.eager_function("grid_sample_backward")(grad_output, x, grid, **g.arguments(spec, sizes))
    return gx.contiguous(), gg.contiguous()


def _resolved(x: torch.Tensor, grid: torch.Tensor, kw: dict[str, Any], op: str) -> tuple[Any, ...]:
    """grid_sample's output shape by its card, x's batch and channels kept symbolic; the eager checks of
    dtype, device and batch."""
    xs = tuple(g.symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
    gs = tuple(g.symbol(s, "N") if i == 0 else int(s) for i, s in enumerate(grid.shape))
    r = card("grid_sample").resolve(xs, g.dtype_name(x), grid=gs, **kw)
    g.check_port(op, "grid", grid, x)
    g.same(grid.shape[0], x.shape[0], lambda: f"{op}: grid.shape={tuple(grid.shape)}: the batch dimension must "
                                             f"equal x's ({x.shape[0]})")
    return (x.shape[0], x.shape[1]) + tuple(r.output_shape[2:])


@grid_sample.register_fake
def _(x: torch.Tensor, grid: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return x.new_empty(_resolved(x, grid, g.arguments(spec, sizes), "grid_sample"))


@grid_sample_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, grid: torch.Tensor, spec: str,
      sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    op = "grid_sample_backward"
    g.check_grad(op, grad_output, _resolved(x, grid, g.arguments(spec, sizes), op), like=x)
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(grid, memory_format=torch.contiguous_format))


# derivatives: grid_sample's is its explicit backward (a node); that one's, w.r.t. grad_output, is the
# transpose of (grad_x, grad_grid) = (R g, D g): grid_sample for R (R^T is the op on the cotangent) and, for D,
# the JVP of the op in the grid's direction, read from the backward of each (n, c) plane as a batch of its own
# (all-ones cotangent: D's entries, d out[n, c, m] / d grid[n, m, k]); w.r.t. x and grid it is not available

def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, grid, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, grid)


def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, grid = ctx.saved_tensors
    gx, gg = grid_sample_backward(grad, x, grid, ctx.spec, ctx.sizes)
    return gx, gg, None, None


def _backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, grid, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, grid)


def _backward_vjp(ctx: Any, ggx: torch.Tensor | None, ggg: torch.Tensor | None) -> tuple[Any, ...]:
    if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
        raise NotImplementedError("grid_sample_backward: its derivative w.r.t. x and grid is not available in a "
                                  "captured graph (w.r.t. grad_output it is; torch.compile has no double "
                                  "backward; call the op eagerly for higher orders)")
    x, grid = ctx.saved_tensors
    out = None if ggx is None else grid_sample(ggx, grid, ctx.spec, ctx.sizes)
    if ggg is not None and g.arguments(ctx.spec, ctx.sizes)["mode"] != "nearest":  # nearest: D = 0
        N, C = x.shape[0], x.shape[1]
        planes = x.reshape((N * C, 1) + tuple(x.shape[2:]))
        grids = grid.repeat_interleave(C, dim=0)
        ones = x.new_ones((N * C, 1) + tuple(grid.shape[1:-1]))
        entries = grid_sample_backward(ones, planes, grids, ctx.spec, ctx.sizes)[1]  # (N * C, *O, n)
        jvp = (entries.unflatten(0, (N, C)) * ggg.unsqueeze(1)).sum(-1)
        out = jvp if out is None else out + jvp
    return out, None, None, None, None


torch.library.register_autograd("poolspec::grid_sample", _vjp, setup_context=_context)
torch.library.register_autograd("poolspec::grid_sample_backward", _backward_vjp,
                                setup_context=_backward_context)


# vmap: the vmapped dimension joins the batch

def _vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, grid: torch.Tensor, spec: str,
               sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, x, grid = g.fronts(info, in_dims, "grid_sample", x, grid)
    return g.unfold(True, info, grid_sample(x, grid, spec, sizes)), 0


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                        grid: torch.Tensor, spec: str, sizes: list[int]) -> tuple[tuple[torch.Tensor, ...],
                                                                                  tuple[int, int]]:
    _, grad_output, x, grid = g.fronts(info, in_dims, "grid_sample", grad_output, x, grid)
    gx, gg = grid_sample_backward(grad_output, x, grid, spec, sizes)
    return (g.unfold(True, info, gx), g.unfold(True, info, gg)), (0, 0)


torch.library.register_vmap("poolspec::grid_sample", _vmap)
torch.library.register_vmap("poolspec::grid_sample_backward", _backward_vmap)


def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """grid_sample (or its backward) on ``tensors`` as a node."""
    return (grid_sample_backward if backward else grid_sample)(*tensors, *g.node_args(args))


g.fusible(grid_sample)
g.fusible(grid_sample_backward)
