"""Every op as a ``torch.library`` custom op, for the graphs ``torch.compile`` and ``torch.export`` capture.

Eagerly an op runs Python that builds host-side NumPy plans, which Dynamo would trace into and fail on.
Inside a capture an op therefore enters the graph as one node: ``poolspec::pool`` (values),
``poolspec::max_pool`` (values and winners) or ``poolspec::pool_backward`` (the explicit VJP), carrying the
op's name, its arguments as a string and their integers as a SymInt list (a size may come from a traced
shape), so the node is self-describing and an exported program needs nothing but poolspec to run. The
nodes' fake implementations take shapes and memory formats from the cards (no kernel runs at trace time),
their real implementations are the eager ops, and their derivatives are the explicit backward functions,
which gather and never scatter, so a compiled backward keeps poolspec's determinism.

>>> import torch, poolspec
>>> f = torch.compile(lambda x: poolspec.avg_pool2d(x, 2), fullgraph=True, backend="eager")
>>> f(torch.ones(1, 1, 4, 4)).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

import ast
import math
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from ..spec import card

# of an op's derivatives: a linear op's backward is linear in grad_output, with the op itself as its VJP;
# the max family's backward routes grad_output to the winners, whose VJP gathers at them
_LINEAR = ("avg_pool", "adaptive_avg_pool", "interpolate", "max_unpool")
_MAXES = ("max_pool", "adaptive_max_pool")
_NAMES = {"inf": math.inf, "nan": math.nan}


@lru_cache(maxsize=1024)
def _parse(spec: str) -> dict[str, Any]:
    """The ``repr`` of a dict of Python literals (``inf`` included), read without ``eval``: an exported
    program is data."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(value(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Name) and node.id in _NAMES:
            return _NAMES[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            if isinstance(inner, (int, float)):
                return -inner
        raise ValueError(f"poolspec: malformed op arguments {spec!r}")

    tree = ast.parse(spec, mode="eval").body
    if not isinstance(tree, ast.Dict) or not all(isinstance(k, ast.Constant) for k in tree.keys):
        raise ValueError(f"poolspec: malformed op arguments {spec!r}")
    return {k.value: value(v) for k, v in zip(tree.keys, tree.values)}  # type: ignore[union-attr]


def arguments(spec: str, sizes: list[Any]) -> dict[str, Any]:
    """The keyword arguments a node carries: ``spec`` with each marker ``"$i"`` replaced by ``sizes[i]``
    (specialised to an int where it is a SymInt: the plans depend on it)."""
    return _filled(spec, tuple(int(s) for s in sizes))


@lru_cache(maxsize=1024)
def _filled(spec: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    kw = _parse(spec)

    def fill(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return type(v)(fill(e) for e in v)
        if isinstance(v, str) and v.startswith("$") and v[1:].isdigit():
            return sizes[int(v[1:])]
        return v

    return {k: fill(v) for k, v in kw.items()}


def _family(op: str) -> str:
    return op.rstrip("123d").rstrip("_") if op != "interpolate" else op


def _function(name: str) -> Any:
    import poolspec  # the public ops; imported here, as poolspec imports this module's package

    return getattr(poolspec, name)


def _fresh(out: torch.Tensor, *inputs: torch.Tensor | None) -> torch.Tensor:
    """``out``, copied if it shares memory with an input (a custom op's output may not alias one)."""
    ptr = out.untyped_storage().data_ptr()
    if out.numel() and any(t is not None and t.untyped_storage().data_ptr() == ptr for t in inputs):
        return out.clone()
    return out


def _eager(op: str, x: torch.Tensor, indices: torch.Tensor | None, kw: dict[str, Any]) -> Any:
    fn = _function(op)
    return fn(x, indices, **kw) if _family(op) == "max_unpool" else fn(x, **kw)


@torch.library.custom_op("poolspec::pool", mutates_args=())
def pool(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>(x, **arguments(spec, sizes))`` (max_unpool: ``(x, indices, ...)``)."""
    kw = arguments(spec, sizes)
    if _family(op) in _MAXES:
        kw = {**kw, "return_indices": False}
    return _fresh(_eager(op, x, indices, kw), x, indices)


@torch.library.custom_op("poolspec::max_pool", mutates_args=())
def max_pool(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """A max-family op's values and winners (flat in each plane, as torch's ``return_indices``)."""
    values, idx = _eager(op, x, None, {**arguments(spec, sizes), "return_indices": True})
    return _fresh(values, x), idx


@torch.library.custom_op("poolspec::pool_backward", mutates_args=())
def pool_backward(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                  sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>_backward(grad_output, x, ...)``, given the winners where the op has them."""
    fn, kw = _function(f"{op}_backward"), arguments(spec, sizes)
    family = _family(op)
    if family == "max_unpool":
        out = fn(grad_output, x, indices, **kw)
    elif family in _MAXES:
        out = fn(grad_output, x, **kw, indices=indices)
    else:
        out = fn(grad_output, x, **kw)
    return _fresh(out.contiguous(), grad_output, x, indices)


# --- shapes and layouts at trace time, from the cards -------------------------------------------------

def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _resolved(op: str, x: torch.Tensor, kw: dict[str, Any]) -> tuple[tuple[Any, ...], Any]:
    """The output shape (leading dimensions kept symbolic) and the card's resolution. Spatial sizes are
    specialised: plans depend on them, batch and channel sizes stay dynamic."""
    n = x.dim() - 2 if op == "interpolate" else int(op[-2])
    lead = tuple(x.shape[:-n])
    spatial = tuple(int(s) for s in x.shape[-n:])
    r = card(op).resolve((1,) * len(lead) + spatial, _dtype(x), **kw)
    return lead + tuple(r.output_shape[len(lead):]), r


def _layout(op: str, x: torch.Tensor, r: Any, out: Any) -> Any:
    from ..ops._common import keep_layout, layout_op

    return keep_layout(layout_op(op, r), x, out)


@pool.register_fake
def _(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    shape, r = _resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, x.new_empty(shape))


@max_pool.register_fake
def _(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    shape, r = _resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, (x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)))


@pool_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
      sizes: list[int]) -> torch.Tensor:
    shape, _ = _resolved(op, x, arguments(spec, sizes))
    if len(shape) != grad_output.dim() or any(a != b for a, b in zip(shape, grad_output.shape)):
        raise ValueError(f"{op}_backward: grad_output.shape={tuple(grad_output.shape)}: must equal the output "
                         f"shape {tuple(shape)}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


# --- derivatives: the explicit VJPs, gathering only ------------------------------------------------------

def _pool_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, indices, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, indices)


def _pool_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, indices = ctx.saved_tensors
    return pool_backward(grad, x, indices, ctx.op, ctx.spec, ctx.sizes), None, None, None, None


def _max_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, output[1])
    ctx.mark_non_differentiable(output[1])


