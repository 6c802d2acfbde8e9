"""roi_align and its explicit backward: the card is in ``card.py``, the sampling in ``sampling.py``; below,
resolving a call and its dispatch (Dask's channel blocks, torch's capture nodes, JAX's program). The boxes' two
forms and the dispatch's common pieces are the RoI families' (``_roi.ops``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._calls import channels_last, check_cotangent, check_layout, resolve
from ..._compat import dtype_name, is_dask_array, is_jax_array, is_torch_array, namespace, to_compute
from ..._types import Array
from ...autodiff import graph_node, in_graph
from ...spec._rules import fail
from .._docs import Template
from .._roi import ops as roi
from .sampling import _Plan, backward, boxes_backward, boxes_on_host, forward, host_grids, plan

__all__ = ["roi_align", "roi_align_backward", "roi_align_boxes_backward", "ps_roi_align", "ps_roi_align_backward",
           "ps_roi_align_boxes_backward"]


def _autograd_on_cpu(x: Any, rois: Any) -> bool:
    """Whether plain torch autograd follows x on the CPU, the boxes not differentiated: the op then runs as its
    node (its backward the explicit one, whose windows beat routing each gather's cotangent); forward mode,
    torch.func and box gradients take the gathers' bindings, which differentiate to any order."""
    if not is_torch_array(x) or not x.requires_grad or x.device.type != "cpu" or getattr(rois, "requires_grad", False):
        return False
    import torch
    from torch.autograd import forward_ad

    return (torch.is_grad_enabled() and forward_ad._current_level < 0  # (the node's own call runs without grad)
            and not torch._C._functorch.is_functorch_wrapped_tensor(x))


def _args(output_size: Any, spatial_scale: Any, sampling_ratio: Any, aligned: Any) -> dict[str, Any]:
    return dict(output_size=output_size, spatial_scale=spatial_scale, sampling_ratio=sampling_ratio, aligned=aligned)


def _resolve(op: str, x: Any, rois: Any, args: dict[str, Any], ps: bool = False) -> tuple[Any, str, Any, _Plan]:
    """The card's checks, then the boxes' values where a trace has them, and the plan (``ps``: ps_roi_align's,
    whose C is the output channels)."""
    xp, dtype, r = resolve(op, x, {"boxes": rois}, **args)
    p = r.params
    N, C, H, W = (int(v) for v in x.shape)
    if ps:
        C //= p["output_size"][0] * p["output_size"][1]
    rc = to_compute(xp, rois)
    # the values of the boxes as given (inside a jit trace a cast of concrete boxes is already traced); torch's
    # bfloat16 has no NumPy twin, so its float32 cast is read
    host = boxes_on_host(rc if dtype == "bfloat16" and not is_jax_array(rois) else rois)
    ratio, pooled = p["sampling_ratio"], p["output_size"]
    if host is None and getattr(getattr(x, "device", None), "type", None) == "meta":
        # a meta tensor has shapes and no values: any sample grid gives the result's shape
        ratio = max(ratio, 1)
    if host is None:
        if ratio <= 0 and pooled[0] * pooled[1] > 0 and rois.shape[0] > 0:
            fail(op, "sampling_ratio", ratio, "<= 0 asks for an adaptive sample grid, read from the boxes' values, "
                 "which this trace does not have (jax.jit or a transform over traced boxes): pass a positive "
                 "sampling_ratio, or concrete boxes")
        return xp, dtype, rc, plan(N, C, H, W, int(rois.shape[0]), pooled, p["spatial_scale"], p["aligned"], None,
                                   None, ratio, ps)
    host = np.asarray(host, dtype=np.float32 if dtype_name(xp, rc.dtype) == "float32" else np.float64)
    gh, gw = host_grids(op, host, pooled, p["spatial_scale"], p["aligned"], ratio, N, ps)
    fixed = ratio > 0
    return xp, dtype, rc, plan(N, C, H, W, int(rois.shape[0]), pooled, p["spatial_scale"], p["aligned"],
                               None if fixed else gh, None if fixed else gw, ratio, ps)


_ROI_ALIGN_DOC = Template("""\
Bilinear averages of ``x`` over each region of ``boxes``, as ``torchvision.ops.roi_align``.

Each roi is split into an output_size grid of bins; each bin is the mean of a grid of bilinear samples
(torchvision's rules: the half-pixel shift with ``aligned``, the roi size clamped to at least 1 without it,
points more than one cell outside the image read 0). The input gradient is a sort and a segmented sum, not a
scatter (bit-identical across runs); boxes get no gradient, as in torchvision.

Parameters
----------
x : array
    Features (N, C, H, W); float16, bfloat16 (computed in float32, rounded once), float32 or float64, any
    array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict).
{roi_boxes}
{roi_sampling_ratio}
aligned : bool, default False
    True: pixel centres at +0.5 (boxes shifted by -0.5), the roi size not clamped.
{roi_layout}

{roi_returns}

Raises
------
ValueError
    If x is not 4-D, boxes are not (K, 5) or (L, 4) arrays, a batch index is not an image of x, output_size or
    spatial_scale is not positive, or sampling_ratio <= 0 under a trace without the boxes' values.
{roi_type_error}

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> poolspec.roi_align(x, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1, aligned=True).ravel().tolist()
[2.5]
""")


@_ROI_ALIGN_DOC.document()
def roi_align(x: Array, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False, *, layout: str = "channels_first") -> Array:
    if check_layout("roi_align", layout):
        return channels_last(roi_align, locals(), 2, ("x",))
    op = "roi_align"
    args = _args(output_size, spatial_scale, sampling_ratio, aligned)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), x, rois)
    if _autograd_on_cpu(x, rois):
        from ...autodiff.torch_graph import sampling

        return sampling(op, roi.node_args(args), x, rois)
    xp, dtype, rc, p = _resolve(op, x, rois, args)
    if is_dask_array(x):
        return roi.dask_map(roi_align, roi_align_backward, x, rc, args, p.K, p.pooled)
    return roi.apply(forward, p, xp, x, to_compute(xp, x), rc)  # half precision: float32, rounded once


