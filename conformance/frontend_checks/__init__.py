"""Random configurations of each front-end against the live library it mirrors.

One module per library (``jax``, ``flax``, ``keras``, ``tensorflow``, ``onnxruntime``, ``onnx_reference``,
``torchvision``, ``scipy``), each
with:

- ``LIBRARY`` (its pip name), ``available() -> str | None`` (None, or why it cannot run here) and
  ``version() -> str``;
- ``config(rng) -> Config``: one random configuration (arrays as NumPy, the library's options);
- ``library(config, cotangents) -> (outputs, gradients)``: the live library's outputs (NumPy arrays) and, where
  ``config.differentiable`` names arrays and the library has gradients, its vector-Jacobian products for the
  given cotangents (one per floating output); raises :class:`Refused` where the library rejects the call;
- ``frontend(config) -> callable``: the poolspec front-end function bound to the options, taking the arrays;
- optionally ``DEDICATED`` (function -> generator of that function's configurations: ``check_frontends.py
  --per-function``) and ``REGRESSIONS`` (fixed calls at upstream bug reports, stored with every ``--store``: dicts
  ``{"id", "config": () -> Config, "flags", "upstream"}``);
- optionally ``GRADIENTS`` (the backends whose gradients are compared; default torch and JAX) and
  ``SCHEDULE(i) -> backend names`` (the backends configuration ``i`` of a run is checked on; default: one, in
  turn).

:func:`check` runs one configuration on one backend; ``conformance/check_frontends.py`` runs thousands and
writes ``conformance/results/frontends/<library>.json``; ``tests/test_frontends.py`` runs a few per backend.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poolspec.conformance.conventions import close, vjp

LIBRARIES = ("jax", "flax", "keras", "tensorflow", "onnxruntime", "onnx_reference", "torchvision", "scipy")


class Refused(Exception):
    """The library rejected the configuration."""


@dataclass
class Config:
    function: str  # the path under poolspec.frontends, e.g. "tf.nn.max_pool2d"
    arrays: dict[str, np.ndarray]  # the array arguments in call order
    options: dict[str, Any] = field(default_factory=dict)
    differentiable: tuple[str, ...] = ()  # the arrays whose gradients are compared
    rtol: float | None = None  # None: the dtype's default below
    atol: float | None = None

    def describe(self) -> str:
        shapes = {k: (tuple(v.shape), str(v.dtype)) for k, v in self.arrays.items()}
        return f"{self.function}({shapes}, {self.options})"


TOLERANCE = {"float64": (1e-12, 1e-12), "float32": (2e-5, 2e-6), "float16": (2e-2, 2e-3)}


def load(library: str) -> Any:
    return importlib.import_module(f"conformance.frontend_checks.{library}")


@dataclass
class Outcome:
    status: str  # passed, failed, both_refuse, library_refuses, poolspec_refuses, skipped (dtype)
    detail: str = ""
    gradient_checked: bool = False
    max_err: float = 0.0


def _grads(backend: Any, fn: Callable[..., Any], arrays: list[Any], names: list[str], wrt: tuple[str, ...],
           cotangents: list[np.ndarray]) -> dict[str, np.ndarray]:
    """poolspec's VJP through the backend's own autodiff (torch autograd, jax.vjp)."""
    got = vjp(backend.name, fn, arrays, [names.index(n) for n in wrt], cotangents)
    return dict(zip(wrt, got))


def check(module: Any, config: Config, backend: Any, rng: np.random.Generator) -> Outcome:
    """One configuration on one backend (``backend.asarray``, ``backend.to_numpy``, ``backend.name``):
    forward values (and index outputs) always, gradients on torch and JAX where the library has them."""
    first = next(iter(config.arrays.values()))
    dtype = str(first.dtype)
    try:  # the front-ends take every dtype the array library holds (uint16 to uint64 and bool included)
        backend.asarray(first)
    except (TypeError, ValueError) as e:
        return Outcome("skipped", f"{backend.name} has no {dtype} ({e})")
    try:
        want, _ = module.library(config, None)
        library_refused = None
    except Refused as e:
        want, library_refused = None, str(e)
    names = list(config.arrays)
    try:
        fn = module.frontend(config)
        arrays = [backend.asarray(a) for a in config.arrays.values()]
        got = fn(*arrays)
        got = list(got) if isinstance(got, tuple) else [got]
        got_np = [backend.to_numpy(g) for g in got]
        poolspec_refused = None
    except (ValueError, TypeError) as e:
        poolspec_refused = f"{type(e).__name__}: {e}"
    if library_refused is not None:
        if poolspec_refused is not None:
            return Outcome("both_refuse", f"library: {library_refused[:200]} | poolspec: {poolspec_refused[:200]}")
        return Outcome("library_refuses", library_refused[:300])
    if poolspec_refused is not None:
        return Outcome("poolspec_refuses", poolspec_refused[:300])
    assert want is not None
    if len(got_np) != len(want):
        return Outcome("failed", f"{len(got_np)} outputs, the library gives {len(want)}")
    rtol, atol = TOLERANCE.get(dtype, TOLERANCE["float32"])
    rtol, atol = config.rtol or rtol, config.atol or atol
    worst = 0.0
    for i, (g, w) in enumerate(zip(got_np, want)):
        if str(g.dtype) != str(w.dtype) and not (g.dtype.kind == w.dtype.kind == "i"):
            return Outcome("failed", f"output {i}: dtype {g.dtype}, the library gives {w.dtype}")
        ok, err = close(g, w, rtol, atol)
        worst = max(worst, err)
        if not ok:
            return Outcome("failed", f"output {i}: shape {g.shape} vs {w.shape}, max error {err:.3g}", max_err=err)
    if not config.differentiable or backend.name not in getattr(module, "GRADIENTS", ("torch", "jax")):
        return Outcome("passed", max_err=worst)
    cotangents = [rng.standard_normal(w.shape).astype(w.dtype) for w in want if w.dtype.kind == "f"]
    try:
        _, want_grads = module.library(config, cotangents)
    except Refused:
        return Outcome("passed", max_err=worst)
    if not want_grads:
        return Outcome("passed", max_err=worst)
    got_grads = _grads(backend, fn, arrays, names, tuple(want_grads), cotangents)
    for name, w in want_grads.items():
        ok, err = close(got_grads[name].astype(w.dtype), w, rtol * 10, atol * 10)
        worst = max(worst, err)
        if not ok:
            return Outcome("failed", f"gradient of {name}: max error {err:.3g}", True, err)
    return Outcome("passed", gradient_checked=True, max_err=worst)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _replays(config: Config, options: dict[str, Any]) -> bool:
    """Whether the plain call ``fn(*arrays, **options)`` (what a stored case replays) runs: a check module's
    ``frontend`` may translate its options first (a library's enum for a string)."""
    from poolspec.conformance.golden import decode, encode

    module, _, name = config.function.rpartition(".")
    try:
        fn = getattr(importlib.import_module(f"poolspec.frontends.{module}"), name)
        fn(*config.arrays.values(), **{k: decode(v) for k, v in encode(options).items()})
    except (ValueError, TypeError, AttributeError, ImportError):
        return False
    return True


def _entry(module: Any, name: str, config: Config, rng: np.random.Generator, entries: list[dict[str, Any]],
           arrays: dict[str, np.ndarray], extra: dict[str, Any] | None = None) -> bool:
    """Append the stored case ``name`` of ``config`` (the library's outputs, cotangents and gradients); False where
    the library refuses it."""
    from poolspec.conformance.golden import encode

    options = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in config.options.items()}
    try:
        outputs, _ = module.library(config, None)
        cotangents = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs if o.dtype.kind == "f"]
        grads = module.library(config, cotangents)[1] if config.differentiable else {}
    except Refused:
        return False
    dtype = str(next(iter(config.arrays.values())).dtype)
    rtol, atol = TOLERANCE.get(dtype, TOLERANCE["float32"])
    entries.append({"id": name, "library": module.LIBRARY, "version": module.version(),
                    "function": config.function, "options": encode(options),
                    "inputs": list(config.arrays), "outputs": len(outputs),
                    "differentiable": list(grads), "rtol": config.rtol or rtol, "atol": config.atol or atol,
                    **(extra or {})})
    for k, v in config.arrays.items():
        arrays[f"{name}/{k}"] = np.ascontiguousarray(v)
    for i, o in enumerate(outputs):
        arrays[f"{name}/output{i}"] = np.ascontiguousarray(o)
    if grads:
        for i, c in enumerate(cotangents):
            arrays[f"{name}/cotangent{i}"] = c
        for k, g in grads.items():
            arrays[f"{name}/grad_{k}"] = np.ascontiguousarray(g)
    return True


