"""Fractional max pooling's node for torch.compile and torch.export: ``poolspec::fractional_max_pool`` (values
and winners, given the samples; drawn in the graph by ``torch.rand`` where none are given, as torch's own call);
its backward is the generic ``poolspec::route_backward`` at the winners.

>>> import torch, poolspec
>>> f = torch.compile(lambda x, s: poolspec.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s),
...                   fullgraph=True, backend="eager")
>>> f(torch.ones(1, 1, 4, 4), torch.rand(1, 1, 2)).shape
torch.Size([1, 1, 2, 2])
"""

from __future__ import annotations

from typing import Any

import torch

from ...autodiff import torch_graph as g
from ...registry import op as record


@torch.library.custom_op("poolspec::fractional_max_pool", mutates_args=())
def fractional_max_pool(x: torch.Tensor, samples: torch.Tensor, op: str, spec: str,
                        sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """``poolspec.<op>(x, ..., _random_samples=samples, return_indices=True)``: values and winners."""
    values, idx = g.eager_function(op)(x, **g.arguments(spec, sizes), return_indices=True, _random_samples=samples)
    return g.fresh(values.contiguous(), x), idx.contiguous()


@fractional_max_pool.register_fake
def _(x: torch.Tensor, samples: torch.Tensor, op: str, spec: str,
      sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    shape, r = g.resolved(op, x, g.arguments(spec, sizes))
    n = record(op).spatial_rank(x.dim())
    g.check_port(op, "_random_samples", samples, x)
    want = (x.shape[0] if r.batched else 1, x.shape[-n - 1], n)

    def message() -> str:
        return f"{op}: _random_samples.shape={tuple(samples.shape)}: must be (N, C, {n}) = {tuple(want)} (N = 1 " \
               "for an unbatched input), one sample per plane and axis"

    if samples.dim() != 3:
        raise ValueError(message())
    for a, b in zip(samples.shape, want):
        g.same(a, b, message)
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)


def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, _, ctx.op, ctx.spec, ctx.sizes = inputs
    ctx.save_for_backward(x, output[1])
    ctx.mark_non_differentiable(output[1])


def _vjp(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, ...]:
    x, idx = ctx.saved_tensors
    return g.backward_node(ctx.op)(grad, x, idx, ctx.op, ctx.spec, ctx.sizes), None, None, None, None


torch.library.register_autograd("poolspec::fractional_max_pool", _vjp, setup_context=_context)


# vmap: the vmapped dimension joins the batch (the samples' too, and an unbatched input's (1, C, n) samples
# become (B, C, n): the stacked inputs are one batched input)

def _vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, samples: torch.Tensor, op: str,
                     spec: str, sizes: list[int]) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[int, int]]:
    fold, x, samples = g.fronts(info, in_dims, op, x, samples)
    if not fold:
        samples = samples.flatten(0, 1)
    values, idx = fractional_max_pool(x, samples, op, spec, sizes)
    return (g.unfold(fold, info, values), g.unfold(fold, info, idx)), (0, 0)


torch.library.register_vmap("poolspec::fractional_max_pool", _vmap)


def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
    """The winners, then (backward) the routing at them."""
    rec = record(op)
    x = tensors[1] if backward else tensors[0]
    n, name = rec.spatial_rank(x.dim()), rec.name
    args = dict(args)
    samples, rng, indices = args.pop("_random_samples", None), args.pop("rng", None), args.pop("indices", None)
    ret = args.pop("return_indices", False)
    spec, sizes = g.node_args(args)
    if backward and indices is not None:
        return g.backward_node(name)(tensors[0], x, indices, name, spec, sizes)
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
        return g.backward_node(name)(tensors[0], x, indices, name, spec, sizes)
    values, idx = fractional_max_pool(x, samples, name, spec, sizes)
    return (values, idx) if ret else values


g.fusible(fractional_max_pool)
