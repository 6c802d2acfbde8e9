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
from .._roi import capture as roi

roi_pool, roi_pool_backward = roi.nodes("roi_pool")


@torch.library.custom_op("poolspec::roi_pool_select", mutates_args=())
def roi_pool_select(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                    sizes: list[int]) -> torch.Tensor:
    """``ggx`` (shaped like x) read at the winners of roi_pool on ``x``."""
    from .ops import _roi_pool_select

    return g.fresh(_roi_pool_select(ggx, x, boxes, **roi.arguments(spec, sizes)).contiguous(), ggx, x, boxes)


@roi_pool_select.register_fake
def _(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    op = "roi_pool_backward"
    g.check_grad(op, ggx, tuple(x.shape), like=x)
    return x.new_empty(roi.resolved("roi_pool", x, boxes, roi.arguments(spec, sizes), op))


# derivatives: the op's is its explicit backward (a node); the backward's, w.r.t. grad_output, is the select (its
# transpose), and the select's, w.r.t. ggx, is the backward; w.r.t. x both are zero (piecewise); boxes get none

def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, boxes = ctx.saved_tensors
    return roi_pool_backward(grad, x, boxes, ctx.spec, ctx.sizes), None, None, None


torch.library.register_autograd("poolspec::roi_pool", _vjp, setup_context=roi.save_context)
torch.library.register_autograd("poolspec::roi_pool_backward", roi.transpose_vjp(roi_pool_select),
                                setup_context=roi.save_pair_context)
torch.library.register_autograd("poolspec::roi_pool_select", roi.transpose_vjp(roi_pool_backward),
                                setup_context=roi.save_pair_context)


# vmap: the vmapped dimension joins the images' batch; each copy's rois are moved to its own images
roi.register_vmaps(roi_pool, roi_pool_backward, roi_pool_select)


def _ps_roi_pool_select(*args: Any, **kwargs: Any) -> Any:
    from .ops import _ps_roi_pool_select

    return _ps_roi_pool_select(*args, **kwargs)


# ps_roi_pool's nodes, its select the means of torchvision's backward windows (not the forward's)
ps_roi_pool, ps_roi_pool_backward, ps_roi_pool_select = roi.grouped_nodes("ps_roi_pool", _ps_roi_pool_select)

bind = roi.binder(roi_pool, roi_pool_backward, ("ps_roi_pool", ps_roi_pool, ps_roi_pool_backward))
