"""What every public op does first: find the namespace, resolve the card, check a cotangent."""

from __future__ import annotations

import math
from typing import Any

from .._compat import device, dtype_name, is_torch_array, namespace
from ..spec import Resolved, card


def _typed(value: Any) -> Any:
    """``value`` with its type beside it, nested: True, 1 and 1.0 are equal keys to a dict but not equal
    arguments to a card (which rejects a float kernel size)."""
    if isinstance(value, tuple):
        return tuple, tuple(_typed(v) for v in value)
    return type(value), value


# The card's checks and shape inference depend only on (op, array type, dtype, shape, arguments): done once per
# such key, it leaves the per-call path (a bounded cache; unhashable arguments such as lists skip it).
_RESOLVED: dict[Any, tuple[Any, str, Resolved]] = {}
_RESOLVED_MAX = 4096


def resolve(op: str, x: Any, **arguments: Any) -> tuple[Any, str, Resolved]:
    try:
        key: Any = (op, type(x), x.dtype, tuple(x.shape), tuple((k, _typed(v)) for k, v in arguments.items()))
        hit = _RESOLVED.get(key)
    except (TypeError, AttributeError):  # not an array, an unhashable argument or a symbolic shape
        key = hit = None
    if hit is not None:
        return hit
    xp = namespace(x, op=op)
    dtype = dtype_name(xp, x.dtype)
    out = xp, dtype, card(op).resolve(tuple(x.shape), dtype, **arguments)
    if key is not None and len(_RESOLVED) < _RESOLVED_MAX:
        _RESOLVED[key] = out
    return out


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


def _channels_last_strides(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """c10's is_channels_last_strides_2d/3d, the test behind torch's suggest_memory_format(): C innermost, then
    the spatial axes from last to first, then N; ambiguous size-1 layouts count as contiguous."""
    order = (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)
    if strides[1] == 0:
        return False
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return False
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def layout_op(op: str, r: Resolved) -> str:
    """The op whose memory-format rule the result of ``op`` follows: interpolate's area mode is adaptive
    average pooling, lp_pool with p = +-inf is max pooling, in torch as here."""
    if op == "interpolate" and r.params["mode"] == "area":
        return f"adaptive_avg_pool{len(r.params['size'])}d"
    if op.startswith("lp_pool") and math.isinf(r.params["norm_type"]):
        return f"max_pool{op[-2]}d"
    return op


def keep_layout(op: str, x: Any, result: Any) -> Any:
    """``result`` (an array or a tuple of arrays) in torch's memory format for a 4-D or 5-D tensor ``x``:
    channels_last where torch's own op keeps a channels_last input's layout (``card(op).channels_last``),
    contiguous otherwise, as torch's fresh outputs are."""
    if x.ndim not in (4, 5) or not is_torch_array(x):
        return result
    import torch  # already imported: x is a tensor

    fmt = torch.contiguous_format
    if (x.ndim in card(op).channels_last and x.layout == torch.strided
            and _channels_last_strides(tuple(x.shape), x.stride())):
        fmt = torch.channels_last if x.ndim == 4 else torch.channels_last_3d
    if isinstance(result, tuple):
        return tuple(r.contiguous(memory_format=fmt) for r in result)
    return result.contiguous(memory_format=fmt)
