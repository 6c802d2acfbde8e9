"""interpolate against torch 2.13 on every installed backend: forward and backward in every mode, rank, size or
scale rule, align_corners and direction.

Two torch references per call: torch's direct CPU call (forward and autograd), and the canonical rule - the tensor
product of per-axis matrices of torch's own generic kernels (``oracle.axis_matrix``), whose transpose is the
adjoint. Outside the recorded quirk zones (docs/TORCH_NUMERICS.md 5.6, ``interp_quirks`` of the family's conformance
record, itself checked against torch below) the two must agree and poolspec must equal them; inside, poolspec must
equal the canonical rule. Lanczos without antialiasing (torch has none) is checked against jax.image.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import poolspec
from poolspec.families.interpolate.conformance import interp_quirks

from cases import Case, interp_grid, interp_random

oracle = pytest.importorskip("oracle")
torch = pytest.importorskip("torch")
F = torch.nn.functional

GRID = interp_grid()
RANDOM = interp_random(300)
TOL = {"float64": (1e-12, 1e-13), "float32": (2e-5, 2e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
       "uint8": (0, 0)}
FLOATS = ("float16", "bfloat16", "float32", "float64")


def _lanczos_extension(kw: dict) -> bool:
    return kw["mode"] == "lanczos" and not kw.get("antialias")


def _torch_refuses(case: Case) -> bool:
    """torch decides validity; lanczos without antialias (poolspec's extension) is valid where torch's lanczos
    with antialias is."""
    kw = dict(case.args, antialias=True) if _lanczos_extension(case.args) else case.args
    try:
        F.interpolate(torch.zeros(case.shape, dtype=torch.float64), **kw)
    except Exception:
        return True
    return False


def _data(case: Case, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    if dtype == "uint8":
        return rng.integers(0, 256, case.shape).astype(np.uint8)
    return rng.standard_normal(case.shape)


def _skip(backend, case: Case, dtype: str) -> None:
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    # JAX compiles every configuration: a third of the grid and of the random calls (each mode and rank stays)
    if backend.name == "jax" and zlib.crc32(case.id.encode()) % 3:
        pytest.skip("JAX runs a third of the configurations (compile time)")


def _compare(backend, errors, case, dtype, what, got, want, rtol=None, atol=None):
    got_np = backend.to_numpy(got).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    r, a = TOL[dtype]
    errors.record(backend.name, f"interpolate:{case.args['mode']}", dtype, got_np, want)
    assert got_np.shape == want.shape, f"{what} shape of {case.id}"
    np.testing.assert_allclose(got_np, want, rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
                               err_msg=f"{what} of {case.id} ({dtype})")


def _run_float64(backend, errors, case: Case) -> None:
    _skip(backend, case, "float64")
    kw = case.args
    x = _data(case, "float64")
    xb = backend.asarray(x)
    if _torch_refuses(case):
        with pytest.raises((ValueError, TypeError)):
            poolspec.interpolate(xb, **kw)
        return
    y = poolspec.interpolate(xb, **kw)
    assert type(y) is type(xb) and y.dtype == xb.dtype
    mats = oracle.interp_matrices(case.shape, kw)
    canonical = oracle.apply_axes(x, mats)
    g = np.random.default_rng(1).standard_normal(canonical.shape)
    canonical_grad = oracle.apply_axes(g, mats, transpose=True)
    rtol = None
    if _lanczos_extension(kw):
        # jax.image's kernel is 1 for 0 < |x| <= 1e-3, off the exact sinc product by up to 2e-6
        near = any(oracle.jax_lanczos_near_integer(L, O, None if kw.get("recompute_scale_factor") else sf)
                   for L, O, sf in oracle.interp_axes(case.shape, kw))
        rtol = 5e-6 if near else None
        want, want_grad = canonical, canonical_grad
    else:
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        direct = F.interpolate(xt, **kw)
        direct_grad = (torch.autograd.grad(direct, xt, torch.from_numpy(g))[0].numpy() if direct.numel()
                       else np.zeros_like(x))
        direct = direct.detach().numpy()
        quirks = interp_quirks(case.shape, kw)
        # the canonical oracle is torch's rule wherever torch is consistent
        if not quirks["forward"]:
            np.testing.assert_allclose(canonical, direct, rtol=1e-12, atol=1e-13, err_msg="oracle, forward")
        if not quirks["backward"]:
            np.testing.assert_allclose(canonical_grad, direct_grad, rtol=1e-12, atol=1e-13, err_msg="oracle, grad")
        want = canonical if quirks["forward"] else direct
        want_grad = canonical_grad if quirks["backward"] else direct_grad
    _compare(backend, errors, case, "float64", "output", y, want, rtol=rtol)
    gx = poolspec.interpolate_backward(backend.asarray(g), xb, **kw)
    assert type(gx) is type(xb) and tuple(gx.shape) == case.shape
    _compare(backend, errors, case, "float64", "grad", gx, want_grad, rtol=rtol)


@pytest.mark.parametrize("case", GRID, ids=[c.id for c in GRID])
def test_grid_float64(backend, errors, case):
    _run_float64(backend, errors, case)


@pytest.mark.parametrize("case", RANDOM, ids=[c.id for c in RANDOM])
def test_random_float64(backend, errors, case):
    _run_float64(backend, errors, case)


# Arrays past kernels/blocks.SMALL cells: the periodic-run kernels (sums.phase_sum) instead of one gather per tap
LARGE = [
    Case("interpolate", (2, 3, 40, 44), {"scale_factor": 2.0, "mode": "bilinear"}),
    Case("interpolate", (2, 3, 40, 44), {"size": (61, 33), "mode": "bicubic", "align_corners": True}),
    Case("interpolate", (1, 3, 50, 47), {"scale_factor": 0.5, "mode": "bilinear", "antialias": True}),
    Case("interpolate", (2, 3, 1000), {"size": 1500, "mode": "linear"}),
    Case("interpolate", (1, 2, 12, 16, 20), {"scale_factor": 1.5, "mode": "trilinear"}),
    Case("interpolate", (2, 2, 48, 50), {"size": (20, 70), "mode": "nearest-exact"}),
    Case("interpolate", (2, 2, 48, 50), {"size": (20, 30), "mode": "area"}),
]


@pytest.mark.parametrize("case", LARGE, ids=[c.id for c in LARGE])
def test_large_float64(backend, errors, case):
    _run_float64(backend, errors, case)


_SUBSET = [c for c in GRID if not _lanczos_extension(c.args)][::4]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "uint8"])
@pytest.mark.parametrize("case", _SUBSET, ids=[c.id for c in _SUBSET])
def test_other_dtypes(backend, errors, case, dtype):
    """float32 against torch's float32 kernels; float16/bfloat16 against torch in float32 on the half values,
    rounded once (the documented rule); uint8 exactly (torch's integer pipeline in the interpolating modes)."""
    _skip(backend, case, dtype)
    kw = case.args
    x = _data(case, dtype)
    xb = backend.asarray(x, dtype)
    if _torch_refuses(case):
        with pytest.raises((ValueError, TypeError)):
            poolspec.interpolate(xb, **kw)
        return
    if dtype == "uint8" and kw["mode"] not in ("nearest", "nearest-exact"):
        try:  # torch's integer pipeline, bit for bit (tests/test_interpolate_uint8.py: random configurations)
            want = F.interpolate(torch.from_numpy(x), **kw).numpy()
        except (RuntimeError, NotImplementedError, ValueError):
            with pytest.raises(TypeError, match="x.dtype"):
                poolspec.interpolate(xb, **kw)
            return
        if torch.backends.cpu.get_cpu_capability() == "DEFAULT" and want.shape[-1] == 1:
            pytest.skip("no AVX2: torch's single-column uint8 bug for every channel count")
        want = oracle.uint8_interpolate(x, kw)  # the single-column bug's cases made right (its docstring)
        np.testing.assert_array_equal(backend.to_numpy(poolspec.interpolate(xb, **kw)), want)
        return
    y = poolspec.interpolate(xb, **kw)
    assert y.dtype == xb.dtype
    quirks = interp_quirks(case.shape, kw)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape))
    if dtype == "uint8":
        mats = oracle.interp_matrices(case.shape, kw)
        want = oracle.apply_axes(x.astype(np.float64), mats)
        if not quirks["forward"]:
            np.testing.assert_array_equal(F.interpolate(torch.from_numpy(x), **kw).numpy(), want)
        _compare(backend, errors, case, dtype, "output", y, want)
        return
    ref = oracle.reference("interpolate", x, dtype, kw, g)
    xs = backend.to_numpy(xb).astype(np.float64)  # the values in the dtype, as poolspec sees them
    mats = oracle.interp_matrices(case.shape, kw)
    rounded = backend.to_numpy(backend.asarray(oracle.apply_axes(xs, mats), dtype)).astype(np.float64)
    want = rounded if quirks["forward"] else ref["output"]
    _compare(backend, errors, case, dtype, "output", y, want)
    gb = backend.asarray(g, dtype)
    gs = backend.to_numpy(gb).astype(np.float64)
    canonical_grad = oracle.apply_axes(gs, mats, transpose=True)
    want_grad = canonical_grad if quirks["backward"] else ref["grad_input"]
    _compare(backend, errors, case, dtype, "grad", poolspec.interpolate_backward(gb, xb, **kw), want_grad)


