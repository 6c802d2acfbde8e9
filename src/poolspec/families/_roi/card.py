"""What the RoI families' cards share: the checks of the image, the bins and the boxes' shape, the arguments x,
boxes, output_size and spatial_scale, the notes on the batch index and the boxes' forms, the examples and torch's
determinism.

>>> check_bins("roi_pool", dict(output_size=3, spatial_scale=0.5))
((3, 3), 0.5)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...spec._card import REQUIRED, Argument, Example, Resolved
from ...spec._rules import checked_shape, fail, int_tuple

BATCH_INDEX = ("per roi (batch index b, x1, y1, x2, y2): b is truncated to an int (torchvision's cast) and must lie "
               "in [0, N)")
BOXES = ("boxes: a (K, 5) array (batch index first) or a list of (L, 4) arrays, one per image in batch order (the "
         "list's position is the batch index, as torchvision's convert_boxes_to_roi_format); x's dtype and device")
TORCH_DETERMINISM = ("torchvision's CUDA backward adds with atomicAdd (nondeterministic; torchvision falls back to a "
                     "Python implementation under use_deterministic_algorithms); its CPU backward is serial")


def arguments() -> tuple[Argument, ...]:
    """The arguments every RoI op takes first: x, boxes, output_size, spatial_scale."""
    return (
        Argument("x", "array", constraints=("(N, C, H, W)", "H, W > 0"), description="the images"),
        Argument("boxes", "array | list[array]",
                 constraints=("(K, 5) (batch index, x1, y1, x2, y2) or a list of (L, 4), one per image",
                              "batch indices in [0, N)", "finite", "x's dtype and device"),
                 description="the regions, in input coordinates before spatial_scale", like="x"),
        Argument("output_size", "int | tuple[int x 2]", REQUIRED, ("entries >= 0",),
                 "the bins per roi (PH, PW)"),
        Argument("spatial_scale", "float", 1.0, ("finite",), "box coordinates times this are x's pixels"),
    )


def examples(**detector: Any) -> tuple[Example, ...]:
    """A detector's call (a ResNet stride-16 map, 7 x 7 bins, ``detector``'s further arguments) and a small one."""
    return (Example(("N", 256, 50, 68), dict(boxes=("K", 5), output_size=7, spatial_scale=0.0625, **detector)),
            Example((2, 3, 16, 16), dict(boxes=(5, 5), output_size=(3, 2))))


def check_image(op: str, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """x's shape: (N, C, H, W) with H and W known and non-empty."""
    shape = checked_shape(op, "x", shape, (4,))
    for i in (2, 3):
        if isinstance(shape[i], str):
            fail(op, "x", shape, f"spatial dimension {i} must be an integer, not a symbol", TypeError)
        if shape[i] == 0:
            fail(op, "x", shape, f"spatial dimension {i} is empty; {op} reads a non-empty image")
    return shape


def check_bins(op: str, a: dict[str, Any]) -> tuple[tuple[int, ...], float]:
    """output_size (two entries >= 0) and spatial_scale (a finite real number), as the resolved params hold them."""
    size = int_tuple(op, "output_size", a["output_size"], 2)
    if min(size) < 0:
        fail(op, "output_size", a["output_size"], "every entry must be >= 0")
    scale = a["spatial_scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) and not hasattr(scale, "__float__"):
        fail(op, "spatial_scale", scale, "must be a real number", TypeError)
    scale = float(scale)
    if scale != scale or scale in (float("inf"), float("-inf")):
        fail(op, "spatial_scale", scale, "must be finite")
    return size, scale


def check_boxes(op: str, a: dict[str, Any]) -> tuple[Any, ...]:
    """The boxes' shape (a card sees shapes): (K, 5)."""
    boxes = a["boxes"]
    if not isinstance(boxes, (tuple, list)):
        fail(op, "boxes", boxes, "must be given as the boxes' shape (a tuple)", TypeError)
    boxes = checked_shape(op, "boxes.shape", boxes, (2,))
    if boxes[1] != 5:
        fail(op, "boxes.shape", boxes, "must be (K, 5): batch index, x1, y1, x2, y2 per roi")
    return boxes


def resolved(op: str, shape: tuple[Any, ...], boxes: tuple[Any, ...], size: tuple[int, ...],
             params: dict[str, Any], channel_group: int = 1) -> Resolved:
    """The resolved call: (K, C // channel_group, PH, PW), ``params`` with the boxes' shape and x's spatial size."""
    channels = shape[1] if channel_group == 1 or isinstance(shape[1], str) else shape[1] // channel_group
    params = dict(params, boxes=tuple(boxes), in_spatial=(int(shape[2]), int(shape[3])))
    return Resolved(op, shape, (boxes[0], channels) + size, params, True)


def check_groups(op: str, shape: tuple[Any, ...], a: dict[str, Any]) -> int:
    """A position-sensitive op's own rules (ps_roi_align's, ps_roi_pool's): output_size entries >= 1 and C a
    multiple of PH * PW; returns PH * PW, the input channels per output channel."""
    size = int_tuple(op, "output_size", a["output_size"], 2)
    if min(size) < 1:
        fail(op, "output_size", a["output_size"], "every entry must be >= 1 (the channels are split into PH * PW "
             "groups)")
    shape = checked_shape(op, "x", shape, (4,))
    if not isinstance(shape[1], str) and shape[1] % (size[0] * size[1]):
        fail(op, "x / output_size", f"x channels {shape[1]}, output_size {size}", "x's channels must be a "
             f"multiple of PH * PW = {size[0] * size[1]} (one input channel per output channel and bin)")
    return size[0] * size[1]


def grouped(op: str, r: Resolved, group: int) -> Resolved:
    """The plain twin's resolved call as a position-sensitive op's: (K, C / group, PH, PW) (a symbol C: "C/group")."""
    K, C, PH, PW = r.output_shape
    return Resolved(op, r.input_shape, (K, f"{C}/{group}" if isinstance(C, str) else C // group, PH, PW), r.params,
                    True)


def grouped_arguments() -> tuple[Argument, ...]:
    """A position-sensitive op's first arguments: :func:`arguments` with C a multiple of PH * PW and output_size
    entries >= 1."""
    x, boxes, size, scale = arguments()
    return (replace(x, constraints=x.constraints + ("C a multiple of PH * PW",),
                    description="the images, PH * PW channel groups per output channel"), boxes,
            replace(size, constraints=("entries >= 1",)), scale)


def grouped_examples(**detector: Any) -> tuple[Example, ...]:
    """R-FCN's call (10 output channels of 7 x 7 bins on a stride-16 map, ``detector``'s further arguments) and a
    small one."""
    return (Example(("N", 490, 38, 50), dict(boxes=("K", 5), output_size=7, spatial_scale=0.0625, **detector)),
            Example((2, 12, 16, 16), dict(boxes=(5, 5), output_size=(3, 2))))

