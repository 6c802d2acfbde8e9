"""The max family against torch 2.13: values, int64 indices and gradients, with ties and NaNs, on every
installed backend."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import poolspec

from cases import Case, adaptive_grid, adaptive_random, max_grid, max_random

oracle = pytest.importorskip("oracle")
torch = pytest.importorskip("torch")

MAX = max_grid() + max_random(250) + adaptive_grid("max") + adaptive_random(120, kind="max")
TOL = {"float64": (1e-12, 1e-13), "float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}
FLOATS = ("float16", "bfloat16", "float32", "float64")


def _data(case: Case, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    if dtype in FLOATS:
        x = np.round(rng.standard_normal(case.shape) * 2) / 2  # many ties
        x[rng.random(case.shape) < 0.08] = np.nan
        x[rng.random(case.shape) < 0.04] = -np.inf
        return x
    info = np.iinfo(np.dtype(dtype))
    lo, hi = max(info.min, -6), min(info.max, 6)
    x = rng.integers(lo, hi + 1, case.shape)
    x[rng.random(case.shape) < 0.1] = info.min  # the padding value itself
    return x


def _torch_refuses(case: Case) -> bool:
    return oracle.raises(case.op, case.shape, "float64", {**case.args, "return_indices": True})


def _empty_channel_extension(case: Case) -> bool:
    """Deviation adaptive_pool3d_empty_channels: torch refuses a batched C = 0, poolspec returns the empty
    result."""
    ids = {d["id"] for d in poolspec.spec.deviations(case.op)}
    n = int(case.op[-2])
    return "adaptive_pool3d_empty_channels" in ids and len(case.shape) == n + 2 and case.shape[1] == 0


def _empty_window(case: Case) -> bool:
    """Deviation max_pool_empty_window: torch gives -inf and an out-of-range index; poolspec raises."""
    ref = oracle.max_reference(case.op, np.zeros(case.shape), "float64", case.args, None)
    return bool(np.isneginf(ref["output"]).any())


# JAX compiles every configuration (about 1 s for the max family's forward + backward programs): it runs the
# whole edge grid, a third of the random configurations and the dtypes whose code paths differ.
_JAX_DTYPES = ("float64", "float32", "bfloat16", "int32", "uint8")


def _run(backend, errors, case: Case, dtype: str) -> None:
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    if backend.name == "jax" and (dtype not in _JAX_DTYPES or
                                  ("random" in case.flags and zlib.crc32(case.id.encode()) % 3)):
        pytest.skip("JAX runs a third of the random configurations (compile time)")
    fn = getattr(poolspec, case.op)
    x = _data(case, dtype)
    xb = backend.asarray(x, dtype)
    if case.op.startswith("adaptive") and dtype not in FLOATS:
        with pytest.raises(TypeError, match="dtype"):  # torch: "adaptive_max_pool2d" not implemented for 'Long'
            fn(xb, **case.args)
        return
    if _torch_refuses(case):
        if _empty_channel_extension(case):
            values, indices = fn(xb, **case.args, return_indices=True)
            want = poolspec.output_shape(case.op, case.shape, **case.args)
            assert tuple(values.shape) == want and tuple(indices.shape) == want
            if dtype in FLOATS:
                grad = getattr(poolspec, case.op + "_backward")(backend.asarray(np.zeros(want), dtype), xb,
                                                                **case.args)
                assert tuple(grad.shape) == case.shape
            return
        with pytest.raises((ValueError, TypeError)):
            fn(xb, **case.args)
        return
    if _empty_window(case):
        with pytest.raises(ValueError, match="without a single input cell"):
            fn(xb, **case.args)
        return
    floating = dtype in FLOATS
    g = np.random.default_rng(1).standard_normal(poolspec.output_shape(case.op, case.shape, **case.args))
    ref = oracle.max_reference(case.op, x, dtype, case.args, g if floating else None)
    values, indices = fn(xb, **case.args, return_indices=True)
    only = fn(xb, **case.args)
    assert type(values) is type(xb) and values.dtype == xb.dtype
    got = backend.to_numpy(values)
    errors.record(backend.name, case.op, dtype, np.nan_to_num(got, nan=0.0), np.nan_to_num(ref["output"], nan=0.0))
    np.testing.assert_array_equal(got, ref["output"], err_msg=f"values of {case.id}")
    np.testing.assert_array_equal(backend.to_numpy(only), ref["output"])
    idx = backend.to_numpy(indices)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, ref["indices"], err_msg=f"indices of {case.id}")
    if not floating:
        return
    backward = getattr(poolspec, case.op + "_backward")
    gb = backend.asarray(g, dtype)
    for grad in (backward(gb, xb, **case.args), backward(gb, xb, **case.args, indices=indices)):
        got = backend.to_numpy(grad)
        errors.record(backend.name, case.op, dtype, got, ref["grad_input"])
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got, ref["grad_input"], rtol=rtol, atol=atol, err_msg=f"grad of {case.id}")


@pytest.mark.parametrize("case", MAX, ids=[c.id for c in MAX])
def test_float64(backend, errors, case):
    _run(backend, errors, case, "float64")


_SUBSET = [c for c in MAX if "random" not in c.flags]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("case", _SUBSET[::3], ids=[c.id for c in _SUBSET[::3]])
def test_other_dtypes(backend, errors, case, dtype):
    _run(backend, errors, case, dtype)


def test_nan_and_ties_rule():
    """First maximum wins a tie; a NaN wins and the last NaN's index is returned."""
    nan = np.nan
    x = np.array([[[1.0, 3.0, 3.0, 2.0], [3.0, nan, 1.0, nan], [0.0, 0.0, 0.0, 0.0], [nan, 5.0, 5.0, nan]]])
    values, idx = poolspec.max_pool2d(x, (1, 4), return_indices=True)
    assert idx.ravel().tolist() == [1, 7, 8, 15]
    assert np.isnan(values.ravel()[[1, 3]]).all()
    values, idx = poolspec.max_pool2d(x, 2, return_indices=True)
    want_v, want_i = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    assert idx.tolist() == want_i.tolist()