def test_quirk_zones_are_exercised():
    """The grid reaches every recorded deviation zone, and in each one torch really differs from its generic
    rule on the grid's data (the zone is not a guess)."""
    seen: dict[str, int] = {}
    for case in GRID:
        if _lanczos_extension(case.args) or _torch_refuses(case):
            continue
        quirks = interp_quirks(case.shape, case.args)
        if not (quirks["forward"] or quirks["backward"]):
            continue
        x = _data(case, "float64")
        mats = oracle.interp_matrices(case.shape, case.args)
        xt = torch.from_numpy(x).requires_grad_(True)
        y = F.interpolate(xt, **case.args)
        g = np.random.default_rng(1).standard_normal(tuple(y.shape))
        (gt,) = torch.autograd.grad(y, xt, torch.from_numpy(g))
        if quirks["forward"] and not np.allclose(y.detach().numpy(), oracle.apply_axes(x, mats)):
            for d in quirks["forward"]:
                seen[d] = seen.get(d, 0) + 1
        if quirks["backward"] and not np.allclose(gt.numpy(), oracle.apply_axes(g, mats, transpose=True)):
            for d in quirks["backward"]:
                seen[d] = seen.get(d, 0) + 1
    recorded = {d["id"] for d in poolspec.spec.deviations("interpolate")}
    zones = {"interpolate_nearest_shortcut", "interpolate_bicubic_equal_size_backward",
             "interpolate_antialias_equal_size_backward", "interpolate_antialias_width_one"}
    assert zones <= recorded
    assert set(seen) == zones, seen


