"""roi_align's nodes for torch.compile and torch.export: ``poolspec::roi_align`` and its explicit backward
``poolspec::roi_align_backward`` (the gradient w.r.t. x), with their shapes at trace time from the card (K from the
boxes, C from x), their derivatives (the op is linear in x: the backward's derivative w.r.t. grad_output is the op
itself) and their vmap rules. The nodes stay opaque under inductor: their eager implementation reads the boxes'
values for an adaptive sample grid, which a decomposition would not have.

>>> import torch, poolspec
>>> x, boxes = torch.ones(1, 1, 4, 4), torch.tensor([[0.0, 0.0, 0.0, 2.0, 2.0]])
>>> torch.compile(poolspec.roi_align, fullgraph=True, backend="eager")(x, boxes, 2).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

from typing import Any

import torch

from ...autodiff import torch_graph as g
from ...spec import card


def _arguments(spec: str, sizes: list[int]) -> dict[str, Any]:
    """The node's keyword arguments, spatial_scale back from the ratio the public function wrote (ops.py)."""
    kw = g.arguments(spec, sizes)
    scale = kw["spatial_scale"]
    return dict(kw, spatial_scale=scale[0] / scale[1]) if isinstance(scale, (tuple, list)) else kw


@torch.library.custom_op("poolspec::roi_align", mutates_args=())
def roi_align(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.roi_align(x, boxes, **_arguments(spec, sizes))``."""
    return g.eager_function("roi_align")(x, boxes, **_arguments(spec, sizes)).contiguous()


@torch.library.custom_op("poolspec::roi_align_backward", mutates_args=())
def roi_align_backward(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                       sizes: list[int]) -> torch.Tensor:
    """``poolspec.roi_align_backward(grad_output, x, boxes, ...)``: grad_x."""
    out = g.eager_function("roi_align_backward")(grad_output, x, boxes, **_arguments(spec, sizes))
    return g.fresh(out.contiguous(), grad_output, x, boxes)


@torch.library.custom_op("poolspec::roi_align_boxes_backward", mutates_args=())
def roi_align_boxes_backward(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                             sizes: list[int]) -> torch.Tensor:
    """``poolspec.roi_align_boxes_backward(grad_output, x, boxes, ...)``: grad_boxes (K, 5)."""
    out = g.eager_function("roi_align_boxes_backward")(grad_output, x, boxes, **_arguments(spec, sizes))
    return g.fresh(out.contiguous(), grad_output, x, boxes)


def _resolved(x: torch.Tensor, boxes: torch.Tensor, kw: dict[str, Any], op: str) -> tuple[Any, ...]:
    """The output shape by the card, K and x's batch and channels kept symbolic; the eager checks of dtype and
    device."""
    xs = tuple(g.symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
    bs = tuple(g.symbol(s, "K") if i == 0 else int(s) for i, s in enumerate(boxes.shape))
    r = card("roi_align").resolve(xs, g.dtype_name(x), boxes=bs, **kw)
    g.check_port(op, "boxes", boxes, x)
    return (boxes.shape[0], x.shape[1]) + tuple(r.output_shape[2:])


@roi_align.register_fake
def _(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return x.new_empty(_resolved(x, boxes, _arguments(spec, sizes), "roi_align"))


@roi_align_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    op = "roi_align_backward"
    g.check_grad(op, grad_output, _resolved(x, boxes, _arguments(spec, sizes), op), like=x)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@roi_align_boxes_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    op = "roi_align_boxes_backward"
    g.check_grad(op, grad_output, _resolved(x, boxes, _arguments(spec, sizes), op), like=x)
    return torch.empty_like(boxes, memory_format=torch.contiguous_format)


# derivatives: the op's are its explicit backwards (nodes: w.r.t. x, and w.r.t. the boxes where they require it);
# the input backward's, w.r.t. grad_output, is the op (it is linear in grad_output and its transpose is the
# forward's gather); w.r.t. x it is zero; the boxes' gradient is not differentiated again (its node has no
# derivative: torch says so if asked)

def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    gx = roi_align_backward(grad, x, boxes, ctx.spec, ctx.sizes) if ctx.needs_input_grad[0] else None
    gb = roi_align_boxes_backward(grad, x, boxes, ctx.spec, ctx.sizes) if ctx.needs_input_grad[1] else None
    return gx, gb, None, None


def _backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def _backward_vjp(ctx: Any, ggx: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
    return roi_align(ggx, boxes, ctx.spec, ctx.sizes), zero, None, None, None


torch.library.register_autograd("poolspec::roi_align", _vjp, setup_context=_context)
torch.library.register_autograd("poolspec::roi_align_backward", _backward_vjp, setup_context=_backward_context)


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


def _vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, boxes: torch.Tensor, spec: str,
          sizes: list[int]) -> tuple[torch.Tensor, int]:
    x, boxes = _joined(info, in_dims[0], in_dims[1], x, boxes)
    return roi_align(x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                   boxes: torch.Tensor, spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    B = info.batch_size
    grad_output = grad_output.expand(B, *grad_output.shape) if in_dims[0] is None else grad_output.movedim(
        in_dims[0], 0)
    x, boxes = _joined(info, in_dims[1], in_dims[2], x, boxes)
    gx = roi_align_backward(grad_output.flatten(0, 1), x, boxes, spec, sizes)
    return gx.unflatten(0, (B, -1)), 0


torch.library.register_vmap("poolspec::roi_align", _vmap)
torch.library.register_vmap("poolspec::roi_align_backward", _backward_vmap)


def ps_nodes(name: str, select: Any) -> tuple[Any, Any, Any]:
    """A position-sensitive op's nodes (ps_roi_align's here, ps_roi_pool's in roi_pool/capture.py):
    ``poolspec::<name>``, its explicit backward ``<name>_backward`` and ``<name>_select``, ``select`` (a cotangent
    shaped like x taken through the transpose of the backward: the backward's derivative w.r.t. grad_output, which
    is not the forward where torchvision's backward is not its transpose); derivatives: the op's is the backward,
    the backward's the select and the select's the backward (both linear, zero w.r.t. x); vmap joins the batch."""
    lib = f"poolspec::{name}"

    @torch.library.custom_op(lib, mutates_args=())
    def forward(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        return g.eager_function(name)(x, boxes, **_arguments(spec, sizes)).contiguous()

    @torch.library.custom_op(f"{lib}_backward", mutates_args=())
    def backward(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                 sizes: list[int]) -> torch.Tensor:
        out = g.eager_function(f"{name}_backward")(grad_output, x, boxes, **_arguments(spec, sizes))
        return g.fresh(out.contiguous(), grad_output, x, boxes)

    @torch.library.custom_op(f"{lib}_select", mutates_args=())
    def selected(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                 sizes: list[int]) -> torch.Tensor:
        return g.fresh(select(ggx, x, boxes, **_arguments(spec, sizes)).contiguous(), ggx, x, boxes)

    def shape(x: torch.Tensor, boxes: torch.Tensor, kw: dict[str, Any], op: str) -> tuple[Any, ...]:
        xs = tuple(g.symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
        bs = tuple(g.symbol(s, "K") if i == 0 else int(s) for i, s in enumerate(boxes.shape))
        r = card(name).resolve(xs, g.dtype_name(x), boxes=bs, **kw)
        g.check_port(op, "boxes", boxes, x)
        PH, PW = r.params["output_size"]
        return (boxes.shape[0], x.shape[1] // (PH * PW), PH, PW)

    @forward.register_fake
    def _(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        return x.new_empty(shape(x, boxes, _arguments(spec, sizes), name))

    @backward.register_fake
    def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
          sizes: list[int]) -> torch.Tensor:
        op = f"{name}_backward"
        g.check_grad(op, grad_output, shape(x, boxes, _arguments(spec, sizes), op), like=x)
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    @selected.register_fake
    def _(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        op = f"{name}_backward"
        g.check_grad(op, ggx, tuple(x.shape), like=x)
        return x.new_empty(shape(x, boxes, _arguments(spec, sizes), op))

    def vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, boxes = ctx.saved_tensors
        return backward(grad, x, boxes, ctx.spec, ctx.sizes), None, None, None

    def pair_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        _, x, boxes, ctx.spec, ctx.sizes = inputs
        ctx.save_for_backward(x, boxes)

    def pair_vjp(node: Any) -> Any:
        def vjp(ctx: Any, a: torch.Tensor) -> tuple[Any, ...]:
            x, boxes = ctx.saved_tensors
            zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
            return node(a, x, boxes, ctx.spec, ctx.sizes), zero, None, None, None
        return vjp

    torch.library.register_autograd(lib, vjp, setup_context=_context)
    torch.library.register_autograd(f"{lib}_backward", pair_vjp(selected), setup_context=pair_context)
    torch.library.register_autograd(f"{lib}_select", pair_vjp(backward), setup_context=pair_context)

    def batched(info: Any, dim: Any, a: torch.Tensor) -> torch.Tensor:
        return a.expand(info.batch_size, *a.shape) if dim is None else a.movedim(dim, 0)

    def vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, boxes: torch.Tensor, spec: str,
             sizes: list[int]) -> tuple[torch.Tensor, int]:
        x, boxes = _joined(info, in_dims[0], in_dims[1], x, boxes)
        return forward(x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0

    def pair_vmap(node: Any) -> Any:
        def rule(info: Any, in_dims: tuple[Any, ...], a: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor,
                 spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
            a = batched(info, in_dims[0], a)
            x, boxes = _joined(info, in_dims[1], in_dims[2], x, boxes)
            return node(a.flatten(0, 1), x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0
        return rule

    torch.library.register_vmap(lib, vmap)
    torch.library.register_vmap(f"{lib}_backward", pair_vmap(backward))
    torch.library.register_vmap(f"{lib}_select", pair_vmap(selected))
    return forward, backward, selected


def _ps_roi_align_select(*args: Any, **kwargs: Any) -> Any:
    from .ops import _ps_roi_align_select

    return _ps_roi_align_select(*args, **kwargs)


PS_ROI_ALIGN = ps_nodes("ps_roi_align", _ps_roi_align_select)


# the family's nodes (op, backward) by the op or its backward's name
NODES = {"roi_align": (roi_align, roi_align_backward), "roi_align_backward": (roi_align, roi_align_backward),
         "ps_roi_align": PS_ROI_ALIGN[:2], "ps_roi_align_backward": PS_ROI_ALIGN[:2]}


def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """roi_align or ps_roi_align (or its backward) on ``tensors`` as a node."""
    return NODES[op][1 if backward else 0](*tensors, *g.node_args(args))
