"""fractional_max_pool2d/3d and their backward functions.

The cards are in ``card.py`` (torch's window rule, sample order and drawing); the windows are below (per plane, from
the samples: data, so on the device); the reads and the scatter-free routing of the gradient are
``kernels.cells.Cells``; the winner rule (first maximum, last NaN) is torch's scan rule, applied axis by axis as the
max family does; the autodiff bindings are ``autodiff.max_select`` (the values: the input read at the winners) and
``autodiff.max_backward``."""

from __future__ import annotations

import math
from typing import Any, Literal, overload

import numpy as np

from ..._calls import channels_last, check_cotangent, check_index_range, check_indices, check_layout, resolve
from ..._compat import (
    device,
    dtype_name,
    extremes,
    index_dtype,
    is_dask_array,
    is_jax_array,
    is_torch_array,
    is_traced,
    namespace,
    readable,
    stop_gradient,
    to_namespace,
)
from ..._types import Array
from ...autodiff import compose, graph_node, in_graph, max_backward, max_select
from ...kernels import fractional, paths
from ...kernels.blocks import nbytes
from ...kernels.cells import Cells
from .._docs import Template

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_backward", "fractional_max_pool3d_backward"]

Size = int | tuple[int, ...]

_TORCH_GATHER = paths.library("fractional_max_pool.torch-gather", "torch",
                              "the search's reads by torch's gather (array-api-compat's take_along_axis is slower)")
_DENSE = paths.launches(
    "fractional_max_pool.dense-windows", "where each operation is a kernel launch: every window's cells gathered at "
    "once (where that fits) instead of the axis-by-axis scan", exact="bitwise")
_LOOP = paths.library("fractional_max_pool.jax-loop", "jax",
                      "a window of more than 4 cells per axis scanned by one lax.fori_loop, not k copies of its body")


def _draw(op: str, x: Any, shape: tuple[int, ...], rng: Any) -> Any:
    """Samples in [0, 1) when none are given (the card's rule per backend)."""
    xp = namespace(x)
    if is_torch_array(x) and rng is None:
        import torch

        return torch.rand(shape, dtype=x.dtype, device=x.device)  # torch's own draw
    if is_jax_array(x):
        import jax

        if rng is not None and not isinstance(rng, (int, np.integer, np.random.Generator)):
            return jax.random.uniform(rng, shape, dtype=x.dtype)
        if is_traced(x):
            raise ValueError(f"{op}: under jax.jit pass rng=<a JAX key> or _random_samples (samples drawn on the "
                             "host would be a constant of the compiled program)")
    host = np.random.default_rng(rng).random(shape)
    return to_namespace(host, xp, x, x.dtype)


def _check_samples(op: str, xp: Any, samples: Any) -> None:
    """Samples in [0, 1] (their dtype and shape are the card's rules, checked by ``resolve``)."""
    if is_dask_array(samples) or math.prod(samples.shape) == 0:
        return
    found = extremes(xp, samples)
    if found is None:
        return
    lo, hi = found
    if not (0 <= lo and hi <= 1):
        raise ValueError(f"{op}: _random_samples holds {lo if lo < 0 else hi}: samples must lie in [0, 1] "
                         "(windows would leave the input)")


# taps per axis past which JAX loops over them: unrolled, XLA keeps every step's reads alive (measured: k 16
# on 100^3, 145 MiB of temporaries unrolled, 17 MiB looped)
_UNROLL = 4


def _take_along(xp: Any, a: Any, idx: Any, axis: int) -> Any:
    """``a`` read along ``axis`` at ``idx``, which broadcasts against ``a`` elsewhere."""
    shape = tuple(idx.shape[axis] if d == axis else s for d, s in enumerate(a.shape))
    idx = xp.broadcast_to(idx, shape)
    if _TORCH_GATHER(a):
        return a.gather(axis, idx)
    return xp.take_along_axis(a, idx, axis=axis)


def _pool(static: tuple[Any, ...], x: Any, samples: Any) -> tuple[Any, Any]:
    """Values and winners (N, C, M) (see :func:`_search`)."""
    winner, routes = _search(static, x, samples)
    N, C = x.shape[0], x.shape[1]
    return max_select(routes, namespace(x).reshape(x, (N, C, math.prod(static[0]))), winner), winner


