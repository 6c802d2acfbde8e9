"""A family's docstrings written once: a template filled per variant (1d, 2d, 3d and their ``*_backward``) at import.

``help(poolspec.max_pool2d)`` reads the filled text; the docs site reads the same text through a griffe extension
(``scripts/griffe_docstrings.py``), which takes a function's docstring from the imported object where its source
has none. A template is a numpydoc docstring written at column 0 with ``{field}`` placeholders. Each variant gets
the fields of its rank (:func:`rank_fields`), ``op`` (the forward's name) and the keyword fields it is given. A
paragraph without a placeholder is kept as written; one with placeholders is filled and wrapped again at the
template's ``width`` (the filled shapes differ in length), with a line break wherever the filled text holds a
newline (``{br}``); a line that is a placeholder alone (an example) is replaced by the field's lines, and one
that names a block of :data:`BLOCKS` by the block (text that several families' templates share), filled in turn.
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Python 3.13's compiler strips a docstring's indentation: the filled text is what a literal docstring at
# function level would have been on the running interpreter
_INDENT = "" if sys.version_info >= (3, 13) else "    "
_LONE = re.compile(r"\{(\w+)\}")
_NAME = re.compile(r"(?P<op>\w+?(?P<n>[123])d)(?:_backward)?")


# numpydoc text that several families' templates share, each written once here: a template line holding
# ``{name}`` alone stands for the block, indented as that line is
BLOCKS: dict[str, str] = {
    "layout": """\
layout : str, default "channels_first"
    "channels_last" for arrays laid out (N, *spatial, C) (or (*spatial, C)), as TensorFlow, Keras, Flax and JAX
    images are: every array argument and result in that layout, read through a permuted view (nothing is
    copied to change layout); indices keep their meaning (flat positions in each spatial plane).""",
    "examples": """\
Examples
--------
>>> import numpy as np, poolspec
{example}""",
    # a pool that routes to its winners (max_pool, adaptive_max_pool, fractional_max_pool) and its backward
    "routed_returns_forward": """\
