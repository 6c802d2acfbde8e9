"""torchvision.ops' RoI functions on poolspec's kernels: the boxes' forms and torchvision's checks of them
(``_boxes``), then poolspec's op of the same name with the same numbers."""

from __future__ import annotations

from typing import Any

from ...._types import Array
from ....families._docs import Template
from ....families.roi_align.ops import ps_roi_align as _ps_roi_align
from ....families.roi_align.ops import roi_align as _roi_align
from ....families.roi_pool.ops import ps_roi_pool as _ps_roi_pool
from ....families.roi_pool.ops import roi_pool as _roi_pool
from ._boxes import pair, roi_boxes


def _template(text: str) -> Template:
    """A front-end function's docstring template, the RoI families' blocks (families/_docs.py) read for ``input``."""
    return Template(text, defaults={"arr": "input"})


_ROI_ALIGN_DOC = _template("""\
RoI Align (average of bilinear samples per bin), as ``torchvision.ops.roi_align``.

{torchvision_boxes}

Parameters
----------
input : array
    Features (N, C, H, W); float16, bfloat16, float32 or float64 (computed in float32 and rounded once for the
    half types), any array-API array.
{roi_boxes}
{roi_sampling_ratio}
aligned : bool, default False
    True: pixel centres at +0.5 (boxes shifted by -0.5), the roi size not clamped to 1.

{roi_returns}

{torchvision_raises}

{torchvision_examples}
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> ops.roi_align(x, [np.array([[0.0, 0.0, 2.0, 2.0]])], 1, aligned=True).ravel().tolist()
[2.5]
""")


@_ROI_ALIGN_DOC.document(refused=" (a batch index outside input)")
def roi_align(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0, sampling_ratio: int = -1,
              aligned: bool = False) -> Array:
    rois = roi_boxes("roi_align", input, boxes)
    return _roi_align(input, rois, pair("roi_align", output_size), spatial_scale, sampling_ratio, aligned)


_ROI_POOL_DOC = _template("""\
RoI max pooling over rounded integer windows, as ``torchvision.ops.roi_pool``.

{torchvision_boxes}

Parameters
----------
input : array
    Features (N, C, H, W); float16, bfloat16, float32 or float64, any array-API array.
{roi_boxes}

{roi_returns}

{torchvision_raises}

{torchvision_examples}
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> ops.roi_pool(x, np.array([[0, 0.0, 0.0, 3.0, 3.0]]), 2).ravel().tolist()
[5.0, 7.0, 13.0, 15.0]
""")


@_ROI_POOL_DOC.document(kernel=": corners rounded, bins floored and ceiled, an empty bin 0")
def roi_pool(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Array:
    rois = roi_boxes("roi_pool", input, boxes)
    return _roi_pool(input, rois, pair("roi_pool", output_size), spatial_scale)


_PS_ROI_ALIGN_DOC = _template("""\
Position-sensitive RoI Align, as ``torchvision.ops.ps_roi_align``: bin (i, j) of output channel c averages
bilinear samples of input channel (c * PH + i) * PW + j.

{torchvision_boxes}

Parameters
----------
input : array
    Features (N, C, H, W), C a multiple of PH * PW; float16, float32 or float64, any array-API array.
{roi_boxes}
{roi_sampling_ratio}

{roi_returns}

{torchvision_raises}

{torchvision_examples}
>>> x = np.arange(16.0).reshape(1, 4, 2, 2)  # 4 channels: one per bin of a 2 x 2 output
>>> ops.ps_roi_align(x, np.array([[0, 0.0, 0.0, 1.0, 1.0]]), 2, sampling_ratio=1).shape
(1, 1, 2, 2)
""")


@_PS_ROI_ALIGN_DOC.document(c_out="C / (PH * PW)", refused=" (C not a multiple of PH * PW)")
def ps_roi_align(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0,
                 sampling_ratio: int = -1) -> Array:
    rois = roi_boxes("ps_roi_align", input, boxes)
    return _ps_roi_align(input, rois, pair("ps_roi_align", output_size), spatial_scale, sampling_ratio)


_PS_ROI_POOL_DOC = _template("""\
Position-sensitive RoI pooling, as ``torchvision.ops.ps_roi_pool``: bin (i, j) of output channel c averages
input channel (c * PH + i) * PW + j over the bin's rounded integer window.

{torchvision_boxes}

Parameters
----------
input : array
    Features (N, C, H, W), C a multiple of PH * PW; float16, float32 or float64, any array-API array.
{roi_boxes}

{roi_returns}

{torchvision_raises}

{torchvision_examples}
>>> x = np.ones((1, 4, 4, 4))
>>> ops.ps_roi_pool(x, [np.array([[0.0, 0.0, 3.0, 3.0]])], 2).ravel().tolist()
[1.0, 1.0, 1.0, 1.0]
""")


@_PS_ROI_POOL_DOC.document(c_out="C / (PH * PW)", refused=" (C not a multiple of PH * PW)")
def ps_roi_pool(input: Array, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Array:
    rois = roi_boxes("ps_roi_pool", input, boxes)
    return _ps_roi_pool(input, rois, pair("ps_roi_pool", output_size), spatial_scale)
