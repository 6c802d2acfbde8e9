"""What the RoI families' torch.compile nodes share (imported by their ``capture.py`` only, torch being there): an
op's node and its input gradient's (``nodes``, with their fakes: ``register_fakes``) and the binding of a call to
them (``binder``), the node's keyword arguments (``arguments``), its output shape at trace time by the card
(``resolved``), the autograd contexts and a transposed VJP, and the vmap rules that join the vmapped dimension to
the images' batch (``joined``, ``batched``, ``register_vmaps``).

>>> import torch
>>> from types import SimpleNamespace
>>> x, boxes = joined(SimpleNamespace(batch_size=2), 0, None, torch.zeros(2, 1, 1, 3, 3), torch.zeros(4, 5))
>>> x.shape, boxes[:, 0].tolist()
(torch.Size([2, 1, 3, 3]), [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
"""

from __future__ import annotations

from typing import Any

import torch

from ...spec import card

# torch_graph is imported where it is used: it imports the families' capture.py files, which import this module


def arguments(spec: str, sizes: list[int]) -> dict[str, Any]:
    """The node's keyword arguments, spatial_scale back from the ratio the public function wrote
    (``_roi.ops.node_args``)."""
    from ...autodiff import torch_graph as g

    kw = g.arguments(spec, sizes)
    scale = kw["spatial_scale"]
    return dict(kw, spatial_scale=scale[0] / scale[1]) if isinstance(scale, (tuple, list)) else kw


