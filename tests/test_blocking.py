"""Cache blocking of the separable linear ops (``kernels.linear._blocked``): on CPU backends that write in
place, large inputs are computed a few (batch, channel) planes at a time, and planes too large alone a band
of output rows at a time. The blocks must change nothing: the same values bit for bit, forward and
backward, and the reference vectors still pass with blocks far smaller than any real budget."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec
from poolspec import conformance
from poolspec._compat import writable_module
from poolspec.kernels import adaptive_maxes, blocks, linear, maxes

BLOCKED_OPS = [f"{f}{d}d" for f in ("avg_pool", "adaptive_avg_pool", "lp_pool", "max_pool", "adaptive_max_pool")
               for d in (1, 2, 3)]
BLOCKED_OPS.append("interpolate")

CALLS = [
    ("avg_pool2d", (3, 5, 17, 13), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool3d", (2, 3, 7, 9, 6), dict(kernel_size=2, ceil_mode=True)),
    ("adaptive_avg_pool2d", (2, 4, 19, 11), dict(output_size=(5, 7))),
    ("lp_pool2d", (2, 3, 12, 10), dict(norm_type=2.0, kernel_size=3, stride=2)),
    ("max_pool2d", (3, 4, 17, 15), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool3d", (2, 3, 9, 8, 7), dict(kernel_size=(2, 3, 2), dilation=(1, 2, 1), ceil_mode=True)),
    ("adaptive_max_pool2d", (3, 4, 14, 13), dict(output_size=(5, 4))),  # ragged: dense forward, flat route
    ("interpolate", (2, 3, 21, 17), dict(scale_factor=2, mode="bilinear")),
    ("interpolate", (1, 2, 40, 33), dict(size=(29, 50), mode="bicubic", antialias=True)),
    ("interpolate", (1, 1, 64, 48), dict(size=(160, 17), mode="bicubic", align_corners=True)),
    ("interpolate", (2, 2, 9, 8, 7), dict(scale_factor=(2.5, 1, 0.5), mode="trilinear")),
    ("interpolate", (1, 3, 31, 30), dict(size=(12, 45), mode="area")),
    ("interpolate", (1, 2, 33, 20), dict(size=(70, 9), mode="nearest-exact")),
    ("interpolate", (1, 2, 41, 12), dict(size=(10, 30), mode="nearest")),  # backward: rows no output reads
    ("interpolate", (2, 1, 25, 26), dict(size=(13, 61), mode="lanczos")),
]


def _writable(backend) -> None:
    if writable_module(backend.asarray(np.zeros(1))) is None:
        pytest.skip(f"{backend.name} arrays are immutable or lazy: one whole-array call, no blocks")


def _both(monkeypatch, fn):
    """fn() with blocks of 64 bytes, then with blocking off; and how many blocks and row bands ran."""
    seen = {"blocks": 0, "bands": 0}
    rows, block = linear._row_groups, blocks.blocked

    def counted_blocked(fn, arrays, *args, **kwargs):
        def counted(*a):
            seen["blocks"] += 1
            return fn(*a)
        return block(counted, arrays, *args, **kwargs)

    def counted_rows(table, n):
        seen["bands"] += 1
        return rows(table, n)

    monkeypatch.setattr(linear, "blocked", counted_blocked)
    monkeypatch.setattr(maxes, "blocked", counted_blocked)
    monkeypatch.setattr(adaptive_maxes, "blocked", counted_blocked)
    monkeypatch.setattr(linear, "_row_groups", counted_rows)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 64)
    monkeypatch.setattr(blocks, "WHOLE_BYTES", 0)
    small = fn()
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 1 << 60)
    return small, fn(), seen


@pytest.mark.parametrize("op,shape,args", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocks_change_no_bit(backend, monkeypatch, op, shape, args, dtype):
    _writable(backend)
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape).astype(dtype)
    a.flat[::37] = np.inf  # a non-finite cell spreads identically through every block
    if op.startswith("lp_pool"):
        a = np.abs(a)
    x = backend.asarray(a)
    fwd, fwd_whole, seen = _both(monkeypatch, lambda: backend.to_numpy(getattr(poolspec, op)(x, **args)))
    assert fwd.tobytes() == fwd_whole.tobytes()
    if op.startswith(("max_pool", "adaptive_max_pool")):
        run = lambda: tuple(map(backend.to_numpy, getattr(poolspec, op)(x, **args, return_indices=True)))  # noqa: E731
        (v, i), (v_whole, i_whole), _ = _both(monkeypatch, run)
        assert v.tobytes() == v_whole.tobytes() and i.tobytes() == i_whole.tobytes()
    assert seen["blocks"] > 1 or seen["bands"] > 0, "the blocked path did not run"
    g = backend.asarray(rng.standard_normal(fwd.shape).astype(dtype))
    back = getattr(poolspec, f"{op}_backward")
    bwd, bwd_whole, _ = _both(monkeypatch, lambda: backend.to_numpy(back(g, x, **args)))
    assert bwd.tobytes() == bwd_whole.tobytes()


def test_row_bands_run_on_one_large_plane(backend, monkeypatch):
    _writable(backend)
    x = backend.asarray(np.random.default_rng(3).standard_normal((1, 1, 30, 20)))
    small, whole, seen = _both(monkeypatch, lambda: backend.to_numpy(
        poolspec.interpolate(x, size=(61, 37), mode="bilinear")))
    assert seen["bands"] > 0
    assert small.tobytes() == whole.tobytes()


def test_reference_vectors_pass_with_tiny_blocks(backend, monkeypatch):
    _writable(backend)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 64)
    monkeypatch.setattr(blocks, "WHOLE_BYTES", 0)
    report = conformance.run(backend.name, ops=BLOCKED_OPS)
    assert report.passed, report.table()
    assert sum(r.status == "pass" for r in report.results) > 1000
