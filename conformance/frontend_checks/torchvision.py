"""``poolspec.frontends.torchvision.ops`` against torchvision (CPU kernels): random configurations of
``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool`` and the module classes ``RoIAlign``, ``RoIPool``,
``PSRoIAlign``, ``PSRoIPool`` and ``MultiScaleRoIAlign``; gradients w.r.t. the features by torch autograd through
torchvision's kernels.

Boxes as Tensor[K, 5] and as lists of Tensor[L, 4] (one per image, some empty); boxes inside, across and outside
the feature map, flipped (x2 < x1) and degenerate, with corners on half cells now and then (the rounding and
sampling boundaries); output_size as an int or a pair, spatial_scale, sampling_ratio (adaptive included) and
aligned over their ranges; float64 and float32, and float16 for roi_pool (see _ALIGN_DT). A module's
configuration also compares repr (the class's repr as an int32 array of its bytes, a second output).
MultiScaleRoIAlign: dicts of 2 to 4 maps of a feature pyramid (maps the module does not name among them, maps
that skip a level), one or two images of different sizes, canonical_scale and canonical_level varied.

Refused by both (a few per cent): a (K, 4) array of boxes, a list holding a (L, 5) array, an empty list; the
batch index is always an image of the input (torchvision's kernels read outside the input otherwise).
Not generated: bfloat16 (NumPy has none; torchvision's CPU kernels refuse it), NaN boxes, and output_size with
other than two entries (the front-end refuses, see the card)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "torchvision"
_DT = ("float64", "float64", "float64", "float32", "float32", "float16")
# roi_align's float16: torchvision's CPU kernel rounds every step (box corners, sample positions, weights, sums) to
# float16, poolspec computes in float32 and rounds once (its card): a sample position rounded the other way reads
# other cells, so the align ops are drawn in float64 and float32 only; roi_pool's float16 is torchvision's box
# arithmetic, its values selected: compared as any dtype
_ALIGN_DT = ("float64", "float64", "float64", "float32", "float32")


def available() -> str | None:
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        return f"torchvision is not installed here ({e})"
    return None


def version() -> str:
    import torch
    import torchvision

    return f"torchvision {torchvision.__version__} (torch {torch.__version__}, CPU)"


# every configuration on torch (forward and input gradient) and NumPy (forward), every tenth on JAX too
# (forward: a JAX call compiles per shape, ~1 s each on the 2-core machine the results come from)
GRADIENTS = ("torch",)


def SCHEDULE(i: int) -> list[str]:
    return ["torch", "numpy"] + (["jax"] if i % 10 == 0 else [])


# ------------------------------------------------------------------------------------------------ inputs

def _boxes(rng: np.random.Generator, K: int, H: int, W: int, scale: float) -> np.ndarray:
    """K boxes (x1, y1, x2, y2) in input coordinates (feature cells / scale)."""
    out = np.empty((K, 4))
    for axis, L in ((0, W), (1, H)):
        start = rng.uniform(-0.3 * L, 1.1 * L, K)
        size = rng.uniform(0, 1.2 * L, K) * np.where(rng.random(K) < 0.1, -0.3, 1.0)  # some flipped
        size = np.where(rng.random(K) < 0.05, 0.0, size)  # degenerate
        out[:, axis], out[:, axis + 2] = start, start + size
    if rng.random() < 0.3:
        out = np.round(out * 2) / 2  # corners on half cells
    return out / scale


def _size(rng: np.random.Generator) -> tuple[Any, tuple[int, int]]:
    ph, pw = (int(v) for v in rng.integers(1, 6, 2))
    if rng.random() < 0.35:
        return ph, (ph, ph)
    form = (ph, pw) if rng.random() < 0.7 else [ph, pw]
    return form, (ph, pw)


def _features(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _roi_config(rng: np.random.Generator, function: str) -> Config:
    ps = "ps_" in function.lower() or "PS" in function
    pool = function.endswith(("roi_pool", "RoIPool"))
    dtype = str(rng.choice(_DT if pool else _ALIGN_DT))
    N, H, W = int(rng.integers(1, 4)), int(rng.integers(1, 13)), int(rng.integers(1, 13))
    size, (ph, pw) = _size(rng)
    C = int(rng.integers(1, 4)) * (ph * pw if ps else 1)
    scale = float(rng.choice([1.0, 1.0, 0.5, 0.25, 0.125, 2.0, round(float(rng.uniform(0.1, 2.0)), 3)]))
    x = _features(rng, (N, C, H, W), dtype)
    as_list = rng.random() < 0.3
    K = int(rng.integers(0, 6))
    boxes = _boxes(rng, K, H, W, scale)
    batch = rng.integers(0, N, K)
    arrays: dict[str, np.ndarray] = {"input": x}
    if as_list:
        for i in range(N):
            arrays[f"boxes{i}"] = boxes[batch == i].astype(dtype)
    else:
        arrays["boxes"] = np.concatenate([batch[:, None].astype(float), boxes], axis=1).astype(dtype)
    if rng.random() < 0.05:  # refused by both
        which = int(rng.integers(3))
        rest = {k: v for k, v in arrays.items() if not k.startswith("boxes")}
        if which == 0:
            arrays = rest | {"boxes": boxes.astype(dtype)}
        elif which == 1:
            arrays = rest | {"boxes0": np.concatenate([batch[:, None].astype(float), boxes], 1).astype(dtype)}
        else:
            arrays = rest | {"boxes_empty_list": np.zeros((0,), dtype)}
    options: dict[str, Any] = {"output_size": size, "spatial_scale": scale}
    if not pool:
        options["sampling_ratio"] = int(rng.choice([-1, -1, 0, 1, 2, 3, 4]))
    if not pool and not ps:
        options["aligned"] = bool(rng.random() < 0.5)
    diff = ("input",) if dtype in ("float32", "float64") and K > 0 else ()
    return Config(function, arrays, options, diff)


_LEVELS = (2, 3, 4, 5, 6)


def _multiscale_config(rng: np.random.Generator) -> Config:
    dtype = str(rng.choice(_ALIGN_DT))
    B = int(rng.integers(1, 3))
    shapes = [(int(rng.integers(48, 520)), int(rng.integers(48, 520))) for _ in range(B)]
    big = max(h for h, _ in shapes), max(w for _, w in shapes)
    n_maps = int(rng.integers(2, 5))
    levels = sorted(int(v) for v in rng.choice(_LEVELS, n_maps, replace=False))
    if rng.random() < 0.5:  # consecutive levels, as an FPN's
        first = int(rng.integers(2, 7 - n_maps + 1))
        levels = list(range(first, first + n_maps))
    C = int(rng.integers(1, 4))
    maps: dict[str, np.ndarray] = {}
    for k in levels:
        h, w = (-(-v // 2 ** k) + int(rng.integers(-1, 2) if rng.random() < 0.2 else 0) for v in big)
        maps[f"p{k}"] = _features(rng, (B, C, max(h, 1), max(w, 1)), dtype)
    names = list(maps)
    if rng.random() < 0.7:  # pool from all maps (in dict order or not), else from a subset
        featmap_names = list(rng.permutation(names)) if rng.random() < 0.3 else names
    else:
        featmap_names = sorted(rng.choice(names, int(rng.integers(1, len(names) + 1)), replace=False).tolist())
    arrays: dict[str, np.ndarray] = {f"x.{k}": v for k, v in maps.items()}
    for i, (h, w) in enumerate(shapes):
        L = int(rng.integers(0, 7))
        x1, y1 = rng.uniform(-10, w, L), rng.uniform(-10, h, L)
        bw, bh = np.exp(rng.uniform(np.log(2), np.log(600), (2, L)))
        if rng.random() < 0.2:
            bw = np.round(bw)
            bh = np.round(bh)
        # now and then a flipped box (a negative area: a NaN level, zeros) or an empty one (level k_min)
        bw = np.where(rng.random(L) < 0.05, -0.1 * bw, np.where(rng.random(L) < 0.03, 0.0, bw))
        arrays[f"boxes{i}"] = np.stack([x1, y1, x1 + bw, y1 + bh], axis=1).astype(dtype)
    size = int(rng.integers(1, 8)) if rng.random() < 0.5 else (int(rng.integers(1, 8)), int(rng.integers(1, 8)))
    options: dict[str, Any] = {"featmap_names": [str(n) for n in featmap_names], "output_size": size,
                               "sampling_ratio": int(rng.choice([-1, 0, 1, 2, 2, 3])),
                               "canonical_scale": int(rng.choice([224, 224, 112, 320])),
                               "canonical_level": int(rng.choice([4, 4, 3, 5])), "image_shapes": shapes}
    used = [k for k in arrays if k.startswith("x.") and k[2:] in featmap_names]
    K = sum(int(arrays[f"boxes{i}"].shape[0]) for i in range(B))
    diff = tuple(used) if K > 0 else ()
    return Config("torchvision.ops.MultiScaleRoIAlign", arrays, options, diff)


def _group(function: str) -> Any:
    return lambda rng: _roi_config(rng, function)


_FUNCTIONS = ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool", "RoIAlign", "RoIPool", "PSRoIAlign",
              "PSRoIPool")


MODULES: dict[str, Any] = {f"torchvision.ops.{f}": _group(f"torchvision.ops.{f}") for f in _FUNCTIONS}
MODULES["torchvision.ops.MultiScaleRoIAlign"] = _multiscale_config


def config(rng: np.random.Generator) -> Config:
    groups = list(MODULES)
    return MODULES[groups[int(rng.integers(len(groups)))]](rng)


# ----------------------------------------------------------------------------------------------- calls

def _split(config: Config, arrays: list[Any]) -> tuple[dict[str, Any], Any]:
    """(features, boxes) from the call's arrays: the input (or the dict of maps) and the boxes' form."""
    named = dict(zip(config.arrays, arrays))
    if "boxes_empty_list" in named:
        return named, []
    boxes: Any = named["boxes"] if "boxes" in named else [v for k, v in named.items() if k.startswith("boxes")]
    return named, boxes


def _repr_array(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8).astype(np.int32)


def _run(ops: Any, config: Config, arrays: list[Any], like: Any) -> list[Any]:
    """The call on ``ops`` (torchvision.ops or the front-end): outputs, and a module's repr as int32 bytes in
    ``like``'s array type."""
    named, boxes = _split(config, arrays)
    name = config.function.rsplit(".", 1)[-1]
    o = dict(config.options)
    if name == "MultiScaleRoIAlign":
        shapes = o.pop("image_shapes")
        m = ops.MultiScaleRoIAlign(o.pop("featmap_names"), o.pop("output_size"), o.pop("sampling_ratio"), **o)
        x = {k[2:]: v for k, v in named.items() if k.startswith("x.")}
        return [m(x, boxes, shapes), like(_repr_array(repr(m)))]
    if name[0].isupper():
        m = getattr(ops, name)(**o)
        return [m(named["input"], boxes), like(_repr_array(repr(m)))]
    return [getattr(ops, name)(named["input"], boxes, **o)]


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    import torch
    import torchvision.ops as ops

    names = list(config.arrays)
    xs = [torch.from_numpy(np.array(a)) for a in config.arrays.values()]
    wrt = [names.index(n) for n in config.differentiable] if cotangents is not None else []
    for i in wrt:
        xs[i].requires_grad_(True)
    try:
        outs = _run(ops, config, xs, torch.from_numpy)
        if cotangents is None:
            return [o.detach().numpy() for o in outs], {}
        if not wrt or outs[0].numel() == 0:
            return [], {}
        grads = torch.autograd.grad(outs[0], [xs[i] for i in wrt], torch.from_numpy(cotangents[0]),
                                    allow_unused=True)
    except (RuntimeError, ValueError, TypeError, AssertionError, IndexError, NotImplementedError) as e:
        raise Refused(f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}") from e
    return [], {names[i]: (np.zeros(config.arrays[names[i]].shape, config.arrays[names[i]].dtype) if g is None
                           else g.numpy()) for i, g in zip(wrt, grads)}


def frontend(config: Config) -> Any:
    from poolspec._compat import namespace
    from poolspec.frontends.torchvision import ops

    def call(*arrays: Any) -> Any:
        xp = namespace(arrays[0])
        outs = _run(ops, config, list(arrays), lambda a: xp.asarray(a))
        return tuple(outs) if len(outs) > 1 else outs[0]

    return call
