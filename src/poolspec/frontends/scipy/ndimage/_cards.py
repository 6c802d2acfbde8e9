"""The cards of the scipy.ndimage front-end's window filters: SciPy 1.17.1's rules as established against it (its
``ni_filters.c``, ``ni_support.c`` and ``_filters.py``, and random configurations of the live library), and
where poolspec differs.

>>> CARDS[0].mirrors
'scipy.ndimage.uniform_filter1d'
"""

from __future__ import annotations

from ....spec._card import Argument, Gradient, Port
from ....spec.frontends import FrontendCard, gradient

_LIB = "scipy 1.17.1"
_CHECKED = ("2,000 random configurations per function against live scipy.ndimage (conformance/frontend_checks/"
            "scipy.py, `python conformance/check_frontends.py --library scipy --per-function 2000 --jax-every 10`; "
            "counts in conformance/results/frontends/scipy.json): ranks 1-3, float32/float64 and integer inputs, "
            "odd and even sizes past the axis length, every mode, cval, origins, axes, output dtypes; NumPy and "
            "torch in turn, JAX every 10th; float64 within rtol 1e-10 / atol 1e-12 max(|x|, |cval|), float32 within "
            "rtol 1e-5, integers exact. tests/test_frontend_scipy.py: every mode, origin, footprint and refusal on "
            "every backend, and the gradients against central differences of SciPy's functions (torch, JAX), "
            "bit-identical over 5 repeats")
_DET = "deterministic: slices, flips, concatenations and elementwise ops only (no gather, no scatter, no atomics)"
_INPUT = Argument("input", "array", description="any rank; float32, float64 or an integer dtype (a list or "
                                               "scalar is read as a NumPy array)")
_OUTPUT = Argument("output", "dtype | None", None, description="the result's dtype (None: the input's); a dtype "
                                                              "only, the result is returned")
_MODE1 = Argument("mode", "str", "reflect", description="reflect (= grid-mirror), mirror, nearest, wrap "
                                                       "(= grid-wrap), constant (= grid-constant)")
_MODEN = Argument("mode", "str | sequence[str]", "reflect", description="as the 1-d filters', or one per axis")
_CVAL = Argument("cval", "float", 0.0, description="the value beyond the edges in constant mode")
_ORIGIN1 = Argument("origin", "int", 0, description="the window shift: output i reads cells "
                                                   "i - size//2 - origin .. + size - 1; -(size//2) <= origin <= "
                                                   "(size-1)//2")
_ORIGINN = Argument("origin", "int | sequence[int]", 0, description="one per axis, or one for all")
_AXIS = Argument("axis", "int", -1, description="the axis filtered (negative from the end)")
_AXES = Argument("axes", "int | sequence[int] | None", None, description="the axes filtered, in this order "
                                                                        "(None: all)")
_MODES = ("Modes (SciPy's NI_ExtendLine): reflect = grid-mirror extends d c b a | a b c d | d c b a; mirror extends "
          "d c b | a b c d | c b a (a line of one cell: nearest); nearest repeats the edge cell; wrap = grid-wrap "
          "repeats the line (the filters have no interpolation's L-1 wrap quirk); constant = grid-constant extends "
          "with cval. Extensions longer than the line repeat periodically.")
_WINDOW = ("Window: output i reads input cells i - size//2 - origin to i - size//2 - origin + size - 1; origin must "
           "lie in [-(size//2), (size-1)//2] (SciPy's ValueError 'invalid origin').")
_ND = ("The n-d filters apply the 1-d filter along each of `axes` in the order given, with that axis's size, origin "
       "and mode; an axis of size <= 1 is skipped (its origin not checked; SciPy truncates a float size with "
       "int()); with every axis skipped the result is the input cast to the output dtype.")
_UNIFORM_NUM = ("Numbers: SciPy sums in double with a running sum (out[l] = out[l-1] + (e[l+size-1] - e[l-1])); "
                "poolspec adds the size shifted slices of the extended line in tap order and divides by size (the "
                "exact window mean up to rounding). They agree within 1e-14 x max|x| for lines up to 4096 cells; "
                "SciPy's running sum accumulates error along longer lines (about 5e-15 x max|x| at 1e5 cells, "
                "relative error up to 6e-8 on outputs near zero), which poolspec does not reproduce.")
_UNIFORM_DTYPE = ("dtypes: computed in float64 (float32 on JAX without jax_enable_x64); each axis pass is stored in "
                  "the output dtype and read back by the next, as SciPy does: float32 is rounded after every axis, "
                  "integer outputs are truncated toward zero after every axis.")
_EXTREME_NUM = ("The selection rule: each window starts from its first tap and a later tap replaces the best so "
                "far only when strictly greater (max) or less (min), so of equal taps the first is selected. The "
                "n-d box is nested 1-d filters over `axes` in order (SciPy's separable path; an all-True footprint "
                "takes it with size = footprint.shape).")
_FOOTPRINT = ("A footprint that is not all True is SciPy's non-separable path: the extended array is read at "
              "every True footprint cell in row-major order with the same strict rule (so NaN results exactly "
              "where the first tap is NaN, as SciPy). The footprint's axes are the filtered axes in increasing "
              "order (SciPy's _expand_footprint); the origins follow `axes` where it names fewer axes than the "
              "input has, else the input's axes in order (_expand_origin); one mode only.")
