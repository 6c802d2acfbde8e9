"""poolspec.frontends.onnx against onnx's reference evaluator (one-node opset 22 models; opset 16 for GridSample's
bilinear/bicubic names). Forward only: ONNX runtimes have no gradients.

The random space leaves out the reference's known bugs (the cards list them): MaxPool with every stride and
dilation 1 (its generic path), SAME_* auto_pad with dilation > 1 on MaxPool, LpPool's ceil-mode overhang of two
or more cells, GlobalMaxPool on other than 4-D input, MaxUnpool with an output_shape above the default, cubic
GridSample with border padding outside the grid's range, reflection over a size-1 axis with align_corners,
AffineGrid in float64 and a size-1 axis with align_corners. ``onnxruntime.py`` reuses this generator with that
runtime's own exclusions."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "onnx_reference"
RUNTIME = "reference"
OPSET = 22
FUNCTIONS = ("AveragePool", "LpPool", "MaxPool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "MaxUnpool",
             "Resize", "GridSample", "AffineGrid", "RoiAlign", "MaxRoiPool")
WEIGHTS = (3, 2, 4, 1, 1, 1, 2, 8, 3, 1, 2, 1)


def available() -> str | None:
    try:
        import onnx  # noqa: F401
        from onnx.reference import ReferenceEvaluator  # noqa: F401
    except ImportError as e:
        return f"onnx is not installed ({e})"
    return None


def version() -> str:
    import onnx

    return f"onnx {onnx.__version__} reference evaluator (opset {OPSET})"


# ------------------------------------------------------------------------------------------------ models

def _model(op: str, inputs: list[np.ndarray | None], attributes: dict[str, Any], outputs: int, opset: int) -> Any:
    from onnx import helper

    names = [f"i{k}" if a is not None else "" for k, a in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y", "indices"][:outputs], **attributes)
    typed = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs) if a is not None]
    first = inputs[0]
    assert first is not None
    y_type = helper.np_dtype_to_tensor_dtype(first.dtype)
    outs = [helper.make_tensor_value_info("y", y_type, None), helper.make_tensor_value_info("indices", 7, None)]
    graph = helper.make_graph([node], op, typed, outs[:outputs])
    return helper.make_model_gen_version(graph, opset_imports=[helper.make_opsetid("", opset)])


_CACHE: dict[Any, Any] = {}


def prepare(model: Any) -> Any:
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(model)
    return lambda feeds: evaluator.run(None, feeds)


def _run(op: str, inputs: list[np.ndarray | None], attributes: dict[str, Any], outputs: int = 1,
         opset: int = OPSET) -> list[np.ndarray]:
    key = (op, repr(sorted(attributes.items())), tuple(None if a is None else (a.shape, a.dtype.str) for a in inputs),
           outputs, opset, tuple(a.tobytes() for a in inputs[1:] if a is not None and a.dtype.kind == "i"
                                 and op != "MaxUnpool"))
    runner = _CACHE.get(key)
    try:
        if runner is None:
            runner = _CACHE[key] = prepare(_model(op, inputs, attributes, outputs, opset))
        with np.errstate(all="ignore"):
            return [np.asarray(o) for o in runner({f"i{k}": a for k, a in enumerate(inputs) if a is not None})]
    except Exception as e:  # the runtime's refusal, whatever its type
        raise Refused(f"{type(e).__name__}: {str(e)[:300]}") from e


# ------------------------------------------------------------------------------------------------ configurations

def _floats(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _pool_dtype(rng: np.random.Generator, op: str) -> str:
    if RUNTIME == "ort" and op != "MaxPool":
        return "float32"  # onnxruntime registers these for float only
    # no float16: array-api-strict has none, and the harness converts the inputs before the front-end is called
    return str(rng.choice(["float32", "float64"]))


def _window(rng: np.random.Generator, op: str, n: int) -> tuple[dict[str, Any], tuple[int, ...]]:
    """Pool attributes and an input spatial shape whose every window holds an input cell."""
    while True:
        L = tuple(int(v) for v in rng.integers(1, 9, n))
        k = [int(v) for v in rng.integers(1, 4, n)]
        s = [int(v) for v in rng.integers(1, 4, n)]
        d = [int(v) for v in rng.integers(1, 3, n)] if rng.random() < 0.5 else [1] * n
        auto = str(rng.choice(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
        attrs: dict[str, Any] = {"kernel_shape": k}
        if rng.random() < 0.8 or auto == "NOTSET" and any(v > 1 for v in s):
            attrs["strides"] = s
        else:
            s = [1] * n
        if any(v > 1 for v in d) or rng.random() < 0.2:
            attrs["dilations"] = d
        ceil = int(rng.random() < 0.4)
        if ceil:
            attrs["ceil_mode"] = 1
        if auto != "NOTSET":
            attrs["auto_pad"] = auto
            if op != "MaxPool" and ceil:
                attrs.pop("ceil_mode")  # the reference refuses ceil_mode with auto_pad on these
            if any(v > 1 for v in d) and (RUNTIME == "reference" or auto.startswith("SAME")):
                continue  # the runtimes size auto_pad without the dilation (see the cards)
            if ceil or (RUNTIME == "reference" and auto != "VALID"):
                continue  # the reference's SAME padding; ceil_mode with auto_pad (see the cards)
            pads = [(0, 0)] * n
        else:
            pads = [(int(rng.integers(0, kk)), int(rng.integers(0, kk))) for kk in k]
            if rng.random() < 0.7:
                attrs["pads"] = [p[0] for p in pads] + [p[1] for p in pads]
            else:
                pads = [(0, 0)] * n
        span = [(kk - 1) * dd + 1 for kk, dd in zip(k, d)]
        ok = True
        for i in range(n):
            if auto == "NOTSET":
                total = L[i] + pads[i][0] + pads[i][1] - span[i]
                if total < 0:
                    ok = False
                    break
                o = (-(-total // s[i]) if ceil else total // s[i]) + 1
                if ceil and (o - 1) * s[i] >= L[i] + pads[i][0]:
                    o -= 1
                lo = pads[i][0]
            elif auto == "VALID":
                if L[i] < span[i]:
                    ok = False
                    break
                o, lo = (L[i] - span[i]) // s[i] + 1, 0
            else:
                o = -(-L[i] // s[i])
                tot = max((o - 1) * s[i] + span[i] - L[i], 0)
                lo = tot // 2 if auto == "SAME_UPPER" else tot - tot // 2
                if RUNTIME == "ort" and (o - 1) * s[i] + span[i] < L[i]:
                    ok = False  # onnxruntime pads negatively there (see the MaxPool card)
            # every window must hold an input cell (ONNX gives NaN / lowest there, poolspec refuses)
            for oo in range(o):
                taps = [oo * s[i] - lo + t * d[i] for t in range(k[i])]
                if not any(0 <= t < L[i] for t in taps):
                    ok = False
            if op != "MaxPool" and RUNTIME == "reference" and ceil and auto == "NOTSET":
                if (o - 1) * s[i] + span[i] - (L[i] + pads[i][0] + pads[i][1]) >= 1:
                    ok = False  # the reference shifts windows that overhang (see the cards)
        if not ok:
            continue
        if op == "MaxPool" and RUNTIME == "reference" and all(v == 1 for v in s) and all(v == 1 for v in d):
            continue  # the reference's generic pool path (see the MaxPool card)
        return attrs, L


def _pool(rng: np.random.Generator, op: str) -> Config:
    n = int(rng.integers(1, 4))
    attrs, L = _window(rng, op, n)
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    shape = (N, C) + L
    if op == "MaxPool":
        dtype = _pool_dtype(rng, op)
        if rng.random() < 0.2 and math.prod(shape) <= 250:
            dtype = str(rng.choice(["int8", "uint8"]))
            base = rng.permutation(math.prod(shape)) - (125 if dtype == "int8" else 0)
            x = base.reshape(shape).astype(dtype)  # distinct values: no ties
        else:
            x = _floats(rng, shape, dtype)
        if rng.random() < 0.4:
            attrs["storage_order"] = 1
    else:
        x = _floats(rng, shape, _pool_dtype(rng, op))
    if op == "AveragePool" and rng.random() < 0.5:
        attrs["count_include_pad"] = 1
    if op == "LpPool":
        attrs["p"] = int(rng.integers(1, 5))
    return Config(f"onnx.{op}", {"X": x}, attrs)


def _global(rng: np.random.Generator, op: str) -> Config:
    n = 2 if (op == "GlobalMaxPool" and RUNTIME == "reference") else int(rng.integers(1, 4))
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(int(v) for v in rng.integers(1, 7, n))
    attrs = {"p": int(rng.integers(1, 5))} if op == "GlobalLpPool" else {}
    return Config(f"onnx.{op}", {"X": _floats(rng, shape, _pool_dtype(rng, op))}, attrs)


def _unpool(rng: np.random.Generator) -> Config:
    n = int(rng.integers(1, 4))
    while True:
        S = tuple(int(v) for v in rng.integers(2, 8, n))
        k = [int(v) for v in rng.integers(1, 4, n)]
        s = [int(v) for v in rng.integers(1, 4, n)]
        pads = [int(rng.integers(0, kk)) for kk in k] + [int(rng.integers(0, kk)) for kk in k]
        L = [(S[i] + pads[i] + pads[n + i] - k[i]) // s[i] + 1 for i in range(n)]
        default = tuple((L[i] - 1) * s[i] - pads[i] - pads[n + i] + k[i] for i in range(n))
        # distinct indices need a plane at least as large as X's (duplicates: the winner is unspecified)
        if all(v >= 1 for v in L) and all(v >= 1 for v in default) and math.prod(default) >= math.prod(L):
            break
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dtype = str(rng.choice(["float32", "float64"])) if RUNTIME == "reference" else "float32"
    x = _floats(rng, (N, C) + tuple(L), dtype)
    options: dict[str, Any] = {"kernel_shape": k, "strides": s, "pads": pads}
    out = default
    if RUNTIME == "ort" and rng.random() < 0.5:
        out = tuple(max(a, b) for a, b in zip(S, default))
        options["output_shape"] = [N, C, *out]
    # distinct indices inside each (n, c) plane of the output, flat over the whole tensor
    plane = math.prod(out)
    m = math.prod(L)
    local = np.stack([rng.choice(plane, size=m, replace=False) for _ in range(N * C)])
    flat = (local + plane * np.arange(N * C)[:, None]).reshape((N, C) + tuple(L)).astype(np.int64)
    return Config("onnx.MaxUnpool", {"X": x, "I": flat}, options)


_SCALES = (0.25, 0.5, 0.75, 1.25, 1.5, 2.0, 3.0, 0.375, 2.5, 1.0)


def _boundary(x: Fraction, nearest: str) -> bool:
    frac = x - math.floor(x)
    return frac == 0 if nearest in ("floor", "ceil") else frac == Fraction(1, 2)


def _resize(rng: np.random.Generator) -> Config:
    while True:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.integers(1, 7, rank))
        if rng.random() < 0.5:
            axes = sorted(int(a) for a in rng.choice(rank, size=int(rng.integers(1, rank + 1)), replace=False))
            # the reference mis-permutes negative axes (see the Resize card)
            axes_opt: list[int] | None = [a - rank if rng.random() < 0.3 and RUNTIME == "ort" else a for a in axes]
        else:
            axes, axes_opt = list(range(rank)), None
        mode = str(rng.choice(["nearest", "linear", "cubic"]))
        ctm = str(rng.choice(["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                              "asymmetric", "tf_crop_and_resize"]))
        attrs: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": ctm}
        if axes_opt is not None:
            attrs["axes"] = axes_opt
        nearest = "round_prefer_floor"
        if mode == "nearest":
            nearest = str(rng.choice(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]))
            attrs["nearest_mode"] = nearest
        else:
            if rng.random() < 0.4:
                attrs["antialias"] = 1
            if rng.random() < 0.4:
                attrs["exclude_outside"] = 1
        if RUNTIME == "ort" and attrs.get("exclude_outside") and mode != "cubic":
            continue  # onnxruntime takes exclude_outside with cubic only
        if RUNTIME == "ort" and mode == "cubic" and not (rank == 2 or rank == 4 and all(a >= 2 for a in axes)):
            continue  # onnxruntime's cubic: 2-D input, or 4-D with the outer two axes kept
        if RUNTIME == "ort" and mode == "linear" and not (rank in (2, 3) or rank == 4 and all(a >= 2 for a in axes)):
            continue  # onnxruntime's linear: 2-D or 3-D input, or 4-D with the outer two axes kept
        if mode == "cubic" and rng.random() < 0.5:
            attrs["cubic_coeff_a"] = float(rng.choice([-0.5, -0.625, -0.75, -1.0]))
        L = [shape[a] for a in axes]
        scales = sizes = roi = None
        if rng.random() < 0.5:
            sc = [float(rng.choice(_SCALES)) for _ in axes]
            out = [math.floor(f * Li) for f, Li in zip(sc, L)]
            scales = np.array(sc, np.float32)
            fr = [Fraction(f) for f in sc]
        else:
            out = [int(v) for v in rng.integers(1, 9, len(axes))]
            sizes = np.array(out, np.int64)
            fr = [Fraction(o, Li) for o, Li in zip(out, L)]
            if rng.random() < 0.3 and not (RUNTIME == "ort" and axes_opt is not None and min(axes_opt) < 0):
                policy = str(rng.choice(["not_larger", "not_smaller"]))
                attrs["keep_aspect_ratio_policy"] = policy
                one = min(fr) if policy == "not_larger" else max(fr)
                fr = [one] * len(axes)
                out = [int(float(one) * Li + 0.5) for Li in L]
        if any(o < 1 for o in out):
            continue
        if ctm == "tf_crop_and_resize":
            starts = [float(rng.choice([0.0, 0.125, 0.25, -0.125])) for _ in axes]
            ends = [float(rng.choice([1.0, 0.875, 0.75, 1.125])) for _ in axes]
            roi = np.array(starts + ends, np.float32)
            if rng.random() < 0.5:
                attrs["extrapolation_value"] = float(rng.choice([-1.0, 0.5, 2.0]))
        if RUNTIME == "reference" and ctm == "pytorch_half_pixel" and 1 in out:
            continue  # the reference puts an extent-1 output at -0.5, the spec at 0 (see the Resize card)
        if RUNTIME == "ort":
            if ctm == "tf_crop_and_resize":
                continue  # onnxruntime disagrees with the reference here, not diagnosed (see the Resize card)
            if attrs.get("antialias"):
                continue  # onnxruntime's antialiased filters disagree with the reference (see the Resize card)
            if ctm != "half_pixel" and ctm != "asymmetric" and any(
                    f * Li != o for f, Li, o in zip(fr, L, out)):
                continue  # onnxruntime's output width is the rounded extent, the reference's L * scale (the card)
            full = list(shape)
            for a, o in zip(axes, out):
                full[a] = o
            if tuple(full) == shape and any(f != 1 for f in fr):
                continue  # onnxruntime copies X then (see the Resize card)
            if mode == "nearest" or attrs.get("antialias"):
                # exact source coordinates on a rounding boundary: float32 arithmetic may land either side
                bad = False
                for Li, Oi, f in zip(L, out, fr):
                    for i in range(Oi):
                        xc = _exact_coordinate(ctm, i, Li, Oi, f, roi, axes, L)
                        if xc is not None and mode == "nearest" and _boundary(xc, nearest):
                            bad = True
                if bad:
                    continue
        dtype = str(rng.choice(["float32", "float64"] if RUNTIME == "reference" else ["float32"]))
        x = _floats(rng, shape, dtype)
        config = Config("onnx.Resize", {"X": x}, {**attrs, "roi": roi, "scales": scales, "sizes": sizes})
        if mode == "cubic" and dtype != "float16":
            config.rtol, config.atol = 2e-5, 1e-5  # the runtimes' cubic weights come out in float32
        return config


def _exact_coordinate(ctm: str, i: int, L: int, O: int, f: Fraction, roi: Any, axes: Any, Ls: Any) -> Fraction | None:
    width = f * L
    if ctm == "align_corners":
        return Fraction(0) if width == 1 else Fraction(i * (L - 1)) / (width - 1)
    if ctm == "asymmetric":
        return i / f
    if ctm == "tf_crop_and_resize":
        return None
    if ctm == "pytorch_half_pixel" and width == 1:
        return Fraction(-1, 2)
    x = (i + Fraction(1, 2)) / f - Fraction(1, 2)
    if ctm == "half_pixel_symmetric":
        x += Fraction(L, 2) * (1 - Fraction(O) / width)
    return x


def _grid_sample(rng: np.random.Generator) -> Config:
    while True:
        n = int(rng.integers(2, 4))
        mode = str(rng.choice(["linear", "nearest", "cubic", "bilinear", "bicubic"]))
        if mode in ("bilinear", "bicubic") and (n == 3 or RUNTIME == "reference"):
            continue  # opset 16's names: 4-D only, and the reference knows only opset 20's
        if n == 3 and mode == "cubic" and RUNTIME == "reference":
            continue  # the reference interpolates cubic on 5-D input, poolspec (as torch, onnxruntime) refuses
        pad = str(rng.choice(["zeros", "border", "reflection"]))
        align = int(rng.integers(0, 2))
        spatial = tuple(int(v) for v in rng.integers(1, 6, n))
        if RUNTIME == "reference" and pad == "reflection" and align and 1 in spatial:
            continue  # the reference divides by the size-1 axis's zero span
        break
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dtype = str(rng.choice(["float32", "float64"])) if mode not in ("bilinear", "bicubic") else "float32"
    out = tuple(int(v) for v in rng.integers(1, 5, n))
    grid = rng.uniform(-1.3, 1.3, (N,) + out + (n,))
    if mode in ("cubic", "bicubic") and pad == "border" and RUNTIME == "reference":
        # the reference clamps an out-of-range coordinate before taking its taps: keep the grid inside the cells'
        # centres
        lim = np.array([1.0 if align else (Li - 1) / Li for Li in spatial[::-1]])
        grid = rng.uniform(-1, 1, grid.shape) * lim
    attrs: dict[str, Any] = {"mode": mode, "padding_mode": pad, "align_corners": align}
    config = Config("onnx.GridSample", {"X": _floats(rng, (N, C) + spatial, dtype), "grid": grid.astype(dtype)},
                    attrs)
    if dtype == "float64":
        config.rtol, config.atol = 1e-5, 1e-5  # the runtimes denormalise the grid in float32
    return config


def _affine_grid(rng: np.random.Generator) -> Config:
    n = int(rng.integers(2, 4))
    align = int(rng.integers(0, 2))
    N = int(rng.integers(1, 3))
    low = 2 if align else 1  # a size-1 axis with align_corners: the runtimes put it at -1 / +1 (see the card)
    size = [N, int(rng.integers(1, 3))] + [int(v) for v in rng.integers(low, 6, n)]
    dtype = "float32" if RUNTIME == "reference" else str(rng.choice(["float32", "float64"]))
    theta = rng.standard_normal((N, n, n + 1)).astype(dtype)
    config = Config("onnx.AffineGrid", {"theta": theta}, {"size": size, "align_corners": align})
    if dtype == "float64":
        config.rtol, config.atol = 1e-6, 1e-7
    return config


def _roi_align(rng: np.random.Generator) -> Config:
    """tests/test_frontend_roi.py's configurations: rois outside X, on pixel centres and edges, negative (x2 < x1),
    degenerate (x1 == x2 or y1 == y2), several per image; both coordinate_transformation_modes, avg and max, adaptive
    and fixed sampling; float32 only on onnxruntime (whose refusals of a negative adaptive sample grid are counted,
    not compared). On onnxruntime, now and then a call both refuse: a batch index outside [0, N) or a negative
    sampling_ratio (the reference evaluator checks neither: it computes with sampling_ratio -1, and reads an image
    outside the batch only where a sample lands inside X)."""
    dtype = str(rng.choice(["float32", "float64"])) if RUNTIME == "reference" else "float32"
    N, C, H, W = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 3), rng.integers(1, 9), rng.integers(1, 9)))
    K = int(rng.integers(0, 5))
    scale = float(np.float32(rng.choice([1.0, 0.5, 0.25, 2.0, rng.uniform(0.2, 2.0)])))
    rois = rng.uniform(-3.0, max(H, W) / scale + 2.0, (K, 4))
    if rng.random() < 0.3:
        rois = np.round(rois * 2) / 2  # samples on pixel centres and edges
    if rng.random() < 0.2:
        rois = rois[:, [2, 3, 0, 1]]  # negative rois
    if K and rng.random() < 0.15:
        axis = int(rng.integers(0, 2))
        rois[0, axis + 2] = rois[0, axis]  # a degenerate roi: no width or no height
    attrs = {"coordinate_transformation_mode": str(rng.choice(["half_pixel", "output_half_pixel"])),
             "mode": str(rng.choice(["avg", "max"])), "output_height": int(rng.integers(1, 5)),
             "output_width": int(rng.integers(1, 5)), "sampling_ratio": int(rng.choice([0, 0, 1, 2, 3])),
             "spatial_scale": scale}
    batch = rng.integers(0, N, K).astype(np.int64)
    bad = rng.random() if RUNTIME == "ort" else 1.0
    if K and bad < 0.02:
        batch[-1] = N  # both refuse: an image outside the batch
    elif bad < 0.04:
        attrs["sampling_ratio"] = -1  # both refuse
    config = Config("onnx.RoiAlign", {"X": _floats(rng, (N, C, H, W), dtype), "rois": rois.astype(dtype),
                                      "batch_indices": batch}, attrs)
    if dtype == "float32":
        config.rtol, config.atol = 1e-5, 1e-5  # the runtimes compute some terms in double, some in float32
    return config


def _max_roi_pool(rng: np.random.Generator) -> Config:
    """tests/test_frontend_roi.py's configurations (float32: onnxruntime registers no other): rois outside X,
    flipped, degenerate, on rounding ties; now and then a batch index outside [0, N) (both refuse; onnxruntime
    only, the reference evaluator has no MaxRoiPool)."""
    N, C, H, W = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 3), rng.integers(1, 10), rng.integers(1, 10)))
    K = int(rng.integers(0, 5))
    scale = float(np.float32(rng.choice([1.0, 0.5, 0.25, 2.0, rng.uniform(0.2, 2.0)])))
    corners = rng.uniform(-3.0, max(H, W) / scale + 2.0, (K, 4))
    if rng.random() < 0.4:
        corners = np.round(corners * 2) / 2  # rounding ties
    if K and rng.random() < 0.15:
        axis = int(rng.integers(0, 2))
        corners[0, axis + 2] = corners[0, axis]  # a degenerate roi
    batch = rng.integers(0, N, (K, 1))
    if K and rng.random() < 0.02:
        batch[-1] = N  # both refuse: an image outside the batch
    rois = np.concatenate([batch, corners], axis=1).astype(np.float32)
    attrs = {"pooled_shape": [int(rng.integers(1, 5)), int(rng.integers(1, 5))], "spatial_scale": scale}
    return Config("onnx.MaxRoiPool", {"X": _floats(rng, (N, C, H, W), "float32"), "rois": rois}, attrs)


def config(rng: np.random.Generator) -> Config:
    p = np.array(WEIGHTS, float)
    if RUNTIME == "reference":
        p[FUNCTIONS.index("GlobalLpPool")] = 0  # the reference has no GlobalLpPool at any opset
        p[FUNCTIONS.index("MaxRoiPool")] = 0  # nor MaxRoiPool
    op = FUNCTIONS[int(rng.choice(len(FUNCTIONS), p=p / p.sum()))]
    if op in ("AveragePool", "LpPool", "MaxPool"):
        return _pool(rng, op)
    if op.startswith("Global"):
        return _global(rng, op)
    if op == "MaxUnpool":
        return _unpool(rng)
    if op == "Resize":
        return _resize(rng)
    if op == "GridSample":
        return _grid_sample(rng)
    if op == "RoiAlign":
        return _roi_align(rng)
    if op == "MaxRoiPool":
        return _max_roi_pool(rng)
    return _affine_grid(rng)


# one generator per function for conformance/check_frontends.py's --per-function draws (config's mix draws these
# rarely); the reference evaluator has no MaxRoiPool
DEDICATED = {"onnx.RoiAlign": _roi_align}


def _max_mode_regression(mode: str, ratio: int) -> Config:
    """RoiAlign's max mode on samples between pixels and half-pixel-shifted boxes: the ONNX maximum is the largest
    weighted corner term w_i * x_i of any sample, not the largest bilinear sample (the front-end's max_of="samples")
    -- the difference onnxruntime#6146 and #14265 (and onnx#4764) are about."""
    rng = np.random.default_rng(6146)
    X = np.round(rng.standard_normal((1, 2, 6, 7)) * 4) / 4 + 1.0
    rois = np.array([[0.4, 0.7, 3.6, 3.2], [1.0, 1.0, 2.0, 2.0], [-0.5, 0.25, 6.5, 5.75], [2.25, 0.5, 2.75, 4.0],
                     [4.5, 3.5, 1.5, 0.5]])
    attrs = {"coordinate_transformation_mode": mode, "mode": "max", "output_height": 2, "output_width": 3,
             "sampling_ratio": ratio, "spatial_scale": 1.0}
    return Config("onnx.RoiAlign", {"X": X, "rois": rois, "batch_indices": np.zeros(5, np.int64)}, attrs)


# stored with the library's outputs whatever the random draws (check_frontends.py --store, --regressions): fixed
# calls at upstream reports, each with its flags and the reports
REGRESSIONS = [
    {"id": f"onnx.RoiAlign-regression-max-{mode}", "config": (lambda mode=mode, ratio=ratio:
                                                              _max_mode_regression(mode, ratio)),
     "flags": ["regression", "max_of_weighted_taps"],
     "upstream": ["https://github.com/microsoft/onnxruntime/issues/6146",
                  "https://github.com/microsoft/onnxruntime/issues/14265", "https://github.com/onnx/onnx/issues/4764"]}
    for mode, ratio in (("half_pixel", 2), ("output_half_pixel", 0))]


# ------------------------------------------------------------------------------------------------ the two sides

def library(config: Config, cotangents: Any) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    op = config.function.split(".")[-1]
    o = dict(config.options)
    a = config.arrays
    if cotangents is not None:
        return [], {}
    if op == "MaxPool":
        return _run(op, [a["X"]], o, 2), {}
    if op == "MaxUnpool":
        shape = o.pop("output_shape", None)
        return _run(op, [a["X"], a["I"], None if shape is None else np.array(shape, np.int64)], o), {}
    if op == "Resize":
        roi, scales, sizes = o.pop("roi"), o.pop("scales"), o.pop("sizes")
        return _run(op, [a["X"], roi, scales, sizes], o), {}
    if op == "GridSample":
        opset = 16 if o["mode"] in ("bilinear", "bicubic") else OPSET
        return _run(op, [a["X"], a["grid"]], o, 1, opset), {}
    if op == "AffineGrid":
        size = np.array(o.pop("size"), np.int64)
        return _run(op, [a["theta"], size], o), {}
    if op == "RoiAlign":  # onnxruntime registers RoiAlign up to opset 16 (17 to 22 change only the types)
        return _run(op, [a["X"], a["rois"], a["batch_indices"]], o, 1, 16 if RUNTIME == "ort" else OPSET), {}
    if op == "MaxRoiPool":  # onnxruntime registers MaxRoiPool at opset 1 (22 adds only bfloat16 to its types)
        return _run(op, [a["X"], a["rois"]], o, 1, 1), {}
    # onnxruntime registers GlobalLpPool up to opset 21 (22 only adds bfloat16 to its types)
    return _run(op, [a["X"]], o, 1, 21 if op == "GlobalLpPool" else OPSET), {}


def frontend(config: Config) -> Any:
    from poolspec.frontends import onnx

    op = config.function.split(".")[-1]
    fn = getattr(onnx, op)
    o = dict(config.options)
    if op == "MaxUnpool":
        shape = o.pop("output_shape", None)
        return lambda X, I: fn(X, I, None if shape is None else np.array(shape, np.int64), **o)  # noqa: E741
    if op == "Resize":
        roi, scales, sizes = o.pop("roi"), o.pop("scales"), o.pop("sizes")
        return lambda X: fn(X, roi, scales, sizes, **o)
    if op == "AffineGrid":
        size = np.array(o.pop("size"), np.int64)
        return lambda theta: fn(theta, size, **o)
    return lambda *arrays: fn(*arrays, **o)
