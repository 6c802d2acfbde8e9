"""The fast paths against the reference path, bit for bit.

Every kernel has a functional path (no in-place writes, no blocks: what JAX, Dask and array-api-strict
run) and, on backends that write in place (NumPy, CuPy, torch outside autograd), faster paths (in-place
folds, class buffers, cache blocks). With ``writable_module`` answering None everywhere, NumPy and torch run
the functional path too; every stored case of every op must then give the same bits: values, winners,
gradients. (The blocking test does the same for blocks of every size; the few-operation paths of a GPU, whose
sums run in the backend's order, are held to the stored cases' tolerances and to bit-identical repeats by
tests/test_conformance.py.)

Known gap: the max family's in-place fold takes ``maximum``'s result, which among equal maxima of opposite
zero sign is the backend's choice (NumPy: the second operand; torch: the second on contiguous operands, the
first on strided ones) and for NaN the backend's NaN,
where the functional path, like torch's kernel, keeps the winning cell's bits; forward values of the routed
ops are therefore compared with the sign of zeros and the payload of NaNs ignored (winners and gradients
stay bitwise).
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import poolspec
from poolspec import _compat, registry
from poolspec.conformance import golden
from poolspec.conformance.families import family


def _kernel_modules() -> list:
    """Every poolspec module that asks ``writable_module`` (imported by name or through ``_compat``): patching
    it in each sends the whole library down the reference path."""
    found = [_compat]
    for info in pkgutil.walk_packages(poolspec.__path__, "poolspec."):
        if ".frontends" in info.name or ".conformance" in info.name or info.name.endswith(("__main__", "cli")):
            continue
        module = importlib.import_module(info.name)
        if module is not _compat and getattr(module, "writable_module", None) is _compat.writable_module:
            found.append(module)
    return found


_KERNELS = tuple(_kernel_modules())
_CASES = [c for c in golden.cases() if c.error is None and c.reference != "torch-refuses"]


def _run(backend, case):
    a = case.arrays()
    fam = family(case.op)
    d = registry.op(case.op)
    arrays = {p: backend.asarray(a[p], case.dtype if p != "indices" else None) for p in fam.ports if p in a}
    args = dict(case.arguments)
    y, idx = fam.forward(d.forward, args, arrays)
    out = {"output": backend.to_numpy(y)}
    if idx is not None:
        out["indices"] = backend.to_numpy(idx)
    if "grad_output" in a:
        g = backend.asarray(a["grad_output"], case.dtype)
        grads = fam.backward(d.backward, g, args, arrays, idx, True)
        out.update({f"grad_{p}": backend.to_numpy(t) for p, t in zip(fam.differentiable, grads)})
    return out


def test_every_module_that_chooses_a_path_is_patched():
    names = {m.__name__ for m in _KERNELS}
    assert {"poolspec.kernels.max_routes", "poolspec.kernels.maxes", "poolspec.kernels.sums",
            "poolspec.kernels.cells", "poolspec.kernels.unpool", "poolspec.kernels.blocks"} <= names, names


@pytest.mark.parametrize("op", list(registry.OPS))
def test_fast_paths_match_the_reference_path(backend, monkeypatch, op):
    if _compat.writable_module(backend.asarray(np.zeros(1))) is None:
        pytest.skip(f"{backend.name} takes the reference path already")
    cases = [c for c in _CASES if c.op == op and backend.supports(c.dtype)]
    if not cases:
        pytest.skip(f"no stored case of {op} in a dtype {backend.name} has")
    fast = [_run(backend, c) for c in cases]
    for m in _KERNELS:
        monkeypatch.setattr(m, "writable_module", lambda x: None)
    for case, got in zip(cases, fast):
        want = _run(backend, case)
        assert got.keys() == want.keys(), case.name
        for key, w in want.items():
            g = got[key]
            if key == "output" and registry.op(op).kind == "routed" and g.dtype.kind == "f":
                # the known gap above: -0.0 + 0.0 is +0.0, every NaN the same NaN
                g, w = (np.where(np.isnan(v), np.nan, v + 0.0).astype(v.dtype) for v in (g, w))
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), f"{case.name} {key}"
