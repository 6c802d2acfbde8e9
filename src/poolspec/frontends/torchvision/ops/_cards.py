"""The cards of :mod:`poolspec.frontends.torchvision.ops`: torchvision.ops' rules as established against
torchvision 0.29.1 (torch 2.14.1, CPU), and where poolspec differs.

>>> [c.name for c in CARDS][:2]
['torchvision.ops.roi_align', 'torchvision.ops.roi_pool']
"""

from __future__ import annotations

from ....spec._card import REQUIRED, Argument, Port
from ....spec.frontends import FrontendCard, gradient

_LIBRARY = "torchvision 0.29.1 (torch 2.14.1, CPU)"
_CHECKED = ("conformance/frontend_checks/torchvision.py against torchvision 0.29.1 (torch 2.14.1, CPU): 2,000 random "
            "configurations per function and module class, 18,000 in all (counts in conformance/results/frontends/"
            "torchvision.json): boxes as Tensor[K, 5] and as lists of Tensor[L, 4], inside, across and outside the "
            "image, flipped, degenerate and on half cells, output_size as an int or a pair, spatial_scale, "
            "sampling_ratio and aligned over their ranges, float64 and float32 (float16 too for roi_pool and "
            "ps_roi_pool), feature pyramids of 2 to 4 maps for MultiScaleRoIAlign; every configuration's forward and "
            "input gradient on torch and forward on NumPy, every tenth's forward on JAX, and the modules' repr: "
            "17,138 agree, 858 are refused by both, 4 differ, all on JAX (the XLA note). "
            "tests/test_frontend_torchvision.py replays 54 of them, stored from torchvision (the modules, list "
            "boxes), on every backend; the stored conventions hold the (K, 5) form of the functions.")
_INPUT = Argument("input", "array", description="(N, C, H, W) features; float16, bfloat16, float32 or float64")
_BOXES = Argument("boxes", "array | list[array]", description="Tensor[K, 5] (batch index, x1, y1, x2, y2) or a list "
                  "of Tensor[L, 4], one per image; input's library and dtype")
_SIZE = Argument("output_size", "int | tuple[int, int]", description="the bins per roi (PH, PW); an int for both")
_SCALE = Argument("spatial_scale", "float", 1.0, description="the factor from box coordinates to input's cells")
_RATIO = Argument("sampling_ratio", "int", -1, description="samples per bin along each axis; <= 0: ceil(roi size / "
                  "output size), read from the boxes' values")
_ALIGNED = Argument("aligned", "bool", False, description="pixel centres at +0.5 (boxes shifted by -0.5), the roi "
                    "size not clamped to 1")
_OUT = (Port("output", "array", "(K, C, PH, PW)", "the pooled rois"),)
_PS_OUT = (Port("output", "array", "(K, C / (PH * PW), PH, PW)", "the position-sensitive pooled rois"),)
_BOX_RULES = ("boxes: torchvision's check_roi_boxes_shape: a list (or tuple) of (L, 4) arrays, or one (K, 5) array; "
              "a wrong shape is a ValueError naming boxes (torchvision's AssertionError, or IndexError for a 1-d "
              "array), anything else a TypeError; a list gains its image index column in the boxes' dtype "
              "(convert_boxes_to_roi_format).",
              "output_size is read as torch's _pair: an int for both axes, else its two entries.",
              "input and boxes share a library and dtype (torchvision's kernels check the dtype: RuntimeError there, "
              "TypeError here); bfloat16, which torchvision's CPU kernels refuse, is computed in float32 and "
              "rounded once.")
_REFUSES = ("An empty list of boxes: torchvision fails in torch.cat (ValueError there too); pass a (0, 5) array.",
            "output_size with other than 2 entries: torchvision reads the first two (a 3-tuple's tail is ignored, a "
            "1-tuple an IndexError); the front-end refuses it (ValueError naming output_size).")
