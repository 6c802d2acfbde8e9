"""torchvision.ops.poolers on poolspec's roi_align: :class:`MultiScaleRoIAlign` (the FPN pooler) and its
:class:`LevelMapper`, with torchvision 0.29's arithmetic.

The scales are inferred as torchvision's ``_infer_scale`` does (the feature map's height over the largest image
height, rounded to a power of two through float32's log2), the levels are ``floor(lvl0 + log2(sqrt(area) / s0) +
eps)`` clamped to [k_min, k_max] in the boxes' dtype (float16 boxes in float32, as box_area upcasts them), and each
level's rois go through :func:`poolspec.roi_align` (sampling_ratio, aligned=False); the results are put back in the
boxes' order by a gather (a permutation: its gradient is a permutation too). A roi whose level has no feature map
(levels that skip a power of two) or whose area is negative (NaN level) pools to zeros, as in torchvision.

>>> import numpy as np
>>> from poolspec.frontends.torchvision.ops import poolers
>>> poolers.LevelMapper(2, 5)([np.array([[0.0, 0.0, 224.0, 224.0], [0.0, 0.0, 32.0, 32.0]])]).tolist()
[2, 0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...._compat import device, namespace, readable, to_host, to_namespace
from ....families.roi_align.ops import roi_align
from ..._common import fail
from ...torch.nn.modules import Module, _plain

HOME = "poolspec.frontends.torchvision.ops"


def _float_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


class LevelMapper:
    """The FPN level of each roi, as ``torchvision.ops.poolers.LevelMapper``: ``floor(lvl0 + log2(sqrt(area) / s0)
    + eps)`` clamped to [k_min, k_max], minus k_min (int64), in the boxes' dtype (float16 and bfloat16 boxes in
    float32, torchvision's box_area upcast); a NaN level (a negative area) is -1 here (torchvision's int cast of NaN
    matches no level either).

    Parameters
    ----------
    k_min : int
        The finest level (the first feature map's).
    k_max : int
        The coarsest level.
    canonical_scale : int, default 224
        s0: the box size that maps to canonical_level.
    canonical_level : int, default 4
        lvl0.
    eps : float, default 1e-6
        Added before the floor, in the boxes' dtype.

    Returns
    -------
    array
        ``mapper(boxlists)``: the level index of each box of the list of (L, 4) arrays, int64, the boxes'
        namespace.

    Raises
    ------
    ValueError
        If boxlists is not a non-empty list of (L, 4) arrays.
    TypeError
        If the boxes are not arrays of one library.

    Examples
    --------
    >>> import numpy as np
    >>> LevelMapper(2, 5)([np.array([[0.0, 0.0, 500.0, 500.0]])]).tolist()
    [3]
    """

    def __init__(self, k_min: int, k_max: int, canonical_scale: int = 224, canonical_level: int = 4,
                 eps: float = 1e-6) -> None:
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists: Any) -> Any:
        boxes = _box_list("LevelMapper", "boxlists", boxlists)
        xp = namespace(*boxes, names=tuple(f"boxlists[{i}]" for i in range(len(boxes))), op="LevelMapper")
        b = xp.concat(list(boxes), axis=0) if len(boxes) > 1 else boxes[0]
        if _float_name(b.dtype) not in ("float32", "float64"):
            b = xp.astype(b, xp.float32)  # torchvision's box_area upcasts (_upcast)
        area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        # an empty box's log2 is -inf, a negative (or NaN) area's NaN, as torch's; put back after the log so that
        # no library warns (NumPy's and Dask's would, each where it computes)
        inside = area > 0
        s = xp.sqrt(xp.where(inside, area, xp.ones_like(area)))
        lg = xp.log2(s / float(self.s0))
        lg = xp.where(inside, lg, xp.where(area == 0, xp.full_like(lg, -np.inf), xp.full_like(lg, np.nan)))
        t = xp.floor(float(self.lvl0) + lg + xp.asarray(self.eps, dtype=s.dtype, device=device(s)))
        t = xp.clip(t, float(self.k_min), float(self.k_max))
        nan = xp.isnan(t)
        t = xp.where(nan, xp.full_like(t, float(self.k_min - 1)), t)
        return xp.astype(t, xp.int64) - self.k_min


def initLevelMapper(k_min: int, k_max: int, canonical_scale: int = 224, canonical_level: int = 4,
                    eps: float = 1e-6) -> LevelMapper:
    """torchvision's factory of :class:`LevelMapper` (the same arguments).

    Parameters
    ----------
    k_min : int
        The finest level.
    k_max : int
        The coarsest level.
    canonical_scale : int, default 224
        s0.
    canonical_level : int, default 4
        lvl0.
    eps : float, default 1e-6
        Added before the floor.

    Returns
    -------
    LevelMapper
        The mapper.

    Raises
    ------
    ValueError
        Never at construction (the mapper checks its boxes).

    Examples
    --------
    >>> initLevelMapper(2, 5).s0
    224
    """
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _box_list(function: str, name: str, boxes: Any) -> list[Any]:
    if not isinstance(boxes, (list, tuple)) or not boxes:
        fail(function, name, type(boxes).__name__ if not isinstance(boxes, (list, tuple)) else boxes,
             "must be a non-empty list of (L, 4) arrays, one per image (torchvision concatenates them)",
             ValueError if isinstance(boxes, (list, tuple)) else TypeError)
    for i, b in enumerate(boxes):
        if not (hasattr(b, "shape") and hasattr(b, "dtype")):
            fail(function, f"{name}[{i}]", type(b).__name__, "must be an (L, 4) array", TypeError)
        if len(b.shape) != 2 or b.shape[1] != 4:
            fail(function, f"{name}[{i}].shape", tuple(b.shape), "must be (L, 4): x1, y1, x2, y2 per box")
    return list(boxes)


def _infer_scale(feature: Any, original_size: Any) -> float:
    """torchvision's: the power of two nearest (in float32's log2, rounded half to even) to the feature map's
    size over the image's, of the first axis (height)."""
    size = tuple(feature.shape[-2:])
    possible_scales: list[float] = []
    for s1, s2 in zip(size, original_size):
        approx_scale = float(s1) / float(s2)
        scale = 2 ** float(np.round(np.log2(np.float32(approx_scale))))
        possible_scales.append(scale)
    return possible_scales[0]


