"""JAX bindings. A linear op with gathers becomes a pair of ``custom_vjp`` functions, each the other's VJP,
so grad, grad of grad (any order), jit and vmap work and gathers never transpose into scatter-adds.
Slice-only ops keep native autodiff (forward mode too). Either way the op is one jitted program."""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

import jax

from ..kernels.linear import SeparableLinear


@lru_cache(maxsize=1024)
def _pair(op: SeparableLinear) -> tuple[Any, Any]:
    if not op.custom_vjp:
        return jax.jit(op.apply), jax.jit(op.transpose)

    @jax.custom_vjp
    def forward(x: Any) -> Any:
        return op.apply(x)

    @jax.custom_vjp
    def transpose(g: Any) -> Any:
        return op.transpose(g)

    forward.defvjp(lambda x: (forward(x), None), lambda _, g: (transpose(g),))
    transpose.defvjp(lambda g: (transpose(g), None), lambda _, gg: (forward(gg),))
    return jax.jit(forward), jax.jit(transpose)


def linear(op: SeparableLinear, x: Any, transpose: bool) -> Any:
    forward, backward = _pair(op)
    return backward(x) if transpose else forward(x)


@lru_cache(maxsize=1024)
def _max_functions(windows: Any) -> tuple[Any, Any, Any, Any]:
    @jax.custom_vjp
    def backward(g: Any, idx: Any) -> Any:
        return windows.route(g, idx)

    @jax.custom_vjp
    def select(gg: Any, idx: Any) -> Any:
        return windows.select(gg, idx)

    backward.defvjp(lambda g, idx: (backward(g, idx), idx), lambda idx, gg: (select(gg, idx), None))
    select.defvjp(lambda gg, idx: (select(gg, idx), idx), lambda idx, g: (backward(g, idx), None))

    @jax.custom_vjp
    def forward(x: Any) -> tuple[Any, Any]:
        return windows.forward(x)

    def forward_fwd(x: Any) -> tuple[tuple[Any, Any], Any]:
        # call the custom_vjp function itself, not the kernel: a higher-order derivative differentiates this
        # rule, and native autodiff through a ragged window's take would scatter-add
        values, idx = forward(x)
        return (values, idx), idx

    forward.defvjp(forward_fwd, lambda idx, cts: (backward(cts[0], idx),))

    @jax.custom_vjp
    def values(x: Any) -> Any:
        # the maxima alone: the winners are found only when a derivative is asked for
        return windows.forward(x, with_index=False)[0]

    def values_fwd(x: Any) -> tuple[Any, Any]:
        v, idx = forward(x)
        return v, idx

    values.defvjp(values_fwd, lambda idx, ct: (backward(ct, idx),))
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
