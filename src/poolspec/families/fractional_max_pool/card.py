"""The cards of fractional_max_pool2d/3d (windows placed by random samples)."""

from __future__ import annotations

from typing import Any

from ...spec._card import Argument, Card, Example, Gradient, Port, Resolved
from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
from ...spec._rules import check_bool, check_dtype, fail, int_tuple, size_argument, split_shape
from .. import Family


def _resolve_fractional(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
    op = card.name
    n = card.spatial_dims[0]
    batched, spatial = split_shape(op, shape, n, allow_empty_channel=False)
    k = int_tuple(op, "kernel_size", a["kernel_size"], n)
    if any(v <= 0 for v in k):
        fail(op, "kernel_size", a["kernel_size"], "every entry must be > 0 (torch accepts 0 and returns -inf)")
    size, ratio = a["output_size"], a["output_ratio"]
    if size is None and ratio is None:
        fail(op, "output_size", None, "one of output_size and output_ratio must be given")
    if size is not None:
        out = int_tuple(op, "output_size", size, n)
        if any(v < 0 for v in out):
            fail(op, "output_size", size, "every entry must be >= 0")
    else:
        items = ratio if isinstance(ratio, (tuple, list)) else (ratio,) * n
        if len(items) != n or not all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in items):
            fail(op, "output_ratio", ratio, f"must be a float or a tuple of {n} floats", TypeError)
        if not all(0 < float(r) < 1 for r in items):
            fail(op, "output_ratio", ratio, "every entry must be in (0, 1)")
        out = tuple(int(L * float(r)) for L, r in zip(spatial, items))  # torch: int(L * ratio)
    for i in range(n):
        # torch's rule: O + k - 1 <= S in 2-d, but O + k - 1 < S in 3-d
        if out[i] + k[i] - 1 > spatial[i] - (n == 3):
            rel = "<=" if n == 2 else "<"
            fail(op, "kernel_size", a["kernel_size"], f"is too large for the output: axis {i} needs output_size + "
                                                       f"kernel_size - 1 {rel} input size, got {out[i]} + {k[i]} - 1 "
                                                       f"and {spatial[i]} (torch's rule)")
    samples = a["_random_samples"]
    if samples is not None:
        if not isinstance(samples, (tuple, list)):
            fail(op, "_random_samples", samples, "must be given as its shape (a tuple)", TypeError)
        want = ((shape[0] if batched else 1), shape[-n - 1], n)
        samples = tuple(samples)
        if len(samples) != 3 or any(not isinstance(w, str) and not isinstance(s, str) and s != w
                                    for s, w in zip(samples, want)):
            fail(op, "_random_samples.shape", samples, f"must be (N, C, {n}) = {want} (N = 1 for an unbatched "
                                                       "input), one sample per plane and axis")
    ret = check_bool(op, "return_indices", a["return_indices"])
    check_dtype(op, dtype, card.dtypes)
    params = dict(kernel_size=k, output_size=out, return_indices=ret, in_spatial=spatial)
    return Resolved(op, tuple(shape), tuple(shape[:-n]) + out, params, batched)


def _infer_fractional(c: Card, shape: tuple[Any, ...], out: tuple[Any, ...]) -> dict[str, Any]:
    n = c.spatial_dims[0]

    def reachable(spatial: tuple[Any, ...]) -> None:  # kernel_size 1, the smallest window; torch's 3-d rule O < S
        if any(not isinstance(L, str) and (o > L or (n == 3 and o >= L)) for o, L in zip(spatial, shape[-n:])):
            fail(c.name, "output_shape", out, f"is not reachable from {shape}: fractional windows shrink each "
                                              "spatial dimension")

    return size_argument(c, shape, out, "output_size", n, {"kernel_size": 1}, reachable)