_ROI_ALIGN_BACKWARD_DOC = Template("""\
The gradient of :func:`roi_align` w.r.t. ``x`` for the cotangent ``grad_output`` (K, C, PH, PW).

Each tap adds (g * w) / count to the cell it read, through a sort and a segmented sum (no scatter, no
atomics): bit-identical across runs. Linear in ``grad_output``, and differentiable again on torch and JAX.

Parameters
----------
{roi_backward_arguments}
sampling_ratio : int, default -1
    The forward's sampling_ratio.
aligned : bool, default False
    The forward's aligned.
{roi_backward_layout}

{roi_backward_returns}

Examples
--------
>>> import numpy as np, poolspec
>>> g = poolspec.roi_align_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 1, 2, 2)),
...                                 np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1, aligned=True)
>>> g.ravel().tolist()
[0.25, 0.25, 0.25, 0.25]
""")


@_ROI_ALIGN_BACKWARD_DOC.document()
def roi_align_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                       spatial_scale: float = 1.0, sampling_ratio: int = -1, aligned: bool = False, *,
                       layout: str = "channels_first") -> Array:
    if check_layout("roi_align_backward", layout):
        return channels_last(roi_align_backward, locals(), 2, ("grad_output", "x"))
    op = "roi_align_backward"
    args = _args(output_size, spatial_scale, sampling_ratio, aligned)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), grad_output, x, rois)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    xp, dtype, rc, p = _resolve(op, x, rois, args)
    roi.check_grad(op, xp, dtype, grad_output, x, (p.K, p.C) + p.pooled)
    if is_dask_array(x):
        return roi.dask_map(roi_align, roi_align_backward, x, rc, args, p.K, p.pooled, grad_output)
    return roi.apply(backward, p, xp, x, to_compute(xp, grad_output), to_compute(xp, x), rc)


