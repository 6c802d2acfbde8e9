"""The fast paths against the reference layer, walking the table of fast paths.

Every kernel is written as a reference (plain array-API calls, no in-place writes, no backend checks) and
asks a registered gate (``poolspec.kernels.paths.TABLE``) before taking a faster way: in-place folds and buffers,
cache blocks, a library's own call, the few-operation paths of a GPU. With every gate closed NumPy and torch
run the reference too. The walk: on every stored case, which paths open (on the CPU's paths, and on NumPy and
torch also as on a GPU); then each path alone (with the paths it lies within) against the reference on the cases
that reach it: bit for bit where the table says ``bitwise``, within the case's tolerances and bit-identical run to
run where it says ``tolerance``; and every path at once (a plain call) the same way.

Known gap: the max family's in-place fold takes ``maximum``'s result, which among equal maxima of opposite zero
sign is the backend's choice (NumPy: the second operand; torch: the second on contiguous operands, the first on
strided ones) and for NaN the backend's NaN, where the reference, like torch's kernel, keeps the winning cell's
bits; forward values of the routed ops are therefore compared with the sign of zeros and the payload of NaNs
ignored (winners and gradients stay bitwise). A second gap no stored case shows: where a cotangent holds -0.0,
the max family's in-place routes give +0.0 where the reference's may keep -0.0, and its double backward's one
gather keeps -0.0 where the reference's per-tap sum gives +0.0 (the fast paths as torch; no stored cotangent
holds -0.0).
"""

from __future__ import annotations

import ast
import importlib
import math
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import poolspec
from poolspec import registry
from poolspec.conformance import golden
from poolspec.conformance.families import family
from poolspec.kernels import paths

_CASES = [c for c in golden.cases() if c.error is None and c.reference != "torch-refuses"]
# cases per path and op held against the reference (spread over the stored ones; every case where fewer reach it)
_PER_PATH = 12
# paths that no stored case reaches, and the test that holds them instead
_UNREACHED = {
    "blocks.cache-blocks": "past 64 MiB per call: tests/test_blocking.py holds every block size bit for bit",
    "cells.scan-in-place": "a cell read more than 64 times: test_paths_on_made_cases",
    "cells.select-sync-free": "a torch plane of 65536 cells and more: test_paths_on_made_cases",
    "unpool.chunks-in-place": "repeated indices into more than 2**18 output cells: test_paths_on_made_cases",
    "fractional.near-windows": "a fractional backward given samples and no indices: test_paths_on_made_cases",
    "maxes.take-winners": "a double backward: test_paths_on_made_cases",
    "adaptive_maxes.take-winners": "a double backward: test_paths_on_made_cases",
    "max_routes.blocked-argmax": "a window of 1024 cells and more: test_paths_on_made_cases",
    "maxes.tile-reduce": "tiling windows of fewer than 32 cells over more than 4096: test_paths_on_made_cases",
    "sums.phases-in-place": "a periodic plan over more than 4096 cells: test_paths_on_made_cases",
    "fractional_max_pool.jax-loop": "JAX and a window of more than 4 cells per axis: test_paths_on_made_cases",
}


# the backends a gate of each kind can open on
_BACKENDS = {"writes": {"numpy", "torch", "cupy"}, "cpu-writes": {"numpy", "torch"},
             "launches": {"numpy", "torch", "cupy"}, "numpy": {"numpy"}, "torch": {"torch"}, "jax": {"jax"}}


def _import_all() -> list:
    modules = []
    for info in pkgutil.walk_packages(poolspec.__path__, "poolspec."):
        if not info.name.endswith(("__main__", "cli")):
            modules.append(importlib.import_module(info.name))
    return modules


_MODULES = _import_all()  # every gate is registered at import


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


def _walked(backend, case, on, launches=False):
    with paths.walk(on, launches) as w:
        out = _run(backend, case)
    return out, w.fired


def _chain(name: str) -> frozenset[str]:
    names = {name}
    while paths.TABLE[name].within is not None:
        name = paths.TABLE[name].within
        names.add(name)
    return frozenset(names)


def _same(case, got, want, exact: bool, what: str) -> None:
    assert got.keys() == want.keys(), case.name
    for key, w in want.items():
        g = got[key]
        if exact:
            if key == "output" and registry.op(case.op).kind == "routed" and g.dtype.kind == "f":
                g, w = (np.where(np.isnan(v), np.nan, v + 0.0).astype(v.dtype) for v in (g, w))
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), f"{what}: {case.name} {key}"
        else:
            scale = 1 if key in ("output", "indices") else 10  # the conformance suite's allowance for gradients
            assert g.dtype == w.dtype and np.allclose(g.astype(np.float64), w.astype(np.float64),
                                                      rtol=case.rtol * scale, atol=case.atol * scale,
                                                      equal_nan=True), f"{what}: {case.name} {key}"


