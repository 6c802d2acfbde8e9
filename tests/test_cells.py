"""kernels.cells.Cells: the gather at data-dependent cells and its scatter-free transpose, on their own.

``route`` against a sequential NumPy ``np.add.at`` on random index sets (duplicates, the outside sentinel,
empty planes, index rows shared by channels or one per plane), in each of its regimes: the match of tiny
planes, the rank-by-rank sums (both layouts), the doubling scan of cells read often, and the traced scan
inside ``jax.jit``; bit-identical repeats, a plane alone against the whole call, and the adjointness of
``select`` and ``route``."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from poolspec.kernels import cells as cells_mod
from poolspec.kernels.cells import Cells

from backends import ALL, available

_AVAILABLE = available()
BACKENDS = ["numpy", "torch", "jax", "array_api_strict"]


def _backend(name: str):
    if _AVAILABLE[name] is not None:
        pytest.skip(_AVAILABLE[name])
    return ALL[name]


def reference(g: np.ndarray, idx: np.ndarray, P: int) -> np.ndarray:
    """Each cell the sequential sum (in the order of idx, from 0) of the g that read it: np.add.at."""
    lead = np.broadcast_shapes(g.shape[:-1], idx.shape[:-1])
    g = np.broadcast_to(g, lead + g.shape[-1:])
    idx = np.broadcast_to(idx, lead + idx.shape[-1:])
    out = np.zeros(lead + (P + 1,), g.dtype)
    for at in np.ndindex(*lead):
        np.add.at(out[at], idx[at], g[at])
    return out[..., :P]


def _indices(rng: np.random.Generator, shape: tuple[int, ...], P: int, kind: str) -> np.ndarray:
    K = shape[-1]
    if kind == "uniform":  # every cell read a few times
        idx = rng.integers(0, P, shape)
    elif kind == "sentinel":  # a third outside
        idx = rng.integers(0, P, shape)
        idx[rng.random(shape) < 0.33] = P
    elif kind == "uneven":  # a few cells read ~20 times, most once or never
        idx = np.where(rng.random(shape) < 0.5, rng.integers(0, 4, shape), rng.integers(0, P + 1, shape))
    elif kind == "hot":  # cells read far more than _RANKS times next to cells read a few times
        idx = np.where(rng.random(shape) < 0.7, rng.integers(0, 2, shape), rng.integers(0, P + 1, shape))
    elif kind == "outside":  # no read inside the plane
        idx = np.full(shape, P)
    elif kind == "one-hot-row":  # rows differ: one row all on cell 0, the other spread out
        idx = rng.integers(0, P, shape)
        idx[0] = 0
    else:
        raise AssertionError(kind)
    assert idx.shape[-1] == K
    return idx.astype(np.int64)


# (P, K, kind): the regimes, with P * K past the match of tiny planes except the first two
CASES = [
    (4, 16, "uniform"),  # match
    (16, 64, "sentinel"),  # match
    (40, 300, "uniform"),  # ranks, dense layout
    (60, 500, "sentinel"),
    (300, 400, "uneven"),  # ranks, by count
    (50, 800, "hot"),  # scan for the hot cells, ranks for the rest
    (30, 200, "outside"),
    (70, 700, "one-hot-row"),
]
SHAPES = {"shared": ((2, 3), (2, 1)), "per-plane": ((2, 3), (2, 3)), "g-broadcast": ((2, 1), (2, 3))}


def _run(backend, P: int, K: int, g: np.ndarray, idx: np.ndarray, jit: bool = False) -> np.ndarray:
    c = Cells(P, K)
    gb, ib = backend.asarray(g), backend.asarray(idx)
    if jit:
        import jax

        return backend.to_numpy(jax.jit(c.route)(gb, ib))
    return backend.to_numpy(c.route(gb, ib))


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("P,K,kind", CASES)
@pytest.mark.parametrize("shapes", list(SHAPES))
def test_route_is_np_add_at(name: str, P: int, K: int, kind: str, shapes: str) -> None:
    """Bit for bit where a cell's reads are added one by one (the ranks: NumPy, torch, array-api-strict);
    within a few ulps where the scan, the match's sum or the traced scan sums them in another order."""
    backend = _backend(name)
    rng = np.random.default_rng(P * 1000 + K)
    g_lead, i_lead = SHAPES[shapes]
    idx = _indices(rng, i_lead + (K,), P, kind)
    g = rng.standard_normal(g_lead + (K,))
    want = reference(g, idx, P)
    runs = [_run(backend, P, K, g, idx, jit=(name == "jax")) for _ in range(2)]
    assert runs[0].tobytes() == runs[1].tobytes()  # bit-identical run to run
    got = runs[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    counts = reference(np.ones_like(g), idx, P)
    sequential = P * K > cells_mod._MATCH and counts.max() <= cells_mod._RANKS and name != "jax"
    if sequential:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * max(1.0, float(np.abs(g).max())) * K)