_EXTREME_DTYPE = ("dtypes: extremes are taken in the input's dtype, cval cast to it (truncated for integer "
                  "inputs), then stored in the output dtype (float rounding, integer truncation); these casts are "
                  "monotone, so this equals SciPy's double line stored per axis. Integers above 2^53 stay exact "
                  "(SciPy rounds them through double).")
_EXTREME_GRAD = gradient("w.r.t. input: each output's cotangent goes whole to the selected tap (the first extreme "
                         "of its window; native autodiff through the where-chain, never split between ties as "
                         "the autodiff of maximum() would), summed over the outputs that select a cell; the "
                         "boundary modes' cells add to the input cells they copy. Piecewise linear: the second "
                         "derivative is 0.")
_UNIFORM_GRAD = gradient("w.r.t. input: the filter's transpose (linear: slices transpose into pads, the mode's "
                         "extension into the sum over the cells it copies), through native autodiff on torch and "
                         "JAX; every order.")
_NAN = ("NaN in the separable (size, or all-True footprint) max/min filters: poolspec's result is NaN exactly where "
        "a pass's first tap is NaN; SciPy's Harter deque gives history-dependent results (even windows holding no "
        "NaN can be wrong after a NaN has passed), which no window rule reproduces, so NaN inputs are unspecified "
        "there and left out of the conformance runs. NaN or out-of-range values stored to an integer output are "
        "unspecified (C casts in SciPy).")
_REFUSES_COMMON = ("output arrays (SciPy writes into one; pass a dtype, the result is returned) and bool or complex "
                   "output dtypes (TypeError)",
                   "bool and complex inputs (TypeError; SciPy filters bool, and complex in the uniform filter); "
                   "float16 (TypeError, as SciPy's RuntimeError)",
                   "SciPy's refusals, as ValueError/TypeError naming the argument before computing: unknown mode "
                   "(RuntimeError there), size < 1 or a non-int size in the 1-d filters, invalid origin, a sequence "
                   "argument whose length is not the number of axes (RuntimeError there), axes out of range or "
                   "repeated, a complex cval (TypeError)")
_REFUSES_EXTREME = _REFUSES_COMMON + (
    "a cval outside an integer input's range, or NaN with one (SciPy's C cast is undefined there)",)
_REFUSES_FOOTPRINT = _REFUSES_EXTREME + (
    "neither size nor footprint, an all-zero footprint, footprint.ndim != len(axes), a sequence of modes with a "
    "non-separable footprint (SciPy: RuntimeError / ValueError); size with a footprint warns and is ignored, as "
    "SciPy",)
_DIFF_AXES = ("SciPy 1.17.1 refuses a negative int `axes` with a non-full footprint on a higher-rank input "
              "(_check_axes leaves it negative and _expand_footprint then expands every axis); poolspec accepts it "
              "as the positive axis.")


def _card(name: str, summary: str, arguments: tuple[Argument, ...], notes: tuple[str, ...],
          refuses: tuple[str, ...], grad: Gradient, differences: tuple[str, ...] = ()) -> FrontendCard:
    return FrontendCard(name=f"scipy.ndimage.{name}", version=1, library=_LIB, mirrors=f"scipy.ndimage.{name}",
                        summary=summary, arguments=arguments,
                        outputs=(Port("filtered", "array", "input.shape", "the filtered array, in the output dtype"),),
                        core=("frontends.scipy.ndimage._filters.extend",), layout="any rank; the filtered axes "
                        "are named by axis/axes", gradient=grad, determinism=_DET,
                        notes=notes, differences=differences, refuses=refuses, checked=_CHECKED)


_ONE_D_ARGS = (_INPUT, Argument("size", "int", description="the window length, >= 1"), _AXIS, _OUTPUT, _MODE1,
               _CVAL, _ORIGIN1)
# maximum_filter's and minimum_filter's arguments, notes, refusals, gradient and differences
_FOOTPRINT_CARD = (
    (_INPUT, Argument("size", "int | sequence[int] | None", None, description="the box, per axis or one for all"),
     Argument("footprint", "array | None", None, description="booleans over the filtered axes; wins over size"),
     _OUTPUT, _MODEN, _CVAL, _ORIGINN, _AXES),
    (_ND, _WINDOW, _MODES, _EXTREME_NUM, _FOOTPRINT, _EXTREME_DTYPE, _NAN), _REFUSES_FOOTPRINT, _EXTREME_GRAD,
    (_DIFF_AXES,))

CARDS: tuple[FrontendCard, ...] = (
    _card("uniform_filter1d", "The mean over a window of size cells along one axis, with SciPy's boundary modes.",
          _ONE_D_ARGS, (_WINDOW, _MODES, _UNIFORM_NUM, _UNIFORM_DTYPE), _REFUSES_COMMON, _UNIFORM_GRAD),
    _card("uniform_filter", "The mean over a box (one uniform_filter1d per axis), with SciPy's boundary modes.",
          (_INPUT, Argument("size", "int | sequence[int]", 3, description="per axis, or one for all"), _OUTPUT,
           _MODEN, _CVAL, _ORIGINN, _AXES),
          (_ND, _WINDOW, _MODES, _UNIFORM_NUM, _UNIFORM_DTYPE), _REFUSES_COMMON, _UNIFORM_GRAD),
    _card("maximum_filter1d", "The maximum over a window of size cells along one axis, with SciPy's boundary modes.",
          _ONE_D_ARGS, (_WINDOW, _MODES, _EXTREME_NUM, _EXTREME_DTYPE, _NAN), _REFUSES_EXTREME, _EXTREME_GRAD),
    _card("maximum_filter", "The maximum over a box (nested 1-d maxima) or over a footprint's True cells, with "
                            "SciPy's boundary modes.",
          *_FOOTPRINT_CARD),
    _card("minimum_filter1d", "The minimum over a window of size cells along one axis, with SciPy's boundary modes.",
          _ONE_D_ARGS, (_WINDOW, _MODES, _EXTREME_NUM, _EXTREME_DTYPE, _NAN), _REFUSES_EXTREME, _EXTREME_GRAD),
    _card("minimum_filter", "The minimum over a box (nested 1-d minima) or over a footprint's True cells, with "
                            "SciPy's boundary modes.",
          *_FOOTPRINT_CARD),
)


