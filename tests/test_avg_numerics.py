"""avg_pool and adaptive_avg_pool against torch 2.13, forward and backward, on every installed backend."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import poolspec

from cases import Case, adaptive_grid, adaptive_random, avg_dilated_grid, avg_dilated_random, avg_grid, avg_random

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


# --- dilation: poolspec's extension, against torch's conv with a ones kernel (oracle.dilated_avg_pool) -----------

DILATED = avg_dilated_grid() + avg_dilated_random(150, seed=11)


def _dilated_data(case: Case, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    x = rng.standard_normal(case.shape)
    g = rng.standard_normal(oracle.dilated_avg_pool(case.op, oracle.torch.zeros(case.shape), case.args).shape)
    return (np.round(x * 20) if dtype == "int64" else x), g


def _empty_int64(case: Case) -> bool:
    """An int64 window of padding taps only, its padding not counted and no divisor_override: 0 / 0, refused."""
    if case.args.get("count_include_pad", True) or case.args.get("divisor_override") is not None:
        return False
    ones = oracle.torch.ones(case.shape, dtype=oracle.torch.float64)
    return bool(oracle.dilated_avg_pool(case.op, ones, case.args).isnan().any())


def _run_dilated(backend, errors, case: Case, dtype: str) -> None:
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    fn = getattr(poolspec, case.op)
    x, g = _dilated_data(case, dtype)
    xb = backend.asarray(x, dtype)
    if dtype == "int64" and _empty_int64(case):
        with pytest.raises(ValueError, match="int64 has no"):
            fn(xb, **case.args)
        return
    ref = oracle.dilated_avg_reference(case.op, x, dtype, case.args, None if dtype == "int64" else g)
    out = fn(xb, **case.args)
    assert type(out) is type(xb) and out.dtype == xb.dtype
    _check(backend, errors, case, dtype, "output", out, ref["output"])
    if dtype == "int64":
        return
    grad = getattr(poolspec, case.op + "_backward")(backend.asarray(g, dtype), xb, **case.args)
    assert type(grad) is type(xb) and grad.dtype == xb.dtype
    _check(backend, errors, case, dtype, "grad_input", grad, ref["grad_input"])
    assert np.isfinite(backend.to_numpy(grad).astype(np.float64)).all()  # a NaN window reaches no input cell


@pytest.mark.parametrize("case", DILATED, ids=[c.id for c in DILATED])
def test_dilated_float64(backend, errors, case):
    _run_dilated(backend, errors, case, "float64")


_DILATED_SUBSET = [c for c in DILATED if "random" not in c.flags][::3]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("case", _DILATED_SUBSET, ids=[c.id for c in _DILATED_SUBSET])
def test_dilated_lower_precision_and_int64(backend, errors, case, dtype):
    _run_dilated(backend, errors, case, dtype)


def test_dilation_1_is_the_default_bit_for_bit(backend):
    """dilation=1 (int or tuple) is the same call as none: outputs and gradients bit for bit."""
    rng = np.random.default_rng(3)
    for n in (1, 2, 3):
        x = backend.asarray(rng.standard_normal((2, 3) + (9,) * n))
        for args in (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                     dict(kernel_size=2, padding=((1, 0),) * n, divisor_override=3)):
            fn, bw = getattr(poolspec, f"avg_pool{n}d"), getattr(poolspec, f"avg_pool{n}d_backward")
            y = backend.to_numpy(fn(x, **args))
            g = backend.asarray(rng.standard_normal(y.shape))
            gx = backend.to_numpy(bw(g, x, **args))
            for d in (1, (1,) * n):
                assert backend.to_numpy(fn(x, **args, dilation=d)).tobytes() == y.tobytes()
                assert backend.to_numpy(bw(g, x, **args, dilation=d)).tobytes() == gx.tobytes()


def test_dilated_empty_window_is_nan_without_warnings():
    """A window of padding taps only: 0 counting the padding, NaN (0 / 0) without; nothing divides by zero
    (no NumPy warning), and the gradient reaching the input stays finite."""
    import warnings

    x = np.arange(1.0, 3.0)[None, None]  # L = 2; windows start at -4 .. 1, taps 4 apart: -2 and -1 see no cell
    args = dict(kernel_size=2, stride=1, padding=((4, 4),), dilation=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counted = poolspec.avg_pool1d(x, **args)
        y = poolspec.avg_pool1d(x, **args, count_include_pad=False)
        gx = poolspec.avg_pool1d_backward(np.ones_like(y), x, **args, count_include_pad=False)
    ref = oracle.dilated_avg_reference("avg_pool1d", x, "float64", dict(args, count_include_pad=False),
                                       np.ones(y.shape))
    np.testing.assert_array_equal(counted[0, 0], [0.5, 1.0, 0.0, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(y[0, 0], [1.0, 2.0, np.nan, np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(y, ref["output"])
    np.testing.assert_array_equal(gx, ref["grad_input"])
    np.testing.assert_array_equal(gx[0, 0], [2.0, 2.0])
    with pytest.raises(ValueError, match="int64 has no"):
        poolspec.avg_pool1d(x.astype(np.int64), **args, count_include_pad=False)
    assert poolspec.avg_pool1d(x.astype(np.int64), **args, count_include_pad=False, divisor_override=1).shape == y.shape


@pytest.mark.parametrize("dilation, kind", [(0, ValueError), (-1, ValueError), ((2, 0), ValueError),
                                            (1.0, TypeError), (True, TypeError), ((2, 2, 2), ValueError)])
def test_dilation_refusals(dilation, kind):
    with pytest.raises(kind, match="dilation"):
        poolspec.avg_pool2d(np.zeros((1, 1, 6, 6)), 2, dilation=dilation)
    with pytest.raises(kind, match="dilation"):
        poolspec.avg_pool2d_backward(np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 6, 6)), 2, dilation=dilation)


def test_dilated_padding_pairs_reach_the_dilated_window():
    """(low, high) pairs may reach (k - 1) * d, no further; torch's int padding stays at most k // 2."""
    x = np.ones((1, 1, 5))
    assert poolspec.avg_pool1d(x, 2, padding=((3, 3),), dilation=3).shape == (1, 1, 4)  # (5 + 6 - 4) // 2 + 1
    with pytest.raises(ValueError, match=r"\(kernel_size - 1\) \* dilation"):
        poolspec.avg_pool1d(x, 2, padding=((4, 0),), dilation=3)
    with pytest.raises(ValueError, match="half the kernel"):
        poolspec.avg_pool1d(x, 2, padding=2, dilation=3)
