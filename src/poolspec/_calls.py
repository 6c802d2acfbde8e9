"""What every public op does first: find the namespace, resolve the card, check a cotangent."""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Mapping
from typing import Any

from ._compat import device, dtype_name, extremes, is_torch_array, namespace, readable
from .spec import Resolved, card
from .spec._rules import layout_order


def _typed(value: Any) -> Any:
    """``value`` with its type beside it, nested: True, 1 and 1.0 are equal keys to a dict but not equal
    arguments to a card (which rejects a float kernel size)."""
    if isinstance(value, tuple):
        return tuple, tuple(_typed(v) for v in value)
    return type(value), value


def _key(arguments: dict[str, Any]) -> tuple[Any, ...]:
    """The arguments as a cache key: each value's type beside it (:func:`_typed`), tuples typed entry by entry."""
    return tuple((k, type(v), _typed(v) if isinstance(v, tuple) else v) for k, v in arguments.items())


# The card's checks and shape inference depend only on (op, array type, dtype, shape, arguments): done once per
# such key, it leaves the per-call path (a bounded cache; unhashable arguments such as lists skip it).
_RESOLVED: dict[Any, tuple[Any, str, Resolved]] = {}
_RESOLVED_MAX = 4096


def resolve(op: str, x: Any, ports: Mapping[str, Any] | None = None, **arguments: Any) -> tuple[Any, str, Resolved]:
    """The namespace, x's dtype name and the card's resolution of a call on ``x`` and the op's other array
    ``ports`` (by name; None where not given): one namespace and device for all, each port that the card
    says is ``like`` x of x's dtype, the ports' shapes passed to the shape rule. Cached per (array types,
    dtypes, shapes, devices, arguments)."""
    try:
        key: Any = (op, type(x), x.dtype, tuple(x.shape), _key(arguments))
        if ports:
            key += (str(device(x)), tuple((k, type(a), a.dtype, tuple(a.shape), str(device(a)))
                                          for k, a in ports.items() if a is not None))
        hit = _RESOLVED.get(key)
    except (TypeError, AttributeError):  # not an array, an unhashable argument or a symbolic shape
        key = hit = None
    if hit is not None:
        return hit
    given = {k: v for k, v in (ports or {}).items() if v is not None}
    c = _card_of(op)
    xp = namespace(x, *given.values(), names=("x", *given), op=op)
    dtype = dtype_name(xp, x.dtype)
    shapes = {a.name: tuple(given[a.name].shape) if a.name in given else None for a in c.arguments if a.like}
    out = xp, dtype, c.resolve(tuple(x.shape), dtype, **shapes, **arguments)
    for a in c.arguments:
        if a.like and a.name in given:
            check_like(op, xp, a.name, given[a.name], a.like, x)
    if key is not None and len(_RESOLVED) < _RESOLVED_MAX:
        _RESOLVED[key] = out
    return out


def _card_of(op: str) -> Any:
    """The card of a public function: its own, or its forward's (``max_pool2d_backward``: the longest card name
    the function's name starts with, as ``roi_align_boxes_backward``)."""
    from .spec import cards

    name = op.removesuffix("_backward")
    names = [c.name for c in cards() if name == c.name or name.startswith(c.name + "_")]
    return card(max(names, key=len) if names else name)


def check_like(op: str, xp: Any, name: str, a: Any, like_name: str, like: Any) -> None:
    """``a`` (port ``name``) has the dtype and device of ``like`` (port ``like_name``)."""
    got, want = dtype_name(xp, a.dtype), dtype_name(xp, like.dtype)
    if got != want:
        raise TypeError(f"{op}: {name}.dtype={got!r}: must equal {like_name}.dtype {want!r}")
    # a JAX tracer has no device (None): only concrete devices are compared
    if None not in (device(a), device(like)) and device(a) != device(like):
        raise ValueError(f"{op}: {name} is on {device(a)} but {like_name} is on {device(like)}")


def check_shape(op: str, name: str, a: Any, want: tuple[Any, ...], what: str = "the output shape") -> None:
    """``a`` (port ``name``) has shape ``want`` (``what`` says whose)."""
    if tuple(a.shape) != tuple(want):
        raise ValueError(f"{op}: {name}.shape={tuple(a.shape)}: must equal {what} {tuple(want)}")


def check_indices(op: str, indices: Any, x: Any, shape: tuple[Any, ...], what: str = "the output shape",
                  unsigned: bool = False) -> Any:
    """Winners ``indices`` of x's namespace: an integer dtype (``unsigned`` ones too) and shape ``shape``.
    Returns the namespace."""
    xp = namespace(indices, x, names=("indices", "x"), op=op)
    name = dtype_name(xp, indices.dtype)
    if not name.startswith(("int", "uint") if unsigned else "int"):
        raise TypeError(f"{op}: indices.dtype={name!r}: must be an integer dtype"
                        + (" (int64 from max_pool)" if unsigned else ""))
    check_shape(op, "indices", indices, shape, what)
    return xp


def check_index_range(op: str, xp: Any, indices: Any, cells: int) -> None:
    """Flat ``indices`` into planes of ``cells`` cells lie in [0, cells), where their values can be read (a
    trace, a lazy graph or a torch.func wrapper is not inspected)."""
    if not readable(indices) or math.prod(indices.shape) == 0:
        return
    found = extremes(xp, indices)
    if found is not None and (found[0] < 0 or found[1] >= cells):
        raise ValueError(f"{op}: indices must lie in [0, {cells}) (flat positions in each input plane)")