_GRAD_OUTPUT = Argument("grad_output", "array", description="the cotangent of the filter's output (its shape)")
_BACKWARD_CHECKED = ("against SciPy's own vector-Jacobian products computed from its values (conformance/"
                     "frontend_checks/scipy.py `_vjp`: basis responses of the affine uniform filter, central "
                     "differences below the smallest gap between values for max/min), 2,000 random float64 "
                     "configurations per function on NumPy, torch and JAX (counts in conformance/results/frontends/"
                     "scipy.json); tests/test_frontend_scipy.py: equal to torch autograd and jax.grad of the forward "
                     "on every backend, bit-identical over repeats")
_BACKWARD_DET = ("deterministic: slices, zero pads, selects and adds in a fixed order (no scatter, no atomics): "
                 "bit-identical repeats")


def _backward(forward: FrontendCard) -> FrontendCard:
    name = forward.name.rpartition(".")[2]
    return FrontendCard(
        name=f"{forward.name}_backward", version=1, library=_LIB,
        mirrors=f"the VJP of scipy.ndimage.{name} (SciPy has none)",
        summary=f"The gradient of {name} w.r.t. its input, for arrays without autodiff (NumPy, CuPy, Dask, "
                "array-api-strict); torch and JAX differentiate the forward natively to the same values.",
        arguments=(_GRAD_OUTPUT,) + forward.arguments,
        outputs=(Port("grad_input", "array", "input.shape", "the gradient w.r.t. input, in its dtype"),),
        core=("frontends.scipy.ndimage._filters.fold_back",), layout=forward.layout,
        gradient=gradient("linear in grad_output (its own transpose is the forward's linearisation); native "
                          "autodiff on torch and JAX"),
        determinism=_BACKWARD_DET,
        notes=(forward.gradient.notes, "The casts to the output dtype between passes are taken as the identity; "
               "an integer input or output is refused (TypeError: not differentiable)."),
        refuses=("what the forward refuses; a grad_output whose shape is not the input's; integer dtypes",),
        checked=_BACKWARD_CHECKED)


CARDS = CARDS + tuple(_backward(c) for c in CARDS)


# ------------------------------------------------------------------------------------------- B-spline functions

_SPLINE_CHECKED = ("random configurations per function against live scipy.ndimage (conformance/frontend_checks/"
                   "scipy.py; counts in conformance/results/frontends/scipy.json): ranks 1-3, axes of 1 to 100 cells "
                   "(the dense recursion and the folded band both), float32/float64 and integer inputs, float outputs "
                   "and integer outputs of float inputs (spline_filter's on axes of 18 cells or more: the short-axis "
                   "note), orders 0-5 (a few refused), every mode; NumPy and torch in turn, JAX every 10th; float64 "
                   "within rtol 1e-10 / atol 1e-12 max|x|, float32 within rtol 1e-5, integers exact. "
                   "tests/test_frontend_scipy_spline.py: every mode and "
                   "order on every backend, the plans, refusals, and torch autograd / jax.grad against SciPy")
_MAP_CHECKED = ("random configurations against live scipy.ndimage.map_coordinates (conformance/frontend_checks/"
                "scipy.py; counts in conformance/results/frontends/scipy.json): ranks 1-3, axes of 1 to 20 cells, "
                "orders 0-5, every mode, prefilter on and off, cval, coordinates across and beyond the input (with "
                "integers, half-integers and the edges), float32/float64/integer inputs and outputs; NumPy and torch "
                "in turn, JAX every 10th; float64 within rtol 1e-10 / atol 1e-12 max(|x|, |cval|), float32 within "
                "rtol 1e-5, integers exact. tests/test_frontend_scipy_spline.py: every mode and order on "
                "every backend, non-finite coordinates, integer rounding, refusals; the input gradient against "
                "SciPy's Jacobian and the coordinate gradient against central differences of SciPy (torch, JAX)")
_SPLINE_DET = ("deterministic: per-axis tap tables (gathers and multiply-adds in a fixed order; no scatter, no "
               "atomics)")
_MAP_DET = ("deterministic: one gather of each point's taps and a fixed-order sum; the backward routes the taps' "
            "cotangents by sorting (kernels.cells.Cells.route: no scatter-add, no atomics)")
_SPLINE_INPUT = Argument("input", "array", description="any rank >= 1; float32, float64 or an integer dtype (a list "
                                                      "or scalar is read as a NumPy array)")
_SPLINE_OUTPUT = Argument("output", "dtype", "float64", description="the result's dtype (default float64); each "
                                                                   "axis pass is stored in it; a dtype only")
