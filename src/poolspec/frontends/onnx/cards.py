"""The cards of the ONNX front-end: one per operator, with ONNX's attribute names, defaults and constraints (read
by ``frontends._checks`` to refuse what they rule out).

>>> CARD["MaxPool"].mirrors
'onnx MaxPool (opset 22)'
"""

from __future__ import annotations

from ...spec._card import Argument, Port
from ...spec.frontends import FrontendCard, gradient

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
        "tf_crop_and_resize")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")
# ONNX GridSample's mode names (opset 20's and opset 16's) -> poolspec.grid_sample's
GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest", "cubic": "bicubic",
              "bicubic": "bicubic"}

_LIB = "onnx 1.23.2 (reference evaluator), onnxruntime 1.32.0 (CPU)"
_CHECKED = ("random configurations against onnx's reference evaluator and onnxruntime on one-node opset 22 models "
            "(conformance/frontend_checks/onnx_reference.py and onnxruntime.py; counts in "
            "conformance/results/frontends/onnx_reference.json and onnxruntime.json), NumPy, JAX and torch backends")
_X = Argument("X", "array", description="(N, C, *spatial), channels first")
_FWD = gradient("poolspec's deterministic gradient through the ops it calls (gathers, transposed tables); ONNX "
                "runtimes have no gradients, so only the forward is compared with them")
_DET = "deterministic: gathers with fixed tables, no atomics"
_POOL_ARGS = (Argument("auto_pad", "str", "NOTSET", AUTO_PADS),
              Argument("ceil_mode", "int", 0, ("0 or 1",)),
              Argument("dilations", "list[int] | None", None, (">= 1",)),
              Argument("kernel_shape", "list[int]", constraints=(">= 1",)),
              Argument("pads", "list[int] | None", None, ("begins then ends", "<= (kernel - 1) * dilation")),
              Argument("strides", "list[int] | None", None, (">= 1",)))
_POOL_RULES = ("explicit pads: O = floor((L + begin + end - ((k - 1) d + 1)) / s) + 1 (ceil with ceil_mode, a "
               "window that would start in the end padding dropped)",
               "SAME_UPPER / SAME_LOWER: O = ceil(L / s), total padding max((O - 1) s + (k - 1) d + 1 - L, 0), the odd "
               "cell at the end / the start; VALID: O = ceil((L - (k - 1) d) / s); ceil_mode has no effect with "
               "auto_pad")
_SAME_BUGS = ("onnx's reference sizes SAME_* and VALID without the dilation, puts SAME padding wrongly (SAME_LOWER "
              "can give an empty output, SAME_UPPER shifted windows) and refuses ceil_mode with auto_pad on "
              "AveragePool/LpPool; onnxruntime sizes SAME_* padding without the dilation and applies ceil_mode to "
              "VALID (left out of the random configurations)")


def _card(name: str, summary: str, arguments: tuple[Argument, ...], outputs: tuple[Port, ...], core: tuple[str, ...],
          notes: tuple[str, ...], differences: tuple[str, ...] = (), refuses: tuple[str, ...] = (),
          indices: str = "") -> FrontendCard:
    return FrontendCard(name=f"onnx.{name}", version=1, library=_LIB, mirrors=f"onnx {name} (opset 22)",
                        summary=summary, arguments=arguments, outputs=outputs, core=core,
                        layout="channels first (N, C, *spatial), as ONNX", gradient=_FWD, determinism=_DET,
                        indices=indices, notes=notes, differences=differences, refuses=refuses, checked=_CHECKED)