def _max_vjp(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, ...]:
    x, idx = ctx.saved_tensors
    return pool_backward(grad, x, idx, ctx.op, ctx.spec, ctx.sizes), None, None, None


def _backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, indices, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, indices)


def _backward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    """Linear in grad_output, constant in x (whose derivative is zero, returned as None)."""
    x, indices = ctx.saved_tensors
    family, rest = _family(ctx.op), (None,) * 5
    if family in _LINEAR:  # the transpose of a transpose: the op itself
        return (pool(grad, indices, ctx.op, ctx.spec, ctx.sizes), *rest)
    if family in _MAXES:  # routing to the winners transposes to gathering at them
        if indices is None:
            indices = max_pool(x, ctx.op, ctx.spec, ctx.sizes)[1]
        n = int(ctx.op[-2])
        picked = grad.flatten(-n).gather(-1, indices.flatten(-n))
        return (picked.view(indices.shape), *rest)
    raise NotImplementedError(f"{ctx.op}: the derivative of its backward is not available in a captured graph "
                              "(torch.compile has no double backward; call the op eagerly for higher orders)")


torch.library.register_autograd("poolspec::pool", _pool_vjp, setup_context=_pool_context)
torch.library.register_autograd("poolspec::max_pool", _max_vjp, setup_context=_max_context)
torch.library.register_autograd("poolspec::pool_backward", _backward_vjp, setup_context=_backward_context)


