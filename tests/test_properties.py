"""Backend-independent promises: inputs untouched, namespace/dtype/device kept, Dask lazy, repeats
bit-identical, work bounded by the windows, and the command line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import poolspec
from poolspec.plans import windows

OPS = [
    ("avg_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool1d", (3, 10), dict(kernel_size=4, stride=3, padding=2, count_include_pad=False)),
    ("avg_pool3d", (1, 2, 4, 5, 6), dict(kernel_size=2, divisor_override=3)),
    ("adaptive_avg_pool1d", (2, 3, 13), dict(output_size=7)),
    ("adaptive_avg_pool2d", (3, 7, 5), dict(output_size=(3, 9))),
    ("adaptive_avg_pool3d", (1, 2, 5, 4, 7), dict(output_size=(2, None, 3))),
    ("max_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True)),
    ("adaptive_max_pool1d", (2, 3, 13), dict(output_size=5)),
    ("adaptive_max_pool3d", (1, 2, 5, 4, 6), dict(output_size=(2, 4, 3))),
    ("max_unpool2d", (2, 3, 3, 4), dict(kernel_size=3, stride=2, padding=1)),
    ("lp_pool2d", (2, 3, 7, 6), dict(norm_type=2.0, kernel_size=2, ceil_mode=True)),
    ("lp_pool1d", (2, 3, 9), dict(norm_type=float("inf"), kernel_size=3, stride=2)),
    ("interpolate", (2, 3, 7, 6), dict(size=(11, 4), mode="bicubic")),
    ("interpolate", (2, 3, 9, 8), dict(scale_factor=0.5, mode="bilinear", antialias=True)),
    ("interpolate", (2, 3, 7), dict(scale_factor=2.1, mode="nearest")),
    ("interpolate", (1, 2, 4, 5, 3), dict(size=(2, 7, 3), mode="trilinear", align_corners=True)),
]
IDS = [f"{op}-{args.get('mode', '')}-{len(shape)}" for op, shape, args in OPS]


def _pair(op, shape, args, seed=0):
    """(x, g, extra operands): max_unpool also takes indices (here with duplicates in every plane)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(poolspec.output_shape(op, shape, **args))
    extra = ()
    if op.startswith("max_unpool"):
        size = int(np.prod(g.shape[2:]))
        extra = (rng.integers(0, size, shape),)
    return x, g, extra


@pytest.mark.parametrize("op,shape,args", OPS, ids=IDS)
def test_inputs_untouched_and_types_kept(backend, op, shape, args):
    x, g, extra = _pair(op, shape, args)
    xb, gb = backend.asarray(x), backend.asarray(g)
    eb = tuple(backend.asarray(e) for e in extra)
    y = getattr(poolspec, op)(xb, *eb, **args)
    dx = getattr(poolspec, op + "_backward")(gb, xb, *eb, **args)
    np.testing.assert_array_equal(backend.to_numpy(xb), x)
    np.testing.assert_array_equal(backend.to_numpy(gb), g)
    for e, eb_ in zip(extra, eb):
        np.testing.assert_array_equal(backend.to_numpy(eb_), e)
    import array_api_compat as aac

    for out in (y, dx):
        assert type(out) is type(xb)
        assert out.dtype == xb.dtype
        assert aac.device(out) == aac.device(xb)
    assert tuple(dx.shape) == tuple(xb.shape)


@pytest.mark.parametrize("op,shape,args", OPS, ids=IDS)
def test_repeated_calls_bit_identical(backend, op, shape, args):
    x, g, extra = _pair(op, shape, args)
    outs = [backend.to_numpy(getattr(poolspec, op + "_backward")(backend.asarray(g), backend.asarray(x),
                                                                 *(backend.asarray(e) for e in extra), **args))
            for _ in range(3)]
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


def test_read_only_numpy_accepted():
    x = np.arange(2 * 3 * 6 * 6, dtype=np.float64).reshape(2, 3, 6, 6)
    x.setflags(write=False)
    g = np.ones((2, 3, 3, 3))
    g.setflags(write=False)
    want = x.reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5))
    np.testing.assert_array_equal(poolspec.avg_pool2d(x, 2), want)
    np.testing.assert_array_equal(poolspec.adaptive_avg_pool2d(x, 3), want)
    assert poolspec.avg_pool2d_backward(g, x, 2).shape == x.shape