def _search(static: tuple[Any, ...], x: Any, samples: Any) -> tuple[Any, Any]:
    """Winners (N, C, M) and the routes of their gradient. The windows' maxima axis by axis, innermost first,
    each axis's k taps read at the planes' own window starts and kept by torch's scan rule (update where
    ``v > m`` or ``v`` is NaN), carrying the winner's flat cell: the row-major first maximum or last NaN of
    each window, as torch's scan finds it, in O(input) memory and O(input * k / stride) work per axis,
    whatever the window's size; on a launch-bound backend, every window's cells at once where that fits
    (``kernels.fractional``)."""
    spatial, out, k = static
    xp = namespace(x)
    N, C, n = x.shape[0], x.shape[1], len(spatial)
    P, M = math.prod(spatial), math.prod(out)
    plain = stop_gradient(x)  # the search is not differentiated
    itype = index_dtype(xp, samples)
    windows = fractional.plan(spatial, out, k)
    all_starts = windows.starts(xp, samples, itype)
    if _DENSE(x) and windows.dense_fits(nbytes(x) // max(1, math.prod(x.shape))) and readable(x) \
            and readable(samples):  # every window at once; the gradient from each window's neighbours
        return windows.dense(plain, all_starts), fractional.Windows(windows, all_starts)
    floating = dtype_name(xp, x.dtype).startswith(("float", "bfloat"))
    values = plain
    cell = xp.reshape(xp.arange(P, dtype=itype, device=device(x)), (1, 1) + tuple(spatial))
    cell = xp.broadcast_to(cell, tuple(x.shape))
    for a in reversed(range(n)):
        starts = all_starts[:, :, a, :out[a]]  # (N, C, O_a)
        starts = xp.reshape(starts, (N, C) + (1,) * a + (out[a],) + (1,) * (n - 1 - a))

        def step(t: Any, carry: tuple[Any, Any], a: int = a, starts: Any = starts, values: Any = values,
                 cell: Any = cell) -> tuple[Any, Any]:
            v, f = _take_along(xp, values, starts + t, 2 + a), _take_along(xp, cell, starts + t, 2 + a)
            m, win = carry
            upd = ((v > m) | xp.isnan(v)) if floating else v > m
            return xp.where(upd, v, m), xp.where(upd, f, win)

        carry = (_take_along(xp, values, starts, 2 + a), _take_along(xp, cell, starts, 2 + a))
        if k[a] > _UNROLL and _LOOP(x):  # one loop in the program, not k copies of its body
            from jax import lax

            carry = lax.fori_loop(1, k[a], step, carry)
        else:
            for t in range(1, k[a]):
                carry = step(t, carry)
        values, cell = carry
    return xp.reshape(cell, (N, C, M)), Cells(P, M)


def _prepare(n: int, op: str, x: Any, args: dict[str, Any], samples: Any, rng: Any,
             need_samples: bool = True) -> tuple[Any, Any, Any, Any]:
    xp, _, r = resolve(op, x, {"_random_samples": samples}, **args)
    shape = tuple(x.shape)
    if samples is not None:
        _check_samples(op, xp, samples)
    lead = (shape[0] if r.batched else 1, shape[-n - 1])
    xb = x if r.batched else xp.reshape(x, lead + shape[-n:])
    if samples is None and need_samples:
        samples = _draw(op, x, lead + (n,), rng)
    return xp, r, xb, samples


def _forward(n: int, x: Any, args: dict[str, Any], samples: Any, rng: Any) -> Any:
    op = f"fractional_max_pool{n}d"
    if in_graph(x):
        return graph_node(op, {**args, "_random_samples": samples, "rng": rng}, x)
    xp, r, xb, samples = _prepare(n, op, x, args, samples, rng)
    p = r.params
    static = (p["in_spatial"], p["output_size"], p["kernel_size"])
    if is_dask_array(x):
        values, winner = _dask(static, xb, samples)
    elif is_jax_array(x):
        values, winner = compose(_pool, (static,), xb, samples)
    else:
        values, winner = _pool(static, xb, samples)
    values = xp.reshape(values, tuple(r.output_shape))
    if not p["return_indices"]:
        return values
    return values, xp.reshape(winner, tuple(r.output_shape))


def _dask(static: tuple[Any, ...], x: Any, samples: Any) -> tuple[Any, Any]:
    """Plane by plane on Dask: windows and winners of each block of whole planes, in NumPy."""
    import dask.array as da

    spatial, out, _ = static
    n = len(spatial)
    x = x.rechunk(x.chunks[:2] + tuple((s,) for s in spatial))
    samples = samples.rechunk(x.chunks[:2] + ((n,),)) if is_dask_array(samples) else \
        da.from_array(np.asarray(samples), chunks=x.chunks[:2] + ((n,),))
    sp, op_ = "hwd"[:n], "ijk"[:n]

    def block(which: int) -> Any:
        return da.blockwise(lambda xb, sb: np.reshape(_pool(static, xb, sb)[which], xb.shape[:2] + out),
                            "nc" + op_, x, "nc" + sp, samples, "ncz", concatenate=True,
                            new_axes={c: o for c, o in zip(op_, out)},
                            dtype=x.dtype if which == 0 else np.int64,
                            meta=np.empty((0,) * (n + 2), dtype=x.dtype if which == 0 else np.int64))

    values, winner = block(0), block(1)
    N, C = x.shape[:2]
    return values, da.reshape(winner, (N, C, math.prod(out)))


def _backward(n: int, grad_output: Any, x: Any, args: dict[str, Any], samples: Any, indices: Any) -> Any:
    op = f"fractional_max_pool{n}d_backward"
    if in_graph(x):
        return graph_node(op, {**args, "_random_samples": samples, "indices": indices}, grad_output, x)
    if samples is None and indices is None:
        raise ValueError(f"{op}: pass the forward's _random_samples or its indices (return_indices=True): without "
                         "them the windows are unknown")
    xp, r, xb, samples = _prepare(n, op, x, {**args, "return_indices": False}, samples, None,
                                  need_samples=indices is None)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    check_cotangent(op, xp, grad_output, x, tuple(r.output_shape))
    p = r.params
    P, M = math.prod(p["in_spatial"]), math.prod(p["output_size"])
    lead = tuple(xb.shape[:2])
    routes: Any = Cells(P, M)
    if indices is None:
        static = (p["in_spatial"], p["output_size"], p["kernel_size"])
        if is_dask_array(x):
            winner = _dask(static, xb, samples)[1]
        elif is_jax_array(x):
            winner = compose(_pool, (static,), xb, samples)[1]
        else:
            winner, routes = _search(static, xb, samples)
    else:
        check_indices(op, indices, x, tuple(r.output_shape))
        check_index_range(op, xp, indices, P)
        winner = xp.reshape(indices, lead + (M,))
    g = xp.reshape(grad_output, lead + (M,))
    if is_dask_array(g):
        from ...kernels.chunked import plane_local

        grad = plane_local(Cells(P, M).route, (g, winner), (P,))
    else:
        grad = max_backward(routes, g, winner, primal=x)
    return xp.reshape(grad, tuple(x.shape))


# the docstring of fractional_max_pool2d/3d, filled per rank at import (families/_docs.py)
_FORWARD = Template("""\
{n}-d fractional max pooling of ``x``, as ``torch.nn.functional.{op}``.

Windows of ``kernel_size`` sit at pseudo-random fractional strides fixed by one sample u per plane and axis: with
alpha = (S - k) / (O - 1), window i starts at int((i + u) * alpha) - int(u * alpha), the last at S - k. Given the
same ``_random_samples``, torch's windows, values and indices (first maximum wins, a NaN wins: the last one).

Parameters
----------
x : array
    Input shaped {x}; any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict) of a float dtype. C and the
    spatial dimensions must be non-empty (N may be 0).
kernel_size : int or tuple of int
    Window size k: one int or one per spatial axis; entries > 0, and output_size + kernel_size - 1 {rule} S per axis
    (torch's rule{strict}).
output_size : int, tuple of int or None, default None
    Output spatial size O (entries >= 0); used in preference to output_ratio when both are given.
output_ratio : float, tuple of float or None, default None
    Output size int(S * ratio) per axis when output_size is None; entries in (0, 1) (a single float is accepted,
    torch needs a tuple).
return_indices : bool, default False
    Also return the winners' indices.
_random_samples : array or None, default None
    The samples u in [0, 1], shaped (N, C, {n}) (N = 1 for an unbatched x), of x's dtype and library; its last axis
    indexes the spatial axes in torch's order ({order}). None: drawn (see ``rng``).
rng : None, int, numpy.random.Generator or JAX key, default None
    Keyword-only: how samples are drawn when ``_random_samples`` is None. With a torch x and rng None,
    ``torch.rand`` from torch's global generator (torch's own draw); with a JAX x and a JAX key,
    ``jax.random.uniform`` (required under ``jax.jit``); otherwise ``numpy.random.default_rng(rng)`` on the
    host.
{layout}

{routed_returns_forward}

Raises
------
ValueError
    If x does not have {lo} or {hi} dimensions or has an empty C or spatial dimension, a kernel_size entry is not
    positive, neither output_size nor output_ratio is given, an output_size entry is negative or an output_ratio entry
    outside (0, 1), output_size + kernel_size - 1 is too large for the input, _random_samples is not shaped (N, C, {n})
    or holds values outside [0, 1], or x is a JAX array traced (e.g. under ``jax.jit``) with neither _random_samples nor
    a JAX key.
TypeError
    If x or _random_samples is not an array of a supported library, x is not of a float dtype, _random_samples's
    dtype differs from x's, kernel_size or output_size is not an int or tuple of ints, output_ratio is not a
    float or tuple of floats, return_indices is not a bool, or rng is not a valid seed.

{examples}
""", width=116, defaults=dict(values="window maxima", rule="<=", strict=""))


@overload
def fractional_max_pool2d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., return_indices: Literal[False] = ...,
                          _random_samples: Any = ..., *, rng: Any = ..., layout: str = ...) -> Array: ...


