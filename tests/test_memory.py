"""Peak memory: every op's forward and backward stays within a fixed multiple of the arrays it is handed and
gives back, and the routes that keep it there give torch's numbers.

The bound (``poolspec.memory``): peak <= 8 x (input + output + other array ports) + 32 MiB, measured with
tracemalloc on NumPy, one cold forward + backward per case in a process of its own under a 6 GiB address-space
limit, over adversarial but legal calls of every family (large and dilated windows, global and stride-1
large windows, dense grids, large fractional windows, extreme up- and down-sampling).

The memory-bounded routes (the max family's gradient by sorting the winners, ragged adaptive max windows
axis by axis, grid_sample a chunk of points at a time, max_unpool a chunk of cells at a time, the run-wise
``Cells.route``) are also forced onto the stored torch reference cases on every backend, and the ones that
promise it are checked bit for bit against the routes they replace.
"""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec import conformance, memory
from poolspec._compat import writable_module
from poolspec.families.adaptive_max_pool import ops as adaptive_max_pool
from poolspec.families.grid_sample import sampling as grid_sample
from poolspec.families.max_pool import ops as max_pool
from poolspec.kernels import blocks, cells, maxes, unpool


@pytest.mark.parametrize("gpu_paths", [False, True], ids=["cpu-paths", "gpu-paths"])
@pytest.mark.parametrize("key", [c.key for c in memory.CASES])
def test_peak_within_bound(key, gpu_paths):
    row = memory.measure(key, gpu_paths=gpu_paths)
    assert "error" not in row, row["error"]
    assert row["peak"] <= row["limit"], (
        f"{key}: peak {row['peak'] / 2**20:.1f} MiB > {memory.LIMIT_FACTOR} x {row['base'] / 2**20:.1f} MiB "
        f"+ {memory.LIMIT_SLACK >> 20} MiB")


# the cases whose JAX programs compile in seconds (JAX unrolls a window's taps: windows of hundreds of taps per
# axis and extreme antialias downscales take minutes to compile, see docs/MEMORY.md)
JAX_KEYS = ["max_pool2d k(60,80) s10 p(10,20) d10", "max_pool2d k41 s7 p20 d2", "max_pool3d k20 s3 p10",
            "adaptive_max_pool2d 300x300 -> (299,7)", "adaptive_max_pool3d 16 planes 32^3 -> 31^3",
            "lp_pool2d p=inf k31 s1", "max_unpool3d k2 -> 128^3", "grid_sample bicubic 500^2, grid 700^2",
            "grid_sample 3-d bilinear 64^3, grid 80^3", "fractional_max_pool3d k16 -> 40^3"]


@pytest.mark.parametrize("key", JAX_KEYS)
def test_jax_program_temporaries_within_bound(key):
    """XLA's temporaries for the jitted forward + explicit backward (memory_analysis of the compiled CPU
    program), against the same bound."""
    pytest.importorskip("jax")
    row = memory.measure(key, "jax")
    assert "error" not in row, row["error"]
    assert row["peak"] <= row["limit"], f"{key}: {row['peak'] / 2**20:.1f} MiB > {row['limit'] / 2**20:.1f} MiB"


