"""torch bindings: each op's backward is another Function whose backward is the op again (linear ops), so
``create_graph=True`` works to any order and never reaches an atomic scatter."""

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
