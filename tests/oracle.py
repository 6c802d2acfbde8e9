"""torch 2.13 CPU as the oracle: reference outputs, gradients and second-order values from torch's own ops.

Nothing here calls poolspec.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                 "float64": torch.float64, "int64": torch.int64}


def torch_fn(op: str, args: dict[str, Any]):
    """The torch.nn.functional call equivalent to poolspec's ``op(x, **args)``."""
    if op == "avg_pool1d" and args.get("divisor_override") is not None:
        # torch's avg_pool1d has no divisor_override: the same pooling as a 2-d one over a unit axis.
        a = dict(args)
        k, s, p = (a.pop(key) for key in ("kernel_size", "stride", "padding"))
        def unit(v, first):
            return None if v is None else (first, v if isinstance(v, int) else v[0])

        return lambda x: F.avg_pool2d(x.unsqueeze(-2), unit(k, 1), unit(s, 1), unit(p, 0), **a).squeeze(-2)
    if op == "avg_pool1d":
        args = {k: v for k, v in args.items() if k != "divisor_override"}
    if op == "lp_pool1d" and isinstance(args.get("kernel_size"), tuple) and len(args["kernel_size"]) == 1:
        # deviation lp_pool1d_tuple_kernel: torch's wrapper multiplies by the tuple and raises; (k,) means k
        args = dict(args, kernel_size=args["kernel_size"][0])
    fn = getattr(F, op)
    return lambda x: fn(x, **args)


def reference(op: str, x: np.ndarray, dtype: str, args: dict[str, Any],
              g: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """torch's output and, for a cotangent ``g``, its gradient.

    Half precision is computed by torch in float32 from the half values and rounded once: the rule
    poolspec documents (torch's own CPU half kernels agree in the forward; its avg_pool backward
    accumulates in half, which poolspec deliberately does not).
    """
    fn = torch_fn(op, args)
    tdt = _TORCH_DTYPES[dtype]
    compute = torch.float32 if dtype in ("float16", "bfloat16") else tdt
    xr = torch.from_numpy(np.array(x)).to(tdt).to(compute)
    if g is not None:
        xr.requires_grad_(True)
    out = fn(xr)
    result = {"output": out}
    if g is not None and out.numel() == 0:
        result["grad_input"] = torch.zeros_like(xr)  # torch's backward refuses an empty output; d/dx is 0
    elif g is not None:
        (result["grad_input"],) = torch.autograd.grad(out, xr, torch.from_numpy(np.array(g)).to(tdt).to(compute))
    return {k: _np(v.to(tdt)) for k, v in result.items()}


def double_backward(op: str, x: np.ndarray, args: dict[str, Any], g: np.ndarray, v: np.ndarray) -> np.ndarray:
    """d/d(grad_output) of <grad_input, v> through torch's own double backward, float64."""
    fn = torch_fn(op, args)
    xr = torch.from_numpy(np.array(x)).requires_grad_(True)
    gr = torch.from_numpy(np.array(g)).requires_grad_(True)
    (grad,) = torch.autograd.grad(fn(xr), xr, gr, create_graph=True)
    (gg,) = torch.autograd.grad(grad, gr, torch.from_numpy(np.array(v)))
    return gg.detach().numpy()


def raises(op: str, x_shape: tuple[int, ...], dtype: str, args: dict[str, Any]) -> bool:
    """Whether torch refuses the call."""
    xt = torch.zeros(x_shape, dtype=_TORCH_DTYPES.get(dtype, torch.float64))
    try:
        torch_fn(op, args)(xt)
    except Exception:
        return True
    return False


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def max_reference(op: str, x: np.ndarray, dtype: str, args: dict[str, Any],
                  g: np.ndarray | None) -> dict[str, np.ndarray]:
    """torch's values, int64 indices and (floating dtypes, cotangent g) gradient of a max op."""
    fn = getattr(F, op)
    tdt = _TORCH_DTYPES.get(dtype) or getattr(torch, dtype)
    compute = torch.float32 if dtype in ("float16", "bfloat16") else tdt
    xr = torch.from_numpy(np.array(x)).to(tdt).to(compute)
    if g is not None:
        xr.requires_grad_(True)
    values, indices = fn(xr, **{**args, "return_indices": True})
    result = {"output": _np(values.to(tdt)), "indices": indices.numpy()}
    if g is not None and values.numel() == 0:
        result["grad_input"] = _np(torch.zeros_like(xr).to(tdt))  # torch's backward refuses an empty output
    elif g is not None:
        (grad,) = torch.autograd.grad(values, xr, torch.from_numpy(np.array(g)).to(tdt).to(compute))
        result["grad_input"] = _np(grad.to(tdt))
    return result
