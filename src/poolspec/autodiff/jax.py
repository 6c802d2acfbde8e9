"""JAX bindings: every gathering kernel is a JAX primitive with its own rules, as ``lax.reduce_window`` is.

- ``poolspec_linear`` (a separable linear op or its transpose) is linear: its JVP is the op on the tangent
  and its transpose is the transposed op (a gather over the transposed plan), never a scatter-add.
- ``poolspec_route`` (the max family's routing to the winners, or its transpose, the gather at the winners)
  is linear in its first operand, for fixed integer winners; the same two rules.
- a max pool is a ``custom_jvp`` whose tangent is the gather of the input's tangent at the winners; reverse
  mode transposes that into the route.

Both primitives batch by moving the mapped axis to the front, where the kernels see one more leading axis,
and lower through the kernels themselves (``mlir.lower_fun``). So every transform works - jit, grad to any
order, jvp, jacfwd, jacrev, hessian, linearize, vmap, scan, checkpoint - and no derivative's program holds a
scatter. Slice-only ops keep native autodiff. Every op runs as one cached jitted program.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

import jax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from ..kernels.linear import SeparableLinear


def _spatial_out(shape: tuple[int, ...], n: int, spatial: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(shape[: len(shape) - n]) + tuple(spatial)


def _shaped(x: Any, shape: tuple[int, ...]) -> Any:
    return jax.core.ShapedArray(shape, x.dtype)


def _front(x: Any, dim: Any) -> Any:
    return x if dim is None or dim == 0 else jax.numpy.moveaxis(x, dim, 0)


# ------------------------------------------------------------------------------------------ linear ops

def _linear_impl(x: Any, *, op: SeparableLinear, transpose: bool) -> Any:
    return op.transpose(x) if transpose else op.apply(x)


_linear_p = Primitive("poolspec_linear")
_linear_p.def_impl(partial(jax.jit, static_argnames=("op", "transpose"))(_linear_impl))
_linear_p.def_abstract_eval(lambda x, *, op, transpose: _shaped(
    x, _spatial_out(x.shape, len(op.in_spatial), op.in_spatial if transpose else op.out_spatial)))
mlir.register_lowering(_linear_p, mlir.lower_fun(_linear_impl, multiple_results=False))
ad.deflinear2(_linear_p, lambda ct, x, *, op, transpose: [_linear_p.bind(ct, op=op, transpose=not transpose)])
batching.primitive_batchers[_linear_p] = lambda args, dims, *, op, transpose: (
    _linear_p.bind(_front(args[0], dims[0]), op=op, transpose=transpose), 0)


@lru_cache(maxsize=1024)
def _linear_program(op: SeparableLinear, transpose: bool) -> Any:
    if not op.custom_vjp:
        return jax.jit(op.transpose if transpose else op.apply)
    return jax.jit(lambda x: _linear_p.bind(x, op=op, transpose=transpose))


def linear(op: SeparableLinear, x: Any, transpose: bool) -> Any:
    return _linear_program(op, transpose)(x)


# ------------------------------------------------------------------------------------------ the max family

def _route_impl(g: Any, idx: Any, *, windows: Any, select: bool) -> Any:
    return windows.select(g, idx) if select else windows.route(g, idx)


def _route_abstract(g: Any, idx: Any, *, windows: Any, select: bool) -> Any:
    n = len(windows.in_spatial)
    return _shaped(g, _spatial_out(g.shape, n, windows.selected if select else windows.routed))


def _route_jvp(primals: Any, tangents: Any, *, windows: Any, select: bool) -> tuple[Any, Any]:
    g, idx = primals
    out = _route_p.bind(g, idx, windows=windows, select=select)
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)  # type: ignore[attr-defined]  # not in jax's stubs
    return out, _route_p.bind(tangents[0], idx, windows=windows, select=select)


def _route_transpose(ct: Any, g: Any, idx: Any, *, windows: Any, select: bool) -> list[Any]:
    assert ad.is_undefined_primal(g) and not ad.is_undefined_primal(idx)
    if type(ct) is ad.Zero:
        return [ad.Zero(g.aval), None]
    return [_route_p.bind(ct, idx, windows=windows, select=not select), None]


def _route_batch(args: Any, dims: Any, *, windows: Any, select: bool) -> tuple[Any, int]:
    g, idx = args
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    g, idx = (jax.numpy.broadcast_to(a, (size,) + a.shape) if d is None else _front(a, d)
              for a, d in zip(args, dims))
    return _route_p.bind(g, idx, windows=windows, select=select), 0


_route_p = Primitive("poolspec_route")
_route_p.def_impl(partial(jax.jit, static_argnames=("windows", "select"))(_route_impl))
_route_p.def_abstract_eval(_route_abstract)
mlir.register_lowering(_route_p, mlir.lower_fun(_route_impl, multiple_results=False))
ad.primitive_jvps[_route_p] = _route_jvp
ad.primitive_transposes[_route_p] = _route_transpose
batching.primitive_batchers[_route_p] = _route_batch


@lru_cache(maxsize=1024)
def _max_functions(windows: Any) -> tuple[Any, Any, Any, Any]:
    def backward(g: Any, idx: Any) -> Any:
        return _route_p.bind(g, idx, windows=windows, select=False)

    def select(gg: Any, idx: Any) -> Any:
        return _route_p.bind(gg, idx, windows=windows, select=True)

    @jax.custom_jvp
    def forward(x: Any) -> tuple[Any, Any]:
        return windows.forward(x)

    @forward.defjvp
    def forward_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
        values, idx = forward(primals[0])
        return (values, idx), (select(tangents[0], idx), jax.numpy.zeros(idx.shape, jax.dtypes.float0))

    @jax.custom_jvp
    def values(x: Any) -> Any:
        # the maxima alone: the winners are found only when a derivative is asked for
        return windows.forward(x, with_index=False)[0]

    @values.defjvp
    def values_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
        v, idx = forward(primals[0])
        return v, select(tangents[0], idx)

    return jax.jit(forward), jax.jit(backward), jax.jit(select), jax.jit(values)


def max_pool(windows: Any, x: Any, with_index: bool = True) -> tuple[Any, Any]:
    functions = _max_functions(windows)
    return functions[0](x) if with_index else (functions[3](x), None)


def max_backward(windows: Any, g: Any, idx: Any) -> Any:
    return _max_functions(windows)[1](g, idx)


def max_select(windows: Any, gg: Any, idx: Any) -> Any:
    return _max_functions(windows)[2](gg, idx)


@lru_cache(maxsize=1024)
def compiled(fn: Any, static: tuple[Any, ...]) -> Any:
    return jax.jit(partial(fn, *static))