def check_cotangent(op: str, xp: Any, g: Any, x: Any, shape: tuple[Any, ...], name: str = "grad_output") -> None:
    """A cotangent ``g`` of the output: the output's shape, x's dtype and device."""
    check_shape(op, name, g, shape)
    check_like(op, xp, name, g, "x", x)


def resolve_backward(op: str, grad_output: Any, x: Any, ports: Mapping[str, Any] | None = None,
                     **arguments: Any) -> tuple[Any, str, Resolved]:
    """Resolve the forward's arguments and check that ``grad_output`` is a cotangent of its output."""
    namespace(grad_output, x, names=("grad_output", "x"), op=f"{op}_backward")
    xp, dtype, r = resolve(op, x, ports, **arguments)
    if not dtype.startswith(("float", "bfloat")):
        raise TypeError(f"{op}_backward: x.dtype={dtype!r}: gradients need a floating dtype")
    check_cotangent(f"{op}_backward", xp, grad_output, x, tuple(r.output_shape))
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
    """The op whose memory-format rule the result of ``op`` follows: its own, or the one its card's rule names
    (interpolate's area mode is adaptive average pooling, lp_pool with p = +-inf is max pooling, in torch as
    here)."""
    return r.layout_as or op


# Set inside a layout="channels_last" call (per thread): its caller asked for (N, *spatial, C) arrays, not for
# torch's memory format rule, so the result is returned as the kernels laid it out (a copy to torch's format
# would be a layout copy). A thread-local, not a ContextVar: torch.compile traces the one, not the other.
class _LaidOut(threading.local):
    on = False  # a class default: a missing per-thread attribute would cost a caught AttributeError per call


_LAID_OUT = _LaidOut()


def keep_layout(op: str, x: Any, result: Any) -> Any:
    """``result`` (an array or a tuple of arrays) in torch's memory format for a 4-D or 5-D tensor ``x``:
    channels_last where torch's own op keeps a channels_last input's layout (``card(op).channels_last``),
    contiguous otherwise, as torch's fresh outputs are. Not inside a ``layout="channels_last"`` call."""
    if x.ndim not in (4, 5) or not is_torch_array(x) or _LAID_OUT.on:
        return result
    import torch  # already imported: x is a tensor

    if torch._C._functorch.is_functorch_wrapped_tensor(x):
        return result  # inside torch.func (vmap, grad): memory formats cannot be queried there, and mean nothing
    fmt = torch.contiguous_format
    cl = torch.channels_last if x.ndim == 4 else torch.channels_last_3d
    # a contiguous tensor that is not also channels-last contiguous (an ambiguous size-1 layout) answers at once
    if not (x.is_contiguous() and not x.is_contiguous(memory_format=cl)) and (
            x.ndim in _channels_last_ops(op) and x.layout == torch.strided
            and _channels_last_strides(tuple(x.shape), x.stride())):
        fmt = cl
    if isinstance(result, tuple):
        return tuple(r.contiguous(memory_format=fmt) for r in result)
    return result.contiguous(memory_format=fmt)


@functools.cache
def _channels_last_ops(op: str) -> tuple[int, ...]:
    return tuple(card(op).channels_last)


LAYOUTS = ("channels_first", "channels_last")


def check_layout(op: str, layout: Any) -> bool:
    """Whether ``layout`` asks for channels last; a TypeError or ValueError naming it otherwise."""
    if not isinstance(layout, str):
        raise TypeError(f"{op}: layout={layout!r}: must be a str, 'channels_first' or 'channels_last'")
    if layout not in LAYOUTS:
        raise ValueError(f"{op}: layout={layout!r}: must be 'channels_first' (torch's (N, C, *spatial)) or "
                         "'channels_last' ((N, *spatial, C), as TensorFlow, Keras, Flax and JAX images)")
    return layout == "channels_last"


def channels_last(fn: Any, args: dict[str, Any], spatial: int | None, arrays: tuple[str, ...],
                  outputs: tuple[int, ...] | None = None) -> Any:
    """``fn(**args)`` for channels-last arrays: the ``arrays`` named are passed as channels-first views (a
    permutation of axes: no data is copied), and the results (those at ``outputs`` of a tuple) are turned
    back. The kernels work along whichever axes the views give them."""
    x = args["x"]
    n = spatial if spatial is not None else x.ndim - 2
    if x.ndim not in (n + 1, n + 2) or (spatial is None and x.ndim < 3):
        return fn(**{**args, "layout": "channels_first"})  # the op's own rank error
    first, back = layout_order(x.ndim, n)
    args["layout"] = "channels_first"  # args is the caller's locals(), a snapshot: free to change
    for name in arrays:
        if args[name] is not None:
            args[name] = namespace(args[name]).permute_dims(args[name], first)
    before = _LAID_OUT.on
    _LAID_OUT.on = True
    try:
        out = fn(**args)
    finally:
        _LAID_OUT.on = before
    if isinstance(out, tuple):
        return tuple(namespace(o).permute_dims(o, back) if outputs is None or i in outputs else o
                     for i, o in enumerate(out))
    return namespace(out).permute_dims(out, back)