@overload
def fractional_max_pool2d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., *, return_indices: Literal[True],
                          _random_samples: Any = ..., rng: Any = ..., layout: str = ...) -> tuple[Array, Array]: ...


@overload
def fractional_max_pool2d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., return_indices: bool = ...,
                          _random_samples: Any = ..., *, rng: Any = ...,
                          layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(order="W, H", example="""
>>> x = np.arange(25.0).reshape(1, 1, 5, 5)
>>> poolspec.fractional_max_pool2d(x, 2, output_size=2, _random_samples=np.full((1, 1, 2), 0.5))
array([[[[ 6.,  9.],
         [21., 24.]]]])""")
def fractional_max_pool2d(x: Any, kernel_size: Size, output_size: Size | None = None,
                          output_ratio: float | tuple[float, ...] | None = None, return_indices: bool = False,
                          _random_samples: Any = None, *, rng: Any = None, layout: str = "channels_first") -> Any:
    if check_layout("fractional_max_pool2d", layout):
        return channels_last(fractional_max_pool2d, locals(), 2, ("x",))
    return _forward(2, x, dict(kernel_size=kernel_size, output_size=output_size, output_ratio=output_ratio,
                               return_indices=return_indices), _random_samples, rng)


@overload
def fractional_max_pool3d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., return_indices: Literal[False] = ...,
                          _random_samples: Any = ..., *, rng: Any = ..., layout: str = ...) -> Array: ...


