"""The numpydoc docstrings of :mod:`poolspec.frontends.torch.nn`'s classes, filled at import from one template per
family (as the families' functions are: a 1-d/2-d/3-d variant gets its own shapes and example). The docs site
reads them through scripts/griffe_docstrings.py, as ``help()`` shows them."""

from __future__ import annotations

from typing import Any

_SIZE = "int or tuple of int"
_ARGS: dict[str, tuple[str, str]] = {
    "kernel_size": (_SIZE, "The window size per spatial axis (an int: every axis); every entry >= 1."),
    "stride": (f"{_SIZE} or None, default None", "The window step per axis; None (or omitted): kernel_size."),
    "max_padding": (f"{_SIZE}, default 0", "Implicit -inf padding on both sides of each axis, at most half the "
                    "kernel (padding <= kernel_size // 2, torch's rule)."),
    "avg_padding": (f"{_SIZE}, default 0", "Implicit zero padding on both sides of each axis, at most half the "
                    "kernel."),
    "unpool_padding": (f"{_SIZE}, default 0", "The padding of the max pool whose indices are unpooled."),
    "dilation": (f"{_SIZE}, default 1", "The spacing of the window's taps; every entry >= 1."),
    "return_indices": ("bool, default False", "Also return the flat index of each maximum in its (spatial) plane, "
                       "the indices MaxUnpool takes."),
    "ceil_mode": ("bool, default False", "Round the output size up (a last window may start in the input's right "
                  "padding, never past it)."),
    "count_include_pad": ("bool, default True", "Divide by the window size padding included, else by the count "
                          "of the window's input cells."),
    "divisor_override": ("int or None, default None", "Divide every window's sum by this (nonzero) number."),
    "norm_type": ("float", "The power p: each window gives (sum x^p)^(1/p); read as float(norm_type)."),
    "adaptive_output_size": ("int, None or tuple of int or None", "The output's spatial size (an int: every "
                             "axis); a None entry keeps that axis' size. output_size=None itself is refused, as "
                             "torch's."),
    "fractional_output_size": (f"{_SIZE} or None, default None", "The output's spatial size; exactly one of "
                               "output_size and output_ratio."),
    "output_ratio": ("float or tuple of float or None, default None", "The output's size as a fraction of the "
                     "input's, each in (0, 1): out = int(L * ratio)."),
    "_random_samples": ("array or None, default None", "The windows' random offsets, shaped (N, C, {n}) in [0, 1) "
                        "(a buffer of torch's; None: drawn by poolspec's generator at each call, not torch's). An "
                        "array of another library on a torch module is kept as a plain attribute."),
    "size": ("int or tuple of int or None, default None", "The output's spatial size; exactly one of size and "
             "scale_factor."),
    "scale_factor": ("float or tuple of float or None, default None", "The multiplier of each spatial size (stored "
                     "as float, a tuple of floats, or None where falsy)."),
    "mode": ('str, default "nearest"', "nearest, nearest-exact, linear (3-d input), bilinear or bicubic (4-d), "
             "trilinear (5-d), area (poolspec's lanczos too)."),
    "align_corners": ("bool or None, default None", "For linear, bilinear, bicubic and trilinear only: the corner "
                      "cells' centres align (None: False)."),
    "recompute_scale_factor": ("bool or None, default None", "True: the sampling scale is recomputed from the "
                               "output size (refused with size); else scale_factor itself is used."),
}

_RAISES = """Raises
------
ValueError
    Where torch refuses the arguments: at construction for the ones torch checks there ({construct}), else at the
    call (a window or size out of range, an input of the wrong rank), naming the argument.
TypeError
    If an argument has the wrong type (a float kernel size, output_size=None), or the input is not an array of a
    supported library."""

