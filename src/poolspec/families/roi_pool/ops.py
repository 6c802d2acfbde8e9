"""roi_pool and its explicit backward: the card is in ``card.py``, the windows and winners in ``search.py``; below,
resolving a call and its dispatch (Dask's channel blocks, torch's capture nodes, JAX's program). The boxes' two forms
and the dispatch's common pieces are the RoI families' (``_roi.ops``), the boxes' host reading roi_align's
(``roi_align.sampling.boxes_on_host``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._calls import channels_last, check_cotangent, check_layout, resolve
from ..._compat import dtype_name, is_dask_array, is_jax_array, namespace, to_compute
from ..._types import Array
from ...autodiff import graph_node, in_graph
from .._docs import Template
from .._roi import ops as roi
from ..roi_align.sampling import boxes_on_host
from .search import _Plan, backward, forward, frame, ps_backward, ps_forward, ps_select, select

__all__ = ["roi_pool", "roi_pool_backward", "ps_roi_pool", "ps_roi_pool_backward"]


def _args(output_size: Any, spatial_scale: Any) -> dict[str, Any]:
    return dict(output_size=output_size, spatial_scale=spatial_scale)


def _resolve(op: str, x: Any, rois: Any, args: dict[str, Any], ps: bool = False) -> tuple[Any, str, Any, _Plan]:
    """The card's checks, then the boxes' values where a trace has them (the window frame), and the plan. The boxes
    come back in the dtype of the box arithmetic: x's for float16 (torchvision's half arithmetic), else x's compute
    dtype (float32 for bfloat16). ``ps``: ps_roi_pool's plan (C the output channels)."""
    xp, dtype, r = resolve(op, x, {"boxes": rois}, **args)
    p = r.params
    N, C, H, W = (int(v) for v in x.shape)
    if ps:
        C //= p["output_size"][0] * p["output_size"][1]
    half = dtype == "float16"
    rc = rois if half else to_compute(xp, rois)
    # torch's bfloat16 has no NumPy twin, so its float32 cast is read
    host = boxes_on_host(rc if dtype == "bfloat16" and not is_jax_array(rois) else rois)
    pooled, scale = p["output_size"], p["spatial_scale"]
    if host is None:  # a trace without the boxes' values: the whole image is every bin's frame
        KH, KW = H, W
    else:
        host = np.asarray(host, dtype=np.float16 if half else np.float32 if dtype_name(xp, rc.dtype) == "float32"
                          else np.float64)
        KH, KW = frame(op, host, pooled, scale, N, H, W, ps)
    return xp, dtype, rc, _Plan(N, C, H, W, int(rois.shape[0]), pooled, scale, KH, KW, half, ps)


_ROI_POOL_DOC = Template("""\
Maxima of ``x`` over each region of ``boxes``, as ``torchvision.ops.roi_pool``.

Each roi's corners are scaled and rounded to cells, and the roi is split into an output_size grid of bins whose
edges are floored and ceiled (torchvision's rules: a degenerate roi is one cell, a bin outside the image is 0);
each bin is the first maximum of its cells (NaN never wins). The input gradient routes the cotangent to the
winners by a sort and a segmented sum, not a scatter (bit-identical across runs); boxes get no gradient, as in
torchvision.

Parameters
----------
x : array
    Features (N, C, H, W); float16, bfloat16, float32 or float64, any array-API array (NumPy, torch, JAX, CuPy,
    Dask, array-api-strict).
{roi_boxes}
{roi_layout}

{roi_returns}

Raises
------
ValueError
    If x is not 4-D or has an empty spatial dimension, boxes are not (K, 5) or (L, 4) arrays, a batch index is
    not an image of x, a box coordinate is not finite, output_size is negative or spatial_scale not finite.
{roi_type_error}

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> poolspec.roi_pool(x, np.array([[0, 0.5, 0.5, 2.5, 2.5]]), 2).ravel().tolist()
[10.0, 11.0, 14.0, 15.0]
""")