def test_jax_outside_a_trace_takes_the_hosts_path() -> None:
    """Concrete JAX arrays (the bindings always jit the kernels, but Cells runs on them too): the ranks and
    the scan with the longest run read on the host, functional updates."""
    backend = _backend("jax")
    rng = np.random.default_rng(4)
    P, K = 50, 800
    idx = _indices(rng, (2, 1, K), P, "hot")
    g = rng.standard_normal((2, 3, K))
    np.testing.assert_allclose(_run(backend, P, K, g, idx), reference(g, idx, P), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("name", ["numpy", "torch"])
def test_both_rank_layouts_give_the_same_bits(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _backend(name)
    rng = np.random.default_rng(5)
    P, K = 300, 320  # the busiest cells read about 40 times: all summed rank by rank
    idx = _indices(rng, (3, 1, K), P, "uneven")
    g = rng.standard_normal((3, 4, K))
    g[0, 0, :50] = -0.0  # zeros of either sign: every cell starts from +0, as np.add.at's
    outs = {}
    for layout in ("dense", "by_count"):
        monkeypatch.setattr(cells_mod, "_layout", lambda *_, layout=layout: layout)
        outs[layout] = _run(backend, P, K, g, idx)
    want = reference(g, idx, P)
    assert reference(np.ones_like(g), idx, P).max() <= cells_mod._RANKS
    assert outs["dense"].tobytes() == outs["by_count"].tobytes() == want.tobytes()


@pytest.mark.parametrize("name", ["numpy", "torch"])
def test_a_plane_alone_gives_the_bits_of_the_whole_call(name: str) -> None:
    """How a cell is summed depends only on its own reads (Dask computes planes alone)."""
    backend = _backend(name)
    rng = np.random.default_rng(6)
    P, K = 50, 600
    idx = np.stack([_indices(rng, (1, K), P, kind) for kind in ("hot", "uniform", "uneven", "sentinel")])
    g = rng.standard_normal((4, 2, K))
    whole = _run(backend, P, K, g, idx)
    for r in range(4):
        alone = _run(backend, P, K, g[r:r + 1], idx[r:r + 1])
        assert alone.tobytes() == whole[r:r + 1].tobytes()


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("P,K,kind", [CASES[1], CASES[3], CASES[5]])
def test_select_and_route_are_adjoint(name: str, P: int, K: int, kind: str) -> None:
    """<select(x), g> = <x, route(g)>, and select reads 0 outside."""
    backend = _backend(name)
    rng = np.random.default_rng(7)
    idx = _indices(rng, (2, 1, K), P, kind)
    x, g = rng.standard_normal((2, 3, P)), rng.standard_normal((2, 3, K))
    c = Cells(P, K)
    sel = backend.to_numpy(c.select(backend.asarray(x), backend.asarray(idx)))
    padded = np.concatenate([x, np.zeros((2, 3, 1))], axis=-1)
    np.testing.assert_array_equal(sel, np.take_along_axis(padded, np.broadcast_to(idx, (2, 3, K)), axis=-1))
    routed = _run(backend, P, K, g, idx, jit=(name == "jax"))
    np.testing.assert_allclose(np.sum(sel * g), np.sum(x * routed), rtol=1e-12)


@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
def test_int32_indices_and_empty_shapes(name: str) -> None:
    backend = _backend(name)
    rng = np.random.default_rng(8)
    P, K = 40, 500
    idx = _indices(rng, (2, 1, K), P, "sentinel").astype(np.int32)
    g = rng.standard_normal((2, 3, K))
    got = _run(backend, P, K, g, idx, jit=(name == "jax"))
    np.testing.assert_allclose(got, reference(g, idx, P), rtol=1e-13, atol=1e-12)
    c = Cells(P, 0)
    empty = c.route(backend.asarray(np.zeros((2, 3, 0))), backend.asarray(np.zeros((2, 1, 0), np.int64)))
    assert backend.to_numpy(empty).shape == (2, 3, P) and not backend.to_numpy(empty).any()
    none = Cells(0, 4).route(backend.asarray(g[..., :4]), backend.asarray(np.zeros((2, 1, 4), np.int64)))
    assert backend.to_numpy(none).shape == (2, 3, 0)


def test_torch_meta_tensors_take_the_scan() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    import torch

    g = torch.empty(2, 3, 500, device="meta")
    idx = torch.empty(2, 1, 500, dtype=torch.int64, device="meta")
    assert Cells(40, 500).route(g, idx).shape == (2, 3, 40)


@pytest.mark.parametrize("name", ["numpy", "torch"])
@pytest.mark.parametrize("P,K", [(3000, 2000), (400, 2000)], ids=["runs", "cells"])
def test_scanning_only_the_busy_cells_reads_gives_the_same_bits(name: str, P: int, K: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A few cells read far more than _RANKS times among many read a few times (one index row shared by the
    planes, as roi_align's taps): the scan over those cells' reads alone gives the bits of the scan over all."""
    backend = _backend(name)
    rng = np.random.default_rng(11)
    idx = np.where(rng.random((1, 1, K)) < 0.15, rng.integers(0, 3, (1, 1, K)), rng.integers(0, P + 1, (1, 1, K)))
    g = rng.standard_normal((2, 4, K))
    counts = np.bincount(idx.ravel(), minlength=P + 1)[:P]
    assert counts.max() > cells_mod._RANKS and counts[counts > cells_mod._RANKS].sum() < K / 2
    calls = []
    real = cells_mod._only_many
    monkeypatch.setattr(cells_mod, "_only_many", lambda *a: calls.append(1) or real(*a))
    few = _run(backend, P, K, g, idx)
    assert calls
    monkeypatch.setattr(cells_mod, "_only_many", lambda *a: None)
    every = _run(backend, P, K, g, idx)
    assert few.tobytes() == every.tobytes()
    np.testing.assert_allclose(few, reference(g, idx, P), rtol=1e-12, atol=1e-12)