_SPLINE_MODE = Argument("mode", "str", "mirror", description="mirror, constant, grid-constant, wrap (whole-sample "
                                                            "mirror prefilter); reflect, grid-mirror, nearest "
                                                            "(half-sample); grid-wrap (periodic)")
_POLES = ("The prefilter (ni_splines.c): the line times gain = prod (1 - z)(1 - 1/z), then per pole z (order 2: "
          "sqrt(8) - 3; 3: sqrt(3) - 2; 4 and 5: two poles, SciPy's literals) a causal and an anticausal recursion "
          "whose initial values carry the boundary: whole-sample mirror for mirror, constant, grid-constant and "
          "wrap; half-sample mirror for reflect, grid-mirror and nearest; periodic for grid-wrap. spline_filter1d "
          "itself never pads (constant and grid-constant are the mirror prefilter). A line of one cell is left "
          "unchanged.")
_PLAN = ("poolspec applies it as one tap table per axis: axes up to 2w + 1 cells (w = 20, 27, 35, 43 for orders "
         "2-5) get the dense matrix of SciPy's own recursion replayed on the identity; longer axes the infinite "
         "inverse kernel cut to 2w + 1 taps on the line folded by the boundary rule (the dropped tail is below "
         "1e-16 of max|x|). Rounding differs from SciPy's sequential recursion by about 1e-15 relative.")
_ALIASING = ("SciPy 1.17.1's _init_causal_reflect accumulates its sum in c[0] itself (at i = n-1 the term c[n-1-i] "
             "is the partial sum; fixed upstream after 1.17.1): the reflect-kind prefilter (reflect, grid-mirror, "
             "nearest) of axes up to 16 cells differs from the exact inverse (by 3e-5 to 9e-3 at 2 cells). Mirrored "
             "on purpose (module constant REFLECT_ALIASING, not a probe of the installed SciPy): the front-end "
             "gives 1.17.1's numbers whatever SciPy is installed.")
_SPLINE_DTYPE = ("dtypes: computed in float64 (float32 on JAX without jax_enable_x64); each axis pass is stored in "
                 "the output dtype and read back by the next, as SciPy: float32 rounded, integers truncated toward "
                 "zero (negative values to an unsigned output are unspecified: a C cast in SciPy).")
_INT_SHORT = ("Integer outputs on short axes (under 17 cells) may differ from SciPy's by 1 per axis pass (up to 4 "
              "after 3 passes): there the prefilter's matrix has small denominators (3 cells, mirror: exact "
              "eighths), so the filtered values of integer data (an integer input, or spline_filter's passes after "
              "the first, truncated to integers) are exact integers up to rounding, which SciPy's recursion and "
              "poolspec's table round to either side before the truncation. Float outputs agree within rounding; "
              "axes of 17 cells or more agree on integers but for rare cells.")
_SPLINE_GRAD = gradient("w.r.t. input: linear, so the transposed tap tables (gathers, deterministic) through native "
                        "autodiff on torch and JAX, every order; the casts to the output dtype are taken as the "
                        "identity")
_SPLINE_OUT = (Port("coefficients", "array", "input.shape", "the B-spline coefficients, in the output dtype"),)
_ORDER_1D = Argument("order", "int", 3, description="0 to 5 (0 and 1: a copy into the output dtype)")
_ORDER_ND = Argument("order", "int", 3, description="2 to 5")
_SPLINE_REFUSES = ("output arrays (pass a dtype; the result is returned) and bool or complex output dtypes "
                   "(TypeError)",
                   "bool, complex and float16 inputs (TypeError; SciPy refuses float16 and filters complex parts)",
                   "SciPy's refusals, as ValueError/TypeError naming the argument before computing: an order out of "
                   "range (RuntimeError 'spline order not supported' there), an unknown mode (RuntimeError there), "
                   "an axis out of range (AxisError there), a non-int order or axis")

_MAP_ORDER = Argument("order", "int", 3, description="0 to 5")
_MAP_ARGS = (
    _SPLINE_INPUT,
    Argument("coordinates", "array", description="(input.ndim, ...): the points' coordinates along each input "
                                                 "axis; bool, integer, float32 or float64"),
    Argument("output", "dtype | None", None, description="the result's dtype (None: the input's); a dtype only"),
    _MAP_ORDER,
    Argument("mode", "str", "constant", description="constant, grid-constant, nearest, mirror, reflect "
                                                    "(= grid-mirror), wrap, grid-wrap"),
    Argument("cval", "float", 0.0, description="the value beyond the edges in the constant modes"),
    Argument("prefilter", "bool", True, description="prefilter the input (orders > 1); False: the input is the "
                                                    "coefficients"))
_POINT = ("Per point and axis (ni_interpolation.c NI_GeometricTransform): cc = coordinate + npad; except for "
          "nearest and grid-constant, cc is mapped into the line (mirror: period 2L-2; reflect = grid-mirror: period "
          "2L; wrap: SciPy's period L-1, x[0] and x[L-1] one point; grid-wrap: period L; constant: outside [0, L-1] "
          "-> -1), and !(cc > -1) makes the whole point cval; the taps start at floor(cc) (odd orders) or "
          "floor(cc + 0.5) (even orders, ties up) minus order//2; taps outside the line are mapped with the mirror "
          "rule for constant and wrap, the mode's own otherwise, and read cval for grid-constant; the weights are "
          "SciPy's polynomials in its operation order (the last one is 1 - the others), multiplied ((c * w0) * w1) "
          "... per tap and summed (poolspec sums pairwise: rounding only). Zero-weight taps are read, so a NaN "
          "neighbour spreads as in SciPy.")
