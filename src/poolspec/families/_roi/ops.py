"""The RoI families' call plumbing: the boxes' two forms (``rois``), the arguments a capture node carries
(``node_args``), a kernel run in x's dtype (``apply``), a backward's cotangent checks (``check_grad``) and Dask's
channel blocks (``dask_map``).

>>> import numpy as np
>>> rois("roi_align", np.zeros((2, 1, 4, 4)), [np.ones((1, 4)), np.ones((2, 4))])[:, 0].tolist()
[0.0, 1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._calls import check_cotangent, check_like
from ..._compat import is_dask_array, is_jax_array, namespace, on
from ...autodiff import compose
from ...spec._rules import fail


def rois(op: str, x: Any, boxes: Any) -> Any:
    """The boxes as one (K, 5) array: a list of (L, 4) arrays, one per image, gains its batch index column."""
    if not isinstance(boxes, (list, tuple)):
        return boxes
    xp = namespace(x, *boxes, names=("x",) + tuple(f"boxes[{i}]" for i in range(len(boxes))), op=op)
    parts = []
    for i, b in enumerate(boxes):
        if len(b.shape) != 2 or b.shape[1] != 4:
            fail(op, f"boxes[{i}].shape", tuple(b.shape), "must be (L, 4): x1, y1, x2, y2 per box of image "
                 f"{i} (a list of boxes holds one (L, 4) array per image)")
        check_like(op, xp, f"boxes[{i}]", b, "x", x)
        parts.append(xp.concat([xp.full((b.shape[0], 1), float(i), dtype=b.dtype, **on(b)), b], axis=1))
    if not parts:
        return xp.zeros((0, 5), dtype=x.dtype, **on(x))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def node_args(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments a capture node carries: spatial_scale as its exact ratio of two ints (Dynamo cannot write a
    float into the node's argument string; ``capture.arguments`` divides them back, exactly)."""
    scale = args["spatial_scale"]
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        return dict(args, spatial_scale=float(scale).as_integer_ratio())
    return args


def check_grad(op: str, xp: Any, dtype: str, grad_output: Any, x: Any, shape: tuple[int, ...]) -> None:
    """A backward's checks: a floating dtype, and a cotangent of the forward's output ``shape``."""
    if not dtype.startswith(("float", "bfloat")):
        raise TypeError(f"{op}: x.dtype={dtype!r}: gradients need a floating dtype")
    check_cotangent(op, xp, grad_output, x, shape)


def apply(kernel: Callable[..., Any], p: Any, xp: Any, x: Any, *arrays: Any) -> Any:
    """``kernel(p, *arrays)`` (on JAX one composed program), in x's dtype."""
    out = compose(kernel, (p,), *arrays) if is_jax_array(x) else kernel(p, *arrays)
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


def _grouped(chans: tuple[int, ...], group: int) -> tuple[int, ...]:
    """Channel chunks whose every boundary is moved up to a multiple of ``group``."""
    ends = sorted({min(sum(chans), -(-end // group) * group) for end in np.cumsum(chans).tolist()})
    return tuple(int(b - a) for a, b in zip([0] + ends[:-1], ends) if b > a)


def dask_map(forward: Callable[..., Any], backward: Callable[..., Any], x: Any, rois: Any, args: dict[str, Any],
             K: int, pooled: tuple[int, int], grad: Any = None, channel_group: int = 1) -> Any:
    """``forward(x, boxes, **args)`` (or, with ``grad``, ``backward(grad, x, boxes, **args)``) as one task per
    channel block: an roi reads anywhere in its image, so images stay whole; the boxes, small, go as NumPy to every
    task. Output channel c reads input channels c * channel_group to (c + 1) * channel_group - 1 (1: channel c;
    a position-sensitive op: its bins' groups), so x's channel blocks are widened to multiples of the group."""
    import dask.array as da

    boxes = np.asarray(rois.compute()) if is_dask_array(rois) else np.asarray(rois)
    boxes = boxes.astype(x.dtype) if boxes.dtype != x.dtype else boxes
    chans = x.chunks[1] if channel_group == 1 else _grouped(x.chunks[1], channel_group)
    outs = tuple(c // channel_group for c in chans)
    x = x.rechunk(((x.shape[0],), chans, (x.shape[2],), (x.shape[3],)))
    meta = np.empty((0, 0, 0, 0), dtype=x.dtype)
    if grad is None:
        return da.map_blocks(lambda xb: forward(xb, boxes, **args), x, dtype=x.dtype, meta=meta,
                             chunks=((K,), outs, (pooled[0],), (pooled[1],)))
    grad = grad.rechunk(((grad.shape[0],), outs, (grad.shape[2],), (grad.shape[3],)))
    return da.map_blocks(lambda gb, xb: backward(gb, xb, boxes, **args), grad, x, dtype=x.dtype,
                         meta=meta, chunks=x.chunks)
