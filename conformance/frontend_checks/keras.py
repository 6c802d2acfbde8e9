"""poolspec.frontends.keras (``keras.ops`` pools, ``keras.ops.image.resize``) against Keras 3 on its JAX backend.

Keras on JAX fails on two documented argument forms (a list ``pool_size``/``strides`` and the default
``strides=None``, see the cards' differences): the library side here calls Keras with their documented meaning
(the tuple, ``strides=pool_size``) so that the numbers are compared; everything else goes to Keras as given.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "keras"
POOLS = ("max_pool", "average_pool", "adaptive_average_pool", "adaptive_max_pool")
FORMATS = (None, "channels_last", "channels_first", "Channels_First", "CHANNELS_LAST")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic")


def _keras() -> Any:
    os.environ.setdefault("KERAS_BACKEND", "jax")  # read once, at keras' first import
    import keras

    return keras


def available() -> str | None:
    if os.environ.get("KERAS_BACKEND", "jax") != "jax":
        return f"KERAS_BACKEND={os.environ['KERAS_BACKEND']}: these checks are for Keras on JAX"
    try:
        keras = _keras()
    except ImportError as e:
        return f"keras is not installed ({e})"
    if keras.backend.backend() != "jax":
        return f"keras runs on {keras.backend.backend()}, not jax"
    return None


def version() -> str:
    import jax

    return f"keras {_keras().__version__} (jax {jax.__version__})"


# --------------------------------------------------------------------------------------------------- configurations

def _distinct(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Values without ties (the tie and NaN rules are conventions the cards name), exact in the dtype."""
    size = int(np.prod(shape))
    if dtype == "float16":  # distinct small integers are exact in float16
        return (rng.permutation(size) - size // 2).reshape(shape).astype(dtype) / np.float16(8)
    if dtype in INTS:
        info = np.iinfo(dtype)
        # small enough that Keras' integer window sums (in the input dtype) cannot wrap
        lo, hi = max(int(info.min), -4), min(int(info.max), 9 if dtype.startswith("u") else 4)
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _size_arg(rng: np.random.Generator, values: tuple[int, ...]) -> Any:
    r = rng.random()
    if r < 0.35 and len(set(values)) == 1:
        return values[0]
    if r < 0.7:
        return tuple(values)
    return list(values)


def _dtype(rng: np.random.Generator, ints: bool = True) -> str:
    r = rng.random()
    if r < 0.4:
        return "float64"
    if r < 0.7 or not ints:
        return "float32"
    if r < 0.8:
        return "float16"
    return str(rng.choice(INTS))


def _layout(rng: np.random.Generator, n: int, spatial: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    fmt = FORMATS[rng.integers(len(FORMATS))]
    batch = int(rng.choice([0, 1, 2, 3], p=[0.04, 0.4, 0.36, 0.2]))
    channels = int(rng.choice([0, 1, 2, 3], p=[0.03, 0.37, 0.3, 0.3]))
    if fmt is not None and fmt.lower() == "channels_first":
        return fmt, (batch, channels) + spatial
    return fmt, (batch,) + spatial + (channels,)


def _pool_config(rng: np.random.Generator, function: str) -> Config:
    n = int(rng.integers(1, 4))
    top = (12, 9, 6)[n - 1]
    spatial = tuple(int(v) for v in rng.integers(1, top + 1, size=n))
    fmt, shape = _layout(rng, n, spatial)
    dtype = _dtype(rng, ints=True)
    if dtype == "uint64" and function == "max_pool":
        dtype = "int64"  # poolspec's max pool has no uint64 (the card's refuses)
    options: dict[str, Any] = {"data_format": fmt}
    if function in ("max_pool", "average_pool"):
        k = tuple(int(rng.integers(1, min(L, 4) + 1)) if rng.random() < 0.9 else int(rng.integers(1, 6))
                  for L in spatial)
        if rng.random() < 0.3:
            k = (k[0],) * n
        options["pool_size"] = _size_arg(rng, k)
        if rng.random() < 0.3:
            options["strides"] = None
        else:
            s = tuple(int(v) for v in rng.integers(1, 4, size=n))
            options["strides"] = _size_arg(rng, (s[0],) * n if rng.random() < 0.3 else s)
        options["padding"] = str(rng.choice(["valid", "same", "VALID", "Same"]))
        if rng.random() < 0.02:
            options["padding"] = "full"  # both refuse
    else:
        out = tuple(int(rng.integers(1, L + 4)) for L in spatial)
        if rng.random() < 0.3:
            out = (out[0],) * n
        options["output_size"] = _size_arg(rng, out)
        if rng.random() < 0.02:
            options["output_size"] = 0  # both refuse
    if rng.random() < 0.01:
        options["data_format"] = "NCHW"  # both refuse
    x = _distinct(rng, shape, dtype)
    diff = ("inputs",) if dtype.startswith("float") else ()
    return Config(f"keras.ops.{function}", {"inputs": x}, options, diff)


def _resize_config(rng: np.random.Generator) -> Config:
    rank = int(rng.choice([3, 4]))
    h, w = (int(v) for v in rng.integers(1, 13, size=2))
    fmt = FORMATS[rng.integers(len(FORMATS))]
    channels = int(rng.integers(1, 4))
    batch = int(rng.integers(1, 3))
    first = fmt is not None and fmt.lower() == "channels_first"
    shape = (channels, h, w) if first else (h, w, channels)
    if rank == 4:
        shape = (batch,) + shape
    dtype = _dtype(rng, ints=True)
    if dtype in INTS:
        dtype = str(rng.choice(["uint8", "int16", "int32", "uint8"]))
    size = tuple(int(v) for v in rng.integers(1, 17, size=2))
    interpolation = INTERPOLATIONS[rng.integers(len(INTERPOLATIONS))]
    options: dict[str, Any] = {"size": size if rng.random() < 0.7 else list(size), "interpolation": interpolation,
                               "antialias": bool(rng.random() < 0.5), "data_format": fmt}
    r = rng.random()
    if r < 0.25:
        options["crop_to_aspect_ratio"] = True
    elif r < 0.5:
        options["pad_to_aspect_ratio"] = True
        options["fill_value"] = float(rng.choice([0.0, 1.5, -2.0]))
    if rng.random() < 0.02:
        options["interpolation"] = "area"  # both refuse on JAX
    x = _images(rng, shape, dtype, options)
    diff = ("images",) if dtype.startswith("float") else ()
    return Config("keras.ops.image.resize", {"images": x}, options, diff)


def _images(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, options: dict[str, Any]) -> np.ndarray:
    """Random images; integer ones whose exact resample is nowhere within 1e-3 of a .5 (which float32 error
    rounds either way: a tie like those of the max pools), else nearest."""
    if dtype not in INTS:
        return rng.standard_normal(shape).astype(dtype)
    from poolspec.frontends.keras.ops import image

    info = np.iinfo(dtype)
    for _ in range(20):
        x = rng.integers(max(int(info.min), -300), min(int(info.max), 300) + 1, size=shape).astype(dtype)
        if options["interpolation"] == "nearest":
            return x
        try:
            exact = image.resize(x.astype(np.float64), **options)
        except (ValueError, TypeError):
            return x
        if not (np.abs(exact - np.floor(exact) - 0.5) < 1e-3).any():
            return x
    options["interpolation"] = "nearest"
    return x


def config(rng: np.random.Generator) -> Config:
    r = rng.random()
    if r < 0.3:
        return _resize_config(rng)
    return _pool_config(rng, POOLS[int(rng.integers(len(POOLS)))])


MODULES = {"keras.ops": lambda rng: _pool_config(rng, POOLS[int(rng.integers(len(POOLS)))]),
           "keras.ops.image": _resize_config}


# ---------------------------------------------------------------------------------------------------------- library

def _documented(options: dict[str, Any]) -> dict[str, Any]:
    """Keras-on-JAX's failing documented forms as their documented meaning (lists -> tuples, strides=None ->
    pool_size); invalid entries stay as they are so that Keras refuses them itself."""
    opts = dict(options)
    for key in ("pool_size", "strides"):
        if isinstance(opts.get(key), list):
            opts[key] = tuple(opts[key])
    if "strides" in opts and opts["strides"] is None:
        opts["strides"] = opts["pool_size"]
    return opts


def _call(config: Config) -> Any:
    keras = _keras()
    name = config.function.rpartition(".")[2]
    if config.function.startswith("keras.ops.image."):
        return lambda images: keras.ops.image.resize(images, **config.options)
    opts = _documented(config.options)
    fn = getattr(keras.ops, name)
    return lambda inputs: fn(inputs, **opts)


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    import jax
    import jax.numpy as jnp

    # one XLA compilation of the whole Keras op instead of one per eager primitive (the same arithmetic)
    fn = jax.jit(_call(config))
    (name, x), = config.arrays.items()
    try:
        if cotangents is None or not config.differentiable:
            y = fn(jnp.asarray(x))
            return [np.asarray(y)], {}
        y, vjp = jax.vjp(fn, jnp.asarray(x))
        (g,) = vjp(jnp.asarray(cotangents[0], dtype=y.dtype))
        return [np.asarray(y)], {name: np.asarray(g)}
    except Exception as e:  # Keras raises ValueError, TypeError, AttributeError, ZeroDivisionError, IndexError
        raise Refused(f"{type(e).__name__}: {e}") from None


def frontend(config: Config) -> Any:
    if config.function.startswith("keras.ops.image."):
        from poolspec.frontends.keras.ops import image

        return lambda images: image.resize(images, **config.options)
    from poolspec.frontends.keras import ops

    fn = getattr(ops, config.function.rpartition(".")[2])
    return lambda inputs: fn(inputs, **config.options)