def _setup_scales(features: list[Any], image_shapes: Any, canonical_scale: int,
                  canonical_level: int) -> tuple[list[float], LevelMapper]:
    """torchvision's: each feature map's scale against the largest image (height, width), and the level mapper
    from the first and last maps' levels (-log2 of their scales, truncated to int)."""
    if not image_shapes:
        raise ValueError("MultiScaleRoIAlign: image_shapes=[]: images list should not be empty")
    if not features:
        raise ValueError("MultiScaleRoIAlign: x: no feature map is named in featmap_names")
    max_x = 0
    max_y = 0
    for shape in image_shapes:
        max_x = max(shape[0], max_x)
        max_y = max(shape[1], max_y)
    original_input_shape = (max_x, max_y)
    scales = [_infer_scale(feat, original_input_shape) for feat in features]
    lvl_min = float(-np.log2(np.float32(scales[0])))
    lvl_max = float(-np.log2(np.float32(scales[-1])))
    return scales, initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                   canonical_level=canonical_level)


def _filter_input(x: Mapping[str, Any], featmap_names: Any) -> list[Any]:
    if not isinstance(x, Mapping):
        fail("MultiScaleRoIAlign", "x", type(x).__name__, "must be a dict of feature maps (name: (N, C, H, W))",
             TypeError)
    return [v for k, v in x.items() if k in featmap_names]


