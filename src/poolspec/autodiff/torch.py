"""torch bindings: each op's backward is another Function whose backward is the op again (linear ops) or
the gather at the winners (max ops), so ``create_graph=True`` works to any order and never reaches an
atomic scatter.

The Functions are in torch.func's form (``forward`` without ctx, ``setup_context``, ``jvp`` and a ``vmap``
rule), so ``torch.func.vmap``, ``grad``, ``jacrev``, ``jacfwd``, ``jvp``, ``hessian`` and forward-mode AD
work on every op. The vmap rule moves the vmapped dimension to the front, where it is one more leading
(batch) axis to kernels that act on the trailing spatial axes.

A VJP that is linear in the cotangent does not depend on the primal's values, but its derivative w.r.t.
the primal exists and is zero. torch's own pooling backwards take the input as an argument and so return
those zeros; here the VJP is tied to the primal by :class:`_Anchored` (identity in its first argument,
zero derivative in the second), so ``autograd.grad(<grad_x, v>, x)`` gives zeros, at every order, instead
of "element 0 of tensors does not require grad".
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd import forward_ad

from ..kernels.linear import SeparableLinear


def tracked(x: torch.Tensor) -> bool:
    """Whether a transform or autograd follows ``x``: then it must go through a Function, whose kernels see
    plain tensors (the kernels' in-place ``out=`` writes have no batching or forward-AD rules)."""
    return (x.requires_grad or forward_ad._current_level >= 0
            or torch._C._functorch.is_functorch_wrapped_tensor(x))


def recorded(x: torch.Tensor) -> bool:
    """Whether autograd (grad mode on), forward AD or a torch.func transform records operations on ``x``."""
    return ((x.requires_grad and torch.is_grad_enabled()) or forward_ad._current_level >= 0
            or torch._C._functorch.is_functorch_wrapped_tensor(x))


def _eager_twin(cls: Any) -> Any:
    """The same Function in the classic form (ctx in forward). torch.func needs the form with setup_context,
    whose apply costs about 7 us more per call in eager autograd; outside a torch.func transform the twin
    runs instead (plain autograd and forward AD need only the classic form)."""

    def forward(ctx: Any, *args: Any) -> Any:
        out = cls.forward(*args)
        cls.setup_context(ctx, args, out)
        return out

    return type(f"{cls.__name__}Eager", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(cls.backward),
                 "jvp": staticmethod(cls.jvp)})


_TWINS: dict[Any, Any] = {}


def _call(cls: Any, *args: Any) -> Any:
    """``cls.apply(*args)``, through its classic twin unless a torch.func transform wraps a tensor argument."""
    wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    if any(isinstance(a, torch.Tensor) and wrapped(a) for a in args):
        return cls.apply(*args)
    twin = _TWINS.get(cls)
    if twin is None:
        twin = _TWINS[cls] = _eager_twin(cls)
    return twin.apply(*args)


def _front(x: torch.Tensor, dim: int | None) -> torch.Tensor:
    return x if dim is None or dim == 0 else x.movedim(dim, 0)


def _batched(x: torch.Tensor, dim: int | None, size: int) -> torch.Tensor:
    """``x`` with the vmapped axis first (expanded where ``x`` is not vmapped)."""
    return x.expand(size, *x.shape) if dim is None else _front(x, dim)


class _Anchored(torch.autograd.Function):
    """``value`` unchanged, made a function of ``primal`` whose derivative is zero."""

    @staticmethod
    def forward(value: torch.Tensor, primal: torch.Tensor) -> torch.Tensor:
        return value.view_as(value)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(inputs[1])

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, Any]:
        if not ctx.needs_input_grad[1]:
            return grad, None
        (primal,) = ctx.saved_tensors
        return grad, _anchor(torch.zeros_like(primal), primal)

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _primal_tangent: Any) -> torch.Tensor:
        return tangent

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], value: torch.Tensor, primal: torch.Tensor) -> tuple[Any, Any]:
        return value.view_as(value), in_dims[0]


def _anchor(value: torch.Tensor, primal: torch.Tensor | None) -> torch.Tensor:
    """``value`` tied to ``primal`` where a graph is being built (``create_graph=True``) through it."""
    if primal is None or not (torch.is_grad_enabled() and tracked(primal)):
        return value
    return _call(_Anchored, value, primal)


def _primal(ctx: Any) -> torch.Tensor | None:
    return ctx.saved_tensors[-1] if ctx.needs_input_grad[0] else None


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(x: torch.Tensor, op: SeparableLinear, transpose: bool) -> torch.Tensor:
        return op.transpose(x) if transpose else op.apply(x)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        x, ctx.op, ctx.transpose = inputs
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)  # the anchor of the second derivative's zeros only; its values are unused

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None]:
        return linear(ctx.op, grad, not ctx.transpose, _primal(ctx)), None, None

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _op: Any, _transpose: Any) -> torch.Tensor:
        return _call(_Linear, tangent, ctx.op, ctx.transpose)

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, op: SeparableLinear,
             transpose: bool) -> tuple[torch.Tensor, int | None]:
        return _call(_Linear, _front(x, in_dims[0]), op, transpose), 0


# Function.apply in torch.func's form costs about 7 us more per call than a plain call, so a tensor no
# autograd, forward AD or transform follows skips it (the tiny calls of inference stay cheap)

