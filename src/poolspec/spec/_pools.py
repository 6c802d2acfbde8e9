"""What the cards of the windowed pools share: their argument rules (stride, padding, the window checks in
torch's order), the adaptive output size, their ports and argument templates, and the transforms every op claims.
Each family's own card lives in its folder (``poolspec/families/<family>/card.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._card import REQUIRED, Argument, Card, Example, Gradient, Port, Resolved
from ._rules import (
    as_int,
    check_bool,
    check_dtype,
    fail,
    int_tuple,
    is_int,
    pool_output_size,
    size_argument,
    split_shape,
)

FLOATS = ("float16", "bfloat16", "float32", "float64")


INTS = ("int8", "int16", "int32", "int64", "uint8")


# every op on torch: tested against the native op under each (tests/test_torch_func.py)
TORCH_TRANSFORMS = ("autograd (any order)", "forward-mode (forward_ad)", "torch.func.vmap", "torch.func.grad",
                    "torch.func.jacrev", "torch.func.jacfwd", "torch.func.jvp", "torch.func.hessian",
                    "gradcheck", "gradgradcheck", "use_deterministic_algorithms(True)",
                    # inside a capture the op is one torch.library node (autodiff/torch_graph.py)
                    "torch.compile(fullgraph=True, dynamic=True)", "torch.export", "torch.func.vmap in torch.compile")


# every op on JAX: slice-only ops by native autodiff, gathering ones through poolspec's primitives
JAX_TRANSFORMS = ("jit", "grad", "grad-of-grad", "vmap", "jvp", "jacfwd", "jacrev", "hessian", "linearize")


def stride_of(op: str, value: Any, kernel: tuple[int, ...], n: int) -> tuple[int, ...]:
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0):
        return kernel
    return int_tuple(op, "stride", value, n)


def _padding(op: str, value: Any, n: int) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """(low, high, form) of a padding argument: torch's symmetric ints (``"symmetric"``), per-axis ``(low, high)``
    pairs as ``lax.reduce_window`` and ONNX's ``pads`` take them (``"pairs"``), or ``"valid"`` / ``"same"``
    (TensorFlow's rule, resolved by :func:`window_checks`)."""
    if isinstance(value, str):
        if value not in ("valid", "same"):
            fail(op, "padding", value, "must be an int, a tuple of ints, a tuple of (low, high) pairs, 'valid' or "
                                       "'same'")
        return (0,) * n, (0,) * n, value
    if isinstance(value, (tuple, list)) and value and any(isinstance(v, (tuple, list)) for v in value):
        if len(value) != n or not all(isinstance(v, (tuple, list)) and len(v) == 2 for v in value):
            fail(op, "padding", value, f"as (low, high) pairs must be {n} pairs of ints, one per spatial axis")
        lo = tuple(as_int(op, "padding", v[0], value) for v in value)
        hi = tuple(as_int(op, "padding", v[1], value) for v in value)
        return lo, hi, "pairs"
    p = int_tuple(op, "padding", value, n)
    return p, p, "symmetric"


def window_checks(op: str, n: int, spatial: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...],
                   padding: Any, d: tuple[int, ...], ceil_mode: bool) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                            tuple[int, ...]]:
    """torch's shared pooling checks, in its order, then the output size (which must be >= 1); returns
    (output size, low padding, high padding). Asymmetric and 'same' padding may reach a window's last cell but
    one on either side (every window still reads the input); torch's symmetric padding at most half a window."""
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", k, "every entry must be > 0")
    if any(v <= 0 for v in s):
        fail(op, "stride", s, "every entry must be > 0 (torch: stride should not be zero)")
    if any(v <= 0 for v in d):
        fail(op, "dilation", d, "every entry must be > 0")
    lo, hi, form = _padding(op, padding, n)
    if form == "same":  # TensorFlow's: ceil(L / s) outputs, the odd padding cell at the end
        total = tuple(max((-(-spatial[i] // s[i]) - 1) * s[i] + (k[i] - 1) * d[i] + 1 - spatial[i], 0)
                      for i in range(n))
        lo, hi = tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    if any(v < 0 for v in lo + hi):
        fail(op, "padding", padding, "every entry must be >= 0")
    for i in range(n):
        if form == "symmetric" and lo[i] > k[i] // 2:
            fail(op, "padding", padding, f"must be at most half the kernel size (padding <= kernel_size // 2); "
                                         f"axis {i} has padding {lo[i]} with kernel_size {k[i]}")
        if form == "pairs" and max(lo[i], hi[i]) > (k[i] - 1) * d[i]:
            fail(op, "padding", padding, f"(low, high) entries must be at most (kernel_size - 1) * dilation, so "
                                         f"that every window reads the input; axis {i} has {(lo[i], hi[i])} with "
                                         f"kernel_size {k[i]} and dilation {d[i]}")
    out = tuple(pool_output_size(spatial[i], k[i], s[i], lo[i], d[i], ceil_mode, hi[i]) for i in range(n))
    if any(o < 1 for o in out):
        shown = padding if form != "symmetric" else lo
        fail(op, "kernel_size", k, f"with stride={s}, padding={shown}, dilation={d} the output size {out} for "
                                   f"input size {spatial} is too small (every entry must be >= 1)")
    return out, lo, hi


def first_empty_window(L: int, O: int, k: int, s: int, p: int, d: int) -> int | None:
    """The first of the ``O`` windows along an axis of length ``L`` (taps o*s - p + t*d, t < k) that holds no
    input cell, or None."""
    if d == 1:
        return None  # contiguous windows always reach the input (padding <= k // 2, ceil start rule)
    start = np.arange(O, dtype=np.int64) * s - p
    taps = start[:, None] + np.arange(k, dtype=np.int64)[None, :] * d
    hit = ((taps >= 0) & (taps < L)).any(axis=1)
    bad = np.flatnonzero(~hit)
    return int(bad[0]) if bad.size else None


def _adaptive_output_size(op: str, value: Any, spatial: tuple[int, ...], n: int) -> tuple[int, ...]:
    if value is None:
        return spatial
    if is_int(value):
        items: tuple[Any, ...] = (value,) * n
    elif isinstance(value, (tuple, list)):
        items = tuple(value)
        if len(items) != n:
            fail(op, "output_size", value, f"must be an int or a tuple of exactly {n} entries, got {len(items)}")
    else:
        fail(op, "output_size", value, f"must be an int, None or a tuple of {n} ints/None, "
                                       f"not {type(value).__name__}", TypeError)
    out = []
    for i, v in enumerate(items):
        if v is None:
            out.append(spatial[i])
            continue
        v = as_int(op, "output_size", v, value)
        if v < 0:
            fail(op, "output_size", value, "every entry must be >= 0 (0 gives an empty output)")
        out.append(v)
    return tuple(out)


def _resolve_adaptive(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op, n = card.name, card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=True)
    check_dtype(op, dtype, card.dtypes)
    out = _adaptive_output_size(op, a["output_size"], spatial, n)
    params: dict[str, Any] = dict(output_size=out)
    if "return_indices" in a:
        params["return_indices"] = check_bool(op, "return_indices", a["return_indices"])
    return Resolved(op, shape, tuple(shape[:-n]) + out, params, batched)


def output_port(n: int, what: str = "the pooled array, x's dtype") -> Port:
    dims = {1: "O", 2: "OH, OW", 3: "OD, OH, OW"}[n]
    return Port("output", "array", f"(N, C, {dims}) or (C, {dims})", what)


def indices_port(n: int, where: str) -> Port:
    dims = {1: "O", 2: "OH, OW", 3: "OD, OH, OW"}[n]
    return Port("indices", "int64 array", f"(N, C, {dims}) or (C, {dims})",
                f"with return_indices=True: the flat index of each winner in {where}")


def example_shape(n: int, side: int, lead: tuple[Any, ...] = ("N", 3)) -> tuple[Any, ...]:
    return lead + (side,) * n


TORCH_DETERMINISTIC = "torch's CPU and CUDA kernels are deterministic for this op (gather-style backward)"


def ranks_of(n: int) -> tuple[int, ...]:
    return (n + 1, n + 2)


PADDING_TYPE = "int | tuple[int x {n}] | tuple[(int, int) x {n}] | 'valid' | 'same'"


def window_argument(name: str, n: int, default: Any, what: str, constraint: str) -> Argument:
    return Argument(name, f"int | tuple[int x {n}]" + (" | None" if default is None else ""), default,
                    (constraint,), what)


def input_argument(n: int) -> Argument:
    dims = {1: "L", 2: "H, W", 3: "D, H, W"}[n]
    return Argument("x", "array", constraints=(f"shape (N, C, {dims}) or (C, {dims})",
                                               "non-batch dimensions non-empty"),
                    description="the input array (any supported namespace)")


REGULAR_WINDOWS = "regular windows a = o*s - p, taps a + t*d for t < k; windows that start in the right padding " \
       "are dropped in ceil_mode"


OUT_FORMULA = "O = floor((L + p_lo + p_hi - d(k-1) - 1 + (s-1 if ceil_mode)) / s) + 1, minus 1 if ceil_mode and " \
               "(O-1)*s >= L + p_lo (p_lo = p_hi = p for torch's int padding; 'same': O = ceil(L / s))"


def adaptive_card(kind: str, n: int) -> Card:
    name = f"adaptive_{kind}_pool{n}d"
    args: tuple[Argument, ...] = (
        Argument("x", "array", constraints=(f"shape (N, C, *S) or (C, *S) with {n} spatial dims",
                                            "spatial dimensions non-empty (N and C may be 0)"),
                 description="the input array"),
        Argument("output_size", f"int | None | tuple[int | None x {n}]", REQUIRED,
                 ("entries >= 0 (0 gives an empty output)", "None keeps the input size"),
                 "the output spatial size O"),
    )
    if kind == "max":
        args += (Argument("return_indices", "bool", False, (), "also return int64 flat indices"),)
        gradient = Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                            "routes the cotangent to the selected cells by gathering")
        determinism = "ties go to the first maximum in row-major order, a NaN wins (the last NaN's index); " \
                      "backward gathers over the windows covering each cell, or, where that table would be " \
                      "large, sorts each plane's winners and sums every cell's share in output order: no " \
                      "scatter-add, bit-identical across runs (torch's CUDA backward scatters atomically)"
    else:
        gradient = Gradient(f"{name}_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                            "linear; on JAX a primitive whose transpose is the transposed gather (a "
                            "gather must not transpose into a scatter-add)")
        determinism = "forward and backward gather over a fixed tap order: bit-identical across runs on " \
                      "every backend (torch's CUDA backward uses atomicAdd and raises under " \
                      "use_deterministic_algorithms)"
    return Card(
        name=name, version=1, category="adaptive_pooling",
        summary=f"{n}-d adaptive {kind} pooling to a given output size.",
        spatial_dims=(n,), input_ranks=ranks_of(n), dtypes=FLOATS, arguments=args,
        shape_relation="per spatial axis: window i = [floor(i*L/O), ceil((i+1)*L/O)); windows may overlap "
                       "and O > L is allowed",
        determinism=determinism, gradient=gradient,
        torch_reference=f"torch.nn.functional.adaptive_{kind}_pool{n}d",
        _resolve=_resolve_adaptive,
        _infer=lambda c, shape, out: size_argument(c, shape, out, "output_size", n),
        outputs=(output_port(n),) + ((indices_port(n, "the input plane"),) if kind == "max" else ()),
        examples=(Example(example_shape(n, 13, ("N", 64)), dict(output_size=7)),
                  Example(example_shape(n, 5, ("N", 64)), dict(output_size=(8,) + (None,) * (n - 1) if n > 1 else 8))),
        torch_determinism=("torch's CUDA backward uses atomicAdd (adaptive_avg_pool2d/3d backward and "
                           "adaptive_max_pool2d backward raise under use_deterministic_algorithms)"
                           if (kind, n) != ("max", 3) else
                           "torch's CUDA backward scatters the cotangent to the winners (no deterministic "
                           "alert is listed for this op)"),
        channels_last=(4,) if n == 2 else (),
    )