def regressions(module: Any, backend: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The check module's ``REGRESSIONS`` as stored cases (with their flags and upstream reports); each must pass
    on ``backend`` and replay as a plain call."""
    entries: list[dict[str, Any]] = []
    arrays: dict[str, np.ndarray] = {}
    rng = np.random.default_rng(0)
    for r in getattr(module, "REGRESSIONS", []):
        config = r["config"]()
        options = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in config.options.items()}
        outcome = check(module, config, backend, rng)
        if outcome.status != "passed" or not _replays(config, options):
            raise AssertionError(f"regression case {r['id']}: {outcome.status} {outcome.detail}")
        if not _entry(module, r["id"], config, rng, entries, arrays, {"flags": r["flags"], "upstream": r["upstream"]}):
            raise AssertionError(f"regression case {r['id']}: the library refuses it")
    return entries, arrays


def store(module: Any, per_function: int, seed: int, backend: Any) -> tuple[list[dict[str, Any]], dict[str, Any],
                                                                          Counter[str]]:
    """Up to ``per_function`` stored cases per front-end function: random configurations the library accepts,
    whose front-end call is ``fn(*arrays, **options)`` with JSON options and which pass on ``backend`` (NumPy);
    the library's outputs, cotangents and gradients; then the module's REGRESSIONS. Returns (manifest entries,
    arrays, counts per function)."""
    from poolspec.conformance.golden import encode

    rng = np.random.default_rng(seed)
    entries: list[dict[str, Any]] = []
    arrays: dict[str, np.ndarray] = {}
    counts: Counter[str] = Counter()
    tries = 0
    while tries < 200 * per_function and (not counts or min(counts.values()) < per_function or tries < 50):
        tries += 1
        config = module.config(rng)
        # host arrays among the options (ONNX Resize's scales, sizes, roi) are stored as lists
        options = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in config.options.items()}
        if counts[config.function] >= per_function or not _jsonable(encode(options)):
            continue
        if check(module, config, backend, rng).status != "passed" or not _replays(config, options):
            continue
        if not _entry(module, f"{config.function}-{counts[config.function]:03d}", config, rng, entries, arrays):
            continue
        counts[config.function] += 1
    more, more_arrays = regressions(module, backend)
    entries += more
    arrays.update(more_arrays)
    return entries, arrays, counts
