"""The card of roi_align (torchvision.ops.roi_align): its rules were read from torchvision 0.29.1's CPU kernel and
checked against live torchvision (torch 2.14.1) on random configurations by ``scripts/check_roi_rules.py``, whose
stored counts are ``scripts/roi_rules_counts.json`` (the last note says what they were)."""

from __future__ import annotations

from typing import Any

from ...spec._card import Argument, Card, Gradient, Port, Resolved
from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import check_bool, check_dtype, fail, is_int
from .. import Family
from .._roi import card as roi

_NOTES = (
    roi.BATCH_INDEX + "; offset = 0.5 if aligned else 0; start = coordinate * spatial_scale - offset (in x's "
    "dtype, spatial_scale rounded to it first); roi size = end - start, clamped to >= 1 per axis when not aligned "
    "(an aligned roi may be empty or negative)",
    "bin size = roi size / output size per axis; sample grid per axis = sampling_ratio if > 0, else "
    "ceil(roi size / output size) (data-dependent: read from the boxes on the host); count = max(grid_h * "
    "grid_w, 1); a non-positive grid on either axis samples nothing (the bin is 0); a grid negative on exactly "
    "one axis (an aligned roi negative by at least one bin's size, sampling_ratio <= 0) is refused, as "
    "torchvision refuses it (its vector of samples would have a negative size): ValueError naming boxes",
    "sample (iy, ix) of bin (ph, pw): y = (start_h + ph * bin_h) + ((iy + 0.5) * bin_h) / grid_h, x likewise, "
    "evaluated in that order in x's dtype",
    "bilinear read: a sample with y < -1 or y > H (or x < -1 or x > W) reads 0; otherwise y <= 0 becomes 0, "
    "y_low = floor(y), and where y_low >= H - 1 both taps are H - 1 (y = H - 1), else y_high = y_low + 1; "
    "ly = y - y_low, hy = 1 - ly; weights hy*hx, hy*lx, ly*hx, ly*lx (likewise for x)",
    "output = (sum over the samples, in (iy, ix) order, of w1*v1 + w2*v2 + w3*v3 + w4*v4) / count; the input "
    "gradient adds (g * w) / count per tap (torchvision divides by grid_h * grid_w there, equal to count "
    "wherever a sample exists)",
    roi.BOXES,
    "the boxes' gradient (torchvision has none; roi_align_boxes_backward, and torch's and JAX's autodiff): a "
    "sample moves with its roi's start by (1 - t) * spatial_scale and with its end by t * spatial_scale, t = (bin "
    "+ (i + 0.5) / grid) / output size, and each tap weight moves linearly with its sample (d/dy of hy*hx, "
    "hy*lx, ly*hx, ly*lx = -hx, -lx, hx, lx); a sample held by a rule moves with nothing (y <= 0, y_low >= H - "
    "1, outside the image; without aligned a roi size clamped to 1 moves with its start alone); the sample grid "
    "and count are constants (their steps have no derivative); the batch index gets 0. Checked against central "
    "finite differences (eps 1e-7) on 300 random configurations away from the steps: rtol 1e-5, 0 differences",
    "boxes with NaN or infinite coordinates "
    "and inputs x with NaN or infinite values are outside this card (torchvision reads cell 0 with weight 0 "
    "for a sample outside the image, so a non-finite value there spreads; here such a sample reads nothing)",
    "float16/bfloat16: coordinates, weights and sums in float32, rounded once (torchvision computes float16 "
    "in float16 arithmetic on the CPU and refuses bfloat16)",
    "checked by scripts/check_roi_rules.py (torch 2.14.1 + torchvision 0.29.1, CPU): 3000 random "
    "configurations (float64 and float32, sampling_ratio -1/0/1..4, aligned both ways, K in {0, 1, 2, 3, 5, 8}, "
    "boxes inside, on integer and half-integer corners, partly and wholly outside, degenerate, negative, larger "
    "than the image, as a (K, 5) tensor and as a list of (L, 4) tensors): a NumPy restatement of these rules "
    "gave torchvision's forward and input gradient bit for bit in all 2973 it computed, and predicted its 27 "
    "refusals exactly (counts in scripts/roi_rules_counts.json)",
)


