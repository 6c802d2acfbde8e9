"""Every op as a ``torch.library`` custom op, for the graphs ``torch.compile`` and ``torch.export`` capture.

Eagerly an op runs Python that builds host-side NumPy plans, which Dynamo would trace into and fail on.
Inside a capture an op therefore enters the graph as one node: ``poolspec::pool`` (values; ``poolspec::unpool``
for an op that takes indices), ``poolspec::max_pool`` (an indexed op's values and winners),
``poolspec::pool_backward`` (the explicit VJP; ``poolspec::route_backward`` where the family's record keeps it
whole under inductor), carrying the op's name, its arguments as a string and their integers as a SymInt list
(``torch_spec``), so the node is self-describing and an exported program needs nothing but poolspec to run.
A family whose ops read at data-dependent positions defines nodes of its own in its folder's ``capture.py``
(``bind`` puts a call into the graph), from the shared pieces below; they are imported with this module. The
nodes' fake implementations take shapes and memory formats from the cards (no kernel runs at trace time),
their real implementations are the eager ops, and their derivatives are the explicit backward functions,
which gather and never scatter, so a compiled backward keeps poolspec's determinism. Under inductor each
node (forward and backward alike) is decomposed into the torch ops of its functional path, plans entering as
constants, and fused with its neighbours (``torch_inductor``; ``POOLSPEC_FUSE=0`` keeps the nodes opaque).

>>> import torch, poolspec
>>> f = torch.compile(lambda x: poolspec.avg_pool2d(x, 2), fullgraph=True, backend="eager")
>>> f(torch.ones(1, 1, 4, 4)).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from .._compat import FUNCTIONAL, own_winners
from ..families import parts
from ..registry import function
from ..registry import op as record
from ..spec import card
from .torch_fused import PLAIN
from .torch_inductor import build, fuse
from .torch_spec import arguments, encode


def eager_function(name: str) -> Any:
    """The public op ``name``, as a node's implementation runs it: on the plain eager path (under eager
    fusion the public op would otherwise compile a program holding this very node)."""
    return functools.partial(_plain, function(name))


def _plain(fn: Any, *args: Any, **kwargs: Any) -> Any:
    before = PLAIN[0]
    PLAIN[0] = True
    try:
        return fn(*args, **kwargs)
    finally:
        PLAIN[0] = before


def fresh(out: torch.Tensor, *inputs: torch.Tensor | None) -> torch.Tensor:
    """``out``, copied if it shares memory with an input (a custom op's output may not alias one)."""
    if FUNCTIONAL[0]:  # traced tensors have no memory to compare: their alias relation instead
        alias = torch._C._is_alias_of  # type: ignore[attr-defined]
        return out.clone() if any(t is not None and alias(out, t) for t in inputs) else out
    ptr = out.untyped_storage().data_ptr()
    if out.numel() and any(t is not None and t.untyped_storage().data_ptr() == ptr for t in inputs):
        return out.clone()
    return out


def _eager(op: str, x: torch.Tensor, indices: torch.Tensor | None, kw: dict[str, Any]) -> Any:
    fn = eager_function(op)
    return fn(x, indices, **kw) if record(op).takes_indices else fn(x, **kw)


@torch.library.custom_op("poolspec::pool", mutates_args=())
def pool(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>(x, **arguments(spec, sizes))`` (an op that takes indices: ``(x, indices, ...)``)."""
    kw = arguments(spec, sizes)
    if record(op).indexed:
        kw = {**kw, "return_indices": False}
    return fresh(_eager(op, x, indices, kw), x, indices)


@torch.library.custom_op("poolspec::unpool", mutates_args=())
def unpool(x: torch.Tensor, indices: torch.Tensor, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>(x, indices, **arguments(spec, sizes))`` of an op that takes indices: a node of its own
    because inductor keeps it whole (see ``torch_inductor.fuse``)."""
    return fresh(_eager(op, x, indices, arguments(spec, sizes)), x, indices)


def forward_node(op: str) -> Any:
    """The node of ``op``'s values."""
    return unpool if record(op).takes_indices else pool


@torch.library.custom_op("poolspec::max_pool", mutates_args=())
def max_pool(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """A max-family op's values and winners (flat in each plane, as torch's ``return_indices``)."""
    values, idx = _eager(op, x, None, {**arguments(spec, sizes), "return_indices": True})
    return fresh(values, x), idx


def _backward_eager(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                    sizes: list[int]) -> torch.Tensor:
    fn, kw, rec = eager_function(f"{op}_backward"), arguments(spec, sizes), record(op)
    if rec.takes_indices:
        out = fn(grad_output, x, indices, **kw)
    elif rec.indexed:  # the winners, where the forward gave them
        with own_winners():
            out = fn(grad_output, x, **kw, indices=indices)
    else:
        out = fn(grad_output, x, **kw)
    return fresh(out.contiguous(), grad_output, x, indices)


@torch.library.custom_op("poolspec::pool_backward", mutates_args=())
def pool_backward(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                  sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>_backward(grad_output, x, ...)`` of an op whose VJP inductor may expand (an indexed op's
    at its winners)."""
    return _backward_eager(grad_output, x, indices, op, spec, sizes)


@torch.library.custom_op("poolspec::route_backward", mutates_args=())
def route_backward(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                   sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>_backward(grad_output, x, ..., indices=winners)`` of an op whose record keeps its VJP
    whole (``fused_vjp``): a node of its own because inductor keeps it so (see ``torch_inductor.fuse``)."""
    return _backward_eager(grad_output, x, indices, op, spec, sizes)


def backward_node(op: str) -> Any:
    """The node of ``op``'s VJP: ``route_backward``, kept whole under inductor, where the record says so."""
    return pool_backward if record(op).fused_vjp else route_backward


# --- shapes and layouts at trace time, from the cards -------------------------------------------------

def dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def resolved(op: str, x: torch.Tensor, kw: dict[str, Any]) -> tuple[tuple[Any, ...], Any]:
    """The output shape (leading dimensions kept symbolic) and the card's resolution. Spatial sizes are
    specialised: plans depend on them, batch and channel sizes stay dynamic."""
    n = record(op).spatial_rank(x.dim())
    lead = tuple(x.shape[:-n])
    spatial = tuple(int(s) for s in x.shape[-n:])
    r = card(op).resolve((1,) * len(lead) + spatial, dtype_name(x), **kw)
    return lead + tuple(r.output_shape[len(lead):]), r


def _layout(op: str, x: torch.Tensor, r: Any, out: Any) -> Any:
    from .._calls import keep_layout, layout_op

    return keep_layout(layout_op(op, r), x, out)


@pool.register_fake
@unpool.register_fake
def _(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    shape, r = resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, x.new_empty(shape))


@max_pool.register_fake
def _(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    shape, r = resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, (x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)))


@pool_backward.register_fake
@route_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
      sizes: list[int]) -> torch.Tensor:
    check_grad(f"{op}_backward", grad_output, resolved(op, x, arguments(spec, sizes))[0])
    return torch.empty_like(x, memory_format=torch.contiguous_format)


# --- derivatives: the explicit VJPs, gathering only ------------------------------------------------------

def _pool_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, indices, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, indices)


def _pool_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, indices = ctx.saved_tensors
    return backward_node(ctx.op)(grad, x, indices, ctx.op, ctx.spec, ctx.sizes), None, None, None, None


def _max_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, output[1])
    ctx.mark_non_differentiable(output[1])