_NPAD = ("Prefilter (prefilter and order > 1): spline_filter in float64 with the mode's kind; for nearest and "
         "grid-constant the input is first padded by npad = 12 cells on every axis (edge values, or cval) and "
         "prefiltered on L + 24 cells, as SciPy's _prepad_for_spline_filter (so far-out nearest values are not "
         "exactly the edge sample: SciPy's leak copied). constant is not padded. The reflect-kind aliasing of "
         "SciPy 1.17.1 on axes up to 16 cells (see spline_filter1d) is mirrored on purpose here too (reflect and "
         "grid-mirror modes on short axes).")
_NONFINITE = ("Non-finite coordinates: NaN gives cval in every mode but nearest and grid-constant (the "
              "!(cc > -1) rule), NaN in those two at orders >= 1; at order 0 SciPy's x86 cast of NaN or inf to "
              "INT_MIN reads the first cell (nearest) or cval (grid-constant), which poolspec copies. +-inf under "
              "wrap and grid-wrap is unspecified (SciPy casts inf to an integer: 0 or NaN there, cval here).")
_ROUND = ("dtypes: output None is the input's dtype. The interpolation is computed in float64 (float32 on JAX "
          "without x64) and stored once: float32 rounded; integer outputs rounded as SciPy's CASE_INTERP_OUT_UINT / "
          "_INT: unsigned half up with negatives to 0, signed half away from zero, clipped to the dtype's range "
          "(NaN to 0 here; SciPy's cast of NaN and of |t| >= 2^63 is undefined: unspecified).")
_MAP_DIFF = ("The interpolated sum runs pairwise over the taps (SciPy: sequentially in row-major tap order): values "
             "agree within 1e-12 relative, so an integer output exactly at a rounding tie (t = k + 0.5 up to "
             "rounding) may differ by 1.")
_MAP_GRAD = gradient(
    "w.r.t. input: the taps' weights routed to the coefficients by sorting (no scatter-add), then the transposed "
    "prefilter and the pad folded back: explicit everywhere (map_coordinates_backward); on torch an "
    "autograd.Function pair (each the other's VJP; forward mode and torch.func.vmap rules of their own), on JAX a "
    "custom JVP through roi_align's select primitive (linear in the coefficients and in the taps' weights; its "
    "transpose the sorted route), so every order of reverse and forward mode. w.r.t. coordinates: the weights' "
    "derivative with the coefficients held (the tap cells are piecewise constant; at a knot the one-sided "
    "derivative of the cell the point falls in), every order, and the mixed derivatives with the input, torch "
    "and JAX (checked against differences of SciPy); on torch the derivative w.r.t. the input of the coordinates' "
    "gradient runs through torch's own gather backward (index_add: on CUDA not bit-identical run to run). cval "
    "gets no gradient.", ("input", "coordinates"))

_SPLINE_CARDS: tuple[FrontendCard, ...] = (
    FrontendCard(name="scipy.ndimage.spline_filter1d", version=1, library=_LIB,
                 mirrors="scipy.ndimage.spline_filter1d",
                 summary="The B-spline prefilter along one axis (the coefficients whose spline interpolates the "
                         "samples), with SciPy's boundary modes and 1.17.1's numbers.",
                 arguments=(_SPLINE_INPUT, _ORDER_1D, _AXIS, _SPLINE_OUTPUT, _SPLINE_MODE), outputs=_SPLINE_OUT,
                 core=("frontends._common.resample", "frontends.scipy.ndimage._splines.prefilter_plan"),
                 layout="any rank; the filtered axis is named by axis", gradient=_SPLINE_GRAD,
                 determinism=_SPLINE_DET,
                 notes=(_POLES, "Orders 0 and 1 copy the input into the output dtype (no filtering).", _PLAN,
                        _ALIASING, _SPLINE_DTYPE, _INT_SHORT),
                 refuses=_SPLINE_REFUSES, checked=_SPLINE_CHECKED),
    FrontendCard(name="scipy.ndimage.spline_filter", version=1, library=_LIB, mirrors="scipy.ndimage.spline_filter",
                 summary="The B-spline prefilter along every axis in turn, with SciPy's boundary modes and 1.17.1's "
                         "numbers.",
                 arguments=(_SPLINE_INPUT, _ORDER_ND, _SPLINE_OUTPUT, _SPLINE_MODE), outputs=_SPLINE_OUT,
                 core=("frontends._common.resample", "frontends.scipy.ndimage._splines.prefilter_plan"),
                 layout="any rank; every axis is filtered, first to last", gradient=_SPLINE_GRAD,
                 determinism=_SPLINE_DET,
                 notes=(_POLES, "spline_filter1d along axes 0, 1, ... in turn, each pass stored in the output "
                                "dtype; orders 0 and 1 are refused, as SciPy (a 0-d or empty input is returned "
                                "cast).", _PLAN, _ALIASING, _SPLINE_DTYPE, _INT_SHORT),
                 refuses=_SPLINE_REFUSES, checked=_SPLINE_CHECKED),
    FrontendCard(name="scipy.ndimage.map_coordinates", version=1, library=_LIB,
                 mirrors="scipy.ndimage.map_coordinates",
                 summary="The input's B-spline interpolant (orders 0-5) at arbitrary coordinates, with SciPy's "
                         "boundary modes and numbers.",
                 arguments=_MAP_ARGS,
                 outputs=(Port("interpolated", "array", "coordinates.shape[1:]", "the values at the points, in the "
                                                                                 "output dtype"),),
                 core=("frontends.scipy.ndimage._splines.prefilter_plan", "kernels.cells.Cells.route"),
                 layout="any rank; coordinates[d] indexes input axis d", gradient=_MAP_GRAD, determinism=_MAP_DET,
                 notes=(_POINT, _NPAD, _NONFINITE, _ROUND, _MAP_DIFF,
                        "The input is gathered once per point and tap ((order + 1) ** ndim taps), so the memory is "
                        "points x taps; on JAX each parsed call (shapes, order, mode, cval) is one jitted program."),
                 refuses=("output arrays (pass a dtype) and bool or complex output dtypes (TypeError; SciPy casts to "
                          "bool with a C truncation)",
                          "bool, complex and float16 inputs, complex and float16 coordinates (TypeError; SciPy "
                          "splits complex inputs into parts)",
                          "an empty input (ValueError; SciPy reads out of bounds or returns cval)",
                          "SciPy's refusals, as ValueError/TypeError naming the argument before computing: an order "
                          "outside [0, 5], an unknown mode, a 0-d input, coordinates whose first axis is not the "
                          "input's rank (RuntimeError there), a complex cval, a non-bool prefilter"),
                 checked=_MAP_CHECKED),
)