def _spread(items: list, n: int) -> list:
    return items if len(items) <= n else [items[i * len(items) // n] for i in range(n)]


def test_the_table_is_consistent():
    assert paths.TABLE, "no fast path registered"
    for row in paths.TABLE.values():
        assert row.within is None or row.within in paths.TABLE, row
        assert row.exact in ("bitwise", "tolerance") and row.when, row
    assert set(_UNREACHED) <= set(paths.TABLE)


def test_the_table_is_documented():
    """docs/FASTPATHS.md is what ``python -m poolspec.kernels.paths`` writes from the table today."""
    committed = Path(__file__).resolve().parents[1] / "docs" / "FASTPATHS.md"
    assert committed.read_text() == paths.markdown(), "docs/FASTPATHS.md is stale: regenerate it"


def test_kernels_ask_the_table_not_the_backend():
    """The only choices of path in the kernels and the families are the table's gates: no module there asks
    ``writable_module`` or ``launch_bound`` itself, and no kernel asks whether an array is torch's."""
    root = Path(poolspec.__file__).parent
    banned = {"kernels": {"writable_module", "launch_bound", "is_torch_array", "AS_ON_A_GPU"},
              "families": {"writable_module", "launch_bound", "AS_ON_A_GPU"}}
    found = []
    for folder, names in banned.items():
        for path in sorted((root / folder).rglob("*.py")):
            if path.name == "paths.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("_compat"):
                    found += [f"{path.relative_to(root)}: {a.name}" for a in node.names if a.name in names]
                elif isinstance(node, ast.Attribute) and node.attr in names:
                    found.append(f"{path.relative_to(root)}: .{node.attr}")
    assert not found, found


@pytest.mark.parametrize("op", list(registry.OPS))
def test_fast_paths_match_the_reference(backend, op):
    if not any(backend.name in _BACKENDS[row.needs] for row in paths.TABLE.values() if row.name not in _UNREACHED):
        pytest.skip(f"no stored case reaches a fast path of {backend.name}")
    cases = [c for c in _CASES if c.op == op and backend.supports(c.dtype)]
    if not cases:
        pytest.skip(f"no stored case of {op} in a dtype {backend.name} has")
    gpu_like = backend.name in ("numpy", "torch")  # the backends that run a GPU's paths on the CPU
    reached: dict[str, list] = {}
    for case in cases:
        want, _ = _walked(backend, case, frozenset())
        for launches in (False, True) if gpu_like else (False,):
            got, fired = _walked(backend, case, None, launches)
            tolerant = any(paths.TABLE[n].exact == "tolerance" for n in fired)
            _same(case, got, want, not tolerant, f"every path (as on a GPU: {launches})")
            for name in fired:
                reached.setdefault(name, []).append((case, want))
    if not reached:
        pytest.skip(f"no fast path reaches {op} on {backend.name}")
    for name, hits in sorted(reached.items()):
        on = _chain(name)
        launches = any(paths.TABLE[n].needs == "launches" for n in on)
        bitwise = all(paths.TABLE[n].exact == "bitwise" for n in on)  # as the chain's least exact path
        for case, want in _spread(hits, _PER_PATH):
            got, fired = _walked(backend, case, on, launches)
            if name not in fired:
                continue  # reached only beside another path
            _same(case, got, want, bitwise, name)
            if not bitwise:
                again, _ = _walked(backend, case, on, launches)
                _same(case, again, got, True, f"{name} run to run")


def test_every_fast_path_is_reached_by_a_stored_case():
    """The walk above holds a path only where a stored case reaches it: each one does, on NumPy or torch (as
    on the CPU or as on a GPU), or is named in ``_UNREACHED`` with the test that holds it (the walk's fired paths
    are recorded the same way on every case, so this is the walk's own reach)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from backends import ALL, available

    usable = available()
    fired: set[str] = set()
    for name in ("numpy", "torch"):
        if usable[name] is not None:
            continue
        backend = ALL[name]
        for case in _CASES:
            if backend.supports(case.dtype):
                for launches in (False, True):
                    fired |= _walked(backend, case, None, launches)[1]
    missing = set(paths.TABLE) - fired - set(_UNREACHED)
    assert not missing, sorted(missing)


def _made_cases(backend):
    """Calls that reach the paths no stored case reaches (``_UNREACHED``): (label, call returning arrays, paths
    it must reach on this backend)."""
    from poolspec.kernels.cells import Cells
    from poolspec.kernels.unpool import Unpool

    rng = np.random.default_rng(0)
    a = backend.asarray
    P, K = 300, 2000
    idx = rng.integers(0, P, (2, 1, K))
    idx[:, :, :200] = 5  # one cell read 200+ times: the doubling scan
    idx[0, 0, 7] = P  # one read outside
    g = rng.standard_normal((2, 3, K))
    plane = rng.standard_normal((4, 4, 1 << 14))
    reads = rng.integers(0, 1 << 14, (4, 1, 300))
    u = Unpool((64, 64), (128, 128))
    ui = rng.integers(0, 128 * 128, (4, 5, 64, 64))  # repeats: the placed path declines
    ux = rng.standard_normal((4, 5, 64, 64))
    fx = rng.standard_normal((2, 3, 11, 13))
    samples = rng.uniform(0, 1, (2, 3, 2))
    fg = rng.standard_normal((2, 3, 5, 6))
    big = rng.standard_normal((1, 2, 128, 128))

    draws = rng.standard_normal(1 << 15)  # cotangents: the same on every run of a call

    def max_both(x, **kw):
        y, i = poolspec.max_pool2d(a(x), return_indices=True, **kw)
        gy = a(draws[:math.prod(y.shape)].reshape(tuple(y.shape)))
        return y, i, poolspec.max_pool2d_backward(gy, a(x), indices=i, **kw)

    def double(fn, x):
        import torch

        t = a(x).requires_grad_(True)
        y = fn(t)
        gy = torch.ones_like(y, requires_grad=True)
        (gx,) = torch.autograd.grad(y, t, gy, create_graph=True)
        return torch.autograd.grad(gx, gy, a(draws[:x.size].reshape(x.shape)))

    def fresh_jax(call):  # a jitted program keeps the paths of its first trace: trace again under each walk
        import jax

        jax.clear_caches()
        return call()

    made = [
        ("route of a hot cell", lambda: (Cells(P, K).route(a(g), a(idx)),), {"cells.scan-in-place"}),
        ("unpool with repeats", lambda: (u.route(a(ux), a(ui)),), {"unpool.chunks-in-place"}),
        ("fractional backward from samples", lambda: (poolspec.fractional_max_pool2d_backward(
            a(fg), a(fx), 3, output_size=(5, 6), _random_samples=a(samples)),), {"fractional.near-windows"}),
        ("windows of 1024 cells", lambda: max_both(big[:, :, :64, :64], kernel_size=32),
         {"max_routes.blocked-argmax"}),
        ("2x2 tiles over 32768 cells", lambda: max_both(big, kernel_size=2), {"maxes.tile-reduce"}),
        ("bilinear x2 of a 64x64 plane", lambda: (poolspec.interpolate(
            a(big[:, :, :64, :64]), scale_factor=2, mode="bilinear"),), {"sums.phases-in-place"}),
    ]
    if backend.name == "torch":
        made += [
            ("select from a large plane", lambda: (Cells(1 << 14, 300).select(a(plane), a(reads)),),
             {"cells.select-sync-free"}),
            ("max pool double backward", lambda: double(lambda t: poolspec.max_pool2d(t, 2), big[:, :, :6, :6]),
             {"maxes.take-winners"}),
            ("adaptive max double backward", lambda: double(lambda t: poolspec.adaptive_max_pool2d(t, 3),
                                                            big[:, :, :7, :7]), {"adaptive_maxes.take-winners"}),
        ]
    if backend.name == "jax":
        made = [("fractional window of 5x5 on JAX", lambda: fresh_jax(lambda: poolspec.fractional_max_pool2d(
            a(big[:, :, :23, :23]), 5, output_size=(4, 4), return_indices=True, _random_samples=a(samples[:1, :2]))),
            {"fractional_max_pool.jax-loop"})]
    return made


def test_paths_on_made_cases(backend):
    """The paths no stored case reaches, on calls made to reach them: each path of the call alone against the
    reference, as the walk above holds the others."""
    if backend.name not in ("numpy", "torch", "jax"):
        pytest.skip("the made cases reach paths of NumPy, torch and JAX")
    reached: set[str] = set()
    wanted: set[str] = set()
    for label, call, names in _made_cases(backend):
        wanted |= names
        with paths.walk(frozenset()):
            want = [backend.to_numpy(v) for v in call()]
        fired: set[str] = set()
        for launches in (False, True):
            with paths.walk(None, launches) as w:
                call()
            fired |= w.fired
        for name in sorted(fired):
            on = _chain(name)
            launches = any(paths.TABLE[n].needs == "launches" for n in on)
            with paths.walk(on, launches) as w:
                got = [backend.to_numpy(v) for v in call()]
            if name not in w.fired:
                continue
            reached.add(name)
            for gv, wv in zip(got, want):
                if all(paths.TABLE[n].exact == "bitwise" for n in on):
                    gv, wv = (np.where(np.isnan(v), np.nan, v + 0) if v.dtype.kind == "f" else v for v in (gv, wv))
                    assert gv.tobytes() == wv.tobytes(), f"{name}: {label}"
                else:
                    assert np.allclose(gv, wv, rtol=1e-12, atol=1e-12), f"{name}: {label}"
    assert wanted <= reached, sorted(wanted - reached)
