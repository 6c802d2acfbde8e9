"""torchvision.ops' RoI functions on poolspec's kernels: the boxes' forms and torchvision's checks of them
(``_boxes``), then poolspec's op of the same name with the same numbers."""

from __future__ import annotations

from typing import Any

from ...._types import Array
from ....families.roi_align.ops import ps_roi_align as _ps_roi_align
from ....families.roi_align.ops import roi_align as _roi_align
from ....families.roi_pool.ops import ps_roi_pool as _ps_roi_pool
from ....families.roi_pool.ops import roi_pool as _roi_pool
from ._boxes import pair, roi_boxes


def roi_align(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0, sampling_ratio: int = -1,
              aligned: bool = False) -> Array:
    """RoI Align (average of bilinear samples per bin), as ``torchvision.ops.roi_align``.

    ``boxes`` pass torchvision's shape check (a list of (L, 4) arrays gains its image index), output_size is read
    as torch's ``_pair``, and the numbers are :func:`poolspec.roi_align`'s, torchvision's CPU and CUDA kernels'.

    Parameters
    ----------
    input : array
        Features (N, C, H, W); float16, bfloat16, float32 or float64 (computed in float32 and rounded once for the
        half types), any array-API array.
    boxes : array or list of array
        A (K, 5) array (batch index, x1, y1, x2, y2) or a list of (L, 4) arrays, one per image; input's library
        and dtype.
    output_size : int or tuple of int
        The bins per roi (PH, PW); one int for both.
    spatial_scale : float, default 1.0
        The factor from box coordinates to input's cells.
    sampling_ratio : int, default -1
        Samples per bin along each axis; <= 0: ceil(roi size / output size), adaptive per roi.
    aligned : bool, default False
        True: pixel centres at +0.5 (boxes shifted by -0.5), the roi size not clamped to 1.

    Returns
    -------
    array
        (K, C, PH, PW), input's dtype, namespace and device.

    Raises
    ------
    ValueError
        If boxes break torchvision's shape rule (Tensor[K, 5] or List[Tensor[L, 4]]), the list is empty,
        output_size is not one or two ints, or poolspec.roi_align refuses the values (a batch index outside input).
    TypeError
        If boxes is neither an array nor a list of arrays, or the arrays' libraries or dtypes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> ops.roi_align(x, [np.array([[0.0, 0.0, 2.0, 2.0]])], 1, aligned=True).ravel().tolist()
    [2.5]
    """
    rois = roi_boxes("roi_align", input, boxes)
    return _roi_align(input, rois, pair("roi_align", output_size), spatial_scale, sampling_ratio, aligned)