def roi_align_boxes_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                             spatial_scale: float = 1.0, sampling_ratio: int = -1, aligned: bool = False) -> Any:
    """The gradient of :func:`roi_align` w.r.t. ``boxes`` for the cotangent ``grad_output`` (torchvision has none).

    Each sample sits at start + (bin + (i + 0.5) / grid) * size / output_size, so it moves linearly with both ends
    of its roi, and each tap weight linearly with the sample: the gradient sums, per tap, the cotangent times the
    value read times the weight's derivative, over count. Where a rule holds a sample still (a sample at y <= 0
    or y >= H - 1, or read as 0 outside the image; a roi size clamped to 1 without ``aligned``: its end), it
    contributes nothing; the sample grid and count are constants (their steps, like the floor of a tap, have no
    derivative); the batch index gets 0. torch and JAX give the same through autodiff of :func:`roi_align`.

    Parameters
    ----------
    grad_output : array
        The cotangent (K, C, PH, PW); x's dtype, library and device.
    x : array
        The forward's features (N, C, H, W).
    boxes : array or list of array
        The forward's boxes, (K, 5) or a list of (L, 4) arrays.
    output_size : int or tuple of int
        The forward's output_size.
    spatial_scale : float, default 1.0
        The forward's spatial_scale.
    sampling_ratio : int, default -1
        The forward's sampling_ratio.
    aligned : bool, default False
        The forward's aligned.

    Returns
    -------
    array or list of array
        The gradient in the boxes' form: (K, 5) with 0 for the batch index, or a list of (L, 4) arrays.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`roi_align`) or grad_output is not shaped like the
        forward's output.
    TypeError
        If the dtypes or libraries of the arrays differ, or the dtype is not floating.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)  # x[y, x] = 4 y + x
    >>> g = poolspec.roi_align_boxes_backward(np.ones((1, 1, 1, 1)), x, np.array([[0, 0.5, 0.5, 2.5, 2.5]]), 1,
    ...                                       sampling_ratio=1)
    >>> g.ravel().tolist()  # the sample moves half as far as either end: 1/2 and 4/2 per unit
    [0.0, 0.5, 2.0, 0.5, 2.0]
    """
    return _boxes_backward("roi_align_boxes_backward", roi_align_boxes_backward, grad_output, x, boxes,
                           _args(output_size, spatial_scale, sampling_ratio, aligned))


def _boxes_backward(op: str, public: Any, grad_output: Any, x: Any, boxes: Any, args: dict[str, Any],
                    ps: bool = False) -> Any:
    """A boxes' gradient (``public`` the function ``op``, which Dask's task calls again), in the boxes' form."""
    rois = roi.rois(op, x, boxes)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=ps)
    roi.check_grad(op, xp, dtype, grad_output, x, (p.K, p.C) + p.pooled)
    if is_dask_array(x):  # a sum over every channel and cell: one task, lazily
        import dask
        import dask.array as da

        task = dask.delayed(lambda gv, xv, bv: public(gv, xv, bv, **args))(grad_output, x, rc)
        out = da.from_delayed(task, shape=(p.K, 5), dtype=rc.dtype, meta=np.empty((0, 0), dtype=rc.dtype))
    else:
        gc, xc = to_compute(xp, grad_output), to_compute(xp, x)
        out = boxes_backward(p, gc, xc, rc)
        out = out if out.dtype == rois.dtype else xp.astype(out, rois.dtype)
    if not isinstance(boxes, (list, tuple)):
        return out
    parts, at = [], 0
    for b in boxes:
        parts.append(out[at:at + b.shape[0], 1:])
        at += b.shape[0]
    return parts


# --- ps_roi_align: roi_align's taps, each bin reading its own group of channels (sampling.py's ``ps`` plan) ---