def _spline_backward(forward: FrontendCard, transpose: str, shape: str) -> FrontendCard:
    name = forward.name.rpartition(".")[2]
    return FrontendCard(
        name=f"{forward.name}_backward", version=1, library=_LIB,
        mirrors=f"the VJP of scipy.ndimage.{name} (SciPy has none)",
        summary=f"The gradient of {name} w.r.t. its input, for arrays without autodiff (NumPy, CuPy, Dask, "
                "array-api-strict); torch and JAX differentiate the forward to the same values.",
        arguments=(Argument("grad_output", "array", description=f"the cotangent of the forward's output ({shape})"),)
        + forward.arguments,
        outputs=(Port("grad_input", "array", "input.shape", "the gradient w.r.t. input, in its dtype"),),
        core=forward.core, layout=forward.layout,
        gradient=gradient("linear in grad_output (its transpose is the forward's linear part); native autodiff on "
                          "torch and JAX"),
        determinism=("deterministic: transposed tap tables (gathers)" + (
            " and the taps' cotangents routed by sorting (no scatter-add, no atomics)" if "map" in name else
            " (no scatter, no atomics)") + ": bit-identical repeats"),
        notes=(transpose, "The casts to the output dtype are taken as the identity; an integer input or output is "
                          "refused (TypeError: not differentiable)."),
        refuses=("what the forward refuses; a grad_output whose shape is not the forward's output shape; integer "
                 "dtypes",),
        checked=("against SciPy's own vector-Jacobian product from its values (the forward is affine in the input: "
                 "column i of its Jacobian is f(e_i) - f(0), conformance/frontend_checks/scipy.py `_vjp`), random "
                 "float64 configurations on NumPy, torch and JAX (counts in conformance/results/frontends/"
                 "scipy.json); tests/test_frontend_scipy_spline.py: against SciPy's Jacobian on every backend"))


_SPLINE_T = ("The prefilter's transposed tap table per axis (last axis first), the same plans as the forward's.")
CARDS = CARDS + _SPLINE_CARDS + (
    _spline_backward(_SPLINE_CARDS[0], _SPLINE_T, "input.shape"),
    _spline_backward(_SPLINE_CARDS[1], _SPLINE_T, "input.shape"),
    _spline_backward(_SPLINE_CARDS[2], "Each point's cotangent times its tap weights, summed into the coefficients "
                                       "it read (sorted by cell: kernels.cells.Cells.route), zero for the taps and "
                                       "points that read cval; then the transposed prefilter and the npad pad "
                                       "folded back onto the cells it copies. cval and the coordinates get no "
                                       "gradient here (torch and JAX give the coordinates' first order).",
                     "coordinates.shape[1:]"),
)


# ------------------------------------------------------------------------------------------ geometric transforms

_GEOMETRY_CHECKED = ("random configurations per function against live scipy.ndimage (conformance/frontend_checks/"
                     "scipy.py; counts in conformance/results/frontends/scipy.json): ranks 1-3 (rotate 2-3), axes of "
                     "1 to 20 cells, orders 0-5, every mode, prefilter on and off, cval, float32/float64/integer "
                     "inputs, float and integer outputs, {what}; NumPy and torch in turn, JAX every 10th; float64 "
                     "within rtol 1e-10 / atol 1e-12 max(|x|, |cval|), float32 within rtol 1e-5, integers exact. "
                     "tests/test_frontend_scipy_geometry.py: every mode and order on every backend, refusals, and "
                     "the gradients against SciPy's Jacobian")
_GEOMETRY_DET = ("deterministic: per-axis tap tables or one gather of each output's taps, summed in a fixed order; "
                 "no scatter, no atomics; the backward routes the taps by sorting (kernels.cells.Cells.route)")