# Large windows take their own kernels (kernels/maxes.py): tiling windows of 16+ cells per axis are reduced at
# once, their gradient is one select over broadcast blocks, and large overlapping windows gather over the
# windows that cover each cell. Global pools are the common case (PointNet, attention pooling).
LARGE = [
    Case("max_pool1d", (2, 3, 70), {"kernel_size": 32}),                      # tiled, cells past the last window
    Case("max_pool1d", (2, 3, 64), {"kernel_size": 8}),                       # tiled route, sliced forward
    Case("max_pool2d", (2, 3, 16, 16), {"kernel_size": 16}),                  # global
    Case("max_pool2d", (2, 2, 35, 33), {"kernel_size": (16, 32)}),
    Case("max_pool2d", (2, 2, 12, 12), {"kernel_size": 4}),                   # tiled route only
    Case("max_pool2d", (2, 2, 13, 14), {"kernel_size": 9, "stride": 3, "padding": 2}),   # gathered route
    Case("max_pool2d", (1, 2, 20, 21), {"kernel_size": 9, "stride": 6, "dilation": 2}),  # gathered, dilated
    Case("max_pool3d", (1, 2, 8, 16, 16), {"kernel_size": (8, 16, 16)}),      # global 3-d
    Case("max_pool3d", (2, 2, 8, 9, 8), {"kernel_size": 4}),                  # gathered 3-d
    Case("adaptive_max_pool1d", (2, 4, 256), {"output_size": 1}),
    Case("adaptive_max_pool2d", (2, 3, 32, 32), {"output_size": 1}),
    Case("adaptive_max_pool2d", (2, 3, 28, 28), {"output_size": 7}),
    Case("adaptive_max_pool3d", (1, 3, 8, 16, 16), {"output_size": 1}),
    Case("adaptive_max_pool3d", (1, 2, 3, 16, 32), {"output_size": (1, 1, 2)}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("case", LARGE, ids=[c.id for c in LARGE])
def test_large_windows(backend, errors, case, dtype):
    _run(backend, errors, case, dtype)


FOREIGN = [
    Case("max_pool2d", (2, 3, 9, 11), {"kernel_size": 3, "stride": 2, "padding": 1}),
    Case("max_pool2d", (1, 2, 8, 8), {"kernel_size": 2}),
    Case("max_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 3, "stride": 2}),
]


@pytest.mark.parametrize("case", FOREIGN, ids=[c.id for c in FOREIGN])
def test_backward_at_other_indices_follows_torch(backend, case):
    """Indices other than the forward's winners (any cell of the plane, repeats included): each cotangent is
    added at its index, as torch's max_pool*_with_indices_backward does; outside the plane is a ValueError."""
    if backend.name == "dask":
        pytest.skip("a lazy graph reads no values while it is built: indices are taken as the winners")
    n = int(case.op[-2])
    x = np.random.default_rng(3).standard_normal(case.shape)
    shape = poolspec.output_shape(case.op, case.shape, **case.args)
    g = np.random.default_rng(4).standard_normal(shape)
    idx = np.random.default_rng(5).integers(0, int(np.prod(case.shape[-n:])), shape)
    a = case.args
    want = getattr(torch.ops.aten, f"{case.op}_with_indices_backward")(
        torch.from_numpy(g), torch.from_numpy(x), [a["kernel_size"]] * n, [a.get("stride", a["kernel_size"])] * n,
        [a.get("padding", 0)] * n, [1] * n, False, torch.from_numpy(idx))
    backward = getattr(poolspec, case.op + "_backward")
    got = backward(backend.asarray(g, "float64"), backend.asarray(x, "float64"), **a,
                   indices=backend.asarray(idx, "int64"))
    np.testing.assert_allclose(backend.to_numpy(got), want.numpy(), rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match=r"indices must lie in \[0, "):
        backward(backend.asarray(g, "float64"), backend.asarray(x, "float64"), **a,
                 indices=backend.asarray(idx + int(np.prod(case.shape[-n:])), "int64"))