CARDS: tuple[FrontendCard, ...] = (
    _card("AveragePool", "ONNX AveragePool on poolspec.avg_pool (low, high) pads and dilation",
        (_X,) + _POOL_ARGS[:2] + (Argument("count_include_pad", "int", 0, ("0 or 1",)),) + _POOL_ARGS[2:],
        (Port("Y", "array", "(N, C, *O)", "the window means"),), ("avg_pool1d", "avg_pool2d", "avg_pool3d"),
        _POOL_RULES + ("the divisor is the window's in-input taps, or with count_include_pad the taps inside "
                       "[-begin, L + end) (not the ceil-mode overhang past the end padding)",
                       "dilations (opset 19+) are avg_pool's dilation",
                       "a window whose taps all fall in the padding (dilations > 1, count_include_pad 0) gives 0 "
                       "(poolspec.avg_pool and onnx's reference evaluator: NaN, the mean of no cell)",
                       "a 3-d input with an extent below the kernel (which avg_pool3d refuses, as torch): enough "
                       "of the pads laid down as zero cells, avg_pool3d's window sums (divisor_override=1), divided "
                       "by the per-axis counts"),
        (_SAME_BUGS, "onnx's reference shifts the windows in ceil mode when the last one overhangs the padded "
                     "input (left out of its random configurations, checked against onnxruntime)"),
        ("float64 is computed (onnxruntime has no float64 AveragePool kernel)",
                        "pads above (kernel - 1) * dilation (a window of padding only)")),
    _card("LpPool", "ONNX LpPool: (sum |x|^p)^(1/p) per window, the sums by poolspec.avg_pool",
        (_X,) + _POOL_ARGS[:4] + (Argument("p", "int", 2, (">= 1",)),) + _POOL_ARGS[4:],
        (Port("Y", "array", "(N, C, *O)", "the window p-norms"),), ("avg_pool1d", "avg_pool2d", "avg_pool3d"),
        _POOL_RULES + ("|x|^p, ONNX's p-norm (torch's lp_pool pools signed x^p); the window sums are avg_pool of "
                       "|x|^p with divisor_override=1 and the (low, high) pads and dilation: pads and the "
                       "ceil-mode overhang add nothing, and a partial window is not rescaled (onnxruntime agrees; "
                       "torch rescales by prod(k) / n)",),
        (_SAME_BUGS, "onnx's reference shifts the windows in ceil mode when the last one overhangs the padded input "
                     "(it splits the overhang over both ends; left out of its random configurations, checked "
                     "against onnxruntime)"),
        ("p < 1 (ONNX's p is an int attribute)",)),
    _card("MaxPool", "ONNX MaxPool with Indices on poolspec.max_pool (low, high) pads", (_X,) + _POOL_ARGS[:5] + (
        Argument("storage_order", "int", 0, ("0 or 1",)),) + _POOL_ARGS[5:],
        (Port("Y", "array", "(N, C, *O)", "the window maxima"), Port("Indices", "int64 array", "(N, C, *O)",
                                                                     "flat positions of the winners")),
        ("max_pool1d", "max_pool2d", "max_pool3d"),
        _POOL_RULES + ("ties: the first maximum in row-major window order",),
        (_SAME_BUGS, "onnx's reference takes a generic path when every stride and dilation is 1 (pads only 2-D "
                     "input, miscounts the output size, decodes the argmax with the output's shape); left out of its "
                     "random configurations",
         "NaN: both runtimes start from the window's first cell and take only strictly greater values, so a NaN "
         "wins only as that first cell; poolspec's NaN wins (torch's rule)"),
        ("a window that dilation and padding leave without an input cell (the runtimes give NaN or the lowest "
         "value with index -1)",),
        indices="Indices = (n * C + c) * prod(spatial) + the position in the (n, c) plane: row-major with "
                "storage_order 0, column-major (the first spatial axis fastest) with storage_order 1; established "
                "against both runtimes"),
    _card("GlobalAveragePool", "ONNX GlobalAveragePool: each plane's mean", (_X,),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane means"),), ("frontends._common.resample",),
          ("every spatial axis (any number) reduced, kept as extent 1",), (),
          ("float64 is computed (onnxruntime has no float64 kernel)",)),
    _card("GlobalLpPool", "ONNX GlobalLpPool: each plane's p-norm", (_X, Argument("p", "int", 2, (">= 1",))),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane p-norms"),), ("frontends._common.resample",),
          ("(sum |x|^p)^(1/p) over every spatial axis",),
          ("onnx's reference evaluator has no GlobalLpPool (checked against onnxruntime only, at opset 21: it "
           "registers none at 22, which only adds bfloat16)",)),
    _card("GlobalMaxPool", "ONNX GlobalMaxPool: each plane's maximum", (_X,),
          (Port("Y", "array", "(N, C, 1, ...)", "the plane maxima"),), ("max_pool1d",),
          ("every spatial axis (any number) reduced, kept as extent 1; a NaN is the maximum",),
          ("onnx's reference reduces the last two axes whatever the rank (3-D input loses its channel axis; "
           "checked against it on 4-D input only)", "onnxruntime skips NaN")),
    _card("MaxUnpool", "ONNX MaxUnpool on poolspec.max_unpool", (
        _X, Argument("I", "int64 array", description="MaxPool's Indices, flat over the whole output tensor"),
        Argument("output_shape", "array | None", None, ("(N, C, *S), read on the host",)),
        Argument("kernel_shape", "list[int]", constraints=(">= 1",)),
        Argument("pads", "list[int] | None", None, (">= 0",)),
        Argument("strides", "list[int] | None", None, (">= 1",))),
        (Port("Y", "array", "(N, C, *S)", "zeros with X at I"),), ("max_unpool1d", "max_unpool2d", "max_unpool3d"),
        ("default S = (L - 1) * stride - (begin + end) + kernel", "I is flat over the whole (N, C, *S) output, "
         "row-major; each index must lie in its own (n, c) plane"),
        ("onnx's reference scatters into the default shape before padding to a larger output_shape (onnx#2398; "
         "checked against onnxruntime there)",),
        ("an index outside its own (n, c) plane", "float64 is computed (onnxruntime has no float64 kernel)")),
    _card("Resize", "ONNX Resize (opset 19+): per-axis tap tables from ONNX's coordinate and coefficient rules", (
        _X, Argument("roi", "array | None", None), Argument("scales", "array | None", None),
        Argument("sizes", "array | None", None), Argument("antialias", "int", 0, ("0 or 1",)),
        Argument("axes", "list[int] | None", None), Argument("coordinate_transformation_mode", "str", "half_pixel",
                                                             CTMS),
        Argument("cubic_coeff_a", "float", -0.75), Argument("exclude_outside", "int", 0, ("0 or 1",)),
        Argument("extrapolation_value", "float", 0.0), Argument("keep_aspect_ratio_policy", "str", "stretch",
                                                                POLICIES),
        Argument("mode", "str", "nearest", ("nearest", "linear", "cubic")),
        Argument("nearest_mode", "str", "round_prefer_floor", NEAREST)),
        (Port("Y", "array", "X resized", "the resampled array"),), ("frontends._common.resample",),
        ("extent floor(L * scale) from scales, sizes as given (keep_aspect_ratio_policy: one scale, min or max of "
         "the axes', extents round(scale * L) halves up); scale = sizes / L in float64",
         "coordinates use the unrounded L * scale as the output width (align_corners, half_pixel_symmetric, "
         "tf_crop_and_resize), as the reference and the spec",
         "taps start left of x: at an integral x the window moves one cell left with fraction 1; nearest picks by "
         "nearest_mode, an integral x is itself; out-of-range taps read the border cell unless exclude_outside",
         "antialias widens linear / cubic by 1 / scale when downsampling, weights normalised",
         "tf_crop_and_resize: outputs mapped outside [0, L - 1] on any axis are extrapolation_value",
         "an axis with scale 1, the same extent and the whole roi is the identity"),
        ("onnx's reference computes cubic weights in float32 (cubic_coeff_a arrives as float32), mis-permutes "
         "negative axes and puts a pytorch_half_pixel output of extent 1 at -0.5 (or, when L * scale is not 1, at "
         "(0.5 / scale) - 0.5) where the spec (and onnxruntime) put it at 0 (poolspec: 0; left out of its random "
         "configurations)", "SAME_* auto_pad where (O - 1) s + (k - 1) d + 1 < L (a stride longer than the window): "
         "the spec's pad formula goes negative and onnxruntime shifts the windows by that negative padding; poolspec "
         "pads 0 there (TensorFlow's SAME); left out of onnxruntime's random configurations",
         "onnxruntime copies X when the output shape equals X's under a scale != 1, computes coordinates in "
         "float32, restricts linear / cubic to 2-D, 3-D or 4-D with the outer axes kept and exclude_outside to "
         "cubic, mis-sizes keep_aspect_ratio_policy with negative axes, and takes the rounded output extent (not "
         "L * scale) as the output width of align_corners, half_pixel_symmetric, pytorch_half_pixel and "
         "tf_crop_and_resize under scales (left out of its random configurations); tf_crop_and_resize and "
         "antialias: onnxruntime disagrees with the reference, not yet diagnosed (not compared against "
         "onnxruntime)"),
        ("integer dtypes (the runtimes round or truncate differently; poolspec resamples floating arrays)",)),
    _card("GridSample", "ONNX GridSample on poolspec.grid_sample", (
        _X, Argument("grid", "array", description="(N, *O, n) in [-1, 1]"),
        Argument("align_corners", "int", 0, ("0 or 1",)),
        Argument("mode", "str", "linear", tuple(GRID_MODES)),
        Argument("padding_mode", "str", "zeros", ("zeros", "border", "reflection"))),
        (Port("Y", "array", "(N, C, *O)", "the samples"),), ("grid_sample",),
        ("opset 20 names linear/nearest/cubic and opset 16's bilinear/bicubic; nearest rounds half to even; border "
         "clamps each cubic tap (onnxruntime and torch)",),
        ("onnx's reference clamps an out-of-range coordinate before its cubic taps with border padding, divides by "
         "zero over a size-1 axis with reflection and align_corners, and knows only opset 20's mode names",
         "both runtimes denormalise the grid in float32 (float64 results within ~1e-6)"),
        ("cubic on 5-D input (onnxruntime refuses it too)",)),
    _card("AffineGrid", "ONNX AffineGrid on poolspec.affine_grid", (
        Argument("theta", "array", description="(N, 2, 3) or (N, 3, 4)"),
        Argument("size", "array", description="(N, C, H, W) or (N, C, D, H, W), read on the host"),
        Argument("align_corners", "int", 0, ("0 or 1",))),
        (Port("Y", "array", "(N, *spatial, n)", "the grid"),), ("affine_grid",),
        ("grid points linspace(-1, 1, L), times (L - 1) / L without align_corners; a size-1 axis at 0",),
        ("onnx's reference returns float32 whatever theta's dtype and puts a size-1 axis with align_corners at -1; "
         "onnxruntime puts it at +1 (left out of the random configurations)",)),
)