_FAMILIES: dict[str, dict[str, Any]] = {
    "MaxPool": dict(
        summary="Max pooling over {axes}, as ``torch.nn.MaxPool{n}d``.",
        body="``forward(input)`` is ``poolspec.max_pool{n}d(input, kernel_size, stride, padding, dilation, "
             "ceil_mode=ceil_mode, return_indices=return_indices)``; the attributes are torch's (stride None becomes "
             "kernel_size).",
        params=("kernel_size", "stride", "max_padding", "dilation", "return_indices", "ceil_mode"),
        returns="``forward(input)``: input (N, C, {spatial}) or (C, {spatial}) pooled to each window's maximum; "
                "with return_indices, (values, int64 indices).",
        construct="none"),
    "AvgPool": dict(
        summary="Average pooling over {axes}, as ``torch.nn.AvgPool{n}d``.",
        body="``forward(input)`` is ``poolspec.avg_pool{n}d(input, kernel_size, stride, padding, ceil_mode, "
             "count_include_pad{divisor})``.",
        params=("kernel_size", "stride", "avg_padding", "ceil_mode", "count_include_pad", "divisor_override"),
        returns="``forward(input)``: input (N, C, {spatial}) or (C, {spatial}) pooled to each window's mean.",
        construct="none"),
    "AdaptiveAvgPool": dict(
        summary="Adaptive average pooling over {axes}, as ``torch.nn.AdaptiveAvgPool{n}d``.",
        body="``forward(input)`` is ``poolspec.adaptive_avg_pool{n}d(input, output_size)``.",
        params=("adaptive_output_size",),
        returns="``forward(input)``: input (N, C, {spatial}) or (C, {spatial}) averaged over the adaptive windows "
                "of output_size.",
        construct="none"),
    "AdaptiveMaxPool": dict(
        summary="Adaptive max pooling over {axes}, as ``torch.nn.AdaptiveMaxPool{n}d``.",
        body="``forward(input)`` is ``poolspec.adaptive_max_pool{n}d(input, output_size, return_indices)``.",
        params=("adaptive_output_size", "return_indices"),
        returns="``forward(input)``: each adaptive window's maximum; with return_indices, (values, int64 "
                "indices).",
        construct="none"),
    "LPPool": dict(
        summary="Power-average pooling over {axes}, as ``torch.nn.LPPool{n}d``.",
        body="``forward(input)`` is ``poolspec.lp_pool{n}d(input, float(norm_type), kernel_size, stride, "
             "ceil_mode)``; LPPool1d takes a 1-tuple kernel_size too (torch 2.13's raises TypeError in its last "
             "step, a wrapper bug: the numbers are those of the int).",
        params=("norm_type", "kernel_size", "stride", "ceil_mode"),
        returns="``forward(input)``: input (N, C, {spatial}) or (C, {spatial}) pooled to (sum x^p)^(1/p) per "
                "window.",
        construct="none"),
    "MaxUnpool": dict(
        summary="The partial inverse of MaxPool{n}d, as ``torch.nn.MaxUnpool{n}d``.",
        body="``forward(input, indices, output_size=None)`` is ``poolspec.max_unpool{n}d(input, indices, "
             "kernel_size, stride, padding, output_size)``; kernel_size, stride and padding are stored as "
             "{n}-tuples, as torch's. Duplicate indices keep one winner (poolspec's documented rule), and the "
             "gradient goes to it alone.",
        params=("kernel_size", "stride", "unpool_padding"),
        returns="``forward(input, indices, output_size=None)``: zeros of the unpooled size with input's values at "
                "the indices.",
        construct="none"),
    "FractionalMaxPool": dict(
        summary="Fractional max pooling over {axes}, as ``torch.nn.FractionalMaxPool{n}d``.",
        body="``forward(input)`` is ``poolspec.fractional_max_pool{n}d(input, kernel_size, output_size, "
             "output_ratio, return_indices, _random_samples=_random_samples)``; the samples are a buffer, as "
             "torch's (in the state dict where given).",
        params=("kernel_size", "fractional_output_size", "output_ratio", "return_indices", "_random_samples"),
        returns="``forward(input)``: the maximum of each pseudo-random window; with return_indices, (values, int64 "
                "indices).",
        construct="neither or both of output_size and output_ratio, a ratio outside (0, 1){kernel3}"),
}

