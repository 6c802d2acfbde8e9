"""Routing an op's forward or VJP through the caller's autodiff system.

torch tensors go through ``autograd.Function`` pairs (in torch.func's form) and JAX arrays through JAX
primitives with their own JVP, transpose and batching rules for ops whose kernels gather (native autodiff
would transpose a gather into a scatter-add, which is atomic and nondeterministic on GPUs). Slice-only ops
on JAX use native autodiff; on JAX every op runs as one cached ``jax.jit`` program (eager JAX would compile
each slice separately). The backends are imported only when an array of theirs arrives.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from .._compat import FUNCTIONAL, is_dask_array, is_jax_array, is_torch_array
from ..kernels.linear import SeparableLinear
from .torch_fused import ENABLED as _FUSED
from .torch_fused import PLAIN as _PLAIN


class Routes(Protocol):
    """What the max family's kernels provide (``kernels.maxes``, ``kernels.unpool``, ``kernels.cells``):
    ``route`` is linear in its first argument given integer winners, ``select`` is its transpose; ``routed``
    and ``selected`` are the spatial shapes route and select produce."""

    @property
    def routed(self) -> tuple[int, ...]: ...

    @property
    def selected(self) -> tuple[int, ...]: ...

    def route(self, g: Any, idx: Any) -> Any: ...

    def select(self, gg: Any, idx: Any) -> Any: ...


class PoolRoutes(Routes, Protocol):
    """A pool's routes, whose ``forward`` gives values and winners."""

    def forward(self, x: Any, with_index: bool = True) -> tuple[Any, Any]: ...


def untracked(*arrays: Any) -> bool:
    """Whether no autodiff system follows ``arrays`` and they may be written in place (NumPy, CuPy, torch
    outside autograd, forward AD and torch.func transforms)."""
    from .._compat import writable_module

    if any(writable_module(a) is None for a in arrays):
        return False
    if any(is_torch_array(a) for a in arrays):
        from .torch import tracked

        return not any(tracked(a) for a in arrays)
    return True


def unrecorded(*arrays: Any) -> bool:
    """Whether no autodiff system records operations on ``arrays`` now (NumPy, CuPy; torch where grad mode is off
    or nothing requires grad, outside forward AD and torch.func transforms): a kernel may then build its result
    with in-place writes into fresh buffers, though torch tensors may still require grad (a node's own call)."""
    from .._compat import writable_module

    if any(writable_module(a) is None for a in arrays):
        return False
    if any(is_torch_array(a) for a in arrays):
        from .torch import recorded

        return not any(recorded(a) for a in arrays)
    return True


def in_graph(x: Any) -> bool:
    """Whether torch.compile or torch.export is capturing the op on ``x`` into a graph: the op then enters it
    as one ``torch.library`` node (:mod:`.torch_graph`) instead of running its host-side plan code."""
    if FUNCTIONAL[0]:  # the node itself is being decomposed: run its torch ops
        return False
    torch = sys.modules.get("torch")  # not array-api-compat's test, which Dynamo would trace and warn about
    if torch is None:
        return False
    if torch.compiler.is_compiling():
        return isinstance(x, torch.Tensor)
    # eager fusion (torch_fused): the call runs as a compiled program built from the same node
    return _FUSED[0] and not _PLAIN[0] and isinstance(x, torch.Tensor)


def graph_op(op: str, args: dict[str, Any], x: Any, grad_output: Any = None, indices: Any = None) -> Any:
    """``op`` (or, given ``grad_output``, its VJP) as a node of the graph being captured, or eagerly as a
    cached compiled program of that node (``set_eager_fusion``)."""
    from .torch_graph import call

    if sys.modules["torch"].compiler.is_compiling():
        return call(op, args, x, grad_output, indices)
    from ..registry import op as record
    from . import torch_fused

    rec = record(op)

    def plain() -> Any:
        lead = (x, indices) if rec.takes_indices else (x,)
        if grad_output is None:
            return rec.forward(*lead, **args)
        if rec.takes_indices or indices is None:
            return rec.backward(grad_output, *lead, **args)
        return rec.backward(grad_output, x, **args, indices=indices)

    return torch_fused.run("op", op, args, (x, grad_output, indices),
                           lambda x, g, i: call(op, args, x, g, i), plain)


def graph_node(op: str, args: dict[str, Any], *tensors: Any) -> Any:
    """grid_sample, affine_grid, fractional_max_pool2d/3d (or their ``_backward``) as nodes of the graph being
    captured, or eagerly as cached compiled programs; ``tensors`` as the public function takes them, ``args``
    its other arguments."""
    from .torch_graph import sampling

    if sys.modules["torch"].compiler.is_compiling():
        return sampling(op, args, *tensors)
    from ..registry import function
    from . import torch_fused

    return torch_fused.run("node", op, args, tensors, lambda *ts: sampling(op, args, *ts),
                           lambda: function(op)(*tensors, **args))