def resolved(name: str, x: torch.Tensor, boxes: torch.Tensor, kw: dict[str, Any], op: str,
             channel_group: int = 1) -> tuple[Any, ...]:
    """The output shape by card ``name``, K and x's batch and channels kept symbolic (C // channel_group output
    channels, as ``_roi.ops.dask_map``; 0: the call's PH * PW, a position-sensitive op's); the eager checks of
    dtype and device."""
    from ...autodiff import torch_graph as g

    xs = tuple(g.symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
    bs = tuple(g.symbol(s, "K") if i == 0 else int(s) for i, s in enumerate(boxes.shape))
    r = card(name).resolve(xs, g.dtype_name(x), boxes=bs, **kw)
    g.check_port(op, "boxes", boxes, x)
    if channel_group == 0:
        channel_group = r.params["output_size"][0] * r.params["output_size"][1]
    channels = x.shape[1] if channel_group == 1 else x.shape[1] // channel_group
    return (boxes.shape[0], channels) + tuple(r.output_shape[2:])


def register_fakes(name: str, forward: Any, backward: Any, channel_group: int = 1) -> None:
    """The fake implementations of node ``forward`` (shaped by card ``name``) and of its input gradient
    ``backward`` (shaped like x, its cotangent checked against the forward's output)."""

    @forward.register_fake
    def _(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        return x.new_empty(resolved(name, x, boxes, arguments(spec, sizes), name, channel_group))

    @backward.register_fake
    def _(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
          sizes: list[int]) -> torch.Tensor:
        from ...autodiff import torch_graph as g

        op = f"{name}_backward"
        g.check_grad(op, grad_output, resolved(name, x, boxes, arguments(spec, sizes), op, channel_group), like=x)
        return torch.empty_like(x, memory_format=torch.contiguous_format)


def nodes(name: str, channel_group: int = 1) -> tuple[Any, Any]:
    """The nodes ``poolspec::<name>`` (x, boxes, spec, sizes) and ``poolspec::<name>_backward`` (grad_output, x,
    boxes, spec, sizes: the gradient w.r.t. x), each calling the public function of its name, with their fakes."""

    @torch.library.custom_op(f"poolspec::{name}", mutates_args=())
    def forward(x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        from ...autodiff import torch_graph as g

        return g.eager_function(name)(x, boxes, **arguments(spec, sizes)).contiguous()

    @torch.library.custom_op(f"poolspec::{name}_backward", mutates_args=())
    def backward(grad_output: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                 sizes: list[int]) -> torch.Tensor:
        from ...autodiff import torch_graph as g

        out = g.eager_function(f"{name}_backward")(grad_output, x, boxes, **arguments(spec, sizes))
        return g.fresh(out.contiguous(), grad_output, x, boxes)

    forward.__doc__ = f"``poolspec.{name}(x, boxes, **arguments(spec, sizes))``."
    backward.__doc__ = f"``poolspec.{name}_backward(grad_output, x, boxes, ...)``: grad_x."
    register_fakes(name, forward, backward, channel_group)
    return forward, backward


def binder(forward: Any, backward: Any, *others: tuple[str, Any, Any]) -> Any:
    """A family's ``capture.bind``: its op (or its backward) on ``tensors`` as a node; ``others``: the family's
    further ops as (name, forward node, backward node), found by the op's or its backward's name."""
    table = {name: (f, b) for name, f, b in others} | {f"{name}_backward": (f, b) for name, f, b in others}

    def bind(op: str, is_backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
        from ...autodiff import torch_graph as g

        f, b = table.get(op, (forward, backward))
        return (b if is_backward else f)(*tensors, *g.node_args(args))
    return bind


def grouped_nodes(name: str, select: Any, boxes_backward: Any = None) -> tuple[Any, Any, Any]:
    """A position-sensitive op's nodes (PH * PW input channels per output channel): ``nodes(name)``, and
    ``poolspec::<name>_select``, ``select(ggx, x, boxes, **arguments)``: a cotangent shaped like x through the
    transpose of the backward (its derivative w.r.t. grad_output; not the forward where torchvision's backward is
    not the forward's transpose); their derivatives (the op's the backward, the backward's the select, the
    select's the backward) and vmap rules. ``boxes_backward``: the node of the op's gradient w.r.t. the boxes
    (grad_output, x, boxes, spec, sizes), where it has one."""
    forward, backward = nodes(name, channel_group=0)

    @torch.library.custom_op(f"poolspec::{name}_select", mutates_args=())
    def selected(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str,
                 sizes: list[int]) -> torch.Tensor:
        from ...autodiff import torch_graph as g

        return g.fresh(select(ggx, x, boxes, **arguments(spec, sizes)).contiguous(), ggx, x, boxes)

    @selected.register_fake
    def _(ggx: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
        from ...autodiff import torch_graph as g

        op = f"{name}_backward"
        g.check_grad(op, ggx, tuple(x.shape), like=x)
        return x.new_empty(resolved(name, x, boxes, arguments(spec, sizes), op, 0))

    def vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, boxes = ctx.saved_tensors
        gx = backward(grad, x, boxes, ctx.spec, ctx.sizes) if ctx.needs_input_grad[0] else None
        wants = boxes_backward is not None and ctx.needs_input_grad[1]
        return gx, boxes_backward(grad, x, boxes, ctx.spec, ctx.sizes) if wants else None, None, None

    torch.library.register_autograd(f"poolspec::{name}", vjp, setup_context=save_context)
    torch.library.register_autograd(f"poolspec::{name}_backward", transpose_vjp(selected),
                                    setup_context=save_pair_context)
    torch.library.register_autograd(f"poolspec::{name}_select", transpose_vjp(backward),
                                    setup_context=save_pair_context)
    register_vmaps(forward, backward, selected)
    return forward, backward, selected


def batched(info: Any, dim: Any, a: torch.Tensor) -> torch.Tensor:
    """``a`` with the vmapped dimension first (expanded where it has none)."""
    return a.expand(info.batch_size, *a.shape) if dim is None else a.movedim(dim, 0)


def joined(info: Any, x_dim: Any, b_dim: Any, x: torch.Tensor, boxes: torch.Tensor) -> tuple[Any, Any]:
    """x and the boxes with the vmapped dimension joined to the images' batch; each copy's rois moved to its own
    images (batch index b * N + n)."""
    B = info.batch_size
    x, boxes = batched(info, x_dim, x), batched(info, b_dim, boxes)
    N = x.shape[1]
    shift = (torch.arange(B, dtype=boxes.dtype, device=boxes.device) * N).reshape(B, 1, 1)
    first = torch.zeros(5, dtype=boxes.dtype, device=boxes.device)
    first[0] = 1
    boxes = boxes + shift * first  # batch index b * N + n
    return x.flatten(0, 1), boxes.flatten(0, 1)


def _forward_vmap(node: Any) -> Any:
    def rule(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, boxes: torch.Tensor, spec: str,
             sizes: list[int]) -> tuple[torch.Tensor, int]:
        x, boxes = joined(info, in_dims[0], in_dims[1], x, boxes)
        return node(x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0
    return rule


def _like_x_vmap(node: Any) -> Any:
    def rule(info: Any, in_dims: tuple[Any, ...], a: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor,
             spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
        a = batched(info, in_dims[0], a)
        x, boxes = joined(info, in_dims[1], in_dims[2], x, boxes)
        return node(a.flatten(0, 1), x, boxes, spec, sizes).unflatten(0, (info.batch_size, -1)), 0
    return rule


def register_vmaps(forward: Any, *others: Any) -> None:
    """The vmap rules of node ``forward`` (x, boxes, ...) and of ``others`` (a tensor batched with x's images
    first: a cotangent, then x, boxes, ...): the vmapped dimension joins the images' batch."""
    torch.library.register_vmap(forward, _forward_vmap(forward))
    for node in others:
        torch.library.register_vmap(node, _like_x_vmap(node))


def save_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    """An op node's autograd context (inputs x, boxes, spec, sizes): x and the boxes saved, spec and sizes kept."""
    x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def save_pair_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    """A node's autograd context whose first input is shaped like a cotangent (then x, boxes, spec, sizes)."""
    _, x, boxes, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, boxes)


def transpose_vjp(node: Any) -> Any:
    """The VJP of a node linear in its first input whose transpose is ``node`` (a, x, boxes, spec, sizes): zero
    w.r.t. x (piecewise constant there), none w.r.t. the boxes."""
    def vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, boxes = ctx.saved_tensors
        zero = torch.zeros_like(x) if ctx.needs_input_grad[1] else None
        return node(grad, x, boxes, ctx.spec, ctx.sizes), zero, None, None, None
    return vjp
