"""The cards of :mod:`poolspec.frontends.torch.nn`'s classes: torch.nn's rules as established against torch 2.13.0,
and where poolspec differs.

>>> [c.name for c in CARDS][:2]
['torch.nn.MaxPool1d', 'torch.nn.MaxPool2d']
"""

from __future__ import annotations

import inspect

from ....spec._card import REQUIRED, Argument, Port
from ....spec.frontends import FrontendCard, gradient
from . import modules
from ._docs import _ARGS, _FAMILIES, _UPSAMPLE, CLASSES, summary

_LIBRARY = "torch 2.13.0 (CPU)"
_NAME = {"max_padding": "padding", "avg_padding": "padding", "unpool_padding": "padding",
         "adaptive_output_size": "output_size", "fractional_output_size": "output_size"}
_CORE = {"MaxPool": "max_pool{n}d", "AvgPool": "avg_pool{n}d", "AdaptiveAvgPool": "adaptive_avg_pool{n}d",
         "AdaptiveMaxPool": "adaptive_max_pool{n}d", "LPPool": "lp_pool{n}d", "MaxUnpool": "max_unpool{n}d",
         "FractionalMaxPool": "fractional_max_pool{n}d"}
_DESIGN = ("A class of this module is a plain Python class on NumPy, JAX, Dask, CuPy and array-api-strict (torch is "
           "never imported), and its torch.nn.Module twin where the caller has imported torch: instances compose "
           "with torch (nn.Sequential, .to(), hooks, torch.compile(fullgraph=True), pickling) and pass isinstance "
           "with the plain class either way.")
_SHARED = ("Constructor arguments, defaults, attributes (vars), extra_repr and repr, and the state dict are "
           "torch's: no parameters, no buffers but FractionalMaxPool's _random_samples where given; "
           "load_state_dict({}) works and extra keys fail in strict mode with torch's RuntimeError.",
           "torch checks most arguments at the call, not at construction: so does the front-end (poolspec's "
           "ValueError or TypeError, naming the argument, where torch raises RuntimeError).", _DESIGN)
_CHECKED = ("tests/test_frontend_torch_nn.py against torch 2.13.0 (CPU): 2,440 seeded configurations over the 23 "
            "classes (100 per class, 120 for MaxPool2d and AvgPool2d, 200 for Upsample), constructor arguments over "
            "their legal ranges and a little past them; outputs in float64 (rtol 1e-12) on torch and NumPy, the first "
            "12 per class on JAX, Dask and array-api-strict; indices exactly; on torch also the gradient, repr, "
            "extra_repr, attributes and state dict. Configurations torch refuses are refused by the front-end too.")