def _max_vjp(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, ...]:
    x, idx = ctx.saved_tensors
    return backward_node(ctx.op)(grad, x, idx, ctx.op, ctx.spec, ctx.sizes), None, None, None


def _backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, indices, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, indices)


def _backward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    """Linear in grad_output, constant in x (whose derivative is zero, returned as None)."""
    x, indices = ctx.saved_tensors
    rec, rest = record(ctx.op), (None,) * 5
    if rec.kind == "linear":  # the transpose of a transpose: the op itself
        return (forward_node(ctx.op)(grad, indices, ctx.op, ctx.spec, ctx.sizes), *rest)
    if rec.kind == "routed":  # routing to the winners transposes to gathering at them
        # (where the winners cannot be found again, the family's node passes them with its backward)
        if indices is None:
            indices = max_pool(x, ctx.op, ctx.spec, ctx.sizes)[1]
        n = rec.spatial_rank(x.dim())
        picked = grad.flatten(-n).gather(-1, indices.flatten(-n))
        return (picked.view(indices.shape), *rest)
    raise NotImplementedError(f"{ctx.op}: the derivative of its backward is not available in a captured graph "
                              "(torch.compile has no double backward; call the op eagerly for higher orders)")


torch.library.register_autograd("poolspec::pool", _pool_vjp, setup_context=_pool_context)
torch.library.register_autograd("poolspec::unpool", _pool_vjp, setup_context=_pool_context)
torch.library.register_autograd("poolspec::max_pool", _max_vjp, setup_context=_max_context)
torch.library.register_autograd("poolspec::pool_backward", _backward_vjp, setup_context=_backward_context)
torch.library.register_autograd("poolspec::route_backward", _backward_vjp, setup_context=_backward_context)


# --- vmap: the vmapped dimension joins the batch -------------------------------------------------------

def fronts(info: Any, in_dims: tuple[Any, ...], op: str, *tensors: torch.Tensor | None) -> tuple[Any, ...]:
    """Each tensor with the vmapped dimension first (expanded where it is not vmapped), folded into the
    batch axis where the op's input has one: (B, N, C, ...) -> (B*N, C, ...); (B, C, ...) stays."""
    rank = next(t.dim() - (d is not None) for t, d in zip(tensors, in_dims) if t is not None)
    fold = record(op).has_batch(rank)
    out = []
    for t, d in zip(tensors, in_dims):
        if t is not None:
            t = t.expand(info.batch_size, *t.shape) if d is None else t.movedim(d, 0)
            t = t.flatten(0, 1) if fold else t
        out.append(t)
    return fold, *out