def _ps_args(output_size: Any, spatial_scale: Any, sampling_ratio: Any) -> dict[str, Any]:
    return dict(output_size=output_size, spatial_scale=spatial_scale, sampling_ratio=sampling_ratio)


_PS_ROI_ALIGN_DOC = Template("""\
Position-sensitive bilinear averages of ``x`` over each region of ``boxes``, as
``torchvision.ops.ps_roi_align``.

Each roi is split into an output_size (PH, PW) grid of bins; bin (ph, pw) of output channel c averages a grid
of bilinear samples of input channel (c * PH + ph) * PW + pw (torchvision's rules: boxes always shifted by
-0.5, the roi size never clamped; a bin without samples is 0 / count, NaN for a degenerate roi with an
adaptive grid). The input gradient is a sort and a segmented sum, not a scatter (bit-identical across runs).

Parameters
----------
x : array
    Features (N, C, H, W), C a multiple of PH * PW; float16, bfloat16 (computed in float32, rounded once),
    float32 or float64, any array-API array (NumPy, torch, JAX, CuPy, Dask, array-api-strict).
{roi_boxes}
{roi_sampling_ratio}
{roi_layout}

{roi_returns}

Raises
------
ValueError
    If x is not 4-D, its channels are not a multiple of PH * PW, boxes are not (K, 5) or (L, 4) arrays, a
    batch index is not an image of x, an output_size entry is < 1, or sampling_ratio <= 0 under a trace
    without the boxes' values.
{roi_type_error}

Examples
--------
>>> import numpy as np, poolspec
>>> x = np.arange(16.0).reshape(1, 4, 2, 2)  # channel k holds 4 k .. 4 k + 3
>>> poolspec.ps_roi_align(x, np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 2, sampling_ratio=1).ravel().tolist()
[0.0, 5.0, 10.0, 15.0]
""")


@_PS_ROI_ALIGN_DOC.document(c_out="C / (PH * PW)")
def ps_roi_align(x: Array, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0,
                 sampling_ratio: int = -1, *, layout: str = "channels_first") -> Array:
    if check_layout("ps_roi_align", layout):
        return channels_last(ps_roi_align, locals(), 2, ("x",))
    op = "ps_roi_align"
    args = _ps_args(output_size, spatial_scale, sampling_ratio)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), x, rois)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    if is_dask_array(x):
        return roi.dask_map(ps_roi_align, ps_roi_align_backward, x, rc, args, p.K, p.pooled,
                            channel_group=p.pooled[0] * p.pooled[1])
    return roi.apply(forward, p, xp, x, to_compute(xp, x), rc)


_PS_ROI_ALIGN_BACKWARD_DOC = Template("""\
The gradient of :func:`ps_roi_align` w.r.t. ``x`` for the cotangent ``grad_output`` (K, C / (PH * PW), PH,
PW).

Each tap adds (g * w) / count to the cell it read in its bin's input channel, through a sort and a segmented
sum (no scatter, no atomics): bit-identical across runs; linear in ``grad_output`` and differentiable again
on torch and JAX.

Parameters
----------
{roi_backward_arguments}
sampling_ratio : int, default -1
    The forward's sampling_ratio.
{roi_backward_layout}

{roi_backward_returns}

Examples
--------
>>> import numpy as np, poolspec
>>> g = poolspec.ps_roi_align_backward(np.ones((1, 1, 1, 1)), np.zeros((1, 1, 2, 2)),
...                                    np.array([[0, 0.0, 0.0, 2.0, 2.0]]), 1)
>>> g.ravel().tolist()
[0.25, 0.25, 0.25, 0.25]
""")


