"""Stored cases of other libraries' conventions: the front-ends (``poolspec.frontends``) on inputs whose
outputs and gradients were computed by the live library itself (TensorFlow, Keras, JAX, Flax, ONNX runtimes).

Written by ``python conformance/check_frontends.py --store`` in each library's venv; read here with NumPy alone.
``run`` replays them on a backend: forward values and index outputs, and on torch and JAX the gradients (the
backend's autodiff through the front-end) against the library's own.

>>> from poolspec.conformance import conventions
>>> conventions.run("numpy", libraries=["jax"]).failed
0
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .backends import Backend
from .golden import decode, write_npz

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Convention:
    """One stored case: ``function`` (path under poolspec.frontends) called as ``fn(*arrays, **options)``."""

    name: str
    library: str
    version: str
    function: str
    options: dict[str, Any]
    inputs: tuple[str, ...]
    outputs: int
    differentiable: tuple[str, ...]
    rtol: float
    atol: float

    def arrays(self) -> dict[str, np.ndarray]:
        store = _store(self.library)
        return {k[len(self.name) + 1:]: store[k] for k in store.files if k.startswith(self.name + "/")}

    def call(self, *arrays: Any) -> Any:
        module, _, fn = self.function.rpartition(".")
        return getattr(importlib.import_module(f"poolspec.frontends.{module}"), fn)(*arrays, **self.options)


def conventions_dir() -> Path:
    return Path(str(resources.files("poolspec").joinpath("data/conventions")))


@lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    path = conventions_dir() / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"cases": []}


def cases(libraries: list[str] | None = None) -> list[Convention]:
    """The stored cases, all or those of ``libraries``."""
    return [Convention(c["id"], c["library"], c["version"], c["function"],
                       {k: decode(v) for k, v in c["options"].items()}, tuple(c["inputs"]), c["outputs"],
                       tuple(c["differentiable"]), c["rtol"], c["atol"])
            for c in manifest()["cases"] if libraries is None or c["library"] in libraries]


@lru_cache(maxsize=16)
def _store(library: str) -> Any:
    return np.load(conventions_dir() / f"{library}.npz", allow_pickle=False)


def write(library: str, entries: list[dict[str, Any]], arrays: dict[str, np.ndarray], out: Path | None = None) -> None:
    """Replace ``library``'s cases in the store by ``entries`` (manifest records) and ``arrays``."""
    out = out or conventions_dir()
    out.mkdir(parents=True, exist_ok=True)
    path = out / MANIFEST
    old = json.loads(path.read_text(encoding="utf-8"))["cases"] if path.exists() else []
    kept = [c for c in old if c["library"] != library] + entries
    kept.sort(key=lambda c: (c["library"], c["id"]))
    path.write_text(json.dumps({"cases": kept}, indent=1) + "\n", encoding="utf-8")
    write_npz(out / f"{library}.npz", arrays)


def vjp(backend: str, fn: Any, arrays: list[Any], wrt: list[int], cotangents: list[np.ndarray]) -> list[np.ndarray]:
    """The gradients of ``fn(*arrays)``'s floating outputs w.r.t. ``arrays[i]`` for ``i`` in ``wrt``, for the
    given cotangents, through the backend's own autodiff (torch autograd, ``jax.vjp``)."""
    if backend == "torch":
        import torch

        inputs = [a.detach().requires_grad_(True) if i in wrt else a for i, a in enumerate(arrays)]
        outs = fn(*inputs)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        floats = [o for o in outs if o.dtype.is_floating_point]
        # an empty output may be a fresh array, outside the graph: its cotangent contributes nothing
        pairs = [(o, torch.from_numpy(np.asarray(c)).to(o.dtype)) for o, c in zip(floats, cotangents)
                 if o.requires_grad]
        if not pairs:
            return [np.zeros(tuple(arrays[i].shape)) for i in wrt]
        got = torch.autograd.grad([o for o, _ in pairs], [inputs[i] for i in wrt], [c for _, c in pairs],
                                  allow_unused=True)
        return [np.zeros(tuple(arrays[i].shape)) if g is None else g.detach().numpy() for i, g in zip(wrt, got)]
    import jax

    def partial(*diff: Any) -> Any:
        full = list(arrays)
        for i, a in zip(wrt, diff):
            full[i] = a
        outs = fn(*full)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        return [o for o in outs if jax.numpy.issubdtype(o.dtype, jax.numpy.inexact)]

    outs, pullback = jax.vjp(partial, *[arrays[i] for i in wrt])
    return [np.asarray(g) for g in pullback([jax.numpy.asarray(c, dtype=o.dtype) for o, c in zip(outs, cotangents)])]


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple[bool, float]:
    """Equal shapes, and values within the tolerances (integers exactly; NaN where the reference has NaN)."""
    if got.shape != want.shape:
        return False, float("inf")
    if want.dtype.kind in "iub":
        same = bool(np.array_equal(got, want))
        return same, 0.0 if same else float("inf")
    g, w = got.astype(np.float64), want.astype(np.float64)
    both = ~np.isnan(w) & ~np.isnan(g)
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        err = np.abs(g - w)[both]
    worst = float(np.where(np.isfinite(err), err, 0).max()) if err.size else 0.0
    ok = bool((np.isnan(g) == np.isnan(w)).all() and np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    return ok, worst


@dataclass
class ConventionReport:
    backend: str
    results: list[tuple[str, str, str]] = field(default_factory=list)  # (case, status, detail)

    @property
    def failed(self) -> int:
        return sum(s == "failed" for _, s, _ in self.results)

    def counts(self) -> dict[str, int]:
        return dict(Counter(s for _, s, _ in self.results))


def check_case(case: Convention, backend: Backend) -> tuple[str, str]:
    """(status, detail) of one stored case on ``backend``: passed, failed or skipped."""
    stored = case.arrays()
    dtype = str(stored[case.inputs[0]].dtype)
    if not backend.supports(dtype):
        return "skipped", f"{backend.name} has no {dtype}"
    arrays = [backend.asarray(stored[n]) for n in case.inputs]
    try:
        got = case.call(*arrays)
    except (ValueError, TypeError) as e:
        return "failed", f"raised {type(e).__name__}: {e}"
    got = list(got) if isinstance(got, tuple) else [got]
    if len(got) != case.outputs:
        return "failed", f"{len(got)} outputs, the library gives {case.outputs}"
    for i, g in enumerate(got):
        ok, err = close(backend.to_numpy(g), stored[f"output{i}"], case.rtol, case.atol)
        if not ok:
            return "failed", f"output {i}: max error {err:.3g}"
    if not case.differentiable or backend.autodiff not in ("torch", "jax"):
        return "passed", ""
    cots = [stored[k] for k in sorted(k for k in stored if k.startswith("cotangent"))]
    wrt = [case.inputs.index(n) for n in case.differentiable]
    grads = vjp(backend.autodiff, case.call, arrays, wrt, cots)
    for n, g in zip(case.differentiable, grads):
        ok, err = close(np.asarray(g).astype(stored[f"grad_{n}"].dtype), stored[f"grad_{n}"], case.rtol * 10,
                        case.atol * 10)
        if not ok:
            return "failed", f"gradient of {n}: max error {err:.3g}"
    return "passed", "with gradients"


def run(backend: str = "numpy", libraries: list[str] | None = None, device: str | None = None) -> ConventionReport:
    """Replay the stored cases of ``libraries`` (all if None) on ``backend``."""
    b = Backend(backend, device)
    report = ConventionReport(backend)
    for case in cases(libraries):
        status, detail = check_case(case, b)
        report.results.append((case.name, status, detail))
    return report
