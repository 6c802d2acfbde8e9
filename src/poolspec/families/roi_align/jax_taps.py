"""roi_align's reads on JAX as two primitives, each the other's transpose: ``select`` reads every bin's taps as
rows of channels of the image laid out (cells, C) and sums them weighted, ``route`` adds every bin's weighted
cotangent into the cells its taps read. Both are linear in the array and in the weights (bilinear), so their
JVPs and transposes are each other and a read of single taps (the weights' derivative, for the boxes'
gradient): every order of reverse and forward mode, vmap included, and no scatter in any program.

A row of channels per tap is one contiguous read (planes per channel read the image once per channel: 1.6 to
1.9 times slower on XLA's CPU). ``route`` sorts the taps by cell once (stably: each cell's reads keep
torchvision's order), orders the cells by how often they are read, and adds rank after rank (the j-th reads
of the cells read more than j times) a block of cells at a time: one pass over the reads, each cell's reads
summed one by one from +0 in torchvision's order, no scatter and no atomics (bit-identical run to run).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

# cells per block of a rank: large enough that a loop step's overhead is small beside its reads of rows
_BLOCK = 1024


def _per_term(terms: Any, count: float | None) -> Any:
    """Each term divided by ``count`` (torchvision's (g * w) / count), rounded as a division (see
    ``sampling._divide``: XLA would multiply by the reciprocal)."""
    if count is None:
        return terms
    return terms / jax.lax.optimization_barrier(jnp.full_like(terms, count))


def _select_impl(x: Any, cells: Any, w: Any, *, count: float | None) -> Any:
    """out[m] = sum over s of x[cells[m, s]] * w[m, s] (0 where cells[m, s] == P): x (P, C), cells and w (M, S)."""
    P = x.shape[0]
    inside = cells < P
    safe = jnp.where(inside, cells, jnp.zeros((), cells.dtype))
    reads = jnp.where(inside[..., None], x[safe], jnp.zeros((), x.dtype))
    return jnp.sum(_per_term(reads * w[..., None], count), axis=1)


def _route_impl(g: Any, cells: Any, w: Any, *, cells_out: int, count: float | None) -> Any:
    """out[p] = the sum over the taps (m, s) reading cell p of g[m] * w[m, s], in the taps' order: g (M, C)."""
    P, (M, S), C = cells_out, cells.shape, g.shape[-1]
    T = M * S
    if P == 0 or T == 0 or C == 0:
        return jnp.zeros((P, C), g.dtype)
    itype = cells.dtype
    keys, order = jax.lax.sort((jnp.reshape(cells, (T,)), jnp.arange(T, dtype=itype)), num_keys=1, is_stable=True)
    start = jnp.searchsorted(keys, jnp.arange(P + 1, dtype=itype), side="left").astype(itype)
    count_of = start[1:] - start[:-1]  # reads of each cell (the reads outside, == P, are past start[P])
    neg, by_count = jax.lax.sort((-count_of, jnp.arange(P, dtype=itype)), num_keys=1, is_stable=True)
    B = min(_BLOCK, P)
    blocks = -(-P // B)
    padded = blocks * B
    most = jnp.concatenate([-neg, jnp.zeros((padded - P + 1,), itype)])  # decreasing, 0 past the cells
    first = jnp.concatenate([start[:-1][by_count], jnp.zeros((padded - P,), itype)])
    wf = jnp.reshape(w, (T,))

    def step(carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        j, block, acc = carry
        at = block * B
        ok = jax.lax.dynamic_slice(most, (at,), (B,)) > j  # the block's cells read more than j times
        t = order[jnp.where(ok, jax.lax.dynamic_slice(first, (at,), (B,)) + j, jnp.zeros((), itype))]
        terms = _per_term(g[t // S] * wf[t][:, None], count)
        terms = jnp.where(ok[:, None], terms, jnp.zeros((), g.dtype))
        acc = jax.lax.dynamic_update_slice(acc, jax.lax.dynamic_slice(acc, (at, 0), (B, C)) + terms, (at, 0))
        nxt = block + 1
        more = (nxt < blocks) & (most[jnp.minimum(nxt * B, padded)] > j)  # rank j goes on to the next block
        return jnp.where(more, j, j + 1), jnp.where(more, nxt, 0), acc

    zero = jnp.zeros((), itype)
    acc = jax.lax.while_loop(lambda c: c[0] < most[0], step, (zero, zero, jnp.zeros((padded, C), g.dtype)))[2]
    back = jax.lax.sort((by_count, jnp.arange(P, dtype=itype)), num_keys=1)[1]  # cell p's place in by_count
    return acc[back]


def _reads(x: Any, cells: Any) -> Any:
    """Every tap's row of ``x`` (M, S, C) (0 outside), through ``select``: a read with unit weights."""
    M, S = cells.shape
    flat = jnp.reshape(cells, (M * S, 1))
    return jnp.reshape(_select_p.bind(x, flat, jnp.ones(flat.shape, x.dtype), count=None), (M, S, x.shape[-1]))


def _weights_cotangent(rows: Any, per_bin: Any, cells: Any, count: float | None) -> Any:
    """d/dw of <per_bin, select(rows, cells, w)>: per tap, the bin's row dotted with the row the tap reads."""
    return _per_term(jnp.sum(_reads(rows, cells) * per_bin[:, None, :], axis=-1), count)


def _bilinear_jvp(prim: Primitive, primals: Any, tangents: Any, **params: Any) -> tuple[Any, Any]:
    a, cells, w = primals
    da, _, dw = tangents
    out = prim.bind(a, cells, w, **params)
    parts = []
    if type(da) is not ad.Zero:
        parts.append(prim.bind(da, cells, w, **params))
    if type(dw) is not ad.Zero:
        parts.append(prim.bind(a, cells, dw, **params))
    if not parts:
        return out, ad.Zero.from_primal_value(out)  # type: ignore[attr-defined]  # not in jax's stubs
    return out, parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _select_transpose(ct: Any, x: Any, cells: Any, w: Any, *, count: float | None) -> list[Any]:
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return [ad.Zero(x.aval), None, None]
        return [_route_p.bind(ct, cells, w, cells_out=x.aval.shape[0], count=count), None, None]
    if type(ct) is ad.Zero:
        return [None, None, ad.Zero(w.aval)]
    return [None, None, _weights_cotangent(x, ct, cells, count)]


def _route_transpose(ct: Any, g: Any, cells: Any, w: Any, *, cells_out: int, count: float | None) -> list[Any]:
    if ad.is_undefined_primal(g):
        if type(ct) is ad.Zero:
            return [ad.Zero(g.aval), None, None]
        return [_select_p.bind(ct, cells, w, count=count), None, None]
    if type(ct) is ad.Zero:
        return [None, None, ad.Zero(w.aval)]
    return [None, None, _weights_cotangent(ct, g, cells, count)]


def _batch(prim: Primitive, args: Any, dims: Any, **params: Any) -> tuple[Any, int]:
    """A mapped array alone joins the channels ((..., C) -> (..., n * C)); mapped taps or weights map the
    primitive over the batch (``lax.map``: each element one bind)."""
    a, cells, w = args
    da, dc, dw = dims
    if dc is None and dw is None:
        a = jnp.moveaxis(a, da, -2)  # (L, n, C)
        L, n, C = a.shape
        out = prim.bind(jnp.reshape(a, (L, n * C)), cells, w, **params)
        return jnp.reshape(out, (out.shape[0], n, C)), 1
    size = next(v.shape[d] for v, d in zip(args, dims) if d is not None)
    a, cells, w = (jnp.broadcast_to(v, (size,) + v.shape) if d is None else jnp.moveaxis(v, d, 0)
                   for v, d in zip(args, dims))
    return jax.lax.map(lambda vs: prim.bind(*vs, **params), (a, cells, w)), 0


_select_p = Primitive("poolspec_roi_select")
_select_p.def_impl(partial(jax.jit, static_argnames=("count",))(_select_impl))
_select_p.def_abstract_eval(lambda x, cells, w, *, count: jax.core.ShapedArray((cells.shape[0], x.shape[-1]),
                                                                               x.dtype))
mlir.register_lowering(_select_p, mlir.lower_fun(_select_impl, multiple_results=False))
ad.primitive_jvps[_select_p] = partial(_bilinear_jvp, _select_p)
ad.primitive_transposes[_select_p] = _select_transpose
batching.primitive_batchers[_select_p] = partial(_batch, _select_p)

_route_p = Primitive("poolspec_roi_route")
_route_p.def_impl(partial(jax.jit, static_argnames=("cells_out", "count"))(_route_impl))
_route_p.def_abstract_eval(lambda g, cells, w, *, cells_out, count: jax.core.ShapedArray((cells_out, g.shape[-1]),
                                                                                        g.dtype))
mlir.register_lowering(_route_p, mlir.lower_fun(_route_impl, multiple_results=False))
ad.primitive_jvps[_route_p] = partial(_bilinear_jvp, _route_p)
ad.primitive_transposes[_route_p] = _route_transpose
batching.primitive_batchers[_route_p] = partial(_batch, _route_p)


def select(rows: Any, cells: Any, w: Any, count: float | None = None) -> Any:
    """Per bin m, the sum over its taps s of ``rows[cells[m, s]] * w[m, s]`` (each term over ``count``, if
    given): rows (P, C), cells and w (M, S), cells[m, s] == P reading 0; (M, C)."""
    return _select_p.bind(rows, cells, w, count=count)


def route(g: Any, cells: Any, w: Any, cells_out: int, count: float | None = None) -> Any:
    """The transpose of :func:`select`: per cell p < ``cells_out``, the sum over the taps reading it of
    ``g[m] * w[m, s]`` (over ``count``, if given), in the taps' order; g (M, C) -> (cells_out, C)."""
    return _route_p.bind(g, cells, w, cells_out=cells_out, count=count)