Returns
-------
array or tuple of array
    The {values} in x's dtype, shaped (N, C, {odims}) or (C, {odims}); with ``return_indices``, (``values``,
    ``indices``) where indices are int64 flat positions of the winners in each {plane} input plane, as torch's.""",
    "routed_arrays": """\
grad_output : array
    The cotangent, shaped like the forward's output (N, C, {odims}) or (C, {odims}); x's dtype, library and device.
x : array
    The forward's input, shaped {x}.""",
    "routed_indices": """\
return_indices : bool, default False
    The forward's flag; checked to be a bool, it does not change the gradient.
indices : array or None, default None
    Keyword-only: the forward's indices (``return_indices=True``), an integer array shaped like grad_output,
    which skips recomputing the winners (None: recomputed from x). Other indices follow torch's rule: each
    cotangent is added at its flat index in its (N, C) plane. Under traces (e.g. ``jax.jit``) and lazy Dask
    graphs, whose values are not read, indices are taken as the winners.""",
    "routed_returns": """\
Returns
-------
array
    The gradient w.r.t. x, with x's shape and dtype.""",
    "routed_raises": """\
Raises
------
ValueError
    If the forward's arguments are invalid (as in :func:`{op}`), grad_output or indices is not shaped like the forward's
    output, an index lies outside its input plane, or grad_output and x are on different devices.
TypeError
    If grad_output's dtype differs from x's, indices are not of an integer dtype, the arrays come from different
    libraries, or an argument has a wrong type (as in :func:`{op}`).""",
    # max_pool's and adaptive_max_pool's backward from their indices on
    "routed_backward": """\
{routed_indices}
{layout}

{routed_returns}

{routed_raises}""",
    # the backward of a pool linear in x (avg_pool, lp_pool's inner sum, adaptive_avg_pool, max_unpool)
    "linear_arrays": """\
grad_output : array
    The cotangent of :func:`{op}`'s output: shaped (N, C, {o}) or (C, {o}) like it, with x's namespace, device and
    dtype.
x : array
    The forward's {x_role}, shaped {x}; its shape, dtype and device define the result's; float16, bfloat16, float32 or
    float64.""",
    "linear_returns": """\
Returns
-------
array
    The gradient with respect to x: x's shape, namespace, device and dtype.

Raises
------
ValueError
    If the arguments break :func:`{op}`'s rules{rules}, grad_output's shape is not the forward output's, or
    grad_output is on another device than x.
TypeError
    If :func:`{op}` would raise it, x's dtype is not floating{no_gradient}, grad_output's dtype differs from x's, or the
    arrays come from different libraries.""",
    # the RoI families' (roi_align, roi_pool and their position-sensitive twins) and torchvision.ops' front-ends:
    # ``arr`` names the features (x, or the front-ends' input), ``c_out`` the output channels
    "roi_boxes": """\
boxes : array or list of array
    A (K, 5) array (batch index, x1, y1, x2, y2) or a list of (L, 4) arrays (x1, y1, x2, y2), one per image;
    {arr}'s library, dtype and device.
output_size : int or tuple of int
    The bins per roi (PH, PW); one int for both.
spatial_scale : float, default 1.0
    The factor from box coordinates to {arr}'s cells (1 / the feature stride).""",
    "roi_sampling_ratio": """\
sampling_ratio : int, default -1
    Samples per bin along each axis; <= 0: ceil(roi size / output size) per roi, read from the boxes' values on
    the host (under a trace without box values pass a positive one).""",
    "roi_layout": """\
layout : str, default "channels_first"
    "channels_last" for x laid out (N, H, W, C): the result is then (K, PH, PW, {c_out}), read through a permuted
    view (nothing is copied to change layout).""",
    "roi_returns": """\
Returns
-------
array
    (K, {c_out}, PH, PW) in {arr}'s dtype, namespace and device.""",
    "roi_type_error": """\
TypeError
    If {arr} or boxes is not a supported array, their libraries or dtypes differ, the dtype is not floating, or an
    argument has a wrong type.""",
    # the RoI families' backward w.r.t. x
    "roi_backward_arguments": """\
grad_output : array
    The cotangent, shaped like the forward's output (K, {c_out}, PH, PW); x's dtype, library and device.
x : array
    The forward's features (N, C, H, W); its shape, dtype and device define the result's.
boxes : array or list of array
    The forward's boxes, (K, 5) or a list of (L, 4) arrays.
output_size : int or tuple of int
    The forward's output_size.
spatial_scale : float, default 1.0
    The forward's spatial_scale.""",
    "roi_backward_layout": """\
layout : str, default "channels_first"
    "channels_last" for x and grad_output laid out (N, H, W, C) and (K, PH, PW, {c_out}); the gradient then
    (N, H, W, C).""",
    "roi_backward_returns": """\
{routed_returns}

Raises
------
ValueError
    If the forward's arguments are invalid (as in :func:`{op}`), grad_output is not shaped like the forward's output,
    or the arrays are on different devices.
TypeError
    If x's dtype is not floating, grad_output's dtype differs from x's, or the arrays come from different
    libraries.""",
    # torchvision.ops' front-ends: ``kernel`` adds to "torchvision's kernel's", ``refused`` to what the op refuses
    "torchvision_boxes": """\
``boxes`` pass torchvision's shape check (a list of (L, 4) arrays gains its image index), output_size is read as
torch's ``_pair``, and the numbers are :func:`poolspec.{op}`'s, which are torchvision's kernel's{kernel}.""",
    "torchvision_raises": """\
Raises
------
ValueError
    If boxes break torchvision's shape rule (Tensor[K, 5] or List[Tensor[L, 4]]), the list is empty, output_size is
    not one or two ints, or :func:`poolspec.{op}` refuses the values{refused}.
{roi_type_error}""",
    "torchvision_examples": """\
Examples
--------
>>> import numpy as np
>>> from poolspec.frontends.torchvision import ops""",
    # scipy.ndimage's filters (frontends/scipy/ndimage): ``size_type`` is the n-d filters' size's type,
    # ``refusals`` and ``non_int`` the forward's ValueError and TypeError cases
    "scipy_grad_output": """\
grad_output : array
    The cotangent of the filter's output (its shape; float).""",
    "scipy_input": """\
input : array
    Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).""",
    "scipy_1d": """\
{scipy_input}
size : int
    The window length, >= 1.
axis : int
    The axis filtered (negative counts from the end).
{scipy_output}
mode : str
    The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
    'constant' (= 'grid-constant').
{scipy_cval}
origin : int
    The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].""",
    "scipy_box": """\
{scipy_input}
size : {size_type}
    The box, per axis or one for all (an axis of size <= 1 is skipped).""",
    "scipy_footprint": """\
footprint : array or None
    Booleans over the filtered axes (True: the cell is in the window); wins over ``size``.""",
    # the n-d filters' arguments after size (and footprint)
    "scipy_nd": """\
{scipy_output}
mode : str or sequence of str
    The boundary mode, as the 1-d filters', or one per axis.
{scipy_cval}
origin : int or sequence of int
    The window shift, per axis or one for all.
axes : int, sequence of int or None
    The axes filtered, in this order (None: all).""",
    "scipy_output": """\
output : dtype or None
    The result's dtype (None: the input's); a dtype only, the result is returned.""",
    "scipy_cval": """\
cval : float
    The value beyond the edges in constant mode.""",
    "scipy_returns": """\
Returns
-------
array
    The filtered array, of the input's shape, in the output dtype.

Raises
------
ValueError
    SciPy's refusals, naming the argument: {refusals}.
TypeError
    An unsupported input or output dtype, a non-int {non_int}, a complex cval.

{scipy_examples}""",
    "scipy_backward_returns": """\
Returns
-------
array
    The gradient w.r.t. ``input``, in the input's dtype.

Raises
------
ValueError
    As the forward; a grad_output whose shape is not the input's.
TypeError
    As the forward; an integer input or output dtype (not differentiable).

{scipy_examples}""",
    "scipy_examples": """\
Examples
--------
>>> import numpy as np""",
    # scipy.ndimage's B-spline functions (spline_filter1d, spline_filter, map_coordinates): ``orders`` the orders
    # the function takes, ``refusals`` its ValueError cases
    "scipy_spline_input": """\
input : array
    Any rank >= 1; float32, float64 or an integer dtype (a list is read as a NumPy array).""",
    "scipy_spline_order": """\
order : int
    The B-spline order, {orders}.""",
    "scipy_spline_output": """\
output : dtype
    The result's dtype (default float64); each axis pass is stored in it (integers truncated toward zero). A dtype
    only, the result is returned.""",
    "scipy_spline_mode": """\
mode : str
    The boundary mode the prefilter inverts: 'mirror', 'constant', 'grid-constant' and 'wrap' whole-sample mirror;
    'reflect', 'grid-mirror' and 'nearest' half-sample mirror; 'grid-wrap' periodic.""",
    "scipy_spline_returns": """\
Returns
-------
array
    The spline coefficients, of the input's shape, in the output dtype.

Raises
------
ValueError
    SciPy's refusals, naming the argument: {refusals}.
TypeError
    An unsupported input or output dtype (an output array included), a non-int order or axis.

{scipy_examples}""",
    # zoom, shift, affine_transform and rotate: the arguments after the geometry's own
    "scipy_interp_tail": """\
output : dtype or None
    The result's dtype (None: the input's); integer outputs are rounded half up (unsigned) or half away from zero
    (signed) and clipped, as SciPy. A dtype only, the result is returned.
order : int
    The B-spline order, 0 to 5.
mode : str
    The boundary mode: 'constant' (cval beyond the edges, exactly 0 and L-1 inside), 'grid-constant' (cval
    for the taps beyond), 'nearest', 'mirror', 'reflect' (= 'grid-mirror'), 'wrap' (SciPy's period L-1) or
    'grid-wrap' (period L).
cval : float
    The value beyond the edges in the constant modes.
prefilter : bool
    Whether ``input`` is prefiltered (``spline_filter`` in float64, padded by 12 cells for 'nearest' and
    'grid-constant') for orders > 1; False: ``input`` is taken as the coefficients.""",
    "scipy_interp_returns": """\
Returns
-------
array
    The resampled array, shaped {out_shape}, in the output dtype.

Raises
------
ValueError
    SciPy's refusals, naming the argument: {refusals}.
TypeError
    An unsupported input or output dtype (an output array included), a non-int order, a complex cval, a
    non-bool prefilter{type_refusals}.

{scipy_examples}""",
    "scipy_spline_backward_returns": """\
Returns
-------
array
    The gradient w.r.t. ``input``, in the input's dtype.

Raises
------
ValueError
    As the forward; a grad_output whose shape is not the forward's output shape.
TypeError
    As the forward; an integer input or output dtype (not differentiable).

{scipy_examples}""",
}
# the blocks' fields that a family may change
_BLOCK_DEFAULTS = {"x_role": "input", "rules": "", "no_gradient": "", "arr": "x", "c_out": "C", "kernel": "",
                   "refused": "", "size_type": "int or sequence of int",
                   "orders": "0 to 5"}


