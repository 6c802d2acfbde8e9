"""roi_pool's nodes for torch.compile and torch.export: ``poolspec::roi_pool``, its explicit backward
``poolspec::roi_pool_backward`` (the gradient w.r.t. x) and ``poolspec::roi_pool_select`` (a cotangent shaped like x
read at the forward's winners: the backward's derivative w.r.t. grad_output), with their shapes at trace time from
the card (K from the boxes, C from x), their derivatives (the op reads x at its winners: the backward routes to
them, the select gathers at them, each the other's transpose) and their vmap rules. The nodes stay opaque under
inductor: their eager implementation reads the boxes' values for the window frame, which a decomposition would not
have.

>>> import torch, poolspec
>>> x, boxes = torch.ones(1, 1, 4, 4), torch.tensor([[0.0, 0.0, 0.0, 2.0, 2.0]])
>>> torch.compile(poolspec.roi_pool, fullgraph=True, backend="eager")(x, boxes, 2).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

from typing import Any

import torch

from ...autodiff import torch_graph as g
from ...spec import card
from ..roi_align.capture import ps_nodes


def _arguments(spec: str, sizes: list[int]) -> dict[str, Any]:
    """The node's keyword arguments, spatial_scale back from the ratio the public function wrote (ops.py)."""
    kw = g.arguments(spec, sizes)
    scale = kw["spatial_scale"]
    return dict(kw, spatial_scale=scale[0] / scale[1]) if isinstance(scale, (tuple, list)) else kw