_ROI_CHECKED = ("seeded random configurations against onnx's reference evaluator on one-node opset 22 models "
                "(tests/test_frontend_roi.py: float64 within rtol 1e-12, float32 within 1e-5), onnxruntime where "
                "installed, NumPy, torch, JAX, Dask and array-api-strict backends; 2,000 configurations of its own "
                "against each runtime in conformance/results/frontends/onnx_reference.json and onnxruntime.json, "
                "0 differ")
CARDS += (FrontendCard(
    name="onnx.RoiAlign", version=1, library=_LIB, mirrors="onnx RoiAlign (opset 22)",
    summary="ONNX RoiAlign: avg on poolspec.roi_align (half_pixel = aligned=True), max as ONNX's maximum of the "
            "weighted corner terms (or, as an option, of the samples)",
    arguments=(
        _X, Argument("rois", "array", description="(num_rois, 4): x1, y1, x2, y2; X's dtype"),
        Argument("batch_indices", "array", description="(num_rois,) int64, each in [0, N)"),
        Argument("coordinate_transformation_mode", "str", "half_pixel", ("half_pixel", "output_half_pixel")),
        Argument("mode", "str", "avg", ("avg", "max")),
        Argument("output_height", "int", 1, (">= 1",)),
        Argument("output_width", "int", 1, (">= 1",)),
        Argument("sampling_ratio", "int", 0, (">= 0",)),
        Argument("spatial_scale", "float", 1.0, (), "> 0, rounded to float32 (an ONNX float attribute)"),
        Argument("max_of", "str", "weighted_taps", ("weighted_taps", "samples"),
                 "not ONNX's: max mode's maximum over the weighted corner terms (the spec) or over the samples")),
    outputs=(Port("Y", "array", "(num_rois, C, output_height, output_width)", "the pooled bins"),),
    core=("roi_align", "autodiff.max_select (max mode's taps)"),
    layout="channels first (N, C, H, W), as ONNX",
    gradient=gradient("avg: poolspec.roi_align's (w.r.t. X, deterministic: a sort and a segmented sum; rois and "
                      "batch_indices get none); max: the backend's autodiff through the deterministic tap gather "
                      "(max_select) and the max reduction (torch and JAX split the cotangent among tied maxima); "
                      "ONNX runtimes have no gradients, so only the forward is compared with them"),
    determinism=_DET,
    notes=("coordinates as torchvision's roi_align: start = x1 * spatial_scale - offset, size = end - start, "
           "offset 0.5 with half_pixel (torchvision aligned=True), 0 with output_half_pixel (aligned=False), where "
           "the roi size is clamped to >= 1 on each axis (established against the reference evaluator, whose "
           "output_half_pixel path clamps; half_pixel does not)",
           "bin size = roi size / output size; sample y = start + ph * bin + (iy + 0.5) * bin / grid, in the rois' "
           "dtype; grid = sampling_ratio if > 0, else ceil(roi size / output size) per axis (read on the host)",
           "a sample with y < -1 or y > H (x likewise) reads 0; otherwise y clamped to >= 0, y_low = floor(y), and "
           "at y_low >= H - 1 both taps are row H - 1 with weight 0 on the second; weights (1 - ly)(1 - lx), "
           "(1 - ly) lx, ly (1 - lx), ly lx",
           "avg: the sum of the samples / max(gh * gw, 1); a roi whose adaptive grid is <= 0 on an axis (a "
           "negative half_pixel roi) gives 0 (the reference loops over no samples), where torchvision refuses "
           "exactly one negative axis",
           "max (max_of='weighted_taps', the default): the largest of w_i * x_i over the four corner terms of "
           "every sample, as the specification, the reference and onnxruntime (onnxruntime#6146, #14265: not the "
           "largest bilinear sample); a sample outside X contributes 0 terms; max_of='samples' takes the largest "
           "sample value (sum of its four terms) instead; no samples: 0",
           "spatial_scale is rounded to float32 (an ONNX float attribute)",
           "float16 / bfloat16 are computed in float32 and rounded once"),
    differences=("onnx's reference computes a clamped (output_half_pixel) roi's bin size in Python float (double) "
                 "and rounds each coordinate term to float32 on the addition: float32 results within ~1 ulp of "
                 "the float32 arithmetic poolspec (and torchvision, onnxruntime) uses",
                 "NaN in X: the reference's Python max keeps the first operand on NaN comparisons; poolspec's max "
                 "propagates NaN (not compared)",
                 "onnxruntime 1.32 registers RoiAlign up to opset 16 only (compared there) and refuses a roi whose "
                 "adaptive grid is negative on an axis (SafeInt's integer overflow) where the reference and poolspec "
                 "give 0; elsewhere the same numbers within float32 rounding, max mode included"),
    refuses=("a batch index outside [0, N) (the reference reads another image's memory or fails)",
             "spatial_scale <= 0 or not finite", "non-finite rois"),
    checked=_ROI_CHECKED,
),)