def rank_fields(n: int) -> dict[str, str]:
    """The fields every template may use for spatial rank ``n``.

    >>> f = rank_fields(2)
    >>> f["x"], f["odims"], f["plane"], f["lo"], f["hi"]
    ('(N, C, H, W) or (C, H, W)', 'OH, OW', '(H, W)', '3', '4')
    """
    axes = ("D", "H", "W")[3 - n:] if n > 1 else ("L",)
    dims = ", ".join(axes)
    return {
        "n": str(n), "lo": str(n + 1), "hi": str(n + 2),
        "dims": dims,
        "dims_and": " and ".join([", ".join(axes[:-1]), axes[-1]]) if n > 1 else dims,
        "x": f"(N, C, {dims}) or (C, {dims})",
        # torch's output names: "OL" in the max pools' 1-d text, a bare "O" in the others'
        "odims": ", ".join(f"O{a}" for a in axes),
        "o": "O" if n == 1 else ", ".join(f"O{a}" for a in axes),
        "plane": "length-L" if n == 1 else f"({dims})",
        "sizes": "an int or a 1-tuple" if n == 1 else f"an int or a tuple of {n} ints (or of 1, broadcast)",
        "br": "\n",
    }


def _expand(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        lone = _LONE.fullmatch(line.strip())
        if lone and lone[1] in BLOCKS:
            indent = line[:len(line) - len(line.lstrip())]
            # a block may name other blocks
            lines += [indent + b if b else b for b in _expand(BLOCKS[lone[1]]).split("\n")]
        else:
            lines.append(line)
    return "\n".join(lines)


def _wrap(text: str, indent: str, width: int) -> list[str]:
    lines: list[str] = []
    for piece in text.split("\n"):
        # break_on_hyphens off: "array-api-strict" and "row-major" stay whole, as they were written
        lines += textwrap.wrap(" ".join(piece.split()), width, initial_indent=indent, subsequent_indent=indent,
                               break_long_words=False, break_on_hyphens=False)
    return lines


def _is_verbatim(lines: list[str], i: int) -> bool:
    s = lines[i].strip()
    underlined = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
    return not s or set(s) == {"-"} or underlined or s.startswith((">>>", "..."))


@dataclass(frozen=True)
class Template:
    """A docstring template; ``width`` is the column (counted in the function's source) its filled paragraphs
    wrap at, the one its author kept to; ``defaults`` are fields that most variants share.

    >>> t = Template("{op} pooling.\\n\\nx : array\\n    Shaped {x}.\\n")
    >>> print(t.fill("max_pool2d_backward").rstrip())
    max_pool2d pooling.
    <BLANKLINE>
        x : array
            Shaped (N, C, H, W) or (C, H, W).
    """

    text: str
    width: int = 120
    defaults: Mapping[str, str] = field(default_factory=dict)

    def fill(self, name: str, **fields: str) -> str:
        """The docstring of the function ``name`` (its rank, where it has one, and forward read from the name)."""
        m = _NAME.fullmatch(name)
        # a function of one variant (grid_sample, interpolate) has no rank fields, its forward is its own name
        ranked = rank_fields(int(m["n"])) if m else {}
        op = m["op"] if m else name.removesuffix("_backward")
        values = {**ranked, **_BLOCK_DEFAULTS, "op": op, **self.defaults, **fields}
        head, *lines = _expand(self.text).split("\n")
        out = [head.format_map(values)]
        i = 0
        while i < len(lines):
            line = lines[i]
            indent = _INDENT + line[:len(line) - len(line.lstrip())]
            lone = _LONE.fullmatch(line.strip())
            if lone:
                block = textwrap.dedent(values[lone[1]]).strip("\n").split("\n")
                out += [indent + b if b.strip() else "" for b in block]
                i += 1
                continue
            if _is_verbatim(lines, i):
                out.append(_INDENT + line if line.strip() else "")
                i += 1
                continue
            j = i + 1
            # a paragraph: the lines that follow at the same indentation
            while (j < len(lines) and not _is_verbatim(lines, j) and not _LONE.fullmatch(lines[j].strip())
                   and _INDENT + lines[j][:len(lines[j]) - len(lines[j].lstrip())] == indent):
                j += 1
            para = " ".join(s.strip() for s in lines[i:j])
            if "{" in para:
                out += _wrap(para.format_map(values), indent, self.width)
            else:
                out += [_INDENT + s for s in lines[i:j]]
            i = j
        # the closing quotes' line of a literal docstring
        return "\n".join(out[:-1] + [_INDENT]) if out[-1] == "" else "\n".join(out)

    def document(self, **fields: str) -> Callable[[F], F]:
        """A decorator that gives the function its filled docstring."""

        def decorate(fn: F) -> F:
            fn.__doc__ = self.fill(fn.__name__, **fields)
            return fn

        return decorate
