"""The card of roi_pool (torchvision.ops.roi_pool): its rules were read from torchvision 0.29.1's CPU kernel and
checked against live torchvision (torch 2.14.1) on random configurations by ``scripts/check_roi_pool_rules.py``,
whose stored counts are ``scripts/roi_pool_rules_counts.json`` (the last note says what they were)."""

from __future__ import annotations

from typing import Any

from ...spec._card import Card, Gradient, Port, Resolved
from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import check_dtype
from .. import Family
from .._roi import card as roi

_NOTES = (
    roi.BATCH_INDEX + " (torchvision reads outside its input otherwise); start_w = round(x1 * spatial_scale), "
    "start_h = round(y1 * spatial_scale), end_w = round(x2 * spatial_scale), end_h = round(y2 * spatial_scale): the "
    "product in x's dtype (spatial_scale rounded to it first), round half away from zero (std::round), then an "
    "int; |coordinate * spatial_scale| must stay below 2^29 (torchvision's int overflows beyond 2^31)",
    "roi_w = max(end_w - start_w + 1, 1), roi_h likewise (a negative or degenerate roi is one cell); bin_h = "
    "roi_h / PH and bin_w = roi_w / PW in x's dtype; bin (ph, pw) covers rows floor(ph * bin_h) + start_h to "
    "ceil((ph + 1) * bin_h) + start_h (exclusive) and columns likewise, the products in x's dtype, each edge "
    "clamped to [0, H] (columns [0, W])",
    "an empty bin (no row or no column left after clamping: boxes outside the image) is 0 with no winner; else "
    "the winner is the first cell, in row-major order, strictly greater than T(-FLT_MAX) and than every cell "
    "before it: ties go to the first maximum, NaN never wins, and a bin whose cells are all NaN, -inf or <= "
    "-FLT_MAX is T(-FLT_MAX) (float64: -3.4028234663852886e38; float16: -inf) with no winner",
    "input gradient: grad_output added at each bin's winner (nothing for a bin without one), per channel in roi, "
    "bin-row, bin-column order, torchvision's serial order: here a sort and a segmented sum (no scatter, no "
    "atomics); the forward's values are x read at the winners, so torch and JAX differentiate it natively to any "
    "order; boxes get no gradient, as in torchvision: the output is x read at cells chosen by rounded, floored "
    "and ceiled box edges, so it is piecewise constant in the boxes (its derivative w.r.t. a coordinate is 0 "
    "wherever it exists, and undefined at the rounding steps, where the window gains or loses a row or column)",
    roi.BOXES + "; NaN or infinite coordinates are refused where the values can be read",
    "the window of a bin is found in a bounded frame: rows and columns up to the largest bin extent, read from "
    "the boxes on the host when their values are concrete, else (jax.jit over traced boxes) the whole image H x W "
    "(correct for every box, at the cost of reading H * W cells per bin); off JAX, with concrete boxes and "
    "frames of more than 16 cells, the bins are searched through range-maximum tables instead (one int64 key per "
    "cell: the value's order high, the cell low, so the larger value and then the earlier cell wins; four "
    "overlapping power-of-two blocks per bin), built only for the block sizes the call's bins use, a chunk of "
    "channels at a time; either way memory stays O(input + output + one chunk)",
    "float16: the box arithmetic in float16, as torchvision's CPU kernel; bfloat16 (which torchvision refuses): "
    "the box arithmetic in float32 and T(-FLT_MAX) rounded to bfloat16 (-inf); the values are selected, never "
    "rounded, in every dtype; a half-precision input gradient is summed in float32 and rounded once (torchvision "
    "rounds every float16 addition: an ulp or two apart where a cell wins several bins)",
    "checked by scripts/check_roi_pool_rules.py (torch 2.14.1 + torchvision 0.29.1, CPU): 3000 random "
    "configurations (float64, float32 and float16; K in {0, 1, 2, 3, 5, 8}; boxes inside, on integer and "
    "half-integer corners (rounding ties, negative ones included), partly and wholly outside, degenerate, "
    "negative, larger than the image, batch indices with fractions, as a (K, 5) tensor and as a list of (L, 4) "
    "tensors; values with ties, NaN, -inf, values below -FLT_MAX and windows of -inf only): a NumPy restatement "
    "of these rules gave torchvision's output, argmax and input gradient bit for bit in all 3000 (counts in "
    "scripts/roi_pool_rules_counts.json)",
)


