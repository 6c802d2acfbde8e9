"""``poolspec.frontends.flax.linen`` against flax.linen's pooling functions and jax.vjp."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "flax"

_FUNCTIONS = ("flax.linen.max_pool", "flax.linen.avg_pool", "flax.linen.min_pool", "flax.linen.pool")


def available() -> str | None:
    try:
        import flax.linen  # noqa: F401
    except ImportError:
        return "flax is not installed"
    return None


def version() -> str:
    import flax

    return str(flax.__version__)


def _padding(rng: np.random.Generator, window: tuple[int, ...], batch: int) -> Any:
    r = rng.random()
    if batch > 1 and rng.random() < 0.8:
        r *= 0.45  # flax refuses (low, high) pairs with more than one batch axis: mostly strings there
    if r < 0.2:
        return "VALID"
    if r < 0.4:
        return "SAME"
    if r < 0.45:
        return str(rng.choice(["same", "valid", "SAME_LOWER"]))
    pads = []
    for k in window:
        def one(k: int = k) -> int:
            u = rng.random()
            if u < 0.08 and max(window) > 1:
                # crops (XLA aborts the process on a negative pad when every window size is 1: its simplifier
                # rewrites that reduce_window to an elementwise max of the wrong shape)
                return -1
            if u < 0.25:
                return int(rng.integers(k, k + 3))  # beyond the window: windows wholly in the padding
            return int(rng.integers(0, k))
        pads.append((one(), one()))
    return tuple(pads)


def _inputs(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    r = rng.random()
    if r < 0.45:
        return rng.standard_normal(shape)
    if r < 0.82:
        return rng.standard_normal(shape).astype(np.float32)
    if r < 0.88:
        # distinct values: no ties in float16
        return (rng.permutation(int(np.prod(shape))).reshape(shape) / 64.0 - 4).astype(np.float16)
    if kind in ("avg", "add"):
        dtype = str(rng.choice(["int32", "int64"]))
        return rng.integers(-50, 50, shape).astype(dtype)
    dtype = str(rng.choice(["int8", "uint8", "int32", "int64", "bool"]))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.integers(0 if dtype == "uint8" else -100, 100, shape).astype(dtype)


def config(rng: np.random.Generator) -> Config:
    function = str(rng.choice(_FUNCTIONS, p=[0.3, 0.35, 0.15, 0.2]))
    kind = {"flax.linen.max_pool": "max", "flax.linen.avg_pool": "avg", "flax.linen.min_pool": "min"}.get(
        function, str(rng.choice(["max", "add", "min"])))
    n = int(rng.choice([1, 2, 2, 3, 3, 4], p=[0.2, 0.2, 0.2, 0.15, 0.15, 0.1]))
    batch = int(rng.choice([0, 1, 2], p=[0.15, 0.7, 0.15]))
    spatial = tuple(int(v) for v in rng.integers(1, 8 if n < 4 else 5, n))
    shape = tuple(int(v) for v in rng.integers(1, 4, batch)) + spatial + (int(rng.integers(1, 4)),)
    window = tuple(int(rng.integers(1, min(L + 1, 4) + (rng.random() < 0.1))) for L in spatial)
    strides = None if rng.random() < 0.3 else tuple(int(v) for v in rng.integers(1, 4, n))
    options: dict[str, Any] = {"window_shape": window, "strides": strides, "padding": _padding(rng, window, batch)}
    if kind == "avg":
        options["count_include_pad"] = bool(rng.random() < 0.5)
    if function == "flax.linen.pool":
        options["reduce_fn"] = kind
        options["init"] = {"max": -np.inf, "add": 0.0, "min": np.inf}[kind]
    x = _inputs(rng, shape, kind)
    diff = ("inputs",) if x.dtype in (np.float32, np.float64) else ()
    return Config(function, {"inputs": x}, options, differentiable=diff)


def _call(module: Any, lax: Any, config: Config, x: Any) -> Any:
    o = config.options
    if config.function == "flax.linen.pool":
        fn = {"max": lax.max, "add": lax.add, "min": lax.min}[o["reduce_fn"]]
        return module.pool(x, o["init"], fn, o["window_shape"], o["strides"], o["padding"])
    name = config.function.rsplit(".", 1)[-1]
    f = getattr(module, name)
    kw = {"count_include_pad": o["count_include_pad"]} if "count_include_pad" in o else {}
    return f(x, o["window_shape"], o["strides"], o["padding"], **kw)


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    import jax
    import jax.numpy as jnp
    from flax.linen import pooling
    from jax import lax

    x = jnp.asarray(config.arrays["inputs"])
    try:
        y = _call(pooling, lax, config, x)
    except (ValueError, TypeError, AssertionError, RuntimeError) as e:
        raise Refused(f"{type(e).__name__}: {e}") from None
    # flax's avg_pool(count_include_pad=False) divides by a pool of jnp.ones() in JAX's default float dtype,
    # so a float32/float16 result comes back float64 under jax_enable_x64 (a difference on the card): compare
    # in the input's dtype
    cast = config.function == "flax.linen.avg_pool" and x.dtype in (jnp.float16, jnp.float32) and y.dtype != x.dtype
    out = np.asarray(y.astype(x.dtype) if cast else y)
    if cotangents is None or not config.differentiable:
        return [out], {}
    try:
        _, vjp = jax.vjp(lambda v: _call(pooling, lax, config, v), x)
        (g,) = vjp(jnp.asarray(cotangents[0], dtype=y.dtype))
    except (TypeError, ValueError):
        # jax's max-pool VJP (select_and_scatter_add) refuses negative padding: values only
        return [out], {}
    return [out], {"inputs": np.asarray(g)}


def frontend(config: Config) -> Any:
    from poolspec.frontends.flax import linen

    def call(x: Any) -> Any:
        if config.function == "flax.linen.pool":
            from jax import lax

            return _call(linen, lax, config, x)
        return _call(linen, None, config, x)

    return call