def test_bound_catches_a_table_of_output_by_input():
    """The measurement sees what an op allocates inside it: a table past the bound breaks it."""
    case = memory.MemoryCase("probe", "max_pool2d", (1, 1, 300, 300), dict(kernel_size=30, stride=1))
    real = poolspec.max_pool2d_backward
    over = memory.limit(4 * 300 * 300 * 2)

    def wasteful(g, x, *args, **kwargs):
        table = np.ones(over // 8, dtype=np.int64)  # what an (output x window) index table costs
        return real(g, x, *args, **kwargs) + 0 * table[0]

    poolspec.max_pool2d_backward = wasteful
    try:
        row = memory.measure_numpy(case)
    finally:
        poolspec.max_pool2d_backward = real
    assert row["peak"] > row["limit"]


def _force_bounded_routes(monkeypatch):
    """Every memory-bounded route taken however small the call; cached windows rebuilt so it takes effect."""
    monkeypatch.setattr(blocks, "TABLE_CELLS", 0)
    monkeypatch.setattr(maxes, "_SORT_RATIO", 0)
    monkeypatch.setattr(maxes, "_JAX_GATHERS", 0)
    monkeypatch.setattr(grid_sample, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(unpool, "_CHUNK_CELLS", 3)
    max_pool._windows.cache_clear()
    adaptive_max_pool._adaptive_windows.cache_clear()


MAX_OPS = [f"{f}{d}d" for f in ("max_pool", "adaptive_max_pool", "lp_pool", "max_unpool") for d in (1, 2, 3)]
SAMPLING_OPS = ["grid_sample", "fractional_max_pool2d", "fractional_max_pool3d"]


def test_reference_vectors_pass_on_bounded_routes(backend, monkeypatch):
    if backend.name in ("jax", "dask"):
        pytest.skip(f"{backend.name}: recompiles (JAX) or re-chunks (Dask) every case; JAX's bounded route is "
                    "test_jax_sorted_route_matches_torch, Dask runs NumPy's kernels per block")
    _force_bounded_routes(monkeypatch)
    try:
        report = conformance.run(backend.name, ops=MAX_OPS + SAMPLING_OPS)
    finally:
        max_pool._windows.cache_clear()
        adaptive_max_pool._adaptive_windows.cache_clear()
    assert report.passed, report.table()
    assert sum(r.status == "pass" for r in report.results) > 300


# the routes the sorted route replaces on writable backends add a cell's outputs in ascending order, from +0,
# as the sorted route does for cells that win at most cells._RANKS outputs: the same bits
SORTED = [
    ("max_pool2d", (2, 3, 17, 19), dict(kernel_size=5, stride=2, padding=2, dilation=2)),
    ("max_pool2d", (1, 2, 30, 31), dict(kernel_size=(9, 7), stride=1, padding=(4, 3))),
    ("max_pool1d", (2, 2, 200), dict(kernel_size=40, stride=3, padding=20, ceil_mode=True)),
    ("max_pool3d", (1, 2, 9, 10, 11), dict(kernel_size=4, stride=2, padding=1)),
    ("adaptive_max_pool2d", (2, 3, 23, 17), dict(output_size=(7, 9))),
    ("adaptive_max_pool3d", (1, 2, 7, 9, 11), dict(output_size=(3, 4, 5))),
]


@pytest.mark.parametrize("op,shape,args", SORTED, ids=[f"{c[0]}-{i}" for i, c in enumerate(SORTED)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sorted_route_changes_no_bit(backend, monkeypatch, op, shape, args, dtype):
    if writable_module(backend.asarray(np.zeros(1))) is None:
        pytest.skip(f"{backend.name}: the routes it replaces are the writable backends'")
    rng = np.random.default_rng(5)
    x = backend.asarray(np.round(rng.standard_normal(shape) * 3).astype(dtype))  # ties
    y, idx = getattr(poolspec, op)(x, **args, return_indices=True)
    g = backend.asarray(rng.standard_normal(tuple(y.shape)).astype(dtype))
    back = getattr(poolspec, f"{op}_backward")

    def run(table: int, ratio: float) -> np.ndarray:
        monkeypatch.setattr(blocks, "TABLE_CELLS", table)
        monkeypatch.setattr(maxes, "_SORT_RATIO", ratio)
        monkeypatch.setattr(maxes.MaxWindows, "_gathers", lambda self: False)
        return backend.to_numpy(back(g, x, **args, indices=idx))

    sorted_ = run(0, 0)
    other = run(1 << 60, 1e300)
    assert sorted_.tobytes() == other.tobytes()


def test_runs_change_no_bit(backend, monkeypatch):
    """Cells.route summed per run of equal cells gives the bits of the per-cell tables, with cells read more
    often than cells._RANKS (the scan), reads outside the plane, and index rows shared between planes."""
    if backend.name == "dask":
        pytest.skip("Cells runs on whole planes: Dask calls it per block of NumPy planes")
    rng = np.random.default_rng(11)
    for trial in range(3 if backend.name == "jax" else 12):  # eager JAX compiles every shape
        P, K = int(rng.integers(50, 3000)), int(rng.integers(1, 400))
        lead = (2, 3)
        ilead = (2, 1) if trial % 2 else lead
        idx = rng.integers(0, P + 1, ilead + (K,))
        if trial % 3 == 0:
            idx[..., : K // 2] = rng.integers(0, 3)  # hot cells: the scan
        g = rng.standard_normal(lead + (K,))
        c = cells.Cells(P, K)
        runs = backend.to_numpy(c.route(backend.asarray(g), backend.asarray(idx)))
        monkeypatch.setattr(cells, "_RUNS", 0.0)
        tables = backend.to_numpy(c.route(backend.asarray(g), backend.asarray(idx)))
        monkeypatch.setattr(cells, "_RUNS", 1.0)
        assert runs.tobytes() == tables.tobytes()
        want = np.zeros(lead + (P + 1,))
        for at in np.ndindex(*lead):
            np.add.at(want[at], idx[tuple(a if n > 1 else 0 for a, n in zip(at, ilead))], g[at])
        np.testing.assert_allclose(runs, want[..., :P], rtol=1e-12, atol=1e-12)


JAX_SORTED = [
    ("max_pool1d", (2, 3, 150), dict(kernel_size=70, stride=1, padding=30)),
    ("max_pool2d", (1, 2, 40, 37), dict(kernel_size=(12, 11), stride=1, padding=5, dilation=(1, 2))),
    ("adaptive_max_pool2d", (2, 2, 23, 17), dict(output_size=(7, 9))),
]


@pytest.mark.parametrize("op,shape,args", JAX_SORTED, ids=[c[0] for c in JAX_SORTED])
def test_jax_bounded_routes_match_torch(monkeypatch, op, shape, args):
    """On JAX, windows covering many cells route the gradient by sorting the winners (Cells' scan), ragged ones
    by looping over their covering windows: the gradient and its second order (the gather at the winners)
    against torch's, ties included."""
    jax = pytest.importorskip("jax")
    torch = pytest.importorskip("torch")
    _force_bounded_routes(monkeypatch)
    try:
        rng = np.random.default_rng(8)
        x = np.round(rng.standard_normal(shape) * 3) / 2
        y, idx = getattr(poolspec, op)(jax.numpy.asarray(x), **args, return_indices=True)
        g = rng.standard_normal(tuple(y.shape))
        got = np.asarray(jax.grad(lambda t: (getattr(poolspec, op)(t, **args) * g).sum())(jax.numpy.asarray(x)))
        xt = torch.tensor(x, requires_grad=True)
        yt, it = getattr(torch.nn.functional, op)(xt, **args, return_indices=True)
        (want,) = torch.autograd.grad(yt, xt, torch.tensor(g))
        assert np.asarray(idx).tolist() == it.numpy().tolist()
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)
        gg = rng.standard_normal(shape)
        back = getattr(poolspec, f"{op}_backward")
        second = jax.grad(lambda c: (back(c, jax.numpy.asarray(x), **args) * gg).sum())(jax.numpy.asarray(g))
        at_winners = np.take_along_axis(gg.reshape(shape[:2] + (-1,)), it.numpy().reshape(shape[:2] + (-1,)), -1)
        np.testing.assert_array_equal(np.asarray(second), at_winners.reshape(tuple(y.shape)))
    finally:
        max_pool._windows.cache_clear()
        adaptive_max_pool._adaptive_windows.cache_clear()


def test_grid_sample_chunks(backend, monkeypatch):
    """A chunk of points at a time: the output and the grid's gradient (per point) bit for bit, the input's
    gradient (chunks added in order) to rounding; all against torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 9, 8))
    grid = rng.uniform(-1.2, 1.2, (2, 7, 5, 2))
    g = rng.standard_normal((2, 3, 7, 5))
    args = dict(mode="bicubic", padding_mode="reflection", align_corners=False)

    def run():
        xb, gb = backend.asarray(x), backend.asarray(grid)
        y = backend.to_numpy(poolspec.grid_sample(xb, gb, **args))
        gx, gg = poolspec.grid_sample_backward(backend.asarray(g), xb, gb, **args)
        return y, backend.to_numpy(gx), backend.to_numpy(gg)

    whole = run()
    monkeypatch.setattr(grid_sample, "_CHUNK_BYTES", 1)  # one point per chunk
    chunked = run()
    if backend.name != "jax":  # JAX compiles the two forms into different programs
        assert whole[0].tobytes() == chunked[0].tobytes() and whole[2].tobytes() == chunked[2].tobytes()
    xt, gt = (torch.tensor(a, requires_grad=True) for a in (x, grid))
    yt = torch.nn.functional.grid_sample(xt, gt, **args)
    want = (yt.detach().numpy(),) + tuple(a.numpy() for a in torch.autograd.grad(yt, (xt, gt), torch.tensor(g)))
    for got in (whole, chunked):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_grid_sample_chunks_under_jax_transforms(monkeypatch):
    """On JAX the chunks are a loop (lax.map with recomputation forward, lax.scan for the explicit backward):
    gradients of both inputs, forward mode, vmap and the backward's own gradient against torch's."""
    jax = pytest.importorskip("jax")
    torch = pytest.importorskip("torch")
    jnp = jax.numpy
    monkeypatch.setattr(grid_sample, "_CHUNK_BYTES", 2000)  # a few points per chunk, a ragged last chunk
    rng = np.random.default_rng(6)
    x, grid = rng.standard_normal((2, 3, 7, 6)), rng.uniform(-1.1, 1.1, (2, 5, 9, 2))
    v, w = rng.standard_normal((2, 3, 5, 9)), rng.standard_normal((2, 5, 9, 2))
    args = dict(mode="bilinear", padding_mode="border", align_corners=True)
    assert grid_sample._step(grid_sample._Plan((7, 6), (5, 9), "bilinear", "border", True), 2, 3) < 45

    def ours(a, b):
        return (poolspec.grid_sample(a, b, **args) * v).sum()

    xt, gt = (torch.tensor(a, requires_grad=True) for a in (x, grid))
    yt = torch.nn.functional.grid_sample(xt, gt, **args)
    want = torch.autograd.grad((yt * torch.tensor(v)).sum(), (xt, gt), create_graph=True)
    got = jax.jit(jax.grad(ours, argnums=(0, 1)))(jnp.asarray(x), jnp.asarray(grid))
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    # forward mode in the grid's direction w: <grad wrt grid, w>
    _, tangent = jax.jvp(lambda b: ours(jnp.asarray(x), b), (jnp.asarray(grid),), (jnp.asarray(w),))
    np.testing.assert_allclose(float(tangent), float((want[1] * torch.tensor(w)).sum()), rtol=1e-12)
    # vmap over a stack of cotangents, and the explicit backward's gradient w.r.t. the grid
    vs = jax.vmap(lambda c: poolspec.grid_sample_backward(c, jnp.asarray(x), jnp.asarray(grid), **args)[0])(
        jnp.stack([jnp.asarray(v), 2 * jnp.asarray(v)]))
    np.testing.assert_allclose(np.asarray(vs[1]), 2 * want[0].detach().numpy(), rtol=1e-12, atol=1e-12)
    second = jax.grad(lambda b: (poolspec.grid_sample_backward(jnp.asarray(v), jnp.asarray(x), b, **args)[1]
                                 * w).sum())(jnp.asarray(grid))
    (want2,) = torch.autograd.grad((want[1] * torch.tensor(w)).sum(), gt)
    np.testing.assert_allclose(np.asarray(second), want2.numpy(), rtol=1e-10, atol=1e-10)


def test_fractional_windows_of_many_cells_match_torch(backend):
    """The axis-by-axis scan on windows far larger than the stored cases', full of ties, NaN and -inf."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = np.round(rng.standard_normal((2, 2, 61, 57)) * 2) / 2
    x[rng.random(x.shape) < 0.01] = np.nan
    x[rng.random(x.shape) < 0.05] = -np.inf
    u = rng.random((2, 2, 2))
    args = dict(kernel_size=(23, 17), output_size=(20, 25))
    v, i = poolspec.fractional_max_pool2d(backend.asarray(x), **args, return_indices=True,
                                          _random_samples=backend.asarray(u))
    tv, ti = torch.nn.functional.fractional_max_pool2d(torch.tensor(x), **args, return_indices=True,
                                                       _random_samples=torch.tensor(u))
    assert backend.to_numpy(i).tolist() == ti.numpy().tolist()
    np.testing.assert_array_equal(backend.to_numpy(v), tv.numpy())


def test_large_window_plans_are_linear_in_the_window():
    """The per-axis plans of a 1-d window of 5001 taps over 200000 cells: O(kernel + length), not their
    product (which was 7.45 GiB of int64)."""
    from poolspec.plans import windows

    ranges = windows.tap_ranges(200000, 200000, 5001, 1, 2500, 1)
    assert len(ranges) == 5001 and ranges[0][1:3] == (2500, 200000) and ranges[-1][1:3] == (0, 197500)
    assert windows.cover_count(200000, 200000, 5001, 1, 2500, 1) == 5001
    # max_pool2d k (60, 80), s 10, p (10, 20), d 10 on 1000 x 1000: every cell is read by every output's window
    assert windows.cover_count(1000, 43, 60, 10, 10, 10) == 43 and windows.cover_count(1000, 25, 80, 10, 20, 10) == 25
    first = windows.first_taps(200000, 200000, 5001, 1, 2500, 1)
    assert first[0] == 2500 and first[2500] == 0 and first.shape == (200000,)


@pytest.mark.parametrize("L,O,k,s,p,d", [(7, 4, 3, 2, 1, 1), (13, 3, 4, 3, 2, 2), (20, 20, 5, 1, 2, 1),
                                          (9, 2, 3, 4, 1, 3), (30, 4, 10, 7, 5, 2), (5, 5, 1, 1, 0, 1)])
def test_window_plans_agree_with_the_definition(L, O, k, s, p, d):
    """Tap ranges, cover counts, covers and first taps against the (k, O) table of tap coordinates."""
    from poolspec.plans import windows

    c = (np.arange(O) * s - p)[None, :] + (np.arange(k) * d)[:, None]
    inside = (c >= 0) & (c < L)
    for t, lo, hi, cells_ in windows.tap_ranges(L, O, k, s, p, d):
        outs = np.flatnonzero(inside[t])
        assert (lo, hi) == (outs[0], outs[-1] + 1)
        assert list(range(L))[cells_] == c[t, lo:hi].tolist()
    assert {t for t, *_ in windows.tap_ranges(L, O, k, s, p, d)} == set(np.flatnonzero(inside.any(axis=1)))
    counts = np.bincount(c[inside], minlength=L)
    assert windows.cover_count(L, O, k, s, p, d) == max(int(counts.max()), 1)
    table = windows.covers(L, O, k, s, p, d)
    for cell in range(L):
        want = sorted(np.nonzero(c == cell)[1].tolist())
        assert table[:len(want), cell].tolist() == want and (table[len(want):, cell] == O).all()
    first = np.where(inside.any(axis=0), np.argmax(inside, axis=0), k)
    assert windows.first_taps(L, O, k, s, p, d).tolist() == first.tolist()


RETAINED = [
    ("max_pool2d", dict(kernel_size=2)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", dict(kernel_size=40, stride=20)),  # tiling windows, reduced at once
    ("max_pool2d", dict(kernel_size=31, stride=1)),  # the sorted route
    ("avg_pool2d", dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ("adaptive_max_pool2d", dict(output_size=(97, 5))),
    ("lp_pool2d", dict(norm_type=2.0, kernel_size=3, stride=1, ceil_mode=True)),
    ("interpolate", dict(scale_factor=0.5, mode="bilinear", antialias=True)),
]


@pytest.mark.parametrize("op,args", RETAINED, ids=[f"{op}-{i}" for i, (op, _) in enumerate(RETAINED)])
def test_plans_of_many_shapes_keep_no_large_table(op, args, monkeypatch):
    """Plans are cached per shape; what they keep between calls stays small: tables of up to
    blocks.CACHE_CELLS entries with their plan, larger ones in one cache of blocks.LARGE_CACHE_BYTES in all
    (here 4 MiB), so a process that sees many image sizes does not keep an output-sized array per size."""
    import gc
    import tracemalloc

    monkeypatch.setattr(blocks, "LARGE_CACHE_BYTES", 4 << 20)
    rng = np.random.default_rng(1)
    fwd, bwd = getattr(poolspec, op), getattr(poolspec, f"{op}_backward")

    def call(size: int) -> None:
        x = rng.standard_normal((1, 2, size, size + 3)).astype(np.float32)
        y = fwd(x, **args)
        bwd(np.ones_like(y), x, **args)

    call(97)  # imports and first-call caches
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for size in range(601, 661, 6):  # ten shapes of about 2.9 MB each
            call(size)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert kept < (4 << 20) + (2 << 20), f"{kept / 2**20:.1f} MiB kept after ten shapes"


def _saved(fn, *inputs):
    """Bytes torch autograd keeps for the backward of ``fn(*inputs)``, and of the inputs and output."""
    torch = pytest.importorskip("torch")
    kept = [0]

    def pack(t):
        kept[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    return kept[0], sum(t.numel() * t.element_size() for t in inputs) + out.numel() * out.element_size()


def _autograd_cases():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 64, 64, dtype=torch.float64, generator=gen, requires_grad=True)
    grid = (torch.rand(2, 50, 40, 2, dtype=torch.float64, generator=gen) * 2.4 - 1.2).requires_grad_()
    x3 = torch.randn(1, 2, 20, 20, 20, dtype=torch.float64, generator=gen, requires_grad=True)
    grid3 = (torch.rand(1, 30, 30, 30, 3, dtype=torch.float64, generator=gen) * 2 - 1).requires_grad_()
    samples = torch.rand(2, 3, 2, dtype=torch.float64, generator=gen)
    _, idx = poolspec.max_pool2d(x.detach(), 2, return_indices=True)
    v = torch.rand(2, 3, 32, 32, dtype=torch.float64, generator=gen, requires_grad=True)
    theta = torch.rand(2, 2, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    return {
        "max_pool2d k5 s2": (lambda t: poolspec.max_pool2d(t, 5, 2), x),
        "max_pool2d k31 s1": (lambda t: poolspec.max_pool2d(t, 31, 1), x),
        "adaptive_max_pool2d": (lambda t: poolspec.adaptive_max_pool2d(t, (63, 5)), x),
        "avg_pool2d": (lambda t: poolspec.avg_pool2d(t, 3, 1, 1, count_include_pad=False), x),
        "lp_pool2d": (lambda t: poolspec.lp_pool2d(t, 2.0, 3), x),
        "interpolate": (lambda t: poolspec.interpolate(t, size=(20, 30), mode="bicubic", antialias=True), x),
        "fractional_max_pool2d": (lambda t: poolspec.fractional_max_pool2d(t, 9, output_size=20,
                                                                           _random_samples=samples), x),
        "grid_sample bicubic": (lambda t, g: poolspec.grid_sample(t, g, mode="bicubic", align_corners=False),
                                x, grid),
        "grid_sample 3-d": (lambda t, g: poolspec.grid_sample(t, g, padding_mode="reflection"), x3, grid3),
        "affine_grid": (lambda th: poolspec.affine_grid(th, (2, 3, 64, 64), align_corners=False), theta),
        "max_unpool2d": (lambda t: poolspec.max_unpool2d(t, idx, 2), v),
    }


@pytest.mark.parametrize("name", ["max_pool2d k5 s2", "max_pool2d k31 s1", "adaptive_max_pool2d", "avg_pool2d",
                                  "lp_pool2d", "interpolate", "fractional_max_pool2d", "grid_sample bicubic",
                                  "grid_sample 3-d", "affine_grid", "max_unpool2d"])
def test_torch_autograd_keeps_little_for_the_backward(name):
    """Under torch autograd an op keeps its inputs, winners and a few arrays of their size for the backward,
    never its taps: grid_sample is a Function whose backward recomputes them a chunk at a time (its composed
    form kept every tap's cell, weight and read: 16 per point for bicubic)."""
    fn, *inputs = _autograd_cases()[name]
    kept, ports = _saved(fn, *inputs)
    assert kept <= 4 * ports, f"{name}: autograd keeps {kept / 2**20:.2f} MiB for {ports / 2**20:.2f} MiB of ports"