def unfold(fold: bool, info: Any, out: torch.Tensor) -> torch.Tensor:
    return out.unflatten(0, (info.batch_size, -1)) if fold else out


def _pool_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, indices: torch.Tensor | None, op: str,
               spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    fold, x, indices = fronts(info, in_dims, op, x, indices)
    return unfold(fold, info, forward_node(op)(x, indices, op, spec, sizes)), 0


def _max_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, op: str, spec: str,
              sizes: list[int]) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[int, int]]:
    fold, x = fronts(info, in_dims, op, x)
    values, idx = max_pool(x, op, spec, sizes)
    return (unfold(fold, info, values), unfold(fold, info, idx)), (0, 0)


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                   indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    # x's rank decides the fold (grad_output has the output's rank, the same)
    fold, x, grad_output, indices = fronts(info, (in_dims[1], in_dims[0], in_dims[2]), op, x, grad_output,
                                            indices)
    return unfold(fold, info, backward_node(op)(grad_output, x, indices, op, spec, sizes)), 0


torch.library.register_vmap("poolspec::pool", _pool_vmap)
torch.library.register_vmap("poolspec::unpool", _pool_vmap)
torch.library.register_vmap("poolspec::max_pool", _max_vmap)
torch.library.register_vmap("poolspec::pool_backward", _backward_vmap)
torch.library.register_vmap("poolspec::route_backward", _backward_vmap)


def call(op: str, args: dict[str, Any], x: torch.Tensor, grad_output: torch.Tensor | None = None,
         indices: torch.Tensor | None = None) -> Any:
    """An op (or, given ``grad_output``, its VJP) as a graph node; ``args`` are its keyword arguments as the
    public function received them (Python literals)."""
    spec, sizes = node_args(args)
    if grad_output is not None:
        return backward_node(op)(grad_output, x, indices, op, spec, sizes)
    if record(op).indexed and (args.get("return_indices") or (torch.is_grad_enabled() and x.requires_grad)):
        values, idx = max_pool(x, op, spec, sizes)  # the winners serve the backward, no second search
        return (values, idx) if args.get("return_indices") else values
    return forward_node(op)(x, indices, op, spec, sizes)  # inference: values only


# --- what the families' own nodes share (families/<family>/capture.py) ---------------------------------

def symbol(s: Any, name: str) -> Any:
    """A leading dimension for a card: the int, or a symbol where it is traced (a SymInt)."""
    return s if isinstance(s, int) else name


def same(a: Any, b: Any, message: Any) -> None:
    """``a == b`` for leading sizes (traced ones: a guard on their equality, not on their values);
    ``message()`` is the ValueError's text."""
    if a != b:
        raise ValueError(message())


def check_port(op: str, name: str, t: torch.Tensor, x: torch.Tensor) -> None:
    """The eager ops' cross-port rule (``_calls.check_like``) at trace time."""
    from .._calls import check_like
    from .._compat import namespace

    check_like(op, namespace(x), name, t, "x", x)


def check_grad(op: str, grad: torch.Tensor, shape: tuple[Any, ...], name: str = "grad_output",
               like: torch.Tensor | None = None) -> None:
    """A backward's cotangent: the forward's output shape (and ``like``'s dtype and device)."""
    if len(shape) != grad.dim() or any(a != b for a, b in zip(shape, grad.shape)):
        raise ValueError(f"{op}: {name}.shape={tuple(grad.shape)}: must equal the output shape {tuple(shape)}")
    if like is not None:
        check_port(op, name, grad, like)


FUSIBLE: list[Any] = []  # the families' own nodes that inductor may decompose (``torch_inductor.fuse``)


def fusible(node: Any) -> Any:
    """Mark a family's node (a ``torch.library.custom_op``) for decomposition under inductor."""
    FUSIBLE.append(node)
    return node


def node_args(args: dict[str, Any]) -> tuple[str, list[Any]]:
    """A node's ``spec`` and ``sizes`` for keyword arguments ``args`` (Python literals, sizes maybe SymInts)."""
    return encode(args, BUILD)


def sampling(op: str, args: dict[str, Any], *tensors: Any) -> Any:
    """An op of a family with nodes of its own (or its ``_backward``) as graph nodes, bound by its folder's
    ``capture.bind``; ``tensors`` as the public function takes them, ``args`` its other arguments."""
    return CAPTURES[record(op).family].bind(op, op.endswith("_backward"), args, tensors)


# the families' own nodes, defined on import (before torch.export.load reads a program holding them)
CAPTURES = parts("capture")


FUSED = fuse((pool, max_pool, pool_backward, *FUSIBLE), anchored=pool_backward)
BUILD = build(FUSED)