def _resolve_roi_pool(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    shape = roi.check_image(op, shape)
    size, scale = roi.check_bins(op, a)
    boxes = roi.check_boxes(op, a)
    check_dtype(op, dtype, card.dtypes)
    return roi.resolved(op, shape, boxes, size, dict(output_size=size, spatial_scale=scale))


def _card() -> Card:
    arguments = roi.arguments()
    return Card(
        name="roi_pool", version=1, category="sampling",
        summary="Maxima over regions of interest (Fast R-CNN's RoIPool), as torchvision.ops.roi_pool.",
        spatial_dims=(2,), input_ranks=(4,), dtypes=FLOATS, arguments=arguments,
        shape_relation="x (N, C, H, W) and boxes (K, 5) give (K, C, PH, PW); per bin the maximum of a window of "
                       "rounded box cells",
        determinism="the winners are searched without autodiff (first maximum in row-major order, NaN never "
                    "wins) and the values read at them; the input gradient routes the cotangent to the winners by "
                    "a sort and a segmented sum (no scatter, no atomics): bit-identical across runs on every "
                    "backend. Bins are searched in bounded chunks (frames of window cells, or off JAX range-maximum "
                    "tables a chunk of channels at a time), so memory stays O(input + output + one chunk)",
        gradient=Gradient("roi_pool_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "w.r.t. x, to any order (x read at the winners; the backward's transpose gathers at "
                          "them); boxes get none, as in torchvision. Under a trace whose boxes are not concrete "
                          "(jax.jit with traced boxes) every bin searches the whole image", wrt=("x",)),
        torch_reference="torchvision.ops.roi_pool",
        notes=_NOTES,
        _resolve=_resolve_roi_pool,
        outputs=(Port("output", "array", "(K, C, PH, PW)", "each roi's bin maxima, x's dtype"),),
        examples=roi.examples(),
        torch_determinism=roi.TORCH_DETERMINISM,
        shaped_ports=("boxes",),
    )


_PS_NOTES = (
    "channels: C must be a multiple of PH * PW (torchvision refuses others: ValueError naming x and output_size); "
    "the output has C / (PH * PW) channels, and output channel c of bin (ph, pw) reads input channel (c * PH + "
    "ph) * PW + pw only",
    "per roi (batch index b, x1, y1, x2, y2): b is truncated to an int and must lie in [0, N); start_w = "
    "round(x1 * spatial_scale) and likewise (the product in x's dtype, spatial_scale rounded to it first, round "
    "half away from zero, then an int); roi_w = max(end_w - start_w, 1), roi_h likewise (not + 1 as roi_pool's); "
    "bin_h = roi_h / PH, bin_w = roi_w / PW in x's dtype; bin (ph, pw) covers rows floor(ph * bin_h) + start_h to "
    "ceil((ph + 1) * bin_h) + start_h (exclusive) and columns likewise",
    "forward: each edge clamped to [0, H - 1] (columns [0, W - 1]: torchvision's forward never reads the last "
    "row or column); output = (sum of the window's cells) / (rows * columns), an average, not a maximum; an empty "
    "window (no row or no column left) is 0",
    "input gradient (torchvision's backward, which is not the forward's transpose): the corners rounded with "
    "roundf (a float64 product rounded to float32 first), each edge clamped to [0, H] (columns [0, W]), and g / "
    "(rows * columns) of that window added to each of its cells; here (a window is a row interval times a "
    "column interval) one matrix product per bin row, row indicators by shares over the bins' columns: 0 / 1 "
    "products summed over the rois (no scatter). "
    "torch's and JAX's autodiff of ps_roi_pool give the same (the forward's value carries the backward windows' "
    "derivative), to any order; boxes get no gradient",
    "boxes: a (K, 5) array or a list of (L, 4) arrays, one per image, as roi_pool's; x's dtype and device; NaN "
    "or infinite coordinates are refused where the values can be read; non-finite x is outside this card",
    "float16: the box arithmetic in float16, as torchvision's CPU kernel, the sums in float32 and rounded once "
    "(torchvision rounds every float16 addition); bfloat16 (which torchvision refuses): the box arithmetic in "
    "float32",
    "checked by scripts/check_ps_roi_rules.py (torch 2.14.1 + torchvision 0.29.1, CPU; counts in "
    "scripts/ps_roi_rules_counts.json): of 3000 random configurations of ps_roi_align and ps_roi_pool, 1506 "
    "ps_roi_pool ones (float64, float32 and float16 in float16 arithmetic; K in {0, 1, 2, 3, 5}; boxes inside, "
    "on integer and half-integer corners (rounding ties), partly and wholly outside, degenerate, negative, larger "
    "than the image, 1e-10 below half-integers (18 configurations where roundf, not round, decides the "
    "gradient), batch indices with fractions, as a (K, 5) tensor and as a list of (L, 4) tensors): a NumPy "
    "restatement of these rules gave torchvision's forward and input gradient bit for bit in all 1375 it "
    "computed, and predicted its 131 refusals (C not a multiple of PH * PW) exactly",
)


def _resolve_ps_roi_pool(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    """roi_pool's rule with the channels split."""
    group = roi.check_groups(card.name, shape, a)
    return roi.grouped(card.name, _resolve_roi_pool(card, shape, dtype, a), group)


def _ps_card() -> Card:
    arguments = roi.grouped_arguments()
    return Card(
        name="ps_roi_pool", version=1, category="sampling",
        summary="Position-sensitive averages over regions of interest (R-FCN's PSRoIPool), as "
                "torchvision.ops.ps_roi_pool.",
        spatial_dims=(2,), input_ranks=(4,), dtypes=FLOATS, arguments=arguments,
        shape_relation="x (N, C, H, W) and boxes (K, 5) give (K, C / (PH * PW), PH, PW); per bin the mean of a "
                       "window of rounded box cells, in the bin's own input channel",
        determinism="the windows' cells are read (Cells gathers) and summed, or (outside autodiff, off JAX) per "
                    "bin row one matrix product of the rows' indicator with the planes, each bin's columns then "
                    "summed; the input gradient routes g / area to the backward's windows by one matrix product "
                    "per bin row (0 / 1 products, no scatter, no atomics): bit-identical across runs on every "
                    "backend; rois and channels are taken about 16 MiB at a time, so memory stays O(input + "
                    "output + one chunk)",
        gradient=Gradient("ps_roi_pool_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "w.r.t. x, torchvision's backward (its windows reach the last row and column, which the "
                          "forward's do not), to any order; boxes get none. Under a trace whose boxes are not "
                          "concrete (jax.jit with traced boxes) every bin reads a frame of the whole image",
                          wrt=("x",)),
        torch_reference="torchvision.ops.ps_roi_pool",
        notes=_PS_NOTES,
        _resolve=_resolve_ps_roi_pool,
        outputs=(Port("output", "array", "(K, C / (PH * PW), PH, PW)", "each roi's bin means, x's dtype"),),
        examples=roi.grouped_examples(),
        torch_determinism="torchvision's CUDA backward adds with atomicAdd (nondeterministic); its CPU backward is "
                          "serial",
        shaped_ports=("boxes",),
    )


FAMILY = Family("roi_pool", "sampled", 26, lambda: [_card(), _ps_card()])
