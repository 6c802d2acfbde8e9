"""grid_sample and its explicit backward: the card is in ``card.py``, the sampling in ``sampling.py``; below,
resolving a call and its dispatch (Dask's planes, torch's capture nodes, the autodiff bindings).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._calls import channels_last, check_cotangent, check_layout, resolve
from ..._compat import (
    is_dask_array,
    is_jax_array,
    namespace,
    to_compute,
)
from ..._types import Array
from ...autodiff import compose, graph_node, in_graph, sampled
from .._docs import Template
from .sampling import _Plan, _Rules, _sample, _sample_backward

__all__ = ["grid_sample", "grid_sample_backward"]

# --- dispatch ------------------------------------------------------------------------------------------

def _resolve(x: Any, grid: Any, args: dict[str, Any], op: str = "grid_sample") -> tuple[Any, str, _Plan]:
    """Checks (the card's, grid like x) and the plan, kept beside the cached resolution it is made from."""
    xp, dtype, r = resolve(op, x, {"grid": grid}, **args)
    kept = _PLANS.get(id(r))
    if kept is None or kept[0] is not r:
        p = r.params
        kept = _PLANS[id(r)] = (r, _Plan(p["in_spatial"], p["out_spatial"], p["mode"], p["padding_mode"],
                                         p["align_corners"], {"float32": 4, "float16": 2, "bfloat16": 2}.get(dtype, 8)))
        if len(_PLANS) > 4096:
            _PLANS.clear()
    return xp, dtype, kept[1]


_PLANS: dict[int, tuple[Any, _Plan]] = {}


def _blockwise(fn: Any, plan: _Plan, x: Any, grid: Any, *, grad: Any = None, out: str) -> Any:
    """``fn`` on each batch chunk of Dask arrays (the op reads anywhere in a plane, so planes stay whole)."""
    import dask.array as da

    n = plan.n
    sp, op_ = "hwd"[:n], "ijk"[:n]
    lead = (x.chunks[0],)
    x = x.rechunk(lead + tuple((s,) for s in x.shape[1:]))
    grid = grid.rechunk(lead + tuple((s,) for s in grid.shape[1:]))
    arrays: list[Any] = [x, "bc" + sp, grid, "b" + op_ + "z"]
    if grad is not None:
        arrays = [grad.rechunk(lead + tuple((s,) for s in grad.shape[1:])), "bc" + op_] + arrays
    index = {"output": "bc" + op_, "grad_x": "bc" + sp, "grad_grid": "b" + op_ + "z"}[out]
    return da.blockwise(fn, index, *arrays, dtype=x.dtype, concatenate=True,
                        meta=np.empty((0,) * len(index), dtype=x.dtype))


_GRID_SAMPLE_DOC = Template("""\
Sample ``x`` at the positions ``grid``, as ``torch.nn.functional.grid_sample``.

The forward gathers; the input gradient is a sort and a segmented sum, not a scatter (bit-identical across
runs on every backend). Differentiable to any order in ``x`` and ``grid`` on torch and JAX, forward mode too.

Parameters
----------
x : array
    The image (N, C, H, W) or (N, C, D, H, W), spatial dimensions non-empty; float16, bfloat16, float32 or
    float64, any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict).
grid : array
    Positions (N, *O, n), n = 2 or 3 spatial axes, normalised to [-1, 1]; ``grid[..., 0]`` indexes W,
    ``grid[..., 1]`` H, ``grid[..., 2]`` D. ``x``'s batch size, library, dtype and device.
mode : str, default "bilinear"
    One of bilinear, nearest (round half to even), bicubic (4-D ``x`` only).
padding_mode : str, default "zeros"
    What positions outside the image read: zeros, border or reflection.
align_corners : bool or None, default None
    Whether -1 and 1 are the centres (True) or the outer edges (False) of the corner pixels; None means False.
{layout}

Returns
-------
array
    The samples (N, C, *O), of ``x``'s namespace, device and dtype.

Raises
------
ValueError
    If ``mode`` or ``padding_mode`` is unknown, ``x`` is not 4-D or 5-D or has an empty spatial dimension,
    bicubic comes with a 5-D ``x``, ``grid``'s rank, last dimension or batch size does not fit ``x``, or
    ``grid`` is on another device.
TypeError
    If ``x`` or ``grid`` is not a supported array, their libraries or dtypes differ, the dtype is not
    floating, or ``align_corners`` is not a bool.

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(4.0).reshape(1, 1, 2, 2)
>>> poolspec.grid_sample(x, np.zeros((1, 1, 1, 2)), align_corners=True)
array([[[[1.5]]]])
""")


@_GRID_SAMPLE_DOC.document()
def grid_sample(x: Array, grid: Array, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None, *, layout: str = "channels_first") -> Array:
    if check_layout("grid_sample", layout):
        return channels_last(grid_sample, locals(), None, ("x",))
    args: dict[str, Any] = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    if in_graph(x):
        return graph_node("grid_sample", args, x, grid)
    xp, dtype, plan = _resolve(x, grid, args)
    if is_dask_array(x):
        def block(xb: np.ndarray, gb: np.ndarray) -> np.ndarray:
            return grid_sample(xb, gb, **args)

        return _blockwise(block, plan, x, grid, out="output")
    xc, gc = (to_compute(xp, a) for a in (x, grid))  # half precision: float32, rounded once at the end
    if is_jax_array(x):
        out = compose(_sample, (plan,), xc, gc)
    else:  # on torch a Function that keeps only x and the grid for the gradient (zeros for nearest's grid)
        out = sampled(_Rules(plan), xc, gc)
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


_GRID_SAMPLE_BACKWARD_DOC = Template("""\
The gradients (grad_x, grad_grid) of :func:`grid_sample` for the cotangent ``grad_output``.

grad_x is a sort of the tap indices and a segmented sum (no scatter, no atomics), grad_grid a gather; both
are differentiable again on torch and JAX. nearest's grid gradient is zero.

Parameters
----------
grad_output : array
    The cotangent of grid_sample's output: its shape (N, C, *O), ``x``'s library, dtype and device.
x : array
    The forward's image (N, C, H, W) or (N, C, D, H, W).
grid : array
    The forward's positions (N, *O, n).
mode : str, default "bilinear"
    As in :func:`grid_sample`.
padding_mode : str, default "zeros"
    As in :func:`grid_sample`.
align_corners : bool or None, default None
    As in :func:`grid_sample`.
{layout}

Returns
-------
grad_x : array
    The gradient with respect to ``x``: ``x``'s shape, namespace, device and dtype.
grad_grid : array
    The gradient with respect to ``grid``: ``grid``'s shape, ``x``'s dtype.

Raises
------
ValueError
    If the arguments break :func:`grid_sample`'s rules, or ``grad_output``'s shape is not the output's or its
    device is not ``x``'s.
TypeError
    As :func:`grid_sample`, or if ``grad_output``'s library or dtype is not ``x``'s.

Examples
--------
>>> import numpy as np, poolspec
>>> gx, gg = poolspec.grid_sample_backward(np.ones((1, 1, 1, 1)), np.arange(4.0).reshape(1, 1, 2, 2),
...                                        np.zeros((1, 1, 1, 2)), align_corners=True)
>>> gx.ravel().tolist(), gg.ravel().tolist()
([0.25, 0.25, 0.25, 0.25], [0.5, 1.0])
""")


@_GRID_SAMPLE_BACKWARD_DOC.document()
def grid_sample_backward(grad_output: Array, x: Array, grid: Array, mode: str = "bilinear", padding_mode: str = "zeros",
                         align_corners: bool | None = None, *, layout: str = "channels_first") -> tuple[Array, Array]:
    if check_layout("grid_sample_backward", layout):
        return channels_last(grid_sample_backward, locals(), None, ("grad_output", "x"), outputs=(0,))
    args: dict[str, Any] = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    if in_graph(x):
        return graph_node("grid_sample_backward", args, grad_output, x, grid)
    op = "grid_sample_backward"
    xp, dtype, plan = _resolve(x, grid, args, op)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    check_cotangent(op, xp, grad_output, x, (x.shape[0], x.shape[1]) + plan.out_spatial)
    if is_dask_array(x):
        def gx(gb: np.ndarray, xb: np.ndarray, grb: np.ndarray) -> np.ndarray:
            return grid_sample_backward(gb, xb, grb, **args)[0]

        def gg(gb: np.ndarray, xb: np.ndarray, grb: np.ndarray) -> np.ndarray:
            return grid_sample_backward(gb, xb, grb, **args)[1]

        return (_blockwise(gx, plan, x, grid, grad=grad_output, out="grad_x"),
                _blockwise(gg, plan, x, grid, grad=grad_output, out="grad_grid"))
    gc, xc, grc = (to_compute(xp, a) for a in (grad_output, x, grid))
    if is_jax_array(x):
        grad_x, grad_grid = compose(_sample_backward, (plan,), gc, xc, grc)
    else:
        grad_x, grad_grid = _sample_backward(plan, gc, xc, grc)
    if grad_x.dtype != x.dtype:
        grad_x, grad_grid = xp.astype(grad_x, x.dtype), xp.astype(grad_grid, x.dtype)
    return grad_x, grad_grid