def _fractional_cards() -> list[Card]:
    cards = []
    for n in (2, 3):
        dims = "(H, W)" if n == 2 else "(D, H, W)"
        order = "(W, H)" if n == 2 else "(D, H, W)"
        args = (
            Argument("x", "array", constraints=(f"(N, C, *S) or (C, *S), S = {dims}", "C and S non-empty"),
                     description="the input array"),
            Argument("kernel_size", "int | tuple[int, ...]",
                     constraints=("entries > 0", "output_size + kernel_size - 1 " + ("<= S" if n == 2 else "< S "
                                                                                      "(3-d: strictly, as torch)")),
                     description="the window size"),
            Argument("output_size", "int | tuple[int, ...] | None", None, ("exclusive with output_ratio",),
                     "the output spatial size"),
            Argument("output_ratio", "float | tuple[float, ...] | None", None, ("entries in (0, 1)",),
                     "output size int(S * ratio) (a single float is accepted; torch 2.13 needs a tuple)"),
            Argument("return_indices", "bool", False, (), "also return int64 flat indices into the input plane"),
            Argument("_random_samples", "array | None", None,
                     (f"(N, C, {n}) in [0, 1], x's dtype (N = 1 unbatched)",),
                     f"one sample per plane and axis, axis order {order} as torch; drawn when None", like="x"),
        )
        cards.append(Card(
            name=f"fractional_max_pool{n}d", version=1, category="pooling",
            summary=f"{n}-d fractional max pooling (windows at pseudo-random fractional strides).",
            spatial_dims=(n,), input_ranks=(n + 1, n + 2), dtypes=FLOATS, arguments=args,
            shape_relation="O = output_size, or int(S * output_ratio); window i of an axis starts at "
                           "int((i + u) * alpha) - int(u * alpha), alpha = (S - k) / (O - 1), the last at S - k",
            determinism="the windows are fixed by the samples; the forward scans them axis by axis (torch's "
                        "rule, O(input) memory whatever the window) and the backward routes each gradient to its "
                        "winner by a sort and a segmented sum (overlapping windows share winners): bit-identical "
                        "on every backend (torch's CUDA backward uses atomicAdd)",
            gradient=Gradient(f"fractional_max_pool{n}d_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS,
                              "routes to the winners; its derivative gathers at them"),
            torch_reference=f"torch.nn.functional.fractional_max_pool{n}d",
            notes=("window starts per axis, in x's dtype as torch computes them: alpha = (S - k) / (O - 1), "
                   "start_i = int((i + u) * alpha) - int(u * alpha) for i < O - 1, start_{O-1} = S - k "
                   "(O = 1: S - k)",
                   f"sample u of an axis: _random_samples[n, c, j], j indexing the axes in the order {order}",
                   "the first maximum in row-major window order wins; a NaN wins over numbers and the last "
                   "NaN wins (torch's `val > max || isnan(val)`)",
                   "when _random_samples is None: on torch torch.rand((N, C, n), dtype, device) from torch's "
                   "global generator (torch's own draw, so torch.manual_seed reproduces torch's windows); "
                   "elsewhere numpy.random.default_rng(rng) on the host (rng: None, an int seed or a "
                   "Generator), or jax.random.uniform(rng, ...) when rng is a JAX key (required under jax.jit)",
                   "kernel_size 0 and samples outside [0, 1] are rejected (torch returns -inf or reads out of "
                   "bounds)"),
            _resolve=_resolve_fractional,
            _infer=_infer_fractional,
            outputs=(Port("output", "array", "(N, C, *O) or (C, *O)", "the window maxima, x's dtype"),
                     Port("indices", "int64 array", "(N, C, *O) or (C, *O)",
                          "with return_indices=True: the flat index of each winner in the input plane")),
            examples=(Example(("N", 16, 32, 32) if n == 2 else ("N", 4, 16, 16, 16),
                              dict(kernel_size=3 if n == 2 else 2, output_ratio=0.5)),
                      Example((2, 3) + (9,) * n, dict(kernel_size=2, output_size=5))),
            torch_determinism="torch's CUDA backward of fractional_max_pool2d/3d uses atomicAdd",
            shaped_ports=("_random_samples",),
        ))
    return cards


FAMILY = Family('fractional_max_pool', 'routed', 22, _fractional_cards, fused_vjp=False)