_HALF = ("float16: torchvision's CPU kernel rounds every step to float16; poolspec computes in float32 and rounds "
         "once, so float16 results agree to float16's tolerance, not bit for bit (the check's float16 tolerance).",)
_XLA = ("On JAX, poolspec.roi_align's compiled program keeps each product apart from the add after it: XLA's fused "
        "multiply-add had put a sample an ulp past the image's edge (-1 or H) where a box's scaled corner falls on "
        "a half cell, so it read 0 (found by this front-end's check on JAX, 1 float64 RoIAlign and 3 float32 "
        "MultiScaleRoIAlign configurations of 200; the calls are kept in tests/test_frontend_torchvision.py).",)
_MODULE = ("A class is a plain Python class on NumPy, JAX, Dask, CuPy and array-api-strict (torch is never "
           "imported), and its torch.nn.Module twin where the caller has imported torch (nn.Sequential, .to(), "
           "hooks, pickling); constructor arguments are stored as given, nothing is checked at construction (as "
           "torchvision), and repr is torchvision's __repr__.",)


def _fn(name: str, summary: str, arguments: tuple[Argument, ...], outputs: tuple[Port, ...], core: str,
        notes: tuple[str, ...], differences: tuple[str, ...] = ()) -> FrontendCard:
    return FrontendCard(
        name=f"torchvision.ops.{name}", version=1, library=_LIBRARY, mirrors=f"torchvision.ops.{name}",
        summary=summary, arguments=arguments, outputs=outputs, core=(core,),
        layout="channels_first: input (N, C, H, W), output (K, C', PH, PW)",
        gradient=gradient(f"the input gradient of poolspec.{core} (deterministic: a sort and a segmented sum, no "
                          "scatter); boxes get none, as in torchvision", ("input",)),
        determinism="deterministic (torchvision's CPU backward is serial, its CUDA backward uses atomicAdd)",
        notes=notes + _BOX_RULES, differences=differences, refuses=_REFUSES, checked=_CHECKED)


def _cls(name: str, summary: str, arguments: tuple[Argument, ...], outputs: tuple[Port, ...], core: str,
         notes: tuple[str, ...]) -> FrontendCard:
    return FrontendCard(
        name=f"torchvision.ops.{name}", version=1, library=_LIBRARY, mirrors=f"torchvision.ops.{name}",
        summary=summary, arguments=arguments, outputs=outputs, core=(core,),
        layout="channels_first: forward's input (N, C, H, W), output (K, C', PH, PW)",
        gradient=gradient(f"the input gradient of poolspec.{core} through forward (torch autograd on a torch "
                          "twin, JAX's on JAX arrays); boxes get none"),
        determinism="deterministic (poolspec's kernels gather)", notes=notes + _MODULE, refuses=(),
        checked=_CHECKED)


def _req(a: Argument) -> Argument:
    return Argument(a.name, a.type, REQUIRED, a.constraints, a.description)


