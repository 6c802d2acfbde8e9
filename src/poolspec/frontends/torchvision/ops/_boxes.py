"""torchvision.ops' box arguments: ``check_roi_boxes_shape``'s rules (its AssertionError and IndexError as
ValueError, a box argument that is no array as TypeError) and ``convert_boxes_to_roi_format``."""

from __future__ import annotations

from typing import Any

from ....families._roi.ops import rois as _rois
from ..._common import fail, ints


def _is_array(a: Any) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (list, tuple))


def roi_boxes(function: str, input: Any, boxes: Any) -> Any:
    """``boxes`` as one (K, 5) array, after torchvision's check_roi_boxes_shape: a list (or tuple) of (L, 4)
    arrays gains its image index column (in the boxes' dtype), a (K, 5) array is kept."""
    if isinstance(boxes, (list, tuple)):
        if not boxes:
            fail(function, "boxes", boxes, "an empty list: torchvision concatenates the per-image boxes, and "
                 "torch.cat refuses an empty list (pass a (0, 5) array for no boxes)")
        for i, b in enumerate(boxes):
            if not _is_array(b):
                fail(function, f"boxes[{i}]", type(b).__name__, "must be an (L, 4) array", TypeError)
            if len(b.shape) != 2 or b.shape[1] != 4:
                fail(function, f"boxes[{i}].shape", tuple(b.shape), "The shape of the tensor in the boxes list is "
                     "not correct as List[Tensor[L, 4]] (torchvision's check_roi_boxes_shape)")
        return _rois(function, input, list(boxes))
    if not _is_array(boxes):
        fail(function, "boxes", type(boxes).__name__, "boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, "
             "4]] (torchvision's check_roi_boxes_shape)", TypeError)
    if len(boxes.shape) != 2 or boxes.shape[1] != 5:
        fail(function, "boxes.shape", tuple(boxes.shape), "The boxes tensor shape is not correct as Tensor[K, 5] "
             "(torchvision's check_roi_boxes_shape)")
    return boxes


def pair(function: str, output_size: Any) -> tuple[int, int]:
    """torch's ``_pair``: an int for both axes, else the sequence as it is, which must hold 2 ints (torchvision
    reads output_size[0] and output_size[1]: a longer one's tail is ignored there, refused here)."""
    if isinstance(output_size, (list, tuple)) or _is_array(output_size):
        sizes = ints(function, "output_size", output_size, "must be an int or a sequence of 2 ints")
        if len(sizes) != 2:
            fail(function, "output_size", output_size, "must be an int or a sequence of 2 ints (height, width)")
        return sizes[0], sizes[1]
    (size,) = ints(function, "output_size", (output_size,), "must be an int or a sequence of 2 ints",
                   shown=output_size)
    return size, size
