"""``poolspec.frontends.jax.image`` against jax.image (resize, scale_and_translate) and jax.vjp."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "jax"

_SPELLINGS = {"NEAREST": ("nearest",), "LINEAR": ("linear", "bilinear", "trilinear", "triangle"),
              "CUBIC": ("cubic", "bicubic", "tricubic"), "CUBIC_PYTORCH": ("cubic-pytorch", "bicubic-pytorch"),
              "LANCZOS3": ("lanczos3",), "LANCZOS5": ("lanczos5",), "AREA": ("area",)}


def available() -> str | None:
    try:
        import jax.image  # noqa: F401
    except ImportError:
        return "jax is not installed"
    return None


def version() -> str:
    import jax

    return jax.__version__


def _image(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    r = rng.random()
    if r < 0.45:
        return rng.standard_normal(shape)
    if r < 0.8:
        return rng.standard_normal(shape).astype(np.float32)
    if r < 0.86:
        return rng.uniform(-1, 1, shape).astype(np.float16)
    dtype = rng.choice(["uint8", "int8", "int32", "int64", "bool"])
    if dtype == "bool":
        return rng.random(shape) < 0.5
    hi = 100 if dtype in ("uint8", "int8") else 1000
    lo = 0 if dtype == "uint8" else -hi
    return rng.integers(lo, hi, shape).astype(dtype)


def _config(function: str, image: np.ndarray, options: dict[str, Any]) -> Config:
    floating = image.dtype.kind == "f"
    # an integer image is resampled in float32 (or float64): rounding errors scale with its values, not the
    # output's (which cancellation can make small)
    atol = None if floating else 1e-5 * max(1.0, float(np.abs(image.astype(np.float64)).max(initial=0.0)))
    return Config(function, {"image": image}, options, atol=atol,
                  differentiable=("image",) if floating and image.dtype != np.float16 else ())


def _method(rng: np.random.Generator, allow_nearest: bool) -> dict[str, Any]:
    names = [m for m in _SPELLINGS if allow_nearest or m != "NEAREST"]
    name = str(rng.choice(names))
    r = rng.random()
    if r < 0.2:
        return {"method_enum": name, "enum_of": "jax"}  # jax's own ResizeMethod member, to the front-end too
    if r < 0.35:
        return {"method_enum": name, "enum_of": "poolspec"}
    return {"method": str(rng.choice(_SPELLINGS[name]))}


def config(rng: np.random.Generator) -> Config:
    rank = int(rng.choice([1, 2, 3, 3, 4, 4]))
    in_shape = tuple(int(v) for v in rng.integers(1, 8, rank))
    if rng.random() < 0.7:
        axes = [a for a in range(rank) if rng.random() < 0.6] or [int(rng.integers(rank))]
        out_shape = list(in_shape)
        for a in axes:
            out_shape[a] = int(rng.integers(1, 12)) if rng.random() > 0.02 else 0
        options = {"shape": tuple(out_shape), "antialias": bool(rng.random() < 0.6), **_method(rng, True)}
        return _config("jax.image.resize", _image(rng, in_shape), options)
    axes = sorted(set(int(a) for a in rng.integers(0, rank, int(rng.integers(1, rank + 1)))))
    out_shape = list(in_shape)
    for a in axes:
        out_shape[a] = int(rng.integers(1, 12))
    spatial = tuple(a - rank if rng.random() < 0.3 else a for a in axes)
    image = _image(rng, in_shape)
    scale = rng.uniform(0.3, 3.0, len(axes)) * np.where(rng.random(len(axes)) < 0.05, -1, 1)
    translation = rng.uniform(-2.0, 2.0, len(axes)) * (rng.random() < 0.8)
    # float32 scale/translation: jax computes the weights in float32 (the front-end too, with NumPy's float32
    # sin: an ulp from XLA's for lanczos, beyond float64's tolerance), so only for float32 images
    if image.dtype != np.float64 and rng.random() < 0.5:
        scale, translation = scale.astype(np.float32), translation.astype(np.float32)
    options = {"shape": tuple(out_shape), "spatial_dims": spatial, "scale": scale, "translation": translation,
               "antialias": bool(rng.random() < 0.6), **_method(rng, False)}
    return _config("jax.image.scale_and_translate", image, options)


def _method_of(options: dict[str, Any], enum: Any) -> Any:
    if "method" in options:
        return options["method"]
    return enum[options["method_enum"]]


def _call(config: Config, image: Any, fe: bool) -> Any:
    o = config.options
    if fe:
        from poolspec.frontends.jax import image as mod

        if "method_enum" in o and o["enum_of"] == "jax":
            import jax.image

            method = _method_of(o, jax.image.ResizeMethod)
        else:
            method = _method_of(o, mod.ResizeMethod)
    else:
        import jax.image as mod  # type: ignore[no-redef]

        method = _method_of(o, mod.ResizeMethod)
    if config.function == "jax.image.resize":
        return mod.resize(image, o["shape"], method, antialias=o["antialias"])
    return mod.scale_and_translate(image, o["shape"], o["spatial_dims"], o["scale"], o["translation"], method,
                                   antialias=o["antialias"])


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    import jax
    import jax.numpy as jnp

    image = jnp.asarray(config.arrays["image"])
    try:
        out = _call(config, image, fe=False)
    except (ValueError, TypeError, AssertionError, ZeroDivisionError) as e:
        raise Refused(f"{type(e).__name__}: {e}") from None
    outs = [np.asarray(out)]
    if cotangents is None or not config.differentiable:
        return outs, {}
    _, vjp = jax.vjp(lambda v: _call(config, v, fe=False), image)
    (g,) = vjp(jnp.asarray(cotangents[0], dtype=out.dtype))
    return outs, {"image": np.asarray(g)}


def frontend(config: Config) -> Any:
    return lambda image: _call(config, image, fe=True)
