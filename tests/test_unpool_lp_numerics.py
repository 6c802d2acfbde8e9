"""max_unpool and lp_pool against torch 2.13 on every installed backend: values and gradients, with
duplicate indices (poolspec's documented winner), windows whose power sum is 0, the ceil_mode K/n scale,
and p = +-inf."""

from __future__ import annotations

import contextlib
import math
import zlib

import numpy as np
import pytest

import poolspec
from poolspec.families.max_unpool.conformance import unpool_indices

from cases import Case, lp_grid, lp_random, unpool_grid, unpool_random

oracle = pytest.importorskip("oracle")
torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {"float64": (1e-12, 1e-13), "float32": (2e-5, 2e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}
FLOATS = ("float16", "bfloat16", "float32", "float64")
_JAX_DTYPES = ("float64", "float32", "bfloat16", "int32")


def _skip(backend, case: Case, dtype: str) -> None:
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    if backend.name == "jax" and (dtype not in _JAX_DTYPES or
                                  ("random" in case.flags and zlib.crc32(case.id.encode()) % 3)):
        pytest.skip("JAX runs a third of the random configurations (compile time)")


def _rng(case: Case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def _check(backend, errors, case, dtype, name, got, want):
    rtol, atol = TOL.get(dtype, (0, 0))
    got_np = backend.to_numpy(got)
    errors.record(backend.name, case.op, dtype, np.nan_to_num(got_np), np.nan_to_num(want))
    assert got_np.shape == want.shape, name
    np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                               err_msg=f"{name} of {case.id} ({dtype})")


# ------------------------------------------------------------------------------------------ max_unpool

def _unpool_inputs(case: Case) -> tuple[np.ndarray, np.ndarray, dict, tuple[int, ...]]:
    """(x, indices, unpool arguments, output spatial size): indices made by torch's max_pool, or drawn."""
    n = int(case.op[-2])
    args = {k: v for k, v in case.args.items() if k != "indices"}
    kind = case.args["indices"]
    rng = _rng(case)
    pool = getattr(F, f"max_pool{n}d")
    pool_args = dict(kernel_size=args["kernel_size"], stride=args.get("stride"), padding=args.get("padding", 0))
    data = np.round(rng.standard_normal(case.shape) * 2) / 2
    values, idx = pool(torch.from_numpy(data), **pool_args, return_indices=True)
    x, idx = values.numpy(), idx.numpy()

    def tup(v, default):
        v = default if v is None else v
        return (v,) * n if isinstance(v, int) else tuple(v)

    k, s, p = tup(args["kernel_size"], 1), tup(args.get("stride"), args["kernel_size"]), tup(args.get("padding"), 0)
    default = tuple((x.shape[-n + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    out_spatial = tuple(args["output_size"][-n:]) if args.get("output_size") else default
    size = math.prod(out_spatial)
    if kind != "pool":
        x = rng.standard_normal(x.shape)
        planes, m = int(np.prod(x.shape[:-n])), math.prod(x.shape[-n:])
        idx = unpool_indices(rng, kind, planes, m, size).reshape(x.shape)
    return x, idx, args, out_spatial


def _unpool_rule(x: np.ndarray, idx: np.ndarray, g: np.ndarray, n: int, out_spatial: tuple[int, ...]):
    """The documented rule, written as the sequential loop it describes: assign in row-major order (the
    last duplicate wins); each input's gradient is g at its index if it is that index's winner, else 0."""
    lead = x.shape[:-n]
    xs, ids = x.reshape(-1, math.prod(x.shape[-n:])), idx.reshape(-1, math.prod(x.shape[-n:]))
    gs = g.reshape(xs.shape[0], math.prod(out_spatial))
    out = np.zeros((xs.shape[0], math.prod(out_spatial)), dtype=x.dtype)
    grad = np.zeros(xs.shape, dtype=np.float64)
    for plane in range(xs.shape[0] if out.size else 0):  # an empty output plane places nothing
        winner = {}
        for o, j in enumerate(ids[plane]):
            out[plane, j] = xs[plane, o]
            winner[int(j)] = o
        for j, o in winner.items():
            grad[plane, o] = gs[plane, j]
    return out.reshape(lead + out_spatial), grad.reshape(x.shape)


UNPOOL = unpool_grid() + unpool_random(150)


def _unpool_run(backend, errors, case: Case, dtype: str) -> None:
    _skip(backend, case, dtype)
    n = int(case.op[-2])
    x, idx, args, out_spatial = _unpool_inputs(case)
    if dtype not in FLOATS:
        x = np.round(x * 4)
    fn, backward = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")
    xb, ib = backend.asarray(x, dtype), backend.asarray(idx)
    torch_fn = getattr(F, case.op)
    try:
        want_t = torch_fn(torch.from_numpy(x), torch.from_numpy(idx), **args).numpy()
    except (RuntimeError, ValueError, IndexError):
        with pytest.raises(ValueError):
            backend.to_numpy(fn(xb, ib, **args))  # Dask checks index values when it computes
        return
    g = np.random.default_rng(1).standard_normal(tuple(x.shape[:-n]) + out_spatial)
    want, want_grad = _unpool_rule(x, idx, g, n, out_spatial)
    flat = idx.reshape(-1, math.prod(x.shape[-n:])) if x.size else np.zeros((0, 1), dtype=np.int64)
    duplicated = any(len(set(row.tolist())) < row.size for row in flat)
    if not duplicated:  # torch agrees with the rule where its winner is defined
        np.testing.assert_array_equal(want, want_t)
        xt = torch.from_numpy(x.astype(np.float64)).requires_grad_(True)
        if x.size and want.size:  # torch's backward indexes out of bounds for an empty output
            (tg,) = torch.autograd.grad(torch_fn(xt, torch.from_numpy(idx), **args), xt, torch.from_numpy(g))
            np.testing.assert_array_equal(want_grad, tg.numpy())
    out = fn(xb, ib, **args)
    assert type(out) is type(xb) and out.dtype == xb.dtype
    cast = want.astype(np.float32) if dtype == "bfloat16" else want.astype(np.dtype(dtype))
    _check(backend, errors, case, dtype, "output", out, cast.astype(np.float64))
    if dtype in FLOATS:
        gb = backend.asarray(g, dtype)
        g_cast = backend.to_numpy(gb).astype(np.float64)
        _, rule_grad = _unpool_rule(x, idx, g_cast, n, out_spatial)
        _check(backend, errors, case, dtype, "grad", backward(gb, xb, ib, **args), rule_grad)


@pytest.mark.parametrize("case", UNPOOL, ids=[c.id for c in UNPOOL])
def test_unpool_float64(backend, errors, case):
    _unpool_run(backend, errors, case, "float64")


_UNPOOL_SUBSET = [c for c in UNPOOL if "random" not in c.flags][::2]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "int32", "uint8"])
@pytest.mark.parametrize("case", _UNPOOL_SUBSET, ids=[c.id for c in _UNPOOL_SUBSET])
def test_unpool_other_dtypes(backend, errors, case, dtype):
    _unpool_run(backend, errors, case, dtype)


def test_unpool_index_out_of_range_names_it(backend):
    x = backend.asarray(np.ones((1, 1, 2, 2)))
    # index values are checked where they are known: at the call, or on Dask when the graph is computed
    with pytest.raises(ValueError, match="indices contains 18"):
        backend.to_numpy(poolspec.max_unpool2d(x, backend.asarray(np.array([[[[0, 1], [18, 3]]]])), 2))
    with pytest.raises(ValueError, match="indices contains -1"):
        backend.to_numpy(poolspec.max_unpool2d(x, backend.asarray(np.array([[[[0, 1], [-1, 3]]]])), 2))
    with pytest.raises(TypeError, match="indices.dtype"):
        poolspec.max_unpool2d(x, backend.asarray(np.zeros((1, 1, 2, 2))), 2)
    with pytest.raises(ValueError, match="indices.shape"):
        poolspec.max_unpool2d(x, backend.asarray(np.zeros((1, 1, 2, 1), dtype=np.int64)), 2)


@pytest.mark.parametrize("as_on_a_gpu", [False, True], ids=["cpu-paths", "gpu-paths"])
def test_unpool_duplicates_keep_the_last_bits(backend, as_on_a_gpu, monkeypatch):
    """Repeated indices whose values differ only in their bits (0.0 and -0.0, two NaNs) and ones whose values
    are identical: the last in row-major order wins bit for bit, and the gradient goes to the winners only -
    even where the backend's indexed writes land in another order (as a GPU's may: simulated here by
    writing in reverse), so that a write that merely reads back equal could leave either zero's sign."""
    from poolspec.bench_counts import as_on_a_gpu as gpu_paths
    from poolspec.kernels import unpool

    put_rows = unpool.put_rows

    def reversed_put(mod, out, rows, values):
        flip = (lambda a: a.flip(-1)) if mod.__name__ == "torch" else (lambda a: np.ascontiguousarray(a[..., ::-1]))
        put_rows(mod, out, flip(rows), flip(values if values.shape == rows.shape else values.expand(rows.shape)
                                             if mod.__name__ == "torch" else np.broadcast_to(values, rows.shape)))

    monkeypatch.setattr(unpool, "put_rows", reversed_put)

    nan_a = np.frombuffer(np.array([0x7FF8000000000001], dtype=np.uint64).tobytes(), dtype=np.float64)[0]
    nan_b = np.frombuffer(np.array([0x7FF8000000000002], dtype=np.uint64).tobytes(), dtype=np.float64)[0]
    # one call each: a call whose writes read back unequal anywhere takes the sorted path whole
    for values, where in [([0.0, -0.0, 3.0, 3.0], [1, 1, 2, 2]), ([-0.0, 0.0, 5.0, 5.0], [0, 0, 3, 3]),
                          ([nan_a, nan_b, 1.0, 2.0], [2, 2, 0, 1]), ([7.0, 7.0, 7.0, 7.0], [3, 3, 3, 3]),
                          ([1.0, 2.0, 3.0, 4.0], [5, 4, 0, 1])]:
        x, idx = np.array([[values]]), np.array([[where]], dtype=np.int64)
        g = np.arange(1.0, 7.0).reshape(1, 1, 6)
        want, want_grad = _unpool_rule(x, idx, g, 1, (6,))
        with gpu_paths() if as_on_a_gpu else contextlib.nullcontext():
            xb, ib = backend.asarray(x), backend.asarray(idx)
            got = backend.to_numpy(poolspec.max_unpool1d(xb, ib, 3, 1))
            grad = backend.to_numpy(poolspec.max_unpool1d_backward(backend.asarray(g), xb, ib, 3, 1))
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
        np.testing.assert_array_equal(grad, want_grad)


# ------------------------------------------------------------------------------------------ lp_pool

LP = lp_grid() + lp_random(250)


def _lp_data(case: Case) -> np.ndarray:
    rng = _rng(case)
    x = np.round(rng.standard_normal(case.shape) * 4) / 4
    if x.ndim and x.shape[-1] > 2:
        x[..., :2] = 0.0  # a window of zeros: S == 0, gradient 0
    p = case.args["norm_type"]
    if math.isfinite(p) and p != int(p) and zlib.crc32(case.id.encode()) % 2:
        x = np.abs(x)  # half of the fractional-p cases without the NaNs of negative powers
    return x


def _lp_run(backend, errors, case: Case, dtype: str) -> None:
    _skip(backend, case, dtype)
    fn, backward = getattr(poolspec, case.op), getattr(poolspec, case.op + "_backward")
    x = _lp_data(case)
    xb = backend.asarray(x, dtype)
    if oracle.raises(case.op, case.shape, "float64", case.args):
        with pytest.raises((ValueError, TypeError)):
            fn(xb, **case.args)
        return
    if dtype not in FLOATS:
        with pytest.raises(TypeError, match="dtype"):  # deviation lp_pool_integer_input
            fn(xb, **case.args)
        return
    g = np.random.default_rng(1).standard_normal(poolspec.output_shape(case.op, case.shape, **case.args))
    ref = oracle.reference(case.op, x, dtype, case.args, g)
    out = fn(xb, **case.args)
    assert type(out) is type(xb) and out.dtype == xb.dtype
    _check(backend, errors, case, dtype, "output", out, ref["output"])
    _check(backend, errors, case, dtype, "grad", backward(backend.asarray(g, dtype), xb, **case.args),
           ref["grad_input"])


@pytest.mark.parametrize("case", LP, ids=[c.id for c in LP])
def test_lp_float64(backend, errors, case):
    _lp_run(backend, errors, case, "float64")


_LP_SUBSET = [c for c in LP if "random" not in c.flags][::3]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("case", _LP_SUBSET, ids=[c.id for c in _LP_SUBSET])
def test_lp_other_dtypes(backend, errors, case, dtype):
    _lp_run(backend, errors, case, dtype)


def test_lp_rules_by_hand():
    """Section 4's worked examples: the ceil_mode K/n scale and the zero gradient at S == 0."""
    ones = np.ones((1, 3))
    assert poolspec.lp_pool1d(ones, 1, 2, ceil_mode=True).tolist() == [[2.0, 2.0]]
    grad = poolspec.lp_pool1d_backward(np.ones((1, 1)), np.zeros((1, 2)), 2.0, 2)
    assert grad.tolist() == [[0.0, 0.0]]
    assert np.isnan(poolspec.lp_pool1d(np.array([[-2.0, 1.0]]), 3, 2)).all()
