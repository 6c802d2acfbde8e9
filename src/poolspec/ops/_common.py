"""What every public op does first: find the namespace, resolve the card, check a cotangent."""

from __future__ import annotations

from typing import Any

from .._compat import device, dtype_name, namespace
from ..spec import Resolved, card


def resolve(op: str, x: Any, **arguments: Any) -> tuple[Any, str, Resolved]:
    xp = namespace(x, op=op)
    dtype = dtype_name(xp, x.dtype)
    return xp, dtype, card(op).resolve(tuple(x.shape), dtype, **arguments)


def resolve_backward(op: str, grad_output: Any, x: Any, **arguments: Any) -> tuple[Any, str, Resolved]:
    """Resolve the forward's arguments and check that ``grad_output`` is a cotangent of its output."""
    namespace(grad_output, x, names=("grad_output", "x"), op=f"{op}_backward")
    xp, dtype, r = resolve(op, x, **arguments)
    if not dtype.startswith(("float", "bfloat")):
        raise TypeError(f"{op}_backward: x.dtype={dtype!r}: gradients need a floating dtype")
    if tuple(grad_output.shape) != tuple(r.output_shape):
        raise ValueError(f"{op}_backward: grad_output.shape={tuple(grad_output.shape)}: must equal the "
                         f"output shape {tuple(r.output_shape)}")
    g_dtype = dtype_name(xp, grad_output.dtype)
    if g_dtype != dtype:
        raise TypeError(f"{op}_backward: grad_output.dtype={g_dtype!r}: must equal x.dtype {dtype!r}")
    # a JAX tracer has no device (None): only concrete devices are compared
    if None not in (device(grad_output), device(x)) and device(grad_output) != device(x):
        raise ValueError(f"{op}_backward: grad_output is on {device(grad_output)} but x is on {device(x)}")
    return xp, dtype, r