def _multiscale_roi_align(x_filtered: list[Any], boxes: list[Any], output_size: Any,
                          sampling_ratio: int, scales: list[float], mapper: LevelMapper) -> Any:
    """torchvision's: one level, roi_align at its scale; else each roi at its level's map, put back in order."""
    first = x_filtered[0]
    xp = namespace(first, *boxes, names=("x",) + tuple(f"boxes[{i}]" for i in range(len(boxes))),
                   op="MultiScaleRoIAlign")
    rois = xp.concat([xp.concat([xp.full((b.shape[0], 1), float(i), dtype=b.dtype, device=device(b)), b], axis=1)
                      for i, b in enumerate(boxes)], axis=0)
    if len(x_filtered) == 1:
        return roi_align(first, rois, output_size, spatial_scale=scales[0], sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    K, C = int(rois.shape[0]), int(first.shape[1])
    dtype = first.dtype
    if not readable(levels):  # traced boxes (jax.jit): every level's pooling of every roi, kept where it is theirs
        out = xp.zeros((K, C, *output_size), dtype=dtype, device=device(first))
        for level, (feature, scale) in enumerate(zip(x_filtered, scales)):
            pooled = xp.astype(roi_align(feature, rois, output_size, spatial_scale=scale,
                                         sampling_ratio=sampling_ratio), dtype)
            mine = xp.reshape(levels == level, (K, 1, 1, 1))
            out = xp.where(mine, pooled, out)
        return out
    host = to_host(levels)
    parts, position = [], []
    for level, (feature, scale) in enumerate(zip(x_filtered, scales)):
        members = np.flatnonzero(host == level)
        sel = xp.take(rois, to_namespace(members.astype(np.int64), xp, rois), axis=0)
        parts.append(xp.astype(roi_align(feature, sel, output_size, spatial_scale=scale,
                                         sampling_ratio=sampling_ratio), dtype))
        position += members.tolist()
    rest = np.setdiff1d(np.arange(K), np.asarray(position, dtype=np.int64))
    if rest.size:  # a level without a feature map, or a NaN level: zeros, as torchvision's result buffer
        parts.append(xp.zeros((int(rest.size), C, *output_size), dtype=dtype, device=device(first)))
        position += rest.tolist()
    order = np.empty(K, np.int64)
    order[np.asarray(position, dtype=np.int64)] = np.arange(K)
    stacked = xp.concat(parts, axis=0)
    if np.array_equal(order, np.arange(K)):
        return stacked
    return xp.take(stacked, to_namespace(order, xp, stacked), axis=0)


@_plain
class MultiScaleRoIAlign(Module):
    """Multi-scale RoIAlign pooling (FPN), as ``torchvision.ops.MultiScaleRoIAlign``.

    ``forward(x, boxes, image_shapes)`` keeps the maps of the dict ``x`` named in featmap_names (in x's order),
    infers their scales from the largest image (once: they are kept, as torchvision's), maps each roi to a level
    (``floor(canonical_level + log2(sqrt(area) / canonical_scale) + 1e-6)``, clamped) and pools it there with
    :func:`poolspec.roi_align` (sampling_ratio, aligned=False).

    Parameters
    ----------
    featmap_names : list of str
        The names of the feature maps to pool from.
    output_size : int or tuple of int
        The bins per roi (PH, PW); stored as a tuple.
    sampling_ratio : int
        roi_align's sampling_ratio.
    canonical_scale : int, default 224
        s0 of the level heuristic (keyword only).
    canonical_level : int, default 4
        lvl0 of the level heuristic (keyword only).

    Returns
    -------
    array
        ``forward(x, boxes, image_shapes)``: (K, C, PH, PW) for the K boxes of the list ``boxes`` (one (L, 4)
        array per image, in image coordinates), in the first kept map's dtype.

    Raises
    ------
    ValueError
        At the call: image_shapes empty, no map named, boxes not a non-empty list of (L, 4) arrays, or roi_align's
        refusals.
    TypeError
        At the call: x not a dict, or arrays of different libraries or dtypes.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> m = ops.MultiScaleRoIAlign(["feat1", "feat3"], 3, 2)
    >>> x = {"feat1": np.ones((1, 5, 64, 64)), "feat3": np.ones((1, 5, 16, 16))}
    >>> m(x, [np.array([[0.0, 0.0, 100.0, 100.0]])], [(512, 512)]).shape
    (1, 5, 3, 3)
    >>> m
    MultiScaleRoIAlign(featmap_names=['feat1', 'feat3'], output_size=(3, 3), sampling_ratio=2)
    """

    _poolspec_home = HOME

    def __init__(self, featmap_names: list[str], output_size: Any, sampling_ratio: int, *,
                 canonical_scale: int = 224, canonical_level: int = 4) -> None:
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales: list[float] | None = None
        self.map_levels: LevelMapper | None = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x: Mapping[str, Any], boxes: list[Any], image_shapes: list[tuple[int, int]]) -> Any:
        x_filtered = _filter_input(x, self.featmap_names)
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes, self.canonical_scale,
                                                         self.canonical_level)
        boxes = _box_list("MultiScaleRoIAlign", "boxes", boxes)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio, self.scales,
                                     self.map_levels)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})")