def _resolve_roi_align(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    shape = roi.check_image(op, shape)
    size, scale = roi.check_bins(op, a)
    ratio = a["sampling_ratio"]
    if not is_int(ratio):
        fail(op, "sampling_ratio", ratio, f"must be an int (<= 0: adaptive), not {type(ratio).__name__}", TypeError)
    aligned = check_bool(op, "aligned", a["aligned"])
    boxes = roi.check_boxes(op, a)
    check_dtype(op, dtype, card.dtypes)
    return roi.resolved(op, shape, boxes, size,
                        dict(output_size=size, spatial_scale=scale, sampling_ratio=int(ratio), aligned=aligned))


def _card() -> Card:
    arguments = roi.arguments() + (
        Argument("sampling_ratio", "int", -1, ("<= 0: adaptive, ceil(roi size / output size) per axis",),
                 "samples per bin and axis"),
        Argument("aligned", "bool", False, ("True: pixel centres at +0.5 (boxes shifted by -0.5)",),
                 "torchvision's half-pixel correction"),
    )
    return Card(
        name="roi_align", version=1, category="sampling",
        summary="Bilinear averages over regions of interest (Mask R-CNN's RoIAlign), as torchvision.ops.roi_align.",
        spatial_dims=(2,), input_ranks=(4,), dtypes=FLOATS, arguments=arguments,
        shape_relation="x (N, C, H, W) and boxes (K, 5) give (K, C, PH, PW); per bin grid_h * grid_w samples of "
                       "4 taps",
        determinism="the forward gathers; the input gradient is the transpose of that gather, a sort of the tap "
                    "cells and a segmented sum (no scatter, no atomics): bit-identical across runs on every "
                    "backend. Rois are grouped by their sample grid (read from the boxes on the host when "
                    "sampling_ratio <= 0) and sampled about 16 MiB of taps at a time (chunks fixed by the shapes "
                    "and grids), so memory stays O(input + output + one chunk)",
        gradient=Gradient("roi_align_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "w.r.t. x, to any order (linear in x; the backward's transpose is the forward's "
                          "gather); w.r.t. the boxes by roi_align_boxes_backward (first order; torch and JAX "
                          "autodiff give the same, torch.compile through a node of its own). Under a trace whose "
                          "boxes are not "
                          "concrete (jax.jit with traced boxes) only sampling_ratio > 0 works", wrt=("x",),
                          others=("roi_align_boxes_backward",)),
        torch_reference="torchvision.ops.roi_align",
        notes=_NOTES,
        _resolve=_resolve_roi_align,
        outputs=(Port("output", "array", "(K, C, PH, PW)", "each roi's bins, x's dtype"),),
        examples=roi.examples(sampling_ratio=2, aligned=True),
        torch_determinism=roi.TORCH_DETERMINISM,
        shaped_ports=("boxes",),
    )


_PS_NOTES = (
    "channels: C must be a multiple of PH * PW (torchvision refuses others: ValueError naming x and output_size); "
    "the output has C / (PH * PW) channels, and output channel c of bin (ph, pw) reads input channel (c * PH + "
    "ph) * PW + pw only",
    "per roi (batch index b, x1, y1, x2, y2): b is truncated to an int and must lie in [0, N); start = "
    "coordinate * spatial_scale - 0.5 (always: torchvision's ps_roi_align has no aligned argument and always "
    "shifts), in x's dtype, spatial_scale rounded to it first; roi size = end - start, never clamped (a "
    "degenerate or negative roi keeps its size)",
    "bin size = roi size / output size per axis; sample grid per axis = sampling_ratio if > 0, else "
    "ceil(roi size / output size) (read from the boxes on the host); count = grid_h * grid_w, not clamped: a "
    "bin without samples (a grid <= 0 on either axis) is 0 / count, so NaN where a grid is 0 (a degenerate roi "
    "with sampling_ratio <= 0), -0.0 where exactly one grid is negative, 0 where both are; nothing is refused "
    "(roi_align refuses a grid negative on one axis: ps_roi_align sizes no vector by it)",
    "sample (iy, ix) of bin (ph, pw): y = (ph * bin_h + start_h) + ((iy + 0.5) * bin_h) / grid_h, x likewise; "
    "bilinear read as roi_align's (a sample with y < -1 or y > H reads 0; y <= 0 becomes 0; y_low = floor(y), "
    "both taps H - 1 where y_low >= H - 1; weights hy*hx, hy*lx, ly*hx, ly*lx)",
    "output = (sum over the samples of w1*v1 + w2*v2 + w3*v3 + w4*v4) / count; the input gradient adds (g * "
    "w) / count per tap to the tap's cell of its input channel: the transpose of the forward (a sort and a "
    "segmented sum, no scatter); torch and JAX differentiate the op natively to any order",
    "the boxes' gradient (torchvision has none; ps_roi_align_boxes_backward, and torch's and JAX's autodiff): "
    "roi_align's rule with aligned (start = coordinate * spatial_scale - 0.5, no clamp of the roi size, so a "
    "sample moves with its roi's start by (1 - t) * spatial_scale and with its end by t * spatial_scale, t = "
    "(bin + (i + 0.5) / grid) / output size, degenerate and negative rois included); each tap weight moves "
    "linearly with its sample (d/dy of hy*hx, hy*lx, ly*hx, ly*lx = -hx, -lx, hx, lx) and reads its bin's input "
    "channel; a sample held by a rule moves with nothing (y <= 0, y_low >= H - 1, outside the image); the sample "
    "grid and count are constants (a bin without samples, 0, -0.0 or NaN, gets 0); the batch index gets 0. "
    "Checked against central finite differences (eps 1e-6, float64) of live torchvision 0.29.1's ps_roi_align "
    "on 24 random configurations away from the steps (scripts/ps_roi_align_boxes_cases.py, stored in "
    "tests/data/ps_roi_align_boxes): rtol 1e-6 (atol 1e-8), 0 differences",
    "boxes: a (K, 5) array or a list of (L, 4) arrays, one per image, as roi_align's; x's dtype and device; NaN "
    "or infinite coordinates and non-finite x are outside this card",
    "float16/bfloat16: coordinates, weights and sums in float32, rounded once (torchvision computes float16 in "
    "float16 arithmetic on the CPU, which the check below restates, and refuses bfloat16)",
    "checked by scripts/check_ps_roi_rules.py (torch 2.14.1 + torchvision 0.29.1, CPU; counts in "
    "scripts/ps_roi_rules_counts.json): of 3000 random configurations of ps_roi_align and ps_roi_pool, 1494 "
    "ps_roi_align ones (float64, float32 and float16 in float16 arithmetic; sampling_ratio -1/0/1..4; K in {0, "
    "1, 2, 3, 5}; boxes inside, on integer and half-integer corners, partly and wholly outside, degenerate, "
    "negative, larger than the image, batch indices with fractions, as a (K, 5) tensor and as a list of (L, 4) "
    "tensors): a NumPy restatement of these rules gave torchvision's forward and input gradient bit for bit "
    "(NaN and the sign of zero included: 1713 NaN bins, 70 -0.0 bins) in all 1352 it computed, and predicted "
    "its 142 refusals (C not a multiple of PH * PW) exactly",
)


def _resolve_ps_roi_align(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    """roi_align's rule with aligned (always) and the channels split."""
    group = roi.check_groups(card.name, shape, a)
    return roi.grouped(card.name, _resolve_roi_align(card, shape, dtype, dict(a, aligned=True)), group)


def _ps_card() -> Card:
    arguments = roi.grouped_arguments() + (
        Argument("sampling_ratio", "int", -1, ("<= 0: adaptive, ceil(roi size / output size) per axis",),
                 "samples per bin and axis"),
    )
    return Card(
        name="ps_roi_align", version=1, category="sampling",
        summary="Position-sensitive bilinear averages over regions of interest (R-FCN's PSRoIAlign), as "
                "torchvision.ops.ps_roi_align.",
        spatial_dims=(2,), input_ranks=(4,), dtypes=FLOATS, arguments=arguments,
        shape_relation="x (N, C, H, W) and boxes (K, 5) give (K, C / (PH * PW), PH, PW); per bin grid_h * grid_w "
                       "samples of 4 taps, in the bin's own input channel",
        determinism="roi_align's taps with a per-bin offset into planes (C / (PH * PW), PH * PW * N * H * W): the "
                    "forward gathers; the input gradient is the transpose of that gather, a sort of the tap cells "
                    "and a segmented sum (no scatter, no atomics): bit-identical across runs on every backend; "
                    "memory O(input + output + one chunk of taps)",
        gradient=Gradient("ps_roi_align_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                          "w.r.t. x, to any order (linear in x; the backward's transpose is the forward's "
                          "gather); w.r.t. the boxes by ps_roi_align_boxes_backward (first order; torch and "
                          "JAX autodiff give the same, torch.compile through a node of its own). Under a trace "
                          "whose boxes are not concrete (jax.jit with traced boxes) only sampling_ratio > 0 works",
                          wrt=("x",), others=("ps_roi_align_boxes_backward",)),
        torch_reference="torchvision.ops.ps_roi_align",
        notes=_PS_NOTES,
        _resolve=_resolve_ps_roi_align,
        outputs=(Port("output", "array", "(K, C / (PH * PW), PH, PW)", "each roi's bins, x's dtype"),),
        examples=roi.grouped_examples(sampling_ratio=2),
        torch_determinism="torchvision's CUDA backward adds with atomicAdd (nondeterministic); its CPU backward is "
                          "serial",
        shaped_ports=("boxes",),
    )


FAMILY = Family("roi_align", "sampled", 25, lambda: [_card(), _ps_card()])