def test_torch_quirk_examples_by_hand():
    """docs/TORCH_NUMERICS.md 5.6's worked examples, and poolspec's canonical answers to them."""
    # nearest, L = 5, sf = 2.1: the generic kernel reads floor(i / 2.1)
    x = np.arange(5.0).reshape(1, 1, 5)
    assert poolspec.interpolate(x, scale_factor=2.1).ravel().tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]
    assert F.interpolate(torch.from_numpy(x), scale_factor=2.1).ravel().tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]
    x2 = np.arange(5.0).reshape(1, 1, 1, 5)
    shortcut = F.interpolate(torch.from_numpy(x2), scale_factor=(1.0, 2.1)).ravel().tolist()
    assert shortcut == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]  # torch's vectorized 2-d kernel: i >> 1
    assert poolspec.interpolate(x2, scale_factor=(1.0, 2.1)).ravel().tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]
    # nearest backward: counts of the generic forward, not the shortcut's
    g = poolspec.interpolate_backward(np.ones((1, 1, 10)), x, scale_factor=2.1)
    assert g.ravel().tolist() == [3, 2, 2, 2, 1]
    # antialias, width 1: rows must differ
    a = np.arange(16.0).reshape(1, 1, 4, 4)
    got = poolspec.interpolate(a, size=(2, 1), mode="bilinear", antialias=True).ravel()
    torch_rows = F.interpolate(torch.from_numpy(a), size=(2, 1), mode="bilinear", antialias=True).ravel()
    assert torch_rows[0] == torch_rows[1]  # the bug
    np.testing.assert_allclose(got, [4.357142857142857, 10.642857142857142], rtol=1e-12)