def linear(op: SeparableLinear, x: torch.Tensor, transpose: bool,
           primal: torch.Tensor | None = None) -> torch.Tensor:
    if tracked(x):
        out = _call(_Linear, x, op, transpose)
    else:
        out = op.transpose(x) if transpose else op.apply(x)
    return _anchor(out, primal)


class _MaxPool(torch.autograd.Function):
    @staticmethod
    def forward(x: torch.Tensor, windows: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return windows.forward(x)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        x, ctx.windows = inputs
        ctx.save_for_backward(output[1], x)
        ctx.save_for_forward(output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, None]:
        return max_backward(ctx.windows, grad, ctx.saved_tensors[0], _primal(ctx)), None

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _windows: Any) -> tuple[torch.Tensor, None]:
        # the tangent at each output's winner: the transpose of the gradient's routing
        return _call(_MaxRoute, tangent, ctx.saved_tensors[0], ctx.windows, True), None

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, windows: Any) -> tuple[Any, tuple[int, int]]:
        return _call(_MaxPool, _front(x, in_dims[0]), windows), (0, 0)


class _MaxRoute(torch.autograd.Function):
    """Linear in its first argument: ``select=False`` routes g to the winners (the max pool's VJP),
    ``select=True`` gathers at the winners; each is the other's VJP."""

    @staticmethod
    def forward(g: torch.Tensor, idx: torch.Tensor, windows: Any, select: bool) -> torch.Tensor:
        return windows.select(g, idx) if select else windows.route(g, idx)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        g, idx, ctx.windows, ctx.select = inputs
        ctx.save_for_backward(idx, g) if ctx.needs_input_grad[0] else ctx.save_for_backward(idx)
        ctx.save_for_forward(idx)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None, None]:
        return _anchor(_route(grad, ctx.saved_tensors[0], ctx.windows, not ctx.select), _primal(ctx)), None, None, None

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, *_: Any) -> torch.Tensor:
        return _call(_MaxRoute, tangent, ctx.saved_tensors[0], ctx.windows, ctx.select)

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], g: torch.Tensor, idx: torch.Tensor, windows: Any,
             select: bool) -> tuple[torch.Tensor, int | None]:
        if in_dims[0] is None and in_dims[1] is None:
            return _call(_MaxRoute, g, idx, windows, select), None
        g, idx = _batched(g, in_dims[0], info.batch_size), _batched(idx, in_dims[1], info.batch_size)
        return _call(_MaxRoute, g, idx, windows, select), 0


def max_pool(windows: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _call(_MaxPool, x, windows)


def _route(g: torch.Tensor, idx: torch.Tensor, windows: Any, select: bool) -> torch.Tensor:
    if tracked(g) or tracked(idx):
        return _call(_MaxRoute, g, idx, windows, select)
    return windows.select(g, idx) if select else windows.route(g, idx)


def max_backward(windows: Any, g: torch.Tensor, idx: torch.Tensor,
                 primal: torch.Tensor | None = None) -> torch.Tensor:
    return _anchor(_route(g, idx, windows, False), primal)


def max_select(windows: Any, gg: torch.Tensor, idx: torch.Tensor,
               primal: torch.Tensor | None = None) -> torch.Tensor:
    return _anchor(_route(gg, idx, windows, True), primal)


class _Sampled(torch.autograd.Function):
    """An op of two differentiable tensors (grid_sample's image and grid) given by its ``rules``: ``forward(x,
    p)``, ``backward(g, x, p) -> (grad_x, grad_p)`` (a composition, so differentiable again) and ``jvp(x, p,
    x_dot, p_dot)``. Autograd then keeps the two inputs for the backward, not the forward's intermediates
    (which for a dense grid are many times the grid)."""

    @staticmethod
    def forward(x: torch.Tensor, p: torch.Tensor, rules: Any) -> torch.Tensor:
        return rules.forward(x, p)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        x, p, ctx.rules = inputs
        ctx.save_for_backward(x, p)
        ctx.save_for_forward(x, p)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, Any, None]:
        x, p = ctx.saved_tensors
        grad_x, grad_p = ctx.rules.backward(grad, x, p, ctx.needs_input_grad[0])  # the image's route costs most
        return (grad_x if ctx.needs_input_grad[0] else None), (grad_p if ctx.needs_input_grad[1] else None), None

    @staticmethod
    def jvp(ctx: Any, x_dot: Any, p_dot: Any, _rules: Any) -> torch.Tensor:
        x, p = ctx.saved_tensors
        return ctx.rules.jvp(x, p, x_dot, p_dot)

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, p: torch.Tensor, rules: Any) -> tuple[Any, int]:
        # the mapped axis joins the batch axis both inputs share
        x, p = _batched(x, in_dims[0], info.batch_size), _batched(p, in_dims[1], info.batch_size)
        B, N = x.shape[0], x.shape[1]
        out = _call(_Sampled, x.reshape((B * N,) + tuple(x.shape[2:])), p.reshape((B * N,) + tuple(p.shape[2:])),
                    rules)
        return out.reshape((B, N) + tuple(out.shape[1:])), 0


def sampled(rules: Any, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    if tracked(x) or tracked(p):
        return _call(_Sampled, x, p, rules)
    return rules.forward(x, p)
