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