@_PS_ROI_ALIGN_BACKWARD_DOC.document(c_out="C / (PH * PW)")
def ps_roi_align_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                          spatial_scale: float = 1.0, sampling_ratio: int = -1, *,
                          layout: str = "channels_first") -> Array:
    if check_layout("ps_roi_align_backward", layout):
        return channels_last(ps_roi_align_backward, locals(), 2, ("grad_output", "x"))
    op = "ps_roi_align_backward"
    args = _ps_args(output_size, spatial_scale, sampling_ratio)
    rois = roi.rois(op, x, boxes)
    if in_graph(x):
        return graph_node(op, roi.node_args(args), grad_output, x, rois)
    namespace(grad_output, x, names=("grad_output", "x"), op=op)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    roi.check_grad(op, xp, dtype, grad_output, x, (p.K, p.C) + p.pooled)
    if is_dask_array(x):
        return roi.dask_map(ps_roi_align, ps_roi_align_backward, x, rc, args, p.K, p.pooled, grad_output,
                            channel_group=p.pooled[0] * p.pooled[1])
    return roi.apply(backward, p, xp, x, to_compute(xp, grad_output), to_compute(xp, x), rc)


def ps_roi_align_boxes_backward(grad_output: Array, x: Array, boxes: Any, output_size: int | tuple[int, int],
                                spatial_scale: float = 1.0, sampling_ratio: int = -1) -> Any:
    """The gradient of :func:`ps_roi_align` w.r.t. ``boxes`` for the cotangent ``grad_output`` (torchvision has
    none): roi_align's rule (:func:`roi_align_boxes_backward`) with ``aligned=True``, as ps_roi_align always
    shifts by -0.5 and never clamps the roi size; torch and JAX give the same through autodiff of ps_roi_align.

    Parameters
    ----------
    grad_output : array
        The cotangent (K, C / (PH * PW), PH, PW); x's dtype, library and device.
    x : array
        The forward's features (N, C, H, W).
    boxes : array or list of array
        The forward's boxes, (K, 5) or a list of (L, 4) arrays.
    output_size : int or tuple of int
        The forward's output_size.
    spatial_scale : float, default 1.0
        The forward's spatial_scale.
    sampling_ratio : int, default -1
        The forward's sampling_ratio.

    Returns
    -------
    array or list of array
        The gradient in the boxes' form: (K, 5) with 0 for the batch index, or a list of (L, 4) arrays.

    Raises
    ------
    ValueError
        If the forward's arguments are invalid (as in :func:`ps_roi_align`) or grad_output is not shaped like the
        forward's output.
    TypeError
        If the dtypes or libraries of the arrays differ, or the dtype is not floating.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)  # x[y, x] = 4 y + x
    >>> g = poolspec.ps_roi_align_boxes_backward(np.ones((1, 1, 1, 1)), x, np.array([[0, 1.0, 1.0, 3.0, 3.0]]),
    ...                                          1, sampling_ratio=1)
    >>> g.ravel().tolist()  # the sample moves half as far as either end: 1/2 and 4/2 per unit
    [0.0, 0.5, 2.0, 0.5, 2.0]
    """
    return _boxes_backward("ps_roi_align_boxes_backward", ps_roi_align_boxes_backward, grad_output, x, boxes,
                           _ps_args(output_size, spatial_scale, sampling_ratio), ps=True)


def _ps_roi_align_select(gg: Any, x: Any, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0,
                         sampling_ratio: int = -1) -> Any:
    """``gg`` (shaped like x) through the transpose of :func:`ps_roi_align_backward`: the forward's taps, with 0
    (not NaN or -0.0) in the bins without samples, to which the backward adds nothing (torch's capture node
    ``poolspec::ps_roi_align_select``)."""
    import dataclasses

    op = "ps_roi_align_backward"
    args = _ps_args(output_size, spatial_scale, sampling_ratio)
    rois = roi.rois(op, x, boxes)
    xp, dtype, rc, p = _resolve(op, x, rois, args, ps=True)
    check_cotangent(op, xp, gg, x, tuple(x.shape), "grad_grad_input")
    p = dataclasses.replace(p, groups=tuple(dataclasses.replace(gr, fill=0) for gr in p.groups))
    return roi.apply(forward, p, xp, x, to_compute(xp, gg), rc)