def test_dask_stays_lazy():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    calls = []

    def load():
        calls.append(1)
        return np.arange(2 * 3 * 16 * 16, dtype=np.float64).reshape(2, 3, 16, 16)

    x = da.from_delayed(dask.delayed(load)(), shape=(2, 3, 16, 16), dtype=np.float64)
    y = poolspec.adaptive_avg_pool2d(poolspec.avg_pool2d(x, 3, 1, 1), 5)
    dx = poolspec.avg_pool2d_backward(da.ones((2, 3, 8, 8)), x, 2)
    m = poolspec.lp_pool2d(poolspec.adaptive_max_pool2d(poolspec.max_pool2d(x, 3, 1, 1), 7), 2.0, 2)
    dm = poolspec.max_pool2d_backward(da.ones((2, 3, 8, 8)), x, 2)
    r = poolspec.interpolate(x, scale_factor=1.5, mode="bicubic", antialias=True)
    dr = poolspec.interpolate_backward(da.ones((2, 3, 24, 24)), x, scale_factor=1.5, mode="bicubic", antialias=True)
    assert all(isinstance(a, da.Array) for a in (y, dx, m, dm, r, dr))
    assert calls == []
    want = poolspec.adaptive_avg_pool2d(poolspec.avg_pool2d(load(), 3, 1, 1), 5)
    np.testing.assert_allclose(y.compute(), want, rtol=1e-14)
    want = poolspec.lp_pool2d(poolspec.adaptive_max_pool2d(poolspec.max_pool2d(load(), 3, 1, 1), 7), 2.0, 2)
    np.testing.assert_allclose(m.compute(), want, rtol=1e-14)
    np.testing.assert_array_equal(dm.compute(), poolspec.max_pool2d_backward(np.ones((2, 3, 8, 8)), load(), 2))
    want = poolspec.interpolate(load(), scale_factor=1.5, mode="bicubic", antialias=True)
    np.testing.assert_allclose(r.compute(), want, rtol=1e-14)
    assert dr.compute().shape == (2, 3, 16, 16)


def test_adaptive_plans_scale_with_the_windows_not_the_axis():
    """A long ragged axis gets a (taps x output) index table; its transpose (taps x input) likewise."""
    L, O = 100_003, 99_991
    plan = windows.adaptive(L, O)
    assert plan.index.shape[1] == O and plan.index.shape[0] <= -(-L // O) + 1
    t = plan.transpose
    assert t.index.shape[1] == L and t.index.shape[0] <= -(-O // L) + 2
    x = np.random.default_rng(0).standard_normal((1, L))
    y = poolspec.adaptive_avg_pool1d(x, O)
    starts, ends = windows.adaptive_bounds(L, O)
    i = 12_345
    assert y[0, i] == pytest.approx(x[0, starts[i]:ends[i]].mean(), rel=1e-14)


def test_slice_plan_transpose_is_exact_adjoint():
    """<A x, g> == <x, A^T g> for regular windows with padding, stride > kernel and ceil overhang."""
    rng = np.random.default_rng(1)
    for L, k, s, p, ceil in [(11, 4, 3, 2, True), (9, 2, 4, 1, True), (7, 5, 1, 2, False), (6, 1, 5, 0, True)]:
        x = rng.standard_normal((1, L))
        args = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil, divisor_override=1)
        y = poolspec.avg_pool1d(x, **args)
        g = rng.standard_normal(y.shape)
        assert np.vdot(y, g) == pytest.approx(np.vdot(x, poolspec.avg_pool1d_backward(g, x, **args)), rel=1e-13)


def test_import_loads_no_backend():
    code = ("import poolspec, sys; poolspec.avg_pool2d(__import__('numpy').ones((1, 4, 4)), 2); "
            "print(sorted(m for m in ('torch', 'jax', 'dask', 'cupy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_selfcheck_and_cards():
    out = subprocess.run([sys.executable, "-m", "poolspec", "selfcheck", "--backend", "numpy"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].endswith("0 failed")
    import json

    cards = subprocess.run([sys.executable, "-m", "poolspec", "cards", "avg_pool2d"], capture_output=True,
                           text=True, check=True)
    assert json.loads(cards.stdout)[0]["id"] == "avg_pool2d@1"


def test_interpolate_work_is_bounded_by_the_taps():
    """A 4096 x 4096 image resamples in every mode family with a peak allocation below 3 x (input + output)
    bytes, its plans hold (taps x output) entries per axis, and a 200,000-wide axis (whose dense weight matrix
    would need over 200 GB) resamples in a few MB."""
    import tracemalloc

    from poolspec.families.interpolate.ops import _plan

    x = np.random.default_rng(0).standard_normal((1, 1, 4096, 4096)).astype(np.float32)
    taps = {"nearest": 1, "bilinear": 2, "bicubic": 4}
    for kw in (dict(size=(2048, 3000), mode="bilinear"), dict(size=(5000, 4500), mode="bicubic"),
               dict(size=(1000, 1024), mode="bicubic", antialias=True), dict(size=(6000, 6000), mode="nearest"),
               dict(size=(700, 500), mode="lanczos", antialias=True)):
        tracemalloc.start()
        y = poolspec.interpolate(x, **kw)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert y.shape == (1, 1) + kw["size"]
        assert peak <= 3 * (x.nbytes + y.nbytes), (kw, peak)
        plan = _plan((4096, 4096), kw["size"], kw["mode"], (None, None), False, bool(kw.get("antialias")), "float32")
        for axis, out in zip(plan.axes, kw["size"]):
            bound = taps.get(kw["mode"]) if not kw.get("antialias") else 2 * int(np.ceil(3 * 4096 / out)) + 1
            assert axis.index.shape == (axis.taps, out) and axis.taps <= bound
            t = axis.transpose  # the backward's table: for each input cell, the outputs that read it
            assert t.index.shape[1] == 4096 and t.index.size <= 2 * axis.index.size + 4096
    thin = np.ones((1, 1, 2, 200_000))
    tracemalloc.start()
    out = poolspec.interpolate(thin, size=(3, 150_001), mode="bicubic")
    grad = poolspec.interpolate_backward(np.ones_like(out), thin, size=(3, 150_001), mode="bicubic")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(out, 1.0, rtol=1e-12)
    assert grad.shape == thin.shape and peak < 64 * 2**20, peak