@_ROI_POOL_DOC.document()
def roi_pool(x: Array, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0, *,
             layout: str = "channels_first") -> Array:
    if check_layout("roi_pool", layout):
        return channels_last(roi_pool, locals(), 2, ("x",))
    op = "roi_pool"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), x, rois)
    xp, dtype, rc, p = _resolve(op, x, rois, args)
    if is_dask_array(x):
        return roi.dask_map(roi_pool, roi_pool_backward, x, rois, args, p.K, p.pooled)
    return roi.apply(forward, p, xp, x, to_compute(xp, x), rc)  # half precision: float32 (selected, so exact)


_ROI_POOL_BACKWARD_DOC = Template("""\
The gradient of :func:`roi_pool` w.r.t. ``x`` for the cotangent ``grad_output`` (K, C, PH, PW).

The winners are found again from ``x``; each bin's cotangent goes to its winner (nothing for a bin without
one), shared winners summed through a sort and a segmented sum (no scatter, no atomics): bit-identical across
runs. Linear in ``grad_output``, and differentiable again on torch and JAX.

Parameters
----------
{roi_backward_arguments}
{roi_backward_layout}

{roi_backward_returns}

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> g = poolspec.roi_pool_backward(np.ones((1, 1, 1, 1)), x, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1)
>>> np.flatnonzero(g).tolist()
[10]
""")


@_ROI_POOL_BACKWARD_DOC.document()
def roi_pool_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                      spatial_scale: float = 1.0, *, layout: str = "channels_first") -> Array:
    if check_layout("roi_pool_backward", layout):
        return channels_last(roi_pool_backward, locals(), 2, ("grad_output", "x"))
    op = "roi_pool_backward"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), grad_output, x, rois)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    xp, dtype, rc, p = _resolve(op, x, rois, args)
    roi.check_grad(op, xp, dtype, grad_output, x, (p.K, p.C) + p.pooled)
    if is_dask_array(x):
        return roi.dask_map(roi_pool, roi_pool_backward, x, rois, args, p.K, p.pooled, grad_output)
    return roi.apply(backward, p, xp, x, to_compute(xp, grad_output), to_compute(xp, x), rc)


def _roi_pool_select(gg: Any, x: Any, boxes: Any, output_size: int | tuple[int, int],
                     spatial_scale: float = 1.0) -> Any:
    """``gg`` (shaped like x) read at the winners of :func:`roi_pool` on ``x``: the derivative of
    :func:`roi_pool_backward` w.r.t. its cotangent (torch's capture node ``poolspec::roi_pool_select``)."""
    op = "roi_pool_backward"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    xp, dtype, rc, p = _resolve(op, x, rois, args)
    check_cotangent(op, xp, gg, x, tuple(x.shape), "grad_grad_input")
    return roi.apply(select, p, xp, x, to_compute(xp, gg), to_compute(xp, x), rc)


# --- ps_roi_pool: window averages, each bin reading its own group of channels (search.py's ``ps`` plan) ---------

_PS_ROI_POOL_DOC = Template("""\
Position-sensitive averages of ``x`` over each region of ``boxes``, as ``torchvision.ops.ps_roi_pool``.

Each roi's corners are scaled and rounded to cells, and the roi is split into an output_size (PH, PW) grid of
bins whose edges are floored and ceiled; bin (ph, pw) of output channel c is the mean of its window of input
channel (c * PH + ph) * PW + pw (torchvision's rules: a degenerate roi is one cell, an empty window is 0, and
the forward's windows stop before the image's last row and column). The gradient is torchvision's: its
backward's windows reach the last row and column, and it is a sort and a segmented sum, not a scatter.

Parameters
----------
x : array
    Features (N, C, H, W), C a multiple of PH * PW; float16 (box arithmetic in float16, as torchvision),
    bfloat16 (in float32), float32 or float64, any array-API array (NumPy, torch, JAX, CuPy, Dask,
    array-api-strict).
{roi_boxes}
{roi_layout}

{roi_returns}

Raises
------
ValueError
    If x is not 4-D, its channels are not a multiple of PH * PW, boxes are not (K, 5) or (L, 4) arrays, a
    batch index is not an image of x, an output_size entry is < 1, or a box coordinate is not finite.
{roi_type_error}

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> poolspec.ps_roi_pool(x, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1).ravel().tolist()  # rows, columns 0..1
[2.5]
""")