# --- vmap: the vmapped dimension joins the batch -------------------------------------------------------

def _batched(op: str, rank: int) -> bool:
    """Whether an input of ``rank`` dimensions has a batch axis (else it is (C, *spatial))."""
    return rank >= 3 if op == "interpolate" else rank == int(op[-2]) + 2


def _fronts(info: Any, in_dims: tuple[Any, ...], op: str, *tensors: torch.Tensor | None) -> tuple[Any, ...]:
    """Each tensor with the vmapped dimension first (expanded where it is not vmapped), folded into the
    batch axis where the op's input has one: (B, N, C, ...) -> (B*N, C, ...); (B, C, ...) stays."""
    rank = next(t.dim() - (d is not None) for t, d in zip(tensors, in_dims) if t is not None)
    fold = _batched(op, rank)
    out = []
    for t, d in zip(tensors, in_dims):
        if t is not None:
            t = t.expand(info.batch_size, *t.shape) if d is None else t.movedim(d, 0)
            t = t.flatten(0, 1) if fold else t
        out.append(t)
    return fold, *out


def _unfold(fold: bool, info: Any, out: torch.Tensor) -> torch.Tensor:
    return out.unflatten(0, (info.batch_size, -1)) if fold else out


def _pool_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, indices: torch.Tensor | None, op: str,
               spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    fold, x, indices = _fronts(info, in_dims, op, x, indices)
    return _unfold(fold, info, pool(x, indices, op, spec, sizes)), 0


def _max_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, op: str, spec: str,
              sizes: list[int]) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[int, int]]:
    fold, x = _fronts(info, in_dims, op, x)
    values, idx = max_pool(x, op, spec, sizes)
    return (_unfold(fold, info, values), _unfold(fold, info, idx)), (0, 0)


def _backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                   indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    # x's rank decides the fold (grad_output has the output's rank, the same)
    fold, x, grad_output, indices = _fronts(info, (in_dims[1], in_dims[0], in_dims[2]), op, x, grad_output,
                                            indices)
    return _unfold(fold, info, pool_backward(grad_output, x, indices, op, spec, sizes)), 0


torch.library.register_vmap("poolspec::pool", _pool_vmap)
torch.library.register_vmap("poolspec::max_pool", _max_vmap)
torch.library.register_vmap("poolspec::pool_backward", _backward_vmap)


def _split(v: Any, sizes: list[Any]) -> Any:
    """``v`` with each int replaced by a marker ``"$i"`` and moved to ``sizes``, which the node takes as a
    SymInt list: a size may come from a traced shape (``output_size=x.shape[-2:]`` under dynamic shapes),
    which Dynamo presents as an int that has no ``repr``."""
    if isinstance(v, (tuple, list)):  # torch.Size included
        parts = [_split(e, sizes) for e in v]
        return parts if isinstance(v, list) else tuple(parts)
    if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, (int, np.integer)):
        sizes.append(v)
        return f"${len(sizes) - 1}"
    if isinstance(v, np.floating):
        return float(v)
    return v


def call(op: str, args: dict[str, Any], x: torch.Tensor, grad_output: torch.Tensor | None = None,
         indices: torch.Tensor | None = None) -> Any:
    """An op (or, given ``grad_output``, its VJP) as a graph node; ``args`` are its keyword arguments as the
    public function received them (Python literals)."""
    sizes: list[Any] = []
    spec = repr({k: _split(v, sizes) for k, v in args.items()})
    if grad_output is not None:
        return pool_backward(grad_output, x, indices, op, spec, sizes)
    if _family(op) in _MAXES and (args.get("return_indices") or (torch.is_grad_enabled() and x.requires_grad)):
        values, idx = max_pool(x, op, spec, sizes)  # the winners serve the backward, no second search
        return (values, idx) if args.get("return_indices") else values
    return pool(x, indices, op, spec, sizes)  # inference: values only