@overload
def fractional_max_pool3d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., *, return_indices: Literal[True],
                          _random_samples: Any = ..., rng: Any = ..., layout: str = ...) -> tuple[Array, Array]: ...


@overload
def fractional_max_pool3d(x: Array, kernel_size: Size, output_size: Size | None = ...,
                          output_ratio: float | tuple[float, ...] | None = ..., return_indices: bool = ...,
                          _random_samples: Any = ..., *, rng: Any = ...,
                          layout: str = ...) -> Array | tuple[Array, Array]: ...


@_FORWARD.document(rule="<", strict=", strict in 3-d", order="D, H, W", example="""
>>> x = np.arange(27.0).reshape(1, 3, 3, 3)
>>> poolspec.fractional_max_pool3d(x, 2, output_size=1, _random_samples=np.zeros((1, 1, 3))).ravel()
array([26.])""")
def fractional_max_pool3d(x: Any, kernel_size: Size, output_size: Size | None = None,
                          output_ratio: float | tuple[float, ...] | None = None, return_indices: bool = False,
                          _random_samples: Any = None, *, rng: Any = None, layout: str = "channels_first") -> Any:
    if check_layout("fractional_max_pool3d", layout):
        return channels_last(fractional_max_pool3d, locals(), 3, ("x",))
    return _forward(3, x, dict(kernel_size=kernel_size, output_size=output_size, output_ratio=output_ratio,
                               return_indices=return_indices), _random_samples, rng)


