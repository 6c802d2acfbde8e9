"""torch bindings: each op's backward is another Function whose backward is the op again (linear ops) or
the gather at the winners (max ops), so ``create_graph=True`` works to any order and never reaches an
atomic scatter."""

from __future__ import annotations

from typing import Any

import torch

from ..kernels.linear import SeparableLinear


def _run(op: SeparableLinear, x: Any, transpose: bool) -> Any:
    return op.transpose(x) if transpose else op.apply(x)


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, op: SeparableLinear, transpose: bool) -> torch.Tensor:
        ctx.op, ctx.transpose = op, transpose
        return _run(op, x, transpose)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None]:
        return _Linear.apply(grad, ctx.op, not ctx.transpose), None, None

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor, _op: Any, _transpose: Any) -> torch.Tensor:
        return _run(ctx.op, tangent, ctx.transpose)


def linear(op: SeparableLinear, x: torch.Tensor, transpose: bool) -> torch.Tensor:
    return _Linear.apply(x, op, transpose)


class _MaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, windows: Any) -> tuple[torch.Tensor, torch.Tensor]:
        values, idx = windows.forward(x)
        ctx.windows = windows
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor, _grad_idx: Any) -> tuple[Any, None]:
        (idx,) = ctx.saved_tensors
        return _MaxRoute.apply(grad, idx, ctx.windows, False), None


class _MaxRoute(torch.autograd.Function):
    """Linear in its first argument: ``select=False`` routes g to the winners (the max pool's VJP),
    ``select=True`` gathers at the winners; each is the other's VJP."""

    @staticmethod
    def forward(ctx: Any, g: torch.Tensor, idx: torch.Tensor, windows: Any, select: bool) -> torch.Tensor:
        ctx.windows, ctx.select = windows, select
        ctx.save_for_backward(idx)
        return windows.select(g, idx) if select else windows.route(g, idx)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None, None]:
        (idx,) = ctx.saved_tensors
        return _MaxRoute.apply(grad, idx, ctx.windows, not ctx.select), None, None, None


def max_pool(windows: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _MaxPool.apply(x, windows)


def max_backward(windows: Any, g: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return _MaxRoute.apply(g, idx, windows, False)


def max_select(windows: Any, gg: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return _MaxRoute.apply(gg, idx, windows, True)
