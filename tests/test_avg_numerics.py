"""avg_pool and adaptive_avg_pool against torch 2.13, forward and backward, on every installed backend."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import poolspec

from cases import Case, adaptive_grid, adaptive_random, avg_grid, avg_random

oracle = pytest.importorskip("oracle")

AVG = avg_grid() + avg_random(250)
ADAPTIVE = adaptive_grid() + adaptive_random(120)
CASES = AVG + ADAPTIVE

TOL = {"float64": (1e-12, 1e-13), "float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}


def _data(case: Case, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    x = rng.standard_normal(case.shape)
    g = None
    if not _torch_raises(case):
        g = rng.standard_normal(poolspec.output_shape(case.op, case.shape, **case.args))
    if dtype == "int64":
        x = np.round(x * 20)
    return x, g


_RAISES: dict[str, bool] = {}


def _torch_raises(case: Case) -> bool:
    if case.id not in _RAISES:
        _RAISES[case.id] = oracle.raises(case.op, case.shape, "float64", case.args)
    return _RAISES[case.id]


_REFS: dict[tuple[str, str], dict[str, np.ndarray]] = {}


def _reference(case: Case, dtype: str, x: np.ndarray, g: np.ndarray) -> dict[str, np.ndarray]:
    key = (case.id, dtype)
    if key not in _REFS:
        _REFS[key] = oracle.reference(case.op, x, dtype, case.args, None if dtype == "int64" else g)
    return _REFS[key]


def _check(backend, errors, case, dtype, name, got, want):
    rtol, atol = TOL.get(dtype, (0, 0))
    got_np = backend.to_numpy(got)
    errors.record(backend.name, case.op, dtype, got_np, want)
    assert got_np.shape == want.shape, name
    np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                               err_msg=f"{name} of {case.id} ({dtype})")


def _empty_channel_extension(case: Case) -> bool:
    """Deviation adaptive_pool3d_empty_channels: torch refuses, poolspec returns the empty result."""
    ids = {d["id"] for d in poolspec.spec.deviations(case.op)}
    return "adaptive_pool3d_empty_channels" in ids and len(case.shape) == 5 and case.shape[1] == 0


def _run(backend, errors, case: Case, dtype: str) -> None:
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    fn = getattr(poolspec, case.op)
    x, g = _data(case, dtype)
    xb = backend.asarray(x, dtype)
    if _torch_raises(case):
        if _empty_channel_extension(case):
            out = fn(xb, **case.args)
            assert tuple(out.shape) == poolspec.output_shape(case.op, case.shape, **case.args)
            return
        with pytest.raises((ValueError, TypeError)):
            fn(xb, **case.args)
        return
    if dtype == "int64" and oracle.raises(case.op, case.shape, "int64", case.args):
        with pytest.raises(TypeError):
            fn(xb, **case.args)
        return
    ref = _reference(case, dtype, x, g)
    out = fn(xb, **case.args)
    assert type(out) is type(xb)
    assert out.dtype == xb.dtype
    _check(backend, errors, case, dtype, "output", out, ref["output"])
    if dtype == "int64":
        return
    grad = getattr(poolspec, case.op + "_backward")(backend.asarray(g, dtype), xb, **case.args)
    assert type(grad) is type(xb) and grad.dtype == xb.dtype
    _check(backend, errors, case, dtype, "grad_input", grad, ref["grad_input"])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_float64(backend, errors, case):
    _run(backend, errors, case, "float64")


# Lower precisions and int64 on a quarter of the edge grid: the rounding rule is shared by all cases.
_SUBSET = [c for c in CASES if "random" not in c.flags][::4]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", _SUBSET, ids=[c.id for c in _SUBSET])
def test_lower_precision(backend, errors, case, dtype):
    _run(backend, errors, case, dtype)


_INT = [c for c in AVG if "random" not in c.flags][::3] + [c for c in ADAPTIVE if "random" not in c.flags][:5]


@pytest.mark.parametrize("case", _INT, ids=[c.id for c in _INT])
def test_int64_truncating_division(backend, errors, case):
    """int64 avg_pool sums in int64 and divides toward zero, as torch; adaptive refuses integers."""
    _run(backend, errors, case, "int64")


def test_int64_rounds_toward_zero(backend):
    x = backend.asarray(np.array([[-5, -3, -7, -4]], dtype=np.int64))
    out = backend.to_numpy(poolspec.avg_pool1d(x, 4))
    assert out.tolist() == [[-4]]  # (-19) / 4 = -4.75 -> -4, not floor's -5


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_matches_torch_native_kernel(dtype):
    """The float32-accumulate-and-round-once rule agrees with torch's own half CPU kernels."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.standard_normal((2, 3, 17, 19))).to(getattr(torch, dtype))
    for fn, args in [(torch.nn.functional.avg_pool2d, dict(kernel_size=3, stride=2, padding=1)),
                     (torch.nn.functional.adaptive_avg_pool2d, dict(output_size=(7, 5)))]:
        want = fn(x, **args).float().numpy()
        got = getattr(poolspec, fn.__name__)(x, **args).float().numpy()
        ulp = 2.0 ** (-10 if dtype == "float16" else -7)
        np.testing.assert_allclose(got, want, rtol=ulp, atol=ulp)
        assert (got == want).mean() > 0.99