def roi_pool(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Array:
    """RoI max pooling over rounded integer windows, as ``torchvision.ops.roi_pool``.

    ``boxes`` pass torchvision's shape check (a list of (L, 4) arrays gains its image index), output_size is read
    as torch's ``_pair``, and the numbers are :func:`poolspec.roi_pool`'s (torchvision's kernel: corners rounded,
    bins floored and ceiled, an empty bin 0).

    Parameters
    ----------
    input : array
        Features (N, C, H, W); float16, bfloat16, float32 or float64, any array-API array.
    boxes : array or list of array
        A (K, 5) array (batch index, x1, y1, x2, y2) or a list of (L, 4) arrays, one per image; input's library
        and dtype.
    output_size : int or tuple of int
        The bins per roi (PH, PW); one int for both.
    spatial_scale : float, default 1.0
        The factor from box coordinates to input's cells.

    Returns
    -------
    array
        (K, C, PH, PW), input's dtype, namespace and device.

    Raises
    ------
    ValueError
        If boxes break torchvision's shape rule (Tensor[K, 5] or List[Tensor[L, 4]]), the list is empty,
        output_size is not one or two ints, or poolspec.roi_pool refuses the values.
    TypeError
        If boxes is neither an array nor a list of arrays, or the arrays' libraries or dtypes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> ops.roi_pool(x, np.array([[0, 0.0, 0.0, 3.0, 3.0]]), 2).ravel().tolist()
    [5.0, 7.0, 13.0, 15.0]
    """
    rois = roi_boxes("roi_pool", input, boxes)
    return _roi_pool(input, rois, pair("roi_pool", output_size), spatial_scale)


def ps_roi_align(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0,
                 sampling_ratio: int = -1) -> Array:
    """Position-sensitive RoI Align, as ``torchvision.ops.ps_roi_align``: bin (i, j) of output channel c averages
    bilinear samples of input channel (c * PH + i) * PW + j.

    ``boxes`` pass torchvision's shape check (a list of (L, 4) arrays gains its image index), output_size is read
    as torch's ``_pair``, and the numbers are poolspec.ps_roi_align's (torchvision's kernel's).

    Parameters
    ----------
    input : array
        Features (N, C, H, W), C a multiple of PH * PW; float16, float32 or float64, any array-API array.
    boxes : array or list of array
        A (K, 5) array (batch index, x1, y1, x2, y2) or a list of (L, 4) arrays, one per image; input's library
        and dtype.
    output_size : int or tuple of int
        The bins per roi (PH, PW); one int for both.
    spatial_scale : float, default 1.0
        The factor from box coordinates to input's cells.
    sampling_ratio : int, default -1
        Samples per bin along each axis; <= 0: ceil(roi size / output size), adaptive per roi.

    Returns
    -------
    array
        (K, C / (PH * PW), PH, PW), input's dtype, namespace and device.

    Raises
    ------
    ValueError
        If boxes break torchvision's shape rule, the list is empty, output_size is not one or two ints, or
        poolspec.ps_roi_align refuses the values (C not a multiple of PH * PW).
    TypeError
        If boxes is neither an array nor a list of arrays, or the arrays' libraries or dtypes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> x = np.arange(16.0).reshape(1, 4, 2, 2)  # 4 channels: one per bin of a 2 x 2 output
    >>> ops.ps_roi_align(x, np.array([[0, 0.0, 0.0, 1.0, 1.0]]), 2, sampling_ratio=1).shape
    (1, 1, 2, 2)
    """
    rois = roi_boxes("ps_roi_align", input, boxes)
    return _ps_roi_align(input, rois, pair("ps_roi_align", output_size), spatial_scale, sampling_ratio)


def ps_roi_pool(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Array:
    """Position-sensitive RoI pooling, as ``torchvision.ops.ps_roi_pool``: bin (i, j) of output channel c averages
    input channel (c * PH + i) * PW + j over the bin's rounded integer window.

    ``boxes`` pass torchvision's shape check (a list of (L, 4) arrays gains its image index), output_size is read
    as torch's ``_pair``, and the numbers are poolspec.ps_roi_pool's (torchvision's kernel's).

    Parameters
    ----------
    input : array
        Features (N, C, H, W), C a multiple of PH * PW; float16, float32 or float64, any array-API array.
    boxes : array or list of array
        A (K, 5) array (batch index, x1, y1, x2, y2) or a list of (L, 4) arrays, one per image; input's library
        and dtype.
    output_size : int or tuple of int
        The bins per roi (PH, PW); one int for both.
    spatial_scale : float, default 1.0
        The factor from box coordinates to input's cells.

    Returns
    -------
    array
        (K, C / (PH * PW), PH, PW), input's dtype, namespace and device.

    Raises
    ------
    ValueError
        If boxes break torchvision's shape rule, the list is empty, output_size is not one or two ints, or
        poolspec.ps_roi_pool refuses the values (C not a multiple of PH * PW).
    TypeError
        If boxes is neither an array nor a list of arrays, or the arrays' libraries or dtypes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> x = np.ones((1, 4, 4, 4))
    >>> ops.ps_roi_pool(x, [np.array([[0.0, 0.0, 3.0, 3.0]])], 2).ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    rois = roi_boxes("ps_roi_pool", input, boxes)
    return _ps_roi_pool(input, rois, pair("ps_roi_pool", output_size), spatial_scale)
