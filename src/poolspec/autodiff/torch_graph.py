"""Every op as a ``torch.library`` custom op, for the graphs ``torch.compile`` and ``torch.export`` capture.

Eagerly an op runs Python that builds host-side NumPy plans, which Dynamo would trace into and fail on.
Inside a capture an op therefore enters the graph as one node: ``poolspec::pool`` (values),
``poolspec::max_pool`` (values and winners), ``poolspec::pool_backward`` (the explicit VJP; for max_unpool
``poolspec::route_backward``, which inductor keeps whole), carrying the
op's name, its arguments as a string and their integers as a SymInt list (a size may come from a traced
shape), so the node is self-describing and an exported program needs nothing but poolspec to run. The ops
that read at data-dependent positions have nodes of their own (``poolspec::grid_sample``,
``poolspec::affine_grid``, ``poolspec::fractional_max_pool`` and the first two's backward nodes; the
fractional pool's backward is ``poolspec::route_backward`` at its winners). The
nodes' fake implementations take shapes and memory formats from the cards (no kernel runs at trace time),
their real implementations are the eager ops, and their derivatives are the explicit backward functions,
which gather and never scatter, so a compiled backward keeps poolspec's determinism. Under inductor each
node (forward and backward alike) is decomposed into the torch ops of its functional path, plans entering as
constants, and fused with its neighbours (``_fuse``; ``POOLSPEC_FUSE=0`` keeps the nodes opaque).

>>> import torch, poolspec
>>> f = torch.compile(lambda x: poolspec.avg_pool2d(x, 2), fullgraph=True, backend="eager")
>>> f(torch.ones(1, 1, 4, 4)).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

import ast
import functools
import math
import os
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from .._compat import FUNCTIONAL, functional, own_winners
from .._version import __version__
from ..registry import function
from ..registry import op as record
from ..spec import card
from .torch_fused import PLAIN

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

    return {k: fill(v) for k, v in kw.items() if not k.startswith("@")}


def _function(name: str) -> Any:
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


def _fresh(out: torch.Tensor, *inputs: torch.Tensor | None) -> torch.Tensor:
    """``out``, copied if it shares memory with an input (a custom op's output may not alias one)."""
    if FUNCTIONAL[0]:  # traced tensors have no memory to compare: their alias relation instead
        alias = torch._C._is_alias_of  # type: ignore[attr-defined]
        return out.clone() if any(t is not None and alias(out, t) for t in inputs) else out
    ptr = out.untyped_storage().data_ptr()
    if out.numel() and any(t is not None and t.untyped_storage().data_ptr() == ptr for t in inputs):
        return out.clone()
    return out


def _eager(op: str, x: torch.Tensor, indices: torch.Tensor | None, kw: dict[str, Any]) -> Any:
    fn = _function(op)
    return fn(x, indices, **kw) if record(op).takes_indices else fn(x, **kw)


@torch.library.custom_op("poolspec::pool", mutates_args=())
def pool(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>(x, **arguments(spec, sizes))`` (max_unpool: ``(x, indices, ...)``)."""
    kw = arguments(spec, sizes)
    if record(op).indexed:
        kw = {**kw, "return_indices": False}
    return _fresh(_eager(op, x, indices, kw), x, indices)


@torch.library.custom_op("poolspec::unpool", mutates_args=())
def unpool(x: torch.Tensor, indices: torch.Tensor, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.max_unpool<n>d(x, indices, **arguments(spec, sizes))``: a node of its own because inductor
    keeps it whole (see ``_fuse``)."""
    return _fresh(_eager(op, x, indices, arguments(spec, sizes)), x, indices)


def forward_node(op: str) -> Any:
    """The node of ``op``'s values."""
    return unpool if record(op).takes_indices else pool


@torch.library.custom_op("poolspec::max_pool", mutates_args=())
def max_pool(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """A max-family op's values and winners (flat in each plane, as torch's ``return_indices``)."""
    values, idx = _eager(op, x, None, {**arguments(spec, sizes), "return_indices": True})
    return _fresh(values, x), idx


def _backward_eager(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                    sizes: list[int]) -> torch.Tensor:
    fn, kw, rec = _function(f"{op}_backward"), arguments(spec, sizes), record(op)
    if rec.takes_indices:
        out = fn(grad_output, x, indices, **kw)
    elif rec.indexed:  # the winners, where the forward gave them
        with own_winners():
            out = fn(grad_output, x, **kw, indices=indices)
    else:
        out = fn(grad_output, x, **kw)
    return _fresh(out.contiguous(), grad_output, x, indices)


@torch.library.custom_op("poolspec::pool_backward", mutates_args=())
def pool_backward(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                  sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>_backward(grad_output, x, ...)`` of an op whose VJP inductor may expand (the max pools:
    at their winners)."""
    return _backward_eager(grad_output, x, indices, op, spec, sizes)


@torch.library.custom_op("poolspec::route_backward", mutates_args=())
def route_backward(grad_output: torch.Tensor, x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str,
                   sizes: list[int]) -> torch.Tensor:
    """``poolspec.<op>_backward(grad_output, x, ..., indices=winners)`` of fractional max pooling, or
    max_unpool's at its indices. A node of its own because inductor keeps it whole (see ``_fuse``)."""
    return _backward_eager(grad_output, x, indices, op, spec, sizes)


def backward_node(op: str) -> Any:
    """The node of ``op``'s VJP: ``route_backward``, kept whole under inductor, where the record says so."""
    return pool_backward if record(op).fused_vjp else route_backward


# --- shapes and layouts at trace time, from the cards -------------------------------------------------

def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _resolved(op: str, x: torch.Tensor, kw: dict[str, Any]) -> tuple[tuple[Any, ...], Any]:
    """The output shape (leading dimensions kept symbolic) and the card's resolution. Spatial sizes are
    specialised: plans depend on them, batch and channel sizes stay dynamic."""
    n = record(op).spatial_rank(x.dim())
    lead = tuple(x.shape[:-n])
    spatial = tuple(int(s) for s in x.shape[-n:])
    r = card(op).resolve((1,) * len(lead) + spatial, _dtype(x), **kw)
    return lead + tuple(r.output_shape[len(lead):]), r


def _layout(op: str, x: torch.Tensor, r: Any, out: Any) -> Any:
    from .._calls import keep_layout, layout_op

    return keep_layout(layout_op(op, r), x, out)


@pool.register_fake
@unpool.register_fake
def _(x: torch.Tensor, indices: torch.Tensor | None, op: str, spec: str, sizes: list[int]) -> torch.Tensor:
    shape, r = _resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, x.new_empty(shape))


@max_pool.register_fake
def _(x: torch.Tensor, op: str, spec: str, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    shape, r = _resolved(op, x, arguments(spec, sizes))
    return _layout(op, x, r, (x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)))


@pool_backward.register_fake
@route_backward.register_fake
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
        # (fractional_max_pool: its winners always travel with its backward)
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

def _fronts(info: Any, in_dims: tuple[Any, ...], op: str, *tensors: torch.Tensor | None) -> tuple[Any, ...]:
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


def _unfold(fold: bool, info: Any, out: torch.Tensor) -> torch.Tensor:
    return out.unflatten(0, (info.batch_size, -1)) if fold else out


def _pool_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, indices: torch.Tensor | None, op: str,
               spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    fold, x, indices = _fronts(info, in_dims, op, x, indices)
    return _unfold(fold, info, forward_node(op)(x, indices, op, spec, sizes)), 0


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
    return _unfold(fold, info, backward_node(op)(grad_output, x, indices, op, spec, sizes)), 0


torch.library.register_vmap("poolspec::pool", _pool_vmap)
torch.library.register_vmap("poolspec::unpool", _pool_vmap)
torch.library.register_vmap("poolspec::max_pool", _max_vmap)
torch.library.register_vmap("poolspec::pool_backward", _backward_vmap)
torch.library.register_vmap("poolspec::route_backward", _backward_vmap)


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


def _encode(args: dict[str, Any]) -> tuple[str, list[Any]]:
    """A node's ``spec`` and ``sizes`` for keyword arguments ``args`` (Python literals, sizes maybe SymInts)."""
    sizes: list[Any] = []
    spec = {k: _split(v, sizes) for k, v in args.items()}
    spec["@build"] = BUILD  # read by no kernel: keeps torch's on-disk compile caches per build
    return repr(spec), sizes


def call(op: str, args: dict[str, Any], x: torch.Tensor, grad_output: torch.Tensor | None = None,
         indices: torch.Tensor | None = None) -> Any:
    """An op (or, given ``grad_output``, its VJP) as a graph node; ``args`` are its keyword arguments as the
    public function received them (Python literals)."""
    spec, sizes = _encode(args)
    if grad_output is not None:
        return backward_node(op)(grad_output, x, indices, op, spec, sizes)
    if record(op).indexed and (args.get("return_indices") or (torch.is_grad_enabled() and x.requires_grad)):
        values, idx = max_pool(x, op, spec, sizes)  # the winners serve the backward, no second search
        return (values, idx) if args.get("return_indices") else values
    return forward_node(op)(x, indices, op, spec, sizes)  # inference: values only


# --- the ops that read at data-dependent positions: grid_sample, affine_grid, fractional_max_pool ---------

@torch.library.custom_op("poolspec::grid_sample", mutates_args=())
def grid_sample(x: torch.Tensor, grid: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.grid_sample(x, grid, **arguments(spec, sizes))``."""
    return _function("grid_sample")(x, grid, **arguments(spec, sizes)).contiguous()


@torch.library.custom_op("poolspec::grid_sample_backward", mutates_args=())
def grid_sample_backward(grad_output: torch.Tensor, x: torch.Tensor, grid: torch.Tensor, spec: str,
                         sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """``poolspec.grid_sample_backward(grad_output, x, grid, ...)``: (grad_x, grad_grid)."""
    gx, gg = _function("grid_sample_backward")(grad_output, x, grid, **arguments(spec, sizes))
    return gx.contiguous(), gg.contiguous()


@torch.library.custom_op("poolspec::affine_grid", mutates_args=())
def affine_grid(theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.affine_grid(theta, (N, 1, *spatial), align_corners)``: the grid depends on the size's
    spatial entries only (its batch entry, checked at trace time, is theta's), so a dynamic batch stays so."""
    kw = arguments(spec, sizes)
    return _function("affine_grid")(theta, (theta.shape[0], 1, *kw["spatial"]), kw["align_corners"]).contiguous()


@torch.library.custom_op("poolspec::affine_grid_backward", mutates_args=())
def affine_grid_backward(grad_grid: torch.Tensor, theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    """``poolspec.affine_grid_backward(grad_grid, theta, (N, 1, *spatial), align_corners)``."""
    kw = arguments(spec, sizes)
    out = _function("affine_grid_backward")(grad_grid, theta, (theta.shape[0], 1, *kw["spatial"]),
                                            kw["align_corners"])
    return out.detach().contiguous()


@torch.library.custom_op("poolspec::fractional_max_pool", mutates_args=())
def fractional_max_pool(x: torch.Tensor, samples: torch.Tensor, op: str, spec: str,
                        sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """``poolspec.<op>(x, ..., _random_samples=samples, return_indices=True)``: values and winners."""
    values, idx = _function(op)(x, **arguments(spec, sizes), return_indices=True, _random_samples=samples)
    return _fresh(values.contiguous(), x), idx.contiguous()


def _symbol(s: Any, name: str) -> Any:
    """A leading dimension for a card: the int, or a symbol where it is traced (a SymInt)."""
    return s if isinstance(s, int) else name


def _same(a: Any, b: Any, message: Any) -> None:
    """``a == b`` for leading sizes (traced ones: a guard on their equality, not on their values);
    ``message()`` is the ValueError's text."""
    if a != b:
        raise ValueError(message())


def _like(op: str, name: str, t: torch.Tensor, x: torch.Tensor) -> None:
    """The eager ops' cross-port rule (``_calls.check_like``) at trace time."""
    from .._calls import check_like
    from .._compat import namespace

    check_like(op, namespace(x), name, t, "x", x)


def _grid_resolved(x: torch.Tensor, grid: torch.Tensor, kw: dict[str, Any], op: str) -> tuple[Any, ...]:
    """grid_sample's output shape by its card, x's batch and channels kept symbolic; the eager checks of
    dtype, device and batch."""
    xs = tuple(_symbol(s, "NC"[i]) if i < 2 else int(s) for i, s in enumerate(x.shape))
    gs = tuple(_symbol(s, "N") if i == 0 else int(s) for i, s in enumerate(grid.shape))
    r = card("grid_sample").resolve(xs, _dtype(x), grid=gs, **kw)
    _like(op, "grid", grid, x)
    _same(grid.shape[0], x.shape[0], lambda: f"{op}: grid.shape={tuple(grid.shape)}: the batch dimension must "
                                             f"equal x's ({x.shape[0]})")
    return (x.shape[0], x.shape[1]) + tuple(r.output_shape[2:])


@grid_sample.register_fake
def _(x: torch.Tensor, grid: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return x.new_empty(_grid_resolved(x, grid, arguments(spec, sizes), "grid_sample"))


def _check_grad(op: str, grad: torch.Tensor, shape: tuple[Any, ...], name: str = "grad_output",
                like: torch.Tensor | None = None) -> None:
    if len(shape) != grad.dim() or any(a != b for a, b in zip(shape, grad.shape)):
        raise ValueError(f"{op}: {name}.shape={tuple(grad.shape)}: must equal the output shape {tuple(shape)}")
    if like is not None:
        _like(op, name, grad, like)


@grid_sample_backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, grid: torch.Tensor, spec: str,
      sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    op = "grid_sample_backward"
    _check_grad(op, grad_output, _grid_resolved(x, grid, arguments(spec, sizes), op), like=x)
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(grid, memory_format=torch.contiguous_format))


def _affine_resolved(theta: torch.Tensor, kw: dict[str, Any]) -> tuple[Any, ...]:
    """affine_grid's grid shape by its card, theta's batch kept symbolic."""
    ts = tuple("N" if i == 0 else int(s) for i, s in enumerate(theta.shape))  # its batch: checked by sampling
    spatial = tuple(kw["spatial"])
    r = card("affine_grid").resolve(ts, _dtype(theta), size=(1, 1, *spatial), align_corners=kw["align_corners"])
    return (theta.shape[0],) + tuple(r.output_shape[1:])


@affine_grid.register_fake
def _(theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    return theta.new_empty(_affine_resolved(theta, arguments(spec, sizes)))


@affine_grid_backward.register_fake
def _(grad_grid: torch.Tensor, theta: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
    _check_grad("affine_grid_backward", grad_grid, _affine_resolved(theta, arguments(spec, sizes)), "grad_grid")
    return torch.empty_like(theta, memory_format=torch.contiguous_format)


@fractional_max_pool.register_fake
def _(x: torch.Tensor, samples: torch.Tensor, op: str, spec: str,
      sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    shape, r = _resolved(op, x, arguments(spec, sizes))
    n = record(op).spatial_rank(x.dim())
    _like(op, "_random_samples", samples, x)
    want = (x.shape[0] if r.batched else 1, x.shape[-n - 1], n)
    def message() -> str:
        return f"{op}: _random_samples.shape={tuple(samples.shape)}: must be (N, C, {n}) = {tuple(want)} (N = 1 " \
               "for an unbatched input), one sample per plane and axis"

    if samples.dim() != 3:
        raise ValueError(message())
    for a, b in zip(samples.shape, want):
        _same(a, b, message)
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)


# derivatives: grid_sample's is its explicit backward (a node); that one's, w.r.t. grad_output, is the
# transpose of (grad_x, grad_grid) = (R g, D g): grid_sample for R (R^T is the op on the cotangent) and, for D,
# the JVP of the op in the grid's direction, read from the backward of each (n, c) plane as a batch of its own
# (all-ones cotangent: D's entries, d out[n, c, m] / d grid[n, m, k]); w.r.t. x and grid it is not available

def _grid_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, grid, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, grid)


def _grid_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, grid = ctx.saved_tensors
    gx, gg = grid_sample_backward(grad, x, grid, ctx.spec, ctx.sizes)
    return gx, gg, None, None


def _grid_backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, x, grid, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, grid)


def _grid_backward_vjp(ctx: Any, ggx: torch.Tensor | None, ggg: torch.Tensor | None) -> tuple[Any, ...]:
    if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
        raise NotImplementedError("grid_sample_backward: its derivative w.r.t. x and grid is not available in a "
                                  "captured graph (w.r.t. grad_output it is; torch.compile has no double "
                                  "backward; call the op eagerly for higher orders)")
    x, grid = ctx.saved_tensors
    out = None if ggx is None else grid_sample(ggx, grid, ctx.spec, ctx.sizes)
    if ggg is not None and arguments(ctx.spec, ctx.sizes)["mode"] != "nearest":  # nearest: D = 0
        N, C = x.shape[0], x.shape[1]
        planes = x.reshape((N * C, 1) + tuple(x.shape[2:]))
        grids = grid.repeat_interleave(C, dim=0)
        ones = x.new_ones((N * C, 1) + tuple(grid.shape[1:-1]))
        entries = grid_sample_backward(ones, planes, grids, ctx.spec, ctx.sizes)[1]  # (N * C, *O, n)
        jvp = (entries.unflatten(0, (N, C)) * ggg.unsqueeze(1)).sum(-1)
        out = jvp if out is None else out + jvp
    return out, None, None, None, None


def _affine_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    theta, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(theta)


def _affine_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    (theta,) = ctx.saved_tensors
    return affine_grid_backward(grad, theta, ctx.spec, ctx.sizes), None, None


def _affine_backward_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, _, ctx.spec, ctx.sizes = inputs


def _affine_backward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    """Linear in grad_grid (the transpose of a transpose: affine_grid), constant in theta."""
    return affine_grid(grad, ctx.spec, ctx.sizes), None, None, None


def _fractional_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, _, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, output[1])
    ctx.mark_non_differentiable(output[1])


def _fractional_vjp(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, ...]:
    x, idx = ctx.saved_tensors
    return backward_node(ctx.op)(grad, x, idx, ctx.op, ctx.spec, ctx.sizes), None, None, None, None


torch.library.register_autograd("poolspec::grid_sample", _grid_vjp, setup_context=_grid_context)
torch.library.register_autograd("poolspec::grid_sample_backward", _grid_backward_vjp,
                                setup_context=_grid_backward_context)
torch.library.register_autograd("poolspec::affine_grid", _affine_vjp, setup_context=_affine_context)
torch.library.register_autograd("poolspec::affine_grid_backward", _affine_backward_vjp,
                                setup_context=_affine_backward_context)
torch.library.register_autograd("poolspec::fractional_max_pool", _fractional_vjp, setup_context=_fractional_context)


# vmap: the vmapped dimension joins the batch (the samples' too, and an unbatched input's (1, C, n) samples
# become (B, C, n): the stacked inputs are one batched input)

def _grid_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, grid: torch.Tensor, spec: str,
               sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, x, grid = _fronts(info, in_dims, "grid_sample", x, grid)
    return _unfold(True, info, grid_sample(x, grid, spec, sizes)), 0


def _grid_backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_output: torch.Tensor, x: torch.Tensor,
                        grid: torch.Tensor, spec: str, sizes: list[int]) -> tuple[tuple[torch.Tensor, ...],
                                                                                  tuple[int, int]]:
    _, grad_output, x, grid = _fronts(info, in_dims, "grid_sample", grad_output, x, grid)
    gx, gg = grid_sample_backward(grad_output, x, grid, spec, sizes)
    return (_unfold(True, info, gx), _unfold(True, info, gg)), (0, 0)


def _affine_vmap(info: Any, in_dims: tuple[Any, ...], theta: torch.Tensor, spec: str,
                 sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, theta = _fronts(info, in_dims, "affine_grid", theta)
    return _unfold(True, info, affine_grid(theta, spec, sizes)), 0


def _affine_backward_vmap(info: Any, in_dims: tuple[Any, ...], grad_grid: torch.Tensor, theta: torch.Tensor,
                          spec: str, sizes: list[int]) -> tuple[torch.Tensor, int]:
    _, grad_grid, theta = _fronts(info, in_dims, "affine_grid", grad_grid, theta)
    return _unfold(True, info, affine_grid_backward(grad_grid, theta, spec, sizes)), 0


def _fractional_vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, samples: torch.Tensor, op: str,
                     spec: str, sizes: list[int]) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[int, int]]:
    fold, x, samples = _fronts(info, in_dims, op, x, samples)
    if not fold:
        samples = samples.flatten(0, 1)
    values, idx = fractional_max_pool(x, samples, op, spec, sizes)
    return (_unfold(fold, info, values), _unfold(fold, info, idx)), (0, 0)


torch.library.register_vmap("poolspec::grid_sample", _grid_vmap)
torch.library.register_vmap("poolspec::grid_sample_backward", _grid_backward_vmap)
torch.library.register_vmap("poolspec::affine_grid", _affine_vmap)
torch.library.register_vmap("poolspec::affine_grid_backward", _affine_backward_vmap)
torch.library.register_vmap("poolspec::fractional_max_pool", _fractional_vmap)


def _grid_node(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    return (grid_sample_backward if backward else grid_sample)(*tensors, *_encode(args))


def _affine_node(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    theta = tensors[-1]
    size = tuple(args["size"]) if isinstance(args["size"], (tuple, list)) else args["size"]
    spatial: tuple[Any, ...] = ()
    if isinstance(size, tuple) and len(size) in (4, 5):
        _same(size[0], theta.shape[0], lambda: f"{op}: theta.shape={tuple(theta.shape)}: its batch dimension "
                                               f"must equal size[0] ({size[0]})")
        if size[1] <= 0:
            raise ValueError(f"{op}: size={size}: every entry must be > 0")
        spatial = size[2:]
    else:  # the card's error, at trace time
        card(record(op).name).resolve(("N", 2, 3), _dtype(theta), size=size, align_corners=args["align_corners"])
    spec, sizes = _encode({"spatial": spatial, "align_corners": args["align_corners"]})
    return (affine_grid_backward if backward else affine_grid)(*tensors, spec, sizes)


def _fractional_node(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """The winners, then (backward) the routing at them."""
    rec = record(op)
    x = tensors[1] if backward else tensors[0]
    n, name = rec.spatial_rank(x.dim()), rec.name
    args = dict(args)
    samples, rng, indices = args.pop("_random_samples", None), args.pop("rng", None), args.pop("indices", None)
    ret = args.pop("return_indices", False)
    spec, sizes = _encode(args)
    if backward and indices is not None:
        return backward_node(name)(tensors[0], x, indices, name, spec, sizes)
    if samples is None:
        if backward:
            raise ValueError(f"{op}: pass the forward's _random_samples or its indices (return_indices=True): "
                             "without them the windows are unknown")
        if rng is not None:
            raise ValueError(f"{op}: inside torch.compile or torch.export pass _random_samples, or rng=None for "
                             "torch.rand in the graph (a host generator's draw would be a constant of the graph)")
        lead = x.shape[0] if x.dim() == n + 2 else 1
        samples = torch.rand((lead, x.shape[-n - 1], n), dtype=x.dtype, device=x.device)  # as torch's own call
    if backward:
        indices = fractional_max_pool(x.detach(), samples, name, spec, sizes)[1]
        return backward_node(name)(tensors[0], x, indices, name, spec, sizes)
    values, idx = fractional_max_pool(x, samples, name, spec, sizes)
    return (values, idx) if ret else values


# the families with nodes of their own: the binding of each
_SAMPLING_NODES = {"grid_sample": _grid_node, "affine_grid": _affine_node, "fractional_max_pool": _fractional_node}


def sampling(op: str, args: dict[str, Any], *tensors: Any) -> Any:
    """grid_sample, affine_grid, fractional_max_pool2d/3d or their backward functions as graph nodes;
    ``tensors`` as the public function takes them, ``args`` its other arguments (Python literals)."""
    return _SAMPLING_NODES[record(op).family](op, op.endswith("_backward"), args, tensors)


# --- fusion: inductor sees through the nodes -------------------------------------------------------------

def _decomposition(impl: Any) -> Any:
    def decomposed(*args: Any) -> Any:
        with functional():
            return impl(*args)

    return decomposed


def _anchored(impl: Any) -> Any:
    """``pool_backward``'s decomposition, its result made to read ``x`` as torch's own pooling backward does
    (values unchanged). Without the read, AOTAutograd's partitioner keeps the boolean mask of a ReLU before
    the pool for the backward instead of the ReLU's output, and inductor's CPU code stores that mask a byte
    at a time when the convolution before it is channels-last: ``relu(conv(x))`` then costs ~10x in the
    forward (16x16x64x64 float32: 10.7 ms against 1.0 ms) whatever op follows."""
    def decomposed(grad_output: torch.Tensor, x: torch.Tensor, *rest: Any) -> Any:
        with functional():
            out = impl(grad_output, x, *rest)
        # a condition on the cotangent as well, so that it cannot be computed in the forward and kept instead
        return torch.where(out + x == 0, out, out) if out.shape == x.shape else out

    return decomposed


def _fuse() -> list[str]:
    """Each node's decomposition for inductor: its own implementation, run on the traced tensors along the
    functional path (the kernels' array-API calls, plans as constants), so that inductor generates fused
    kernels for poolspec's forward and backward instead of calling the eager op. The autograd formulas stay
    the nodes' (the explicit, gathering backward: no scatter enters the graph). torch.export and the
    ``aot_eager`` backend keep the nodes. Off with ``POOLSPEC_FUSE=0`` (each node then runs the eager op).

    The max pools' VJP expands to a gather over each cell's covering windows through constant tables (the
    shape of inductor's own lowering of max_pool2d's backward): max_pool2d 3x3/2 on 8x64x112x112, fwd+bwd
    2.2x inductor's native code (4.3x with the node kept whole, its eager route then running outside
    inductor's threads). Kept whole, where the eager kernels index by data and the functional path has to sort
    instead (the registry's ``fused_vjp``): ``route_backward``, fractional max pooling's VJP (its winners are
    arbitrary cells), and ``unpool`` and max_unpool's VJP, which eagerly write each value at its index (each
    cell at most once) where the functional path sorts the indices and binary-searches every output cell."""
    if os.environ.get("POOLSPEC_FUSE", "1") == "0":
        return []
    try:
        from torch._decomp import register_decomposition
        from torch._inductor import decomposition as inductor
    except ImportError:  # a torch without inductor: the nodes stay opaque
        return []
    decompositions = inductor.decompositions
    fused = []
    for node in (pool, max_pool, pool_backward, grid_sample, grid_sample_backward, affine_grid,
                 affine_grid_backward, fractional_max_pool):
        overload = node._opoverload
        if overload not in decompositions:
            wrap = _anchored if node is pool_backward else _decomposition
            register_decomposition(overload, registry=decompositions)(wrap(node._init_fn))
        fused.append(str(overload))
    # inductor keeps a copy of its table from its first compile on: renewed to hold these
    cached = getattr(inductor, "fast_random_decomps", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
    return fused


FUSED = _fuse()


def _build() -> str:
    """poolspec's version, whether the nodes are fused, and a digest of its sources (sizes and times): torch's
    AOTAutograd cache keys a captured graph by its nodes, not by what their decompositions expand to, and
    would otherwise serve code compiled from another build of poolspec (or with fusion off) from disk."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package's folder
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(f for f in files if f.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            digest.update(f"{os.path.relpath(os.path.join(folder, name), root)}:{stat.st_size}:"
                          f"{stat.st_mtime_ns};".encode())
    return f"{__version__}/{'fused' if FUSED else 'nodes'}/{digest.hexdigest()[:16]}"


BUILD = _build()