# the docstring of fractional_max_pool<n>d_backward, filled per rank at import (families/_docs.py)
_BACKWARD = Template("""\
The gradient of :func:`{op}` w.r.t. ``x`` (its vector-Jacobian product).

The windows come from the forward's ``_random_samples`` or its ``indices``; each cotangent goes to its window's
winner, shared winners summed without a scatter (bit-identical across runs).

Parameters
----------
{routed_arrays}
kernel_size : int or tuple of int
    The forward's window size, as in :func:`{op}`.
output_size : int, tuple of int or None, default None
    The forward's output size, as in :func:`{op}`.
output_ratio : float, tuple of float or None, default None
    The forward's output ratio, as in :func:`{op}`.
return_indices : bool, default False
    The forward's flag; accepted for symmetry with the forward and ignored.
_random_samples : array or None, default None
    The forward's samples, shaped (N, C, {n}) in [0, 1], of x's dtype; the winners are recomputed from them when indices
    is None.
indices : array or None, default None
    Keyword-only: the forward's indices (``return_indices=True``), shaped like grad_output; used in place of the
    samples, each cotangent added at its flat index in its (N, C) plane (torch's rule); an integer dtype,
    and within the plane wherever their values can be read (not under traces).
{layout}

{routed_returns}

Raises
------
ValueError
    If neither _random_samples nor indices is given, the forward's arguments are invalid (as in :func:`{op}`),
    grad_output or indices is not shaped like the forward's output, an{br}index lies outside the plane, _random_samples
    is misshaped or holds values outside [0, 1], or grad_output and x are on different devices.
TypeError
    If grad_output's or _random_samples's dtype differs from x's, indices are not of an integer dtype, the arrays come
    from different libraries, or an argument has a wrong type (as in :func:`{op}`).

{examples}
""", width=116)


@_BACKWARD.document(example="""
>>> x = np.arange(25.0).reshape(1, 1, 5, 5)
>>> g = poolspec.fractional_max_pool2d_backward(np.ones((1, 1, 2, 2)), x, 2, output_size=2,
...                                             _random_samples=np.full((1, 1, 2), 0.5))
>>> np.argwhere(g[0, 0]).tolist()
[[1, 1], [1, 4], [4, 1], [4, 4]]""")
def fractional_max_pool2d_backward(grad_output: Array, x: Array, kernel_size: Size, output_size: Size | None = None,
                                   output_ratio: float | tuple[float, ...] | None = None,
                                   return_indices: bool = False, _random_samples: Any = None, *,
                                   indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("fractional_max_pool2d_backward", layout):
        return channels_last(fractional_max_pool2d_backward, locals(), 2, ("grad_output", "x", "indices"))
    return _backward(2, grad_output, x, dict(kernel_size=kernel_size, output_size=output_size,
                                             output_ratio=output_ratio), _random_samples, indices)


@_BACKWARD.document(example="""
>>> x = np.arange(27.0).reshape(1, 3, 3, 3)
>>> g = poolspec.fractional_max_pool3d_backward(np.ones((1, 1, 1, 1)), x, 2, output_size=1,
...                                             _random_samples=np.zeros((1, 1, 3)))
>>> float(g.sum()), float(g[0, 2, 2, 2])
(1.0, 1.0)""")
def fractional_max_pool3d_backward(grad_output: Array, x: Array, kernel_size: Size, output_size: Size | None = None,
                                   output_ratio: float | tuple[float, ...] | None = None,
                                   return_indices: bool = False, _random_samples: Any = None, *,
                                   indices: Any = None, layout: str = "channels_first") -> Array:
    if check_layout("fractional_max_pool3d_backward", layout):
        return channels_last(fractional_max_pool3d_backward, locals(), 3, ("grad_output", "x", "indices"))
    return _backward(3, grad_output, x, dict(kernel_size=kernel_size, output_size=output_size,
                                             output_ratio=output_ratio), _random_samples, indices)