_GEOMETRY_GRAD = gradient("w.r.t. input: affine (cval enters as a constant), so the transposed tables / the taps' "
                          "weights routed back by sorting, then the transposed prefilter and the npad pad folded "
                          "back; deterministic, every order. shift (shift) and matrix and offset (affine_transform) "
                          "given as torch tensors that require grad or as traced JAX values get their first-order "
                          "gradient through map_coordinates' coordinate gradient (the weights' derivative, the "
                          "coefficients held); zoom, angle and cval get none.")
_GEOMETRY_TAIL = (
    Argument("output", "dtype | None", None, description="the result's dtype (None: the input's); a dtype only"),
    Argument("order", "int", 3, description="0 to 5"),
    Argument("mode", "str", "constant", description="constant, grid-constant, nearest, mirror, reflect "
                                                    "(= grid-mirror), wrap, grid-wrap"),
    Argument("cval", "float", 0.0, description="the value beyond the edges in the constant modes"),
    Argument("prefilter", "bool", True, description="prefilter the input (orders > 1); False: the input is the "
                                                    "coefficients"))
_GEOMETRY_POINT = ("Each output point reads the input at a coordinate per axis (the card's rule below) and "
                   "interpolates it as map_coordinates does (SciPy's NI_ZoomShift / NI_GeometricTransform): the "
                   "mode's mapping of the coordinate (wrap: SciPy's period L-1), cval for constant's out-of-range "
                   "points, the taps' boundary mapping (mirror for constant and wrap), SciPy's weight polynomials; "
                   "order 0 picks floor(cc + 0.5) after the mapping (ties up).")
_GEOMETRY_PREFILTER = ("Prefilter (prefilter and order > 1): spline_filter in float64 with the mode's kind, after a "
                       "pad of npad = 12 cells on every axis for nearest and grid-constant (edge values, or cval), "
                       "as SciPy's _prepad_for_spline_filter; SciPy 1.17.1's reflect-kind aliasing on axes up to 16 "
                       "cells is mirrored on purpose (see spline_filter1d).")
_GEOMETRY_NONFINITE = ("A NaN or inf in the input spreads, with the prefilter on a long axis (over 2w + 1 cells, w = "
                       "20 / 27 / 35 / 43 for orders 2-5), over the prefilter's band of taps around it; SciPy's "
                       "recursion spreads it over the whole line. Outside that band the values are SciPy's.")
_GEOMETRY_DTYPE = ("dtypes: output None is the input's dtype; computed in float64 (float32 on JAX without x64) and "
                   "stored once: float32 rounded; integer outputs rounded as SciPy (unsigned half up with negatives "
                   "to 0, signed half away from zero, clipped; NaN and |t| >= 2^63 unspecified).")
_GEOMETRY_REFUSES = ("output arrays (pass a dtype; the result is returned) and bool or complex output dtypes "
                     "(TypeError; SciPy casts to bool with a C truncation)",
                     "bool, complex and float16 inputs (TypeError; SciPy splits complex inputs into parts)",
                     "SciPy's refusals, as ValueError/TypeError naming the argument before computing: an order "
                     "outside [0, 5], an unknown mode (RuntimeError 'boundary mode not supported' there), a 0-d input "
                     "(RuntimeError there), a sequence argument whose length is not the input's rank (RuntimeError "
                     "there), a complex cval")


def _geometry_card(name: str, summary: str, arguments: tuple[Argument, ...], shape: str, rules: tuple[str, ...],
                   refuses: tuple[str, ...], what: str, differences: tuple[str, ...] = (),
                   core: tuple[str, ...] = ("frontends.scipy.ndimage._splines.prefilter_plan",
                                            "frontends._common.resample"),
                   keywords: tuple[Argument, ...] = ()) -> FrontendCard:
    return FrontendCard(name=f"scipy.ndimage.{name}", version=1, library=_LIB, mirrors=f"scipy.ndimage.{name}",
                        summary=summary, arguments=(_SPLINE_INPUT,) + arguments + _GEOMETRY_TAIL + keywords,
                        outputs=(Port("resampled", "array", shape, "the resampled array, in the output dtype"),),
                        core=core, layout="any rank", gradient=_GEOMETRY_GRAD, determinism=_GEOMETRY_DET,
                        notes=rules + (_GEOMETRY_POINT, _GEOMETRY_PREFILTER, _GEOMETRY_DTYPE),
                        differences=(_GEOMETRY_NONFINITE,) + differences,
                        refuses=_GEOMETRY_REFUSES + refuses, checked=_GEOMETRY_CHECKED.format(what=what))


_ZOOM_RULE = ("Output shape per axis: int(round(L * zoom)) with Python's round (half to even) on the float product "
              "(5 * 0.5 -> 2, 7 * 0.5 -> 4). Output k reads cc = k * zf with zf = (L - 1) / (O - 1), or with "
              "grid_mode cc = (k + 0.5) * zf - 0.5 with zf = L / O (zf = 1 where the denominator is 0), in that "
              "operation order. When every zoom is 1 and prefilter is True the result is the input cast to the output "
              "dtype (SciPy's early exit, any order and mode); with prefilter=False the spline smoothing is applied. "
              "grid_mode with constant or wrap warns (UserWarning, as SciPy) and computes the same.")
