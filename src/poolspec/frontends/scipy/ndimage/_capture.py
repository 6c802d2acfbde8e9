"""scipy.ndimage's functions inside ``torch.compile(fullgraph=True)`` and ``torch.export``: a call on a tensor
being captured enters the graph as one node, ``poolspec::scipy_ndimage``, whose implementation is the eager
function (its host-side plans never traced), with its gradient the node of the function's explicit backward.

Imported only while torch captures a call (torch is then loaded). The nodes: the function, ``(x, others, spec)``;
its input gradient ``_backward``, ``(grad_output, x, others, spec)``; and ``_tangent``, ``(t, x, others, spec)``,
the function's derivative w.r.t. x applied to ``t`` (the backward's derivative w.r.t. its cotangent). Each one's
VJP is another node, so the input gradient has every order. ``others``: the array arguments after the input
(coordinates, a tensor shift, matrix or offset), which carry no gradient through a node.

>>> decode(*encode("uniform_filter1d", {"size": 3, "output": "float32"}))
('uniform_filter1d', {'size': 3, 'output': dtype('float32')})
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import torch

# functions whose derivative w.r.t. the input is the function itself with cval = 0 (linear in the input)
_MAXMIN = ("maximum_filter", "maximum_filter1d", "minimum_filter", "minimum_filter1d")


def encode(name: str, options: dict[str, Any]) -> tuple[str, list[Any]]:
    """The function's name and options (Python literals; ``output`` a dtype) as the node's ``spec`` and ``sizes``
    (``autodiff.torch_spec``: ints travel as SymInts, Dynamo making a recompiled call's ints symbolic)."""
    from ....autodiff.torch_spec import encode as spec_of

    out = options.get("output")
    if out is not None and not isinstance(out, str):
        out = str(out).removeprefix("torch.") if isinstance(out, torch.dtype) else np.dtype(out).name
    return spec_of({"function": name, **options, "output": out}, "scipy")


def decode(spec: str, sizes: list[Any]) -> tuple[str, dict[str, Any]]:
    from ....autodiff.torch_spec import arguments

    options = dict(arguments(spec, sizes))
    name = options.pop("function")
    if options.get("output") is not None:
        options["output"] = np.dtype(options["output"])
    return name, options


def _function(name: str) -> Any:
    """The public function ``name`` of the front-end (which imports this module only while capturing)."""
    return getattr(importlib.import_module(__package__), name)


def _call(name: str, *arrays: Any, **options: Any) -> Any:
    """The public function on the plain eager path (under eager fusion it would otherwise capture itself)."""
    from ....autodiff.torch_fused import PLAIN

    before = PLAIN[0]
    PLAIN[0] = True
    try:
        return _function(name)(*arrays, **options)
    finally:
        PLAIN[0] = before


def _named(options: dict[str, Any], others: list[torch.Tensor]) -> dict[str, Any]:
    """The array arguments after the input by name (their names travel in the spec, taken out of options); those
    the caller gave as NumPy arrays (a footprint, a matrix) back as NumPy arrays."""
    named: dict[str, Any] = dict(zip(options.pop("tensors", []), others))
    for k in options.pop("numpy", []):
        named[k] = named[k].numpy(force=True)
    return named


def _output_dtype(name: str, x: torch.Tensor, options: dict[str, Any]) -> torch.dtype:
    out = options.get("output")
    if out is None:
        out = np.float64 if name.startswith("spline_filter") else None
    if out is None:
        return x.dtype
    return getattr(torch, np.dtype(out).name)


def _output_shape(name: str, x: torch.Tensor, others: list[torch.Tensor], options: dict[str, Any]) -> tuple[Any, ...]:
    if name == "map_coordinates":
        return tuple(others[options.get("tensors", []).index("coordinates")].shape[1:])
    if name == "zoom":
        z = options["zoom"]
        zs = [float(z)] * x.ndim if np.ndim(z) == 0 else [float(v) for v in z]
        return tuple(int(round(int(n) * f)) for n, f in zip(x.shape, zs))
    if name == "affine_transform":
        shape = options.get("output_shape")
        return tuple(x.shape) if shape is None else tuple(int(n) for n in shape)
    if name == "rotate":  # the rotated bounding box: the eager function on a NumPy stand-in of one byte a cell
        proxy = np.zeros(tuple(int(n) for n in x.shape), np.uint8)
        kw = {k: v for k, v in options.items() if k not in ("tensors", "numpy")}
        return tuple(_call(name, proxy, **{**kw, "output": None, "order": 0, "prefilter": False}).shape)
    return tuple(x.shape)


def _dtype_of(t: torch.Tensor) -> Any:
    return np.dtype(str(t.dtype).removeprefix("torch."))


@torch.library.custom_op("poolspec::scipy_ndimage", mutates_args=())
def forward(x: torch.Tensor, others: list[torch.Tensor], spec: str, sizes: list[int]) -> torch.Tensor:
    from ....autodiff.torch_graph import fresh

    name, options = decode(spec, sizes)
    return fresh(_call(name, x, **_named(options, others), **options).contiguous(), x, *others)


@forward.register_fake
def _(x: torch.Tensor, others: list[torch.Tensor], spec: str, sizes: list[int]) -> torch.Tensor:
    name, options = decode(spec, sizes)
    return x.new_empty(_output_shape(name, x, others, options), dtype=_output_dtype(name, x, options))


@torch.library.custom_op("poolspec::scipy_ndimage_backward", mutates_args=())
def backward(grad_output: torch.Tensor, x: torch.Tensor, others: list[torch.Tensor], spec: str,
             sizes: list[int]) -> torch.Tensor:
    from ....autodiff.torch_graph import fresh

    name, options = decode(spec, sizes)
    options.pop("output", None)
    out = _call(f"{name}_backward", grad_output, x, **_named(options, others), **options)
    return fresh(out.contiguous(), grad_output, x, *others)


@backward.register_fake
def _(grad_output: torch.Tensor, x: torch.Tensor, others: list[torch.Tensor], spec: str,
      sizes: list[int]) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("poolspec::scipy_ndimage_tangent", mutates_args=())
def tangent(t: torch.Tensor, x: torch.Tensor, others: list[torch.Tensor], spec: str, sizes: list[int]) -> torch.Tensor:
    """The function's derivative w.r.t. x at x, applied to t: a max/min filter reads t at the taps it selects
    from x (forward-mode autodiff of its where-chain); the other functions are linear in x, so it is the
    function of t with cval 0."""
    from ....autodiff.torch_graph import fresh

    name, options = decode(spec, sizes)
    options.pop("output", None)
    named = _named(options, others)
    if name in _MAXMIN:
        import torch.func

        out = torch.func.jvp(lambda v: _call(name, v, **named, **options), (x,), (t,))[1]
    else:
        if "cval" in options or not name.startswith(("uniform", "spline")):
            options["cval"] = 0.0
        out = _call(name, t, **named, **options)
    return fresh(out.contiguous(), t, x, *others)


@tangent.register_fake
def _(t: torch.Tensor, x: torch.Tensor, others: list[torch.Tensor], spec: str, sizes: list[int]) -> torch.Tensor:
    name, options = decode(spec, sizes)
    return t.new_empty(_output_shape(name, x, others, options))


def _save(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    *tensors, others, ctx.spec, ctx.sizes = inputs
    # the (absent) gradients of the others and of the sizes in the structure autograd expects: a list per tensor
    # list; a SymInt list is one leaf unless it is empty
    ctx.none, ctx.no_sizes = [None] * len(others), (None if ctx.sizes else [])
    ctx.save_for_backward(*tensors, *others)


def _forward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, *others = ctx.saved_tensors
    return backward(grad, x, others, ctx.spec, ctx.sizes), ctx.none, None, ctx.no_sizes


def _backward_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    """The backward is linear in its cotangent (its derivative: the tangent node) and piecewise constant in x."""
    _, x, *others = ctx.saved_tensors
    return tangent(grad, x, others, ctx.spec, ctx.sizes), None, ctx.none, None, ctx.no_sizes


def _tangent_vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    _, x, *others = ctx.saved_tensors
    return backward(grad, x, others, ctx.spec, ctx.sizes), None, ctx.none, None, ctx.no_sizes


torch.library.register_autograd("poolspec::scipy_ndimage", _forward_vjp, setup_context=_save)
torch.library.register_autograd("poolspec::scipy_ndimage_backward", _backward_vjp, setup_context=_save)
torch.library.register_autograd("poolspec::scipy_ndimage_tangent", _tangent_vjp, setup_context=_save)


def call(name: str, x: Any, others: dict[str, Any], options: dict[str, Any]) -> Any:
    """``name(x, **others, **options)`` as a node of the graph being captured (x a torch tensor; ``others``: the
    array arguments after it)."""
    if any(isinstance(o, torch.Tensor) and o.requires_grad for o in others.values()):
        raise TypeError(f"{name}: under torch.compile and torch.export only the input carries a gradient; the "
                        "coordinates', shift's, matrix's or offset's gradient is given by eager autograd and "
                        "torch.func")
    if not x.dtype.is_floating_point and x.requires_grad:
        raise TypeError(f"{name}: input must be floating to require grad")
    arrays = {k: v for k, v in options.items() if isinstance(v, np.ndarray)}  # a footprint, a NumPy matrix
    options = {k: v for k, v in options.items() if k not in arrays}
    tensors = [o if isinstance(o, torch.Tensor) else torch.as_tensor(o) for o in (*others.values(), *arrays.values())]
    return forward(x, tensors, *encode(name, {**options, "tensors": [*others, *arrays], "numpy": list(arrays)}))

