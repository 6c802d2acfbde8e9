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
from .._roi import capture as roi

roi_align, roi_align_backward = roi.nodes("roi_align")


def _boxes_node(name: str, channel_group: int = 1) -> Any:
    """The node ``poolspec::<name>_boxes_backward`` (grad_output, x, boxes, spec, sizes): the gradient w.r.t. the
    boxes (K, 5) by the public function of its name."""
    op = f"{name}_boxes_backward"

    @torch.library.custom_op(f"poolspec::{op}", mutates_args=())
    def node(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
             sizes: list[int]) -> torch.Tensor:
        out = g.eager_function(op)(grad_output, x, boxes, **roi.arguments(spec, sizes))
        return g.fresh(out.contiguous(), grad_output, x, boxes)

    @node.register_fake
    def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        g.check_grad(op, grad_output, roi.resolved(name, x, boxes, roi.arguments(spec, sizes), op, channel_group),
                     like=x)
        return torch.empty_like(boxes, memory_format=torch.contiguous_format)

    node.__doc__ = f"``poolspec.{op}(grad_output, x, boxes, ...)``: grad_boxes (K, 5)."
    return node


roi_align_boxes_backward = _boxes_node("roi_align")


# derivatives: the op's are its explicit backwards (nodes: w.r.t. x, and w.r.t. the boxes where they require it);
# the input backward's, w.r.t. grad_output, is the op (it is linear in grad_output and its transpose is the
# forward's gather); w.r.t. x it is zero; the boxes' gradient is not differentiated again (its node has no
# derivative: torch says so if asked)

def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    gx = roi_align_backward(grad, x, boxes, ctx.spec, ctx.sizes) if ctx.needs_input_grad[0] else None
    gb = roi_align_boxes_backward(grad, x, boxes, ctx.spec, ctx.sizes) if ctx.needs_input_grad[1] else None
    return gx, gb, None, None


def _backward_vjp(ctx: Any, ggx: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
    return roi_align(ggx, boxes, ctx.spec, ctx.sizes), zero, None, None, None


torch.library.register_autograd("poolspec::roi_align", _vjp, setup_context=roi.save_context)
torch.library.register_autograd("poolspec::roi_align_backward", _backward_vjp, setup_context=roi.save_pair_context)


# vmap: the vmapped dimension joins the images' batch; each copy's rois are moved to its own images
roi.register_vmaps(roi_align, roi_align_backward)


def _ps_roi_align_select(*args: Any, **kwargs: Any) -> Any:
    from .ops import _ps_roi_align_select

    return _ps_roi_align_select(*args, **kwargs)


# ps_roi_align's nodes, its select the forward's taps with 0 where a bin has no samples (its forward: NaN or -0.0),
# and its boxes' gradient (first order, as roi_align's)
ps_roi_align_boxes_backward = _boxes_node("ps_roi_align", channel_group=0)
ps_roi_align, ps_roi_align_backward, ps_roi_align_select = roi.grouped_nodes("ps_roi_align", _ps_roi_align_select,
                                                                             ps_roi_align_boxes_backward)

bind = roi.binder(roi_align, roi_align_backward, ("ps_roi_align", ps_roi_align, ps_roi_align_backward))
