"""torch bindings: each op's backward is another Function whose backward is the op again (linear ops) or
the gather at the winners (max ops), so ``create_graph=True`` works to any order and never reaches an
atomic scatter.

A VJP that is linear in the cotangent does not depend on the primal's values, but its derivative w.r.t.
the primal exists and is zero. torch's own pooling backwards take the input as an argument and so return
those zeros; here the VJP is tied to the primal by :class:`_Anchored` (identity in its first argument,
zero derivative in the second), so ``autograd.grad(<grad_x, v>, x)`` gives zeros, at every order, instead
of "element 0 of tensors does not require grad".
"""

from __future__ import annotations

from typing import Any

import torch

from ..kernels.linear import SeparableLinear


class _Anchored(torch.autograd.Function):
    """``value`` unchanged, made a function of ``primal`` whose derivative is zero."""

    @staticmethod
    def forward(ctx: Any, value: torch.Tensor, primal: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(primal)
        return value.view_as(value)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, Any]:
        if not ctx.needs_input_grad[1]:
            return grad, None
        (primal,) = ctx.saved_tensors
        return grad, _anchor(torch.zeros_like(primal), primal)

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _primal_tangent: Any) -> torch.Tensor:
        return tangent


def _anchor(value: torch.Tensor, primal: torch.Tensor | None) -> torch.Tensor:
    """``value`` tied to ``primal`` where a graph is being built (``create_graph=True``) through it."""
    if primal is None or not (torch.is_grad_enabled() and primal.requires_grad):
        return value
    return _Anchored.apply(value, primal)


def _primal(ctx: Any) -> torch.Tensor | None:
    return ctx.saved_tensors[-1] if ctx.needs_input_grad[0] else None


def _run(op: SeparableLinear, x: Any, transpose: bool) -> Any:
    return op.transpose(x) if transpose else op.apply(x)


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, op: SeparableLinear, transpose: bool) -> torch.Tensor:
        ctx.op, ctx.transpose = op, transpose
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)  # the anchor of the second derivative's zeros only; its values are unused
        return _run(op, x, transpose)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None]:
        return _anchor(_Linear.apply(grad, ctx.op, not ctx.transpose), _primal(ctx)), None, None

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _op: Any, _transpose: Any) -> torch.Tensor:
        return _run(ctx.op, tangent, ctx.transpose)


def linear(op: SeparableLinear, x: torch.Tensor, transpose: bool,
           primal: torch.Tensor | None = None) -> torch.Tensor:
    return _anchor(_Linear.apply(x, op, transpose), primal)


class _MaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, windows: Any) -> tuple[torch.Tensor, torch.Tensor]:
        values, idx = windows.forward(x)
        ctx.windows = windows
        ctx.save_for_backward(idx, x)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, None]:
        idx = ctx.saved_tensors[0]
        return _anchor(_MaxRoute.apply(grad, idx, ctx.windows, False), _primal(ctx)), None


class _MaxRoute(torch.autograd.Function):
    """Linear in its first argument: ``select=False`` routes g to the winners (the max pool's VJP),
    ``select=True`` gathers at the winners; each is the other's VJP."""

    @staticmethod
    def forward(ctx: Any, g: torch.Tensor, idx: torch.Tensor, windows: Any, select: bool) -> torch.Tensor:
        ctx.windows, ctx.select = windows, select
        ctx.save_for_backward(idx, g) if ctx.needs_input_grad[0] else ctx.save_for_backward(idx)
        return windows.select(g, idx) if select else windows.route(g, idx)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None, None]:
        idx = ctx.saved_tensors[0]
        vjp = _MaxRoute.apply(grad, idx, ctx.windows, not ctx.select)
        return _anchor(vjp, _primal(ctx)), None, None, None


def max_pool(windows: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _MaxPool.apply(x, windows)


def max_backward(windows: Any, g: torch.Tensor, idx: torch.Tensor,
                 primal: torch.Tensor | None = None) -> torch.Tensor:
    return _anchor(_MaxRoute.apply(g, idx, windows, False), primal)


def max_select(windows: Any, gg: torch.Tensor, idx: torch.Tensor,
               primal: torch.Tensor | None = None) -> torch.Tensor:
    return _anchor(_MaxRoute.apply(gg, idx, windows, True), primal)