_EXAMPLES = {
    "MaxPool1d": (">>> nn.MaxPool1d(2)(np.array([[[1.0, 3.0, 2.0, 5.0]]])).tolist()", "[[[3.0, 5.0]]]"),
    "MaxPool2d": (">>> values, indices = nn.MaxPool2d(2, return_indices=True)(np.arange(16.0).reshape(1, 1, 4, 4))\n"
                  ">>> indices.tolist()", "[[[[5, 7], [13, 15]]]]"),
    "MaxPool3d": (">>> nn.MaxPool3d(2, padding=1)(np.arange(8.0).reshape(1, 1, 2, 2, 2)).shape", "(1, 1, 2, 2, 2)"),
    "AvgPool1d": (">>> nn.AvgPool1d(2)", "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))"),
    "AvgPool2d": (">>> nn.AvgPool2d(2, divisor_override=1)(np.ones((1, 1, 4, 4))).tolist()",
                  "[[[[4.0, 4.0], [4.0, 4.0]]]]"),
    "AvgPool3d": (">>> nn.AvgPool3d(2)(np.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()", "[[[[[3.5]]]]]"),
    "AdaptiveAvgPool1d": (">>> nn.AdaptiveAvgPool1d(2)(np.array([[[1.0, 2.0, 3.0, 4.0]]])).tolist()",
                          "[[[1.5, 3.5]]]"),
    "AdaptiveAvgPool2d": (">>> nn.AdaptiveAvgPool2d((None, 1))(np.ones((1, 3, 5, 4))).shape", "(1, 3, 5, 1)"),
    "AdaptiveAvgPool3d": (">>> nn.AdaptiveAvgPool3d(1)(np.arange(8.0).reshape(1, 2, 2, 2)).tolist()",
                          "[[[[3.5]]]]"),
    "AdaptiveMaxPool1d": (">>> nn.AdaptiveMaxPool1d(2, return_indices=True)(np.array([[[1.0, 4.0, 3.0]]]))[1]"
                          ".tolist()", "[[[1, 1]]]"),
    "AdaptiveMaxPool2d": (">>> nn.AdaptiveMaxPool2d(1)(np.arange(16.0).reshape(1, 1, 4, 4)).tolist()",
                          "[[[[15.0]]]]"),
    "AdaptiveMaxPool3d": (">>> nn.AdaptiveMaxPool3d((1, 2, None))(np.ones((2, 3, 4, 4, 4))).shape",
                          "(2, 3, 1, 2, 4)"),
    "LPPool1d": (">>> nn.LPPool1d(2, 2)(np.array([[[3.0, 4.0]]])).tolist()", "[[[5.0]]]"),
    "LPPool2d": (">>> nn.LPPool2d(1, 2)(np.ones((1, 1, 2, 2))).tolist()", "[[[[4.0]]]]"),
    "LPPool3d": (">>> nn.LPPool3d(2.0, 2)", "LPPool3d(norm_type=2.0, kernel_size=2, stride=None, ceil_mode=False)"),
    "MaxUnpool1d": (">>> nn.MaxUnpool1d(2)(np.array([[[3.0, 5.0]]]), np.array([[[1, 2]]])).tolist()",
                    "[[[0.0, 3.0, 5.0, 0.0]]]"),
    "MaxUnpool2d": (">>> nn.MaxUnpool2d(2)(np.ones((1, 1, 1, 1)), np.array([[[[3]]]])).tolist()",
                    "[[[[0.0, 0.0], [0.0, 1.0]]]]"),
    "MaxUnpool3d": (">>> nn.MaxUnpool3d(2)", "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"),
    "FractionalMaxPool2d": (">>> pool = nn.FractionalMaxPool2d(2, output_size=2, _random_samples=np.full((1, 1, 2), "
                            "0.5))\n>>> pool(np.arange(16.0).reshape(1, 1, 4, 4)).tolist()",
                            "[[[[5.0, 7.0], [13.0, 15.0]]]]"),
    "FractionalMaxPool3d": (">>> pool = nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=np.full((1, 1, "
                            "3), 0.5))\n>>> pool(np.ones((1, 1, 4, 4, 4))).shape", "(1, 1, 2, 2, 2)"),
    "Upsample": (">>> nn.Upsample(scale_factor=2, mode=\"linear\")(np.array([[[0.0, 4.0]]])).tolist()",
                 "[[[0.0, 1.0, 3.0, 4.0]]]"),
    "UpsamplingNearest2d": (">>> nn.UpsamplingNearest2d(scale_factor=2)(np.array([[[[1.0]]]])).tolist()",
                            "[[[[1.0, 1.0], [1.0, 1.0]]]]"),
    "UpsamplingBilinear2d": (">>> nn.UpsamplingBilinear2d(size=3)(np.array([[[[0.0, 2.0], [2.0, 4.0]]]])).tolist()",
                             "[[[[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]]"),
}