def linear(op: SeparableLinear, x: Any, *, transpose: bool = False, primal: Any = None) -> Any:
    """``op`` (or its transpose) applied to ``x`` with gradients of every order where the backend has them.
    ``primal``: the op's input when this is its explicit VJP, whose derivative w.r.t. it (zero) torch then
    gives as zeros, as for its own backward ops."""
    if is_torch_array(x):
        from .torch import linear as torch_linear

        return torch_linear(op, x, transpose, primal)
    if is_jax_array(x):
        from .jax import linear as jax_linear

        return jax_linear(op, x, transpose)
    return op.transpose(x) if transpose else op.apply(x)


def compose(fn: Any, static: tuple[Any, ...], *arrays: Any) -> Any:
    """``fn(*static, *arrays)`` for an op built from differentiable pieces: native autodiff on torch; one
    cached ``jax.jit`` program on JAX (``static`` must be hashable)."""
    if is_jax_array(arrays[0]):
        from .jax import compiled

        return compiled(fn, static)(*arrays)
    return fn(*static, *arrays)


def sampled(rules: Any, x: Any, p: Any) -> Any:
    """``rules.forward(x, p)`` for an op of two differentiable arrays (grid_sample's image and grid): on torch a
    Function whose backward is ``rules.backward`` and forward mode ``rules.jvp``, so autograd keeps only the
    inputs, not the forward's intermediates; elsewhere the forward itself (JAX differentiates its chunked
    program natively)."""
    if is_torch_array(x):
        from .torch import sampled as torch_sampled

        return torch_sampled(rules, x, p)
    return rules.forward(x, p)


def anchor(value: Any, primal: Any) -> Any:
    """``value`` made a function of the torch tensor ``primal`` with zero derivative, where autograd follows
    ``primal`` (so its gradient is zeros, as torch's own ops give, not "unused"); unchanged elsewhere."""
    if is_torch_array(primal):
        from .torch import _anchor

        return _anchor(value, primal)
    return value


def max_pool(windows: PoolRoutes, x: Any, *, with_index: bool) -> tuple[Any, Any]:
    """(values, flat indices) of a max pool; differentiable on torch and JAX, the gradient a gather."""
    if is_torch_array(x):
        from .torch import max_pool as torch_max_pool
        from .torch import tracked

        if tracked(x):  # autograd, forward AD or a torch.func transform
            return torch_max_pool(windows, x)
    if is_jax_array(x):
        from .jax import max_pool as jax_max_pool

        return jax_max_pool(windows, x, with_index)
    return windows.forward(x, with_index=with_index)


def max_indices(windows: PoolRoutes, x: Any) -> Any:
    """The winners of a max pool only (no gradient is tracked); on JAX the cached jitted forward program."""
    if is_jax_array(x):
        from .jax import max_pool as jax_max_pool

        return jax_max_pool(windows, x)[1]
    if is_torch_array(x):
        from .torch import max_pool as torch_max_pool
        from .torch import tracked

        x = x.detach()  # no gradient is tracked here
        if tracked(x):  # a transform's wrapper or forward AD: the Function's rules unwrap it
            return torch_max_pool(windows, x)[1]
    return windows.forward(x)[1]


def max_backward(windows: Routes, g: Any, idx: Any, primal: Any = None) -> Any:
    """The max pool's VJP for cotangent ``g`` and winners ``idx``; differentiable in ``g`` to any order (and,
    given ``primal``, in the pool's input: zero, as :func:`linear`)."""
    return _at_winners("max_backward", windows.route, windows.routed, windows, g, idx, primal)


def max_select(windows: Routes, gg: Any, idx: Any, primal: Any = None) -> Any:
    """``gg`` gathered at the winners (the transpose of :func:`max_backward`); differentiable to any order."""
    return _at_winners("max_select", windows.select, windows.selected, windows, gg, idx, primal)


def _at_winners(binding: str, plain: Any, shape: Any, windows: Routes, a: Any, idx: Any, primal: Any) -> Any:
    """``plain(a, idx)`` with the backend's derivatives: the torch or JAX ``binding`` of that name, or per
    plane on Dask (``shape``: the result's shape rule for the chunks)."""
    if is_torch_array(a):
        from . import torch as torch_bindings

        return getattr(torch_bindings, binding)(windows, a, idx, primal)
    if is_jax_array(a):
        from . import jax as jax_bindings

        return getattr(jax_bindings, binding)(windows, a, idx)
    if is_dask_array(a):
        from ..kernels.chunked import plane_local

        return plane_local(plain, (a, idx), shape)
    return plain(a, idx)