@_PS_ROI_POOL_DOC.document(c_out="C / (PH * PW)")
def ps_roi_pool(x: Array, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0, *,
                layout: str = "channels_first") -> Array:
    if check_layout("ps_roi_pool", layout):
        return channels_last(ps_roi_pool, locals(), 2, ("x",))
    op = "ps_roi_pool"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), x, rois)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    if is_dask_array(x):
        return roi.dask_map(ps_roi_pool, ps_roi_pool_backward, x, rois, args, p.K, p.pooled,
                            channel_group=p.pooled[0] * p.pooled[1])
    return roi.apply(ps_forward, p, xp, x, to_compute(xp, x), rc)


_PS_ROI_POOL_BACKWARD_DOC = Template("""\
The gradient of :func:`ps_roi_pool` w.r.t. ``x`` for the cotangent ``grad_output`` (K, C / (PH * PW), PH,
PW), as torchvision's backward.

Each bin adds g / area to every cell of its window in its input channel; torchvision's backward windows are
clamped to [0, H] x [0, W] and rounded with roundf (its forward's to [0, H - 1] x [0, W - 1], with round), so
this is not the transpose of the forward where a window reaches the last row or column. A sort and a segmented
sum (no scatter, no atomics): bit-identical across runs; linear in ``grad_output``, differentiable again on
torch and JAX.

Parameters
----------
{roi_backward_arguments}
{roi_backward_layout}

{roi_backward_returns}

Examples
--------
>>> import numpy as np, poolspec
>>> g = poolspec.ps_roi_pool_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 1, 2, 2)),
...                                   np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1)
>>> g.ravel().tolist()  # the backward's window reaches the last row and column
[0.25, 0.25, 0.25, 0.25]
""")


@_PS_ROI_POOL_BACKWARD_DOC.document(c_out="C / (PH * PW)")
def ps_roi_pool_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                         spatial_scale: float = 1.0, *, layout: str = "channels_first") -> Array:
    if check_layout("ps_roi_pool_backward", layout):
        return channels_last(ps_roi_pool_backward, locals(), 2, ("grad_output", "x"))
    op = "ps_roi_pool_backward"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), grad_output, x, rois)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    roi.check_grad(op, xp, dtype, grad_output, x, (p.K, p.C) + p.pooled)
    if is_dask_array(x):
        return roi.dask_map(ps_roi_pool, ps_roi_pool_backward, x, rois, args, p.K, p.pooled, grad_output,
                            channel_group=p.pooled[0] * p.pooled[1])
    return roi.apply(ps_backward, p, xp, x, to_compute(xp, grad_output), to_compute(xp, x), rc)


def _ps_roi_pool_select(gg: Any, x: Any, boxes: Any, output_size: int | tuple[int, int],
                        spatial_scale: float = 1.0) -> Any:
    """``gg`` (shaped like x) through the transpose of :func:`ps_roi_pool_backward`: the means of the backward's
    windows (torch's capture node ``poolspec::ps_roi_pool_select``)."""
    op = "ps_roi_pool_backward"
    args = _args(output_size, spatial_scale)
    rois = roi.rois(op, x, boxes)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    check_cotangent(op, xp, gg, x, tuple(x.shape), "grad_grad_input")
    return roi.apply(ps_select, p, xp, x, to_compute(xp, gg), rc)