_SHIFT_RULE = "Output k reads cc = k + (-shift) per axis (SciPy's NI_ZoomShift); the output has the input's shape."
_AFFINE_RULE = ("matrix forms: (ndim, ndim) or (ndim, out_ndim) -> cc_h = ((offset_h + o_0 m_h0) + o_1 m_h1) + ... "
                "accumulated left to right; (ndim, ndim + 1): the last column is the offset (the offset argument is "
                "ignored); (ndim + 1, ndim + 1): homogeneous, its last row must be exactly [0, ..., 0, 1] "
                "(ValueError); a (ndim, ndim + 1) matrix is always read as the offset form (a 3-d output_shape on a "
                "2-d input with a (2, 3) matrix is refused, as SciPy). A 1-d matrix is SciPy's diagonal fast path "
                "through zoom-shift: cc = (o + offset / m) * m, numerically different from o * m + offset (order 0 "
                "may pick another sample). output_shape defaults to the input's shape.")
_AFFINE_NAN = ("A 1-d matrix with a zero entry gives offset / m = inf or NaN, so NaN coordinates: SciPy segfaults "
               "on them outside constant, nearest and grid-constant (NI_ZoomShift's zeros buffer is NULL there); "
               "poolspec gives cval there, and follows map_coordinates' NaN rule "
               "elsewhere.")
_ROTATE_RULE = ("axes are sorted first ((1, 0) and (0, 1) are the same plane); c, s = cosdg(angle), sindg(angle) "
                "(cephes: exact 0 and +-1 at multiples of 90 degrees); R = [[c, s], [-s, c]]; with reshape the plane "
                "becomes (ptp(R @ corners) + 0.5).astype(int), else the input's; offset = (in_plane - 1) / 2 - "
                "R @ ((out_plane - 1) / 2); then affine_transform with the 2 x 2 matrix on every plane of the other "
                "axes (prefilter and npad within the plane).")

_GEOMETRY_CARDS: tuple[FrontendCard, ...] = (
    _geometry_card("zoom", "The input resampled on a finer or coarser grid by B-spline interpolation (orders 0-5), "
                           "with SciPy's boundary modes, grid rules and numbers.",
                   (Argument("zoom", "float | sequence[float]", description="per axis, or one for all; >= 0"),),
                   "round(input.shape * zoom)", (_ZOOM_RULE,),
                   ("a negative zoom (ValueError, as SciPy's 'negative dimensions'); a zoom sequence of the wrong "
                    "length",),
                   "zoom factors from 0.2 to 3 (exact ties of the output shape's round included), grid_mode",
                   keywords=(Argument("grid_mode", "bool", False, description="keyword-only: the pixel-edge grid "
                                                                             "(L / O per output cell)"),)),
    _geometry_card("shift", "The input shifted by a fractional number of cells per axis by B-spline interpolation "
                            "(orders 0-5), with SciPy's boundary modes and numbers.",
                   (Argument("shift", "float | sequence[float]", description="per axis, or one for all"),),
                   "input.shape", (_SHIFT_RULE,), ("a shift sequence of the wrong length",
                                                   "a non-finite shift (ValueError; SciPy's result is undefined)"),
                   "shifts integer, half-integer and fractional, past the axis"),
    _geometry_card("affine_transform", "The input read at matrix @ o + offset for each output index o, by B-spline "
                                       "interpolation (orders 0-5), with SciPy's matrix forms, modes and numbers.",
                   (Argument("matrix", "array", description="(ndim, ndim), (ndim, out_ndim), (ndim, ndim + 1), "
                                                           "(ndim + 1, ndim + 1) homogeneous, or (ndim,) diagonal"),
                    Argument("offset", "float | sequence[float]", 0.0, description="per input axis, or one for all"),
                    Argument("output_shape", "tuple[int, ...] | None", None, description="None: the input's shape")),
                   "output_shape", (_AFFINE_RULE, _AFFINE_NAN),
                   ("a matrix of rank other than 1 or 2, a wrong number of rows or columns, a homogeneous matrix "
                    "whose last row is not [0, ..., 0, 1], an offset sequence of the wrong length",
                    "a non-finite matrix or offset entry (ValueError; SciPy's result is undefined, or it crashes)"),
                   "every matrix form (1-d diagonal, square, offset column, homogeneous, another output rank), "
                   "output shapes",
                   core=("frontends.scipy.ndimage._splines.prefilter_plan", "kernels.cells.Cells.route")),
    _geometry_card("rotate", "The input rotated by angle degrees in the plane of two axes, by B-spline "
                             "interpolation (orders 0-5), with SciPy's reshape rule, modes and numbers.",
                   (Argument("angle", "float", description="degrees"),
                    Argument("axes", "tuple[int, int]", (1, 0), description="the rotation plane (sorted)"),
                    Argument("reshape", "bool", True, description="enlarge the plane to hold the rotated input")),
                   "input.shape, the plane enlarged with reshape", (_ROTATE_RULE,),
                   ("a 1-d input, axes that are not two ints in range (ValueError, as SciPy)",
                    "equal axes (ValueError; SciPy accepts them with a meaningless result), a non-finite angle"),
                   "angles at multiples of 90 degrees and random, reshape on and off, axes (negative, permuted)",
                   core=("frontends.scipy.ndimage._splines.prefilter_plan", "kernels.cells.Cells.route")),
)

_GEOMETRY_T = ("The forward's interpolation taps transposed (each output's cotangent times its tap weights, summed "
               "into the coefficients it read in a fixed order), then the transposed prefilter and the npad pad "
               "folded back onto the cells it copies; cval and the geometry arguments get no gradient.")
CARDS = CARDS + _GEOMETRY_CARDS + tuple(_spline_backward(c, _GEOMETRY_T, c.outputs[0].shape) for c in _GEOMETRY_CARDS)