@torch.library.custom_op("poolspec::roi_pool", mutates_args=())
def roi_pool(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.roi_pool(x, boxes, **_arguments(spec, sizes))``."""
    return g.eager_function("roi_pool")(x, boxes, **_arguments(spec, sizes)).contiguous()


@torch.library.custom_op("poolspec::roi_pool_backward", mutates_args=())
def roi_pool_backward(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                      sizes: list[int]) -> torch.Tensor:
    """``poolspec.roi_pool_backward(grad_output, x, boxes, ...)``: grad_x."""
    out = g.eager_function("roi_pool_backward")(grad_output, x, boxes, **_arguments(spec, sizes))
    return g.fresh(out.contiguous(), grad_output, x, boxes)


@torch.library.custom_op("poolspec::roi_pool_select", mutates_args=())
def roi_pool_select(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                    sizes: list[int]) -> torch.Tensor:
    """``ggx`` (shaped like x) read at the winners of roi_pool on ``x``."""
    from .ops import _roi_pool_select

    return g.fresh(_roi_pool_select(ggx, x, boxes, **_arguments(spec, sizes)).contiguous(), ggx, x, boxes)


def _resolved(x: torch.Tensor, boxes: torch.Tensor, kw: dict[str, Any], op: str) -> tuple[Any, ...]:
    """The output shape by the card, K and x's batch and channels kept symbolic; the eager checks of dtype and
    device."""
    xs = tuple(g.symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
    bs = tuple(g.symbol(s, "K") if i == 0 else int(s) for i, s in enumerate(boxes.shape))
    r = card("roi_pool").resolve(xs, g.dtype_name(x), boxes=bs, **kw)
    g.check_port(op, "boxes", boxes, x)
    return (boxes.shape[0], x.shape[1]) + tuple(r.output_shape[2:])


@roi_pool.register_fake
def _(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return x.new_empty(_resolved(x, boxes, _arguments(spec, sizes), "roi_pool"))


@roi_pool_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    op = "roi_pool_backward"
    g.check_grad(op, grad_output, _resolved(x, boxes, _arguments(spec, sizes), op), like=x)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@roi_pool_select.register_fake
def _(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    op = "roi_pool_backward"
    g.check_grad(op, ggx, tuple(x.shape), like=x)
    return x.new_empty(_resolved(x, boxes, _arguments(spec, sizes), op))


# derivatives: the op's is its explicit backward (a node); the backward's, w.r.t. grad_output, is the select (its
# transpose), and the select's, w.r.t. ggx, is the backward; w.r.t. x both are zero (piecewise); boxes get none

def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    return roi_pool_backward(grad, x, boxes, ctx.spec, ctx.sizes), None, None, None


def _pair_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def _backward_vjp(ctx: Any, ggx: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
    return roi_pool_select(ggx, x, boxes, ctx.spec, ctx.sizes), zero, None, None, None


def _select_vjp(ctx: Any, g_out: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
    return roi_pool_backward(g_out, x, boxes, ctx.spec, ctx.sizes), zero, None, None, None


torch.library.register_autograd("poolspec::roi_pool", _vjp, setup_context=_context)
torch.library.register_autograd("poolspec::roi_pool_backward", _backward_vjp, setup_context=_pair_context)
torch.library.register_autograd("poolspec::roi_pool_select", _select_vjp, setup_context=_pair_context)


# vmap: the vmapped dimension joins the images' batch; each copy's rois are moved to its own images


def _joined(info: Any, x_dim: Any, b_dim: Any, x: torch.Tensor, boxes: torch.Tensor) -> tuple[Any, Any]:
    B = info.batch_size
    x = x.expand(B, *x.shape) if x_dim is None else x.movedim(x_dim, 0)
    boxes = boxes.expand(B, *boxes.shape) if b_dim is None else boxes.movedim(b_dim, 0)
    N = x.shape[1]
    shift = (torch.arange(B, dtype=boxes.dtype, device=boxes.device) * N).reshape(B, 1, 1)
    first = torch.zeros(5, dtype=boxes.dtype, device=boxes.device)
    first[0] = 1
    boxes = boxes + shift * first  # batch index b * N + n
    return x.flatten(0, 1), boxes.flatten(0, 1)


def _batched(info: Any, dim: Any, a: torch.Tensor) -> torch.Tensor:
    return a.expand(info.batch_size, *a.shape) if dim is None else a.movedim(dim, 0)


def _vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, boxes: torch.Tensor, spec: str,
          sizes: list[int]) -> tuple[torch.Tensor, int]:
    x, boxes = _joined(info, in_dims[0], in_dims[1], x, boxes)
    return roi_pool(x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                   boxes: torch.Tensor, spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    grad_output = _batched(info, in_dims[0], grad_output)
    x, boxes = _joined(info, in_dims[1], in_dims[2], x, boxes)
    gx = roi_pool_backward(grad_output.flatten(0, 1), x, boxes, spec, sizes)
    return gx.unflatten(0, (info.batch_size, -1)), 0


def _select_vmap(info: Any, in_dims: tuple[Any, ...], ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor,
                 spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    ggx = _batched(info, in_dims[0], ggx)
    x, boxes = _joined(info, in_dims[1], in_dims[2], x, boxes)
    out = roi_pool_select(ggx.flatten(0, 1), x, boxes, spec, sizes)
    return out.unflatten(0, (info.batch_size, -1)), 0


torch.library.register_vmap("poolspec::roi_pool", _vmap)
torch.library.register_vmap("poolspec::roi_pool_backward", _backward_vmap)
torch.library.register_vmap("poolspec::roi_pool_select", _select_vmap)


def _ps_roi_pool_select(*args: Any, **kwargs: Any) -> Any:
    from .ops import _ps_roi_pool_select

    return _ps_roi_pool_select(*args, **kwargs)


# ps_roi_pool's nodes: roi_align's position-sensitive factory (its select is the transpose of torchvision's
# backward, whose windows are not the forward's)
PS_ROI_POOL = ps_nodes("ps_roi_pool", _ps_roi_pool_select)


# the family's nodes (op, backward) by the op or its backward's name
NODES = {"roi_pool": (roi_pool, roi_pool_backward), "roi_pool_backward": (roi_pool, roi_pool_backward),
         "ps_roi_pool": PS_ROI_POOL[:2], "ps_roi_pool_backward": PS_ROI_POOL[:2]}


def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """roi_pool or ps_roi_pool (or its backward) on ``tensors`` as a node."""
    return NODES[op][1 if backward else 0](*tensors, *g.node_args(args))