_UPSAMPLE: dict[str, dict[str, Any]] = {
    "Upsample": dict(
        summary="Upsampling of 3-d to 5-d inputs by any interpolate mode, as ``torch.nn.Upsample``.",
        body="``forward(input)`` is ``poolspec.interpolate(input, size, scale_factor, mode, align_corners, "
             "recompute_scale_factor=recompute_scale_factor)``; ``name`` is the class's name, as torch's.",
        params=("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor")),
    "UpsamplingNearest2d": dict(
        summary="Nearest-neighbour upsampling of 4-d inputs, as ``torch.nn.UpsamplingNearest2d``.",
        body="``Upsample(size, scale_factor, mode=\"nearest\")``.", params=("size", "scale_factor")),
    "UpsamplingBilinear2d": dict(
        summary="Bilinear upsampling of 4-d inputs with the corners aligned, as ``torch.nn.UpsamplingBilinear2d``.",
        body="``Upsample(size, scale_factor, mode=\"bilinear\", align_corners=True)``.",
        params=("size", "scale_factor")),
}


def _param(key: str, n: int) -> str:
    name = {"max_padding": "padding", "avg_padding": "padding", "unpool_padding": "padding",
            "adaptive_output_size": "output_size", "fractional_output_size": "output_size"}.get(key, key)
    kind, text = _ARGS[key]
    return f"{name} : {kind}\n    {text.format(n=n)}"


# each pooling class's (family, spatial rank), by its name: MaxPool2d -> ("MaxPool", 2)
CLASSES: dict[str, tuple[str, int]] = {f"{family}{n}d": (family, n) for family in _FAMILIES for n in (1, 2, 3)}


def summary(name: str) -> str:
    """The first line of class ``name``'s docstring."""
    if name in _UPSAMPLE:
        return str(_UPSAMPLE[name]["summary"])
    family, n = CLASSES[name]
    return str(_FAMILIES[family]["summary"]).format(n=n, axes="the last axis" if n == 1 else f"the last {n} axes")


def docstring(name: str) -> str:
    """The docstring of class ``name`` (``"MaxPool2d"``)."""
    if name in _UPSAMPLE:
        entry = _UPSAMPLE[name]
        n, spatial = 0, "*spatial"
        returns = "``forward(input)``: input (N, C, *spatial) resampled to the output size."
        construct = "none"
    else:
        family, n = CLASSES[name]
        entry = _FAMILIES[family]
        spatial = ", ".join(("D", "H", "W")[3 - n:]) if n > 1 else "L"
        returns = entry["returns"].format(n=n, spatial=spatial)
        construct = entry["construct"].format(kernel3=", a kernel_size entry below 1" if n == 3 else "")
    params = [p for p in entry["params"] if not (name == "AvgPool1d" and p == "divisor_override")]
    body = entry["body"].format(n=n, divisor="" if name == "AvgPool1d" else ", divisor_override")
    code, want = _EXAMPLES[name]
    return "\n".join([
        summary(name), "", body, "", "Parameters", "----------",
        *[_param(p, n) for p in params], "", "Returns", "-------", "array or tuple of arrays", f"    {returns}", "",
        _RAISES.format(construct=construct), "", "Examples", "--------", ">>> import numpy as np",
        ">>> from poolspec.frontends.torch import nn", code, want, ""])


def fill(classes: dict[str, type]) -> None:
    """Give each class its docstring."""
    for name, cls in classes.items():
        cls.__doc__ = docstring(name)