CARDS: tuple[FrontendCard, ...] = (
    _fn("roi_align", "RoI Align: the mean of a grid of bilinear samples per bin, as torchvision.ops.roi_align",
        (_INPUT, _BOXES, _SIZE, _SCALE, _RATIO, _ALIGNED), _OUT, "roi_align",
        ("poolspec.roi_align's rules, which are torchvision's kernel's: the roi size clamped to 1 without aligned, "
         "samples more than one cell outside the image read 0, the adaptive grid ceil(roi size / output size) per "
         "roi.", *_XLA), _HALF),
    _fn("roi_pool", "RoI max pooling over rounded integer windows, as torchvision.ops.roi_pool",
        (_INPUT, _BOXES, _SIZE, _SCALE), _OUT, "roi_pool",
        ("poolspec.roi_pool's rules, torchvision's kernel's: corners scaled and rounded half away from zero, a "
         "degenerate roi one cell, bins floored and ceiled and clipped to the image, an empty bin 0, the first "
         "maximum wins.",)),
    _fn("ps_roi_align", "Position-sensitive RoI Align, as torchvision.ops.ps_roi_align",
        (_INPUT, _BOXES, _SIZE, _SCALE, _RATIO), _PS_OUT, "ps_roi_align",
        ("poolspec.ps_roi_align's rules, torchvision's kernel's: bin (i, j) of output channel c reads input "
         "channel (c * PH + i) * PW + j; C must be a multiple of PH * PW.",), _HALF),
    _fn("ps_roi_pool", "Position-sensitive RoI average pooling over rounded windows, as "
        "torchvision.ops.ps_roi_pool", (_INPUT, _BOXES, _SIZE, _SCALE), _PS_OUT, "ps_roi_pool",
        ("poolspec.ps_roi_pool's rules, torchvision's kernel's: bin (i, j) of output channel c averages input "
         "channel (c * PH + i) * PW + j over the bin's window; C must be a multiple of PH * PW.",), _HALF),
    _cls("RoIAlign", "RoI Align as a module, as torchvision.ops.RoIAlign",
         (_req(_SIZE), _req(_SCALE), _req(_RATIO), _ALIGNED), _OUT, "roi_align",
         ("forward(input, rois) is roi_align(input, rois, output_size, spatial_scale, sampling_ratio, aligned).",)),
    _cls("RoIPool", "RoI max pooling as a module, as torchvision.ops.RoIPool", (_req(_SIZE), _req(_SCALE)), _OUT,
         "roi_pool", ("forward(input, rois) is roi_pool(input, rois, output_size, spatial_scale).",)),
    _cls("PSRoIAlign", "Position-sensitive RoI Align as a module, as torchvision.ops.PSRoIAlign",
         (_req(_SIZE), _req(_SCALE), _req(_RATIO)), _PS_OUT, "ps_roi_align",
         ("forward(input, rois) is ps_roi_align(input, rois, output_size, spatial_scale, sampling_ratio).",)),
    _cls("PSRoIPool", "Position-sensitive RoI pooling as a module, as torchvision.ops.PSRoIPool",
         (_req(_SIZE), _req(_SCALE)), _PS_OUT, "ps_roi_pool",
         ("forward(input, rois) is ps_roi_pool(input, rois, output_size, spatial_scale).",)),
    _cls("MultiScaleRoIAlign", "Multi-scale RoI Align over a feature pyramid, as torchvision.ops.MultiScaleRoIAlign",
         (Argument("featmap_names", "list[str]", description="the names of the maps of forward's dict to pool from"),
          Argument("output_size", "int | tuple[int, int]", description="the bins per roi; stored as a tuple"),
          Argument("sampling_ratio", "int", description="roi_align's sampling_ratio"),
          Argument("canonical_scale", "int", 224, description="s0 of the level heuristic (keyword only)"),
          Argument("canonical_level", "int", 4, description="lvl0 of the level heuristic (keyword only)")),
         _OUT, "roi_align",
         ("forward(x, boxes, image_shapes): the maps of the dict x named in featmap_names, in x's order; on the "
          "first call, each map's scale is 2 ** round(log2(map height / largest image height)) (float32's log2, "
          "torchvision's _infer_scale: the height alone), kept for later calls as torchvision's.",
          "Levels (torchvision's LevelMapper): k_min and k_max are int(-log2(scale)) of the first and last map; "
          "a box's level is floor(canonical_level + log2(sqrt(area) / canonical_scale) + 1e-6) in the boxes' dtype "
          "(float16 boxes in float32), clamped, minus k_min; a roi whose level has no map (maps that skip a power "
          "of two) or whose area is negative pools to zeros, as torchvision's zero-initialised result.",
          "Each level's rois go through roi_align(map, rois, output_size, scale, sampling_ratio, aligned=False) and "
          "come back in the boxes' order, cast to the first map's dtype; with one map, roi_align at its scale.",
          *_XLA)),
)