CARDS += (FrontendCard(
    name="onnx.MaxRoiPool", version=1, library="onnxruntime 1.32.0 (CPU)", mirrors="onnx MaxRoiPool (opset 22)",
    summary="ONNX MaxRoiPool: the maximum over each bin of each roi's rounded window (torchvision's roi_pool rules)",
    arguments=(
        _X, Argument("rois", "array", description="(num_rois, 5): batch index, x1, y1, x2, y2; X's dtype; read on "
                                                  "the host"),
        Argument("pooled_shape", "list[int] | None", None, ("2 entries", "entries >= 1"), "(PH, PW); required"),
        Argument("spatial_scale", "float", 1.0, (), "> 0, rounded to float32 (an ONNX float attribute)")),
    outputs=(Port("Y", "array", "(num_rois, C, PH, PW)", "the bin maxima"),),
    core=("autodiff.max_select (the windows' gather)",),
    layout="channels first (N, C, H, W), as ONNX",
    gradient=gradient("the backend's autodiff through the deterministic window gather (max_select) and the max "
                      "reduction (torch and JAX split the cotangent among tied maxima; torchvision's roi_pool routes "
                      "it to the first); rois get none; ONNX runtimes have no gradients"),
    determinism=_DET,
    notes=("the corners x1, y1, x2, y2 times spatial_scale in float32, rounded half away from zero (std::round); the "
           "window is max(end - start + 1, 1) cells per axis; bin size = window / pooled in float32; bin p covers "
           "[start + floor(p * bin), start + ceil((p + 1) * bin)), clipped to [0, H) / [0, W); an empty bin is 0",
           "the batch index is column 0, truncated",
           "the windows are read from the rois' values on the host (a trace needs concrete rois)"),
    differences=("onnx's reference evaluator has no MaxRoiPool: established against onnxruntime alone (which "
                 "registers it at opset 1 only; 2 to 22 change only the types)",),
    refuses=("a batch index outside [0, N)", "spatial_scale <= 0 or not finite", "non-finite rois"),
    checked="seeded random configurations against onnxruntime's CPU kernel (tests/test_frontend_roi.py, float32: "
            "exact), NumPy, torch, JAX, Dask and array-api-strict backends; 2,000 configurations of its own in "
            "conformance/results/frontends/onnxruntime.json, 0 differ",
),)

CARD: dict[str, FrontendCard] = {c.name.rpartition(".")[2]: c for c in CARDS}