_NOTES: dict[str, tuple[str, ...]] = {
    "MaxPool": ("stride=None is stored as kernel_size; padding <= kernel_size // 2 (torch's rule, not the dilated "
                "window's); ceil_mode's last window starts inside the input or its left padding.",),
    "AvgPool": ("AvgPool1d stores kernel_size, stride and padding as 1-tuples (torch's _single) and has no "
                "divisor_override; 2-d and 3-d store them as given. torch's 3-d pool wants every axis at least the "
                "kernel, padding aside.",),
    "AdaptiveAvgPool": ("output_size entries may be None (that axis keeps its size); output_size=None itself fails "
                        "in torch (TypeError from len(None)), and in the front-end (TypeError naming it).",),
    "AdaptiveMaxPool": ("output_size entries may be None (that axis keeps its size); output_size=None itself fails "
                        "in torch (TypeError from len(None)), and in the front-end (TypeError naming it).",),
    "LPPool": ("forward passes float(norm_type); torch's lp_pool is avg_pool of x^p times the window size, to the "
               "1/p (a fractional p of a negative window sum is NaN in both).",),
    "MaxUnpool": ("kernel_size, stride and padding are stored as n-tuples; output_size (forward's argument) may be "
                  "the spatial size or the whole shape, within (default - stride, default + stride); indices past "
                  "the output are refused (ValueError; torch's RuntimeError).",),
    "FractionalMaxPool": ("Exactly one of output_size and output_ratio, a ratio in (0, 1), is checked at "
                          "construction (ValueError, torch's messages); _random_samples is a buffer (None: not in "
                          "the state dict). Without samples torch draws them from its generator and poolspec from "
                          "its own: the windows differ; the check passes the same samples to both.",),
    "Upsample": ("scale_factor is stored as float (a tuple of floats; a falsy value as None); name is the class's "
                 "name. recompute_scale_factor=True with size, align_corners with a mode that does not interpolate, "
                 "and a mode of the wrong rank are refused at the call, as torch's.",),
}
_DIFFERENCES: dict[str, tuple[str, ...]] = {
    "MaxPool": ("A window wholly in the padding (dilation can leave one) is -inf in torch; poolspec refuses it "
                "(ValueError naming dilation), as its max_pool does (its card says why). 15 of the 320 drawn "
                "configurations.",),
    "LPPool": ("LPPool1d with a 1-tuple or list kernel_size: torch 2.13 raises TypeError in F.lp_pool1d's last step "
               "(it multiplies by kernel_size itself; a wrapper bug, docs/TORCH_NUMERICS.md); the front-end takes "
               "it, with the int's numbers (checked against torch with the int: 55 of the 100 drawn LPPool1d "
               "configurations).",),
    "MaxUnpool": ("Duplicate indices (overlapping pooling windows): torch's gradient is a gather at every index, "
                  "so each duplicate gets it; poolspec's goes to the one winner of the scatter (its max_unpool "
                  "card's rule). The forward agrees; the check compares gradients where indices are unique (83 of "
                  "the 300 drawn configurations have duplicates).",),
    "Upsample": ("nearest on 4-d inputs where O == L or O == 2L with a scale_factor that is not 1 or 2: torch's "
                 "vectorized CPU kernel copies (its recorded shortcut, docs/TORCH_NUMERICS.md), poolspec follows "
                 "torch's generic rule floor(i / scale). 4 of the 100 UpsamplingNearest2d configurations differ "
                 "there, none elsewhere.",),
}


def _argument(key: str, default: object) -> Argument:
    kind, text = _ARGS[key]
    kind = kind.split(", default")[0]
    return Argument(_NAME.get(key, key), kind, default, description=text.format(n="n"))


def _card(name: str) -> FrontendCard:
    cls = getattr(modules, name)
    sig = inspect.signature(cls)
    if name in _UPSAMPLE:
        family, n, entry = "Upsample", 0, _UPSAMPLE[name]
        core: tuple[str, ...] = ("interpolate",)
        outputs = (Port("y", "array", "(N, C, *size)", "input resampled to the output size"),)
    else:
        (family, n), entry = CLASSES[name], _FAMILIES[CLASSES[name][0]]
        core = (_CORE[family].format(n=n),)
        outputs = (Port("y", "array", "(N, C, *out) or (C, *out)", "the pooled (or unpooled) array"),)
    keys = [k for k in entry["params"] if _NAME.get(k, k) in sig.parameters]
    arguments = tuple(_argument(k, REQUIRED if sig.parameters[_NAME.get(k, k)].default is inspect.Parameter.empty
                                else sig.parameters[_NAME.get(k, k)].default) for k in keys)
    indexed = family in ("MaxPool", "AdaptiveMaxPool", "FractionalMaxPool", "MaxUnpool")
    return FrontendCard(
        name=f"torch.nn.{name}", version=1, library=_LIBRARY, mirrors=f"torch.nn.{name}",
        summary=summary(name).replace("``", ""), arguments=arguments, outputs=outputs, core=core,
        layout="channels_first: (N, C, *spatial), or unbatched (C, *spatial) where torch takes it",
        gradient=gradient(f"the gradient of poolspec.{core[0]} (torch autograd through the module's forward; JAX's "
                          "on JAX arrays)"),
        determinism="deterministic (poolspec's kernels gather; torch's unpool and some backward scatter)",
        indices="flat index within each (N, C) plane, as torch's" if indexed else "",
        notes=_NOTES[family if family in _NOTES else "Upsample"] + _SHARED,
        differences=() if name == "UpsamplingBilinear2d" else _DIFFERENCES.get(family, ()), refuses=(),
        checked=_CHECKED)


CARDS: tuple[FrontendCard, ...] = tuple(_card(name) for name in modules.CLASSES)
