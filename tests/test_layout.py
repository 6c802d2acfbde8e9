"""layout="channels_last" on every op with an image input: the same values, indices and gradients as the
channels-first call on the transposed arrays, bit for bit, on every installed backend (the kernels read the
arrays through a permuted view), with no copy of the input; shapes from the cards; under jit and compile."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import poolspec
from poolspec import registry
from poolspec.conformance import golden
from poolspec.conformance.families import family

OPS = [c.name for c in poolspec.spec.cards() if c.name != "affine_grid"]


def _cases(op: str, count: int) -> list[golden.Golden]:
    cases = [c for c in golden.cases([op]) if c.dtype == "float64" and c.error is None]
    return cases[:: max(1, len(cases) // count)][:count]


def _last(a: np.ndarray, n: int) -> np.ndarray:
    """A channels-first array (N, C, *S) or (C, *S) laid out channels-last, as a contiguous copy."""
    lead = a.ndim - n - 1
    return np.ascontiguousarray(np.moveaxis(a, lead, -1))


def _first(a: np.ndarray, n: int) -> np.ndarray:
    return np.moveaxis(a, -1, a.ndim - n - 1)


def _same(op: str, got: np.ndarray, want: np.ndarray, name: str) -> None:
    """Bit for bit, but for grid_sample on torch, whose sums of corner products may take another vectorised
    order on a strided view (1 ulp)."""
    if op == "grid_sample":
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("op", OPS)
def test_channels_last_equals_channels_first(backend, op):
    fam = family(op)
    fn, bw = getattr(poolspec, op), getattr(poolspec, f"{op}_backward")
    for case in _cases(op, 4 if backend.name in ("numpy", "torch") else 2):
        a = case.arrays()
        x = a["input"]
        rank = registry.op(op).rank
        n = rank if rank else x.ndim - 2  # interpolate and grid_sample: any rank
        args = dict(case.arguments)
        rest = {p: a[p] for p in fam.ports[1:] if p in a}
        if "indices" in rest:  # max_unpool's indices have x's layout
            rest["indices"] = _last(rest["indices"], n)
        keywords = {fam.keyword_ports.get(p, p): backend.asarray(v) for p, v in rest.items()}
        if op == "grid_sample":
            keywords = {"grid": backend.asarray(a["grid"])}
        if op.startswith("fractional"):
            keywords = {"_random_samples": backend.asarray(a["samples"])}
        want = fn(backend.asarray(x), *( [backend.asarray(a["indices"])] if op.startswith("max_unpool") else []),
                  **({k: v for k, v in keywords.items() if k != "indices"}), **args)
        got = fn(backend.asarray(_last(x, n)), *([keywords["indices"]] if op.startswith("max_unpool") else []),
                 **{k: v for k, v in keywords.items() if k != "indices"}, **args, layout="channels_last")
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            _same(op, _first(backend.to_numpy(g), n), backend.to_numpy(w), case.name)
        if "grad_output" not in a:
            continue
        go = a["grad_output"]
        extra = {"indices": backend.asarray(_last(a["indices"], n))} if op.startswith("max_unpool") else {}
        lead = (extra.pop("indices"),) if op.startswith("max_unpool") else ()
        others = {k: v for k, v in keywords.items() if k != "indices"}
        dw = bw(backend.asarray(go), backend.asarray(x),
                *((backend.asarray(a["indices"]),) if lead else ()), **others, **args)
        dg = bw(backend.asarray(_last(go, n)), backend.asarray(_last(x, n)), *lead, **others, **args,
                layout="channels_last")
        if op == "grid_sample":
            _same(op, _first(backend.to_numpy(dg[0]), n), backend.to_numpy(dw[0]), case.name)
            # the grid's gradient sums over the channels, a reduction whose order a backend may pick by layout
            np.testing.assert_allclose(backend.to_numpy(dg[1]), backend.to_numpy(dw[1]), rtol=1e-13, atol=1e-15)
        else:
            np.testing.assert_array_equal(_first(backend.to_numpy(dg), n), backend.to_numpy(dw), err_msg=case.name)


LAID_OUT = [
    ("max_pool2d 3/2/1", lambda a, **k: poolspec.max_pool2d(a, 3, 2, 1, **k),
     lambda g, a, **k: poolspec.max_pool2d_backward(g, a, 3, 2, 1, **k)),
    ("max_pool2d 2", lambda a, **k: poolspec.max_pool2d(a, 2, **k),
     lambda g, a, **k: poolspec.max_pool2d_backward(g, a, 2, **k)),
    ("avg_pool2d 2", lambda a, **k: poolspec.avg_pool2d(a, 2, **k),
     lambda g, a, **k: poolspec.avg_pool2d_backward(g, a, 2, **k)),
    ("adaptive_avg_pool2d 1", lambda a, **k: poolspec.adaptive_avg_pool2d(a, 1, **k),
     lambda g, a, **k: poolspec.adaptive_avg_pool2d_backward(g, a, 1, **k)),
    ("adaptive_avg_pool2d 5", lambda a, **k: poolspec.adaptive_avg_pool2d(a, 5, **k),
     lambda g, a, **k: poolspec.adaptive_avg_pool2d_backward(g, a, 5, **k)),
    ("adaptive_max_pool2d 5", lambda a, **k: poolspec.adaptive_max_pool2d(a, 5, **k),
     lambda g, a, **k: poolspec.adaptive_max_pool2d_backward(g, a, 5, **k)),
    ("adaptive_max_pool2d 1", lambda a, **k: poolspec.adaptive_max_pool2d(a, 1, **k),
     lambda g, a, **k: poolspec.adaptive_max_pool2d_backward(g, a, 1, **k)),
    ("bilinear x2", lambda a, **k: poolspec.interpolate(a, scale_factor=2, mode="bilinear", **k),
     lambda g, a, **k: poolspec.interpolate_backward(g, a, scale_factor=2, mode="bilinear", **k)),
    ("bicubic", lambda a, **k: poolspec.interpolate(a, size=(7, 9), mode="bicubic", **k),
     lambda g, a, **k: poolspec.interpolate_backward(g, a, size=(7, 9), mode="bicubic", **k)),
    # 3-d ops whose torch counterparts return contiguous tensors for channels_last_3d inputs: a
    # layout="channels_last" call still gets dense (N, D, H, W, C) results, not a copy to torch's format
    ("3d avg_pool3d 2", lambda a, **k: poolspec.avg_pool3d(a, 2, **k),
     lambda g, a, **k: poolspec.avg_pool3d_backward(g, a, 2, **k)),
    ("3d adaptive_avg_pool3d 4", lambda a, **k: poolspec.adaptive_avg_pool3d(a, 4, **k),
     lambda g, a, **k: poolspec.adaptive_avg_pool3d_backward(g, a, 4, **k)),
    ("3d adaptive_max_pool3d 4", lambda a, **k: poolspec.adaptive_max_pool3d(a, 4, **k),
     lambda g, a, **k: poolspec.adaptive_max_pool3d_backward(g, a, 4, **k)),
    ("3d max_pool3d 2", lambda a, **k: poolspec.max_pool3d(a, 2, **k),
     lambda g, a, **k: poolspec.max_pool3d_backward(g, a, 2, **k)),
]


@pytest.mark.parametrize("name, forward, backward", LAID_OUT, ids=[c[0] for c in LAID_OUT])
def test_channels_last_results_are_laid_out_channels_last(backend, name, forward, backward):
    """NumPy and torch: the value and the gradient of a channels-last call on (N, H, W, C) data are dense
    (N, H, W, C) arrays (nothing left for the caller to copy), and equal the channels-first call's."""
    if backend.name not in ("numpy", "torch"):
        pytest.skip("memory layout is NumPy's and torch's")
    n = 3 if name.startswith("3d") else 2
    x = np.random.default_rng(3).standard_normal((2, 8, 10, 12, 16) if n == 3 else (2, 24, 26, 16))
    y = forward(backend.asarray(x), layout="channels_last")
    g = np.random.default_rng(4).standard_normal(tuple(y.shape))
    dx = backward(backend.asarray(g), backend.asarray(x), layout="channels_last")
    for a in (y, dx):
        assert a.flags.c_contiguous if backend.name == "numpy" else a.is_contiguous(), (name, a.shape)
    xf, gf = np.moveaxis(x, -1, 1).copy(), np.moveaxis(g, -1, 1).copy()
    want = backend.to_numpy(forward(backend.asarray(xf)))
    if name == "adaptive_avg_pool2d 1":  # the backend's whole-plane sum, whose order follows memory (torch's too)
        np.testing.assert_allclose(_first(backend.to_numpy(y), n), want, rtol=1e-13)
    else:
        np.testing.assert_array_equal(_first(backend.to_numpy(y), n), want)
    np.testing.assert_array_equal(_first(backend.to_numpy(dx), n),
                                  backend.to_numpy(backward(backend.asarray(gf), backend.asarray(xf))))


def test_max_pool_indices_and_their_backward_in_channels_last():
    x = np.random.default_rng(0).standard_normal((2, 9, 8, 3))
    y, idx = poolspec.max_pool2d(x, 3, 2, padding="same", return_indices=True, layout="channels_last")
    y0, idx0 = poolspec.max_pool2d(np.moveaxis(x, -1, 1), 3, 2, padding="same", return_indices=True)
    np.testing.assert_array_equal(np.moveaxis(idx, -1, 1), idx0)  # flat positions in each (H, W) plane
    g = np.random.default_rng(1).standard_normal(y.shape)
    np.testing.assert_array_equal(
        poolspec.max_pool2d_backward(g, x, 3, 2, padding="same", indices=idx, layout="channels_last"),
        np.moveaxis(poolspec.max_pool2d_backward(np.moveaxis(g, -1, 1), np.moveaxis(x, -1, 1), 3, 2,
                                                 padding="same", indices=idx0), 1, -1))
    up = poolspec.max_unpool2d(y, idx, 3, 2, output_size=(10, 8), layout="channels_last")
    assert up.shape == (2, 10, 8, 3)
    np.testing.assert_array_equal(np.moveaxis(up, -1, 1), poolspec.max_unpool2d(y0, idx0, 3, 2, output_size=(10, 8)))


@pytest.mark.parametrize("memory", [(0, 2, 3, 1), (1, 2, 3, 0), (2, 3, 0, 1), (0, 1, 2, 3)])
def test_max_pool_backward_on_permuted_memory(backend, memory):
    """The max pool's gradient on an array whose axes are permuted in memory (channels-last, or planes
    innermost) equals the contiguous array's bit for bit; on NumPy and torch it is laid out as the input is."""
    rng = np.random.default_rng(sum(memory))
    x = rng.standard_normal((2, 3, 9, 8))
    x[0, 1, :3, :3] = x[0, 1, 0, 0]  # ties
    g = rng.standard_normal((2, 3, 5, 4))
    view = lambda a: np.ascontiguousarray(a.transpose(memory)).transpose(np.argsort(memory))  # noqa: E731
    want = poolspec.max_pool2d_backward(backend.asarray(g), backend.asarray(x), 3, 2, 1)
    got = poolspec.max_pool2d_backward(backend.asarray(view(g)), backend.asarray(view(x)), 3, 2, 1)
    np.testing.assert_array_equal(backend.to_numpy(got), backend.to_numpy(want))
    if backend.name == "numpy":
        assert got.transpose(memory).flags.c_contiguous


def test_cards_resolve_channels_last_shapes():
    assert poolspec.output_shape("max_pool2d", ("N", 224, 224, 64), kernel_size=3, stride=2, padding="same",
                                 layout="channels_last") == ("N", 112, 112, 64)
    assert poolspec.output_shape("avg_pool1d", (7, 3), kernel_size=2, layout="channels_last") == (3, 3)
    assert poolspec.output_shape("interpolate", ("N", 10, 12, 3), size=(20, 24), mode="bilinear",
                                 layout="channels_last") == ("N", 20, 24, 3)
    assert poolspec.output_shape("grid_sample", ("N", 10, 12, 3), grid=("N", 4, 5, 2),
                                 layout="channels_last") == ("N", 4, 5, 3)


@pytest.mark.parametrize("bad, kind", [("NHWC", ValueError), ("channels-last", ValueError), (True, TypeError)])
def test_layout_errors_name_the_argument(bad, kind):
    with pytest.raises(kind, match="layout="):
        poolspec.avg_pool2d(np.zeros((1, 4, 4, 2)), 2, layout=bad)
    with pytest.raises(kind, match="layout="):
        poolspec.output_shape("avg_pool2d", (1, 4, 4, 2), kernel_size=2, layout=bad)


def test_channels_last_copies_nothing_to_change_layout():
    """NumPy: the peak allocated during a channels-last call is that of the channels-first call (no copy of the
    input into channels-first order)."""
    x = np.random.default_rng(0).standard_normal((4, 64, 64, 32))
    xf = np.ascontiguousarray(np.moveaxis(x, -1, 1))

    def peak(f):
        f()
        tracemalloc.start()
        f()
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    g = np.ones((4, 32, 32, 32))
    for call in (lambda a, **k: poolspec.avg_pool2d(a, 2, **k), lambda a, **k: poolspec.max_pool2d(a, 3, 2, 1, **k),
                 lambda a, **k: poolspec.interpolate(a, scale_factor=0.5, mode="bilinear", **k),
                 lambda a, **k: poolspec.max_pool2d_backward(g if k else np.moveaxis(g, -1, 1), a, 3, 2, 1, **k)):
        last = peak(lambda call=call: call(x, layout="channels_last"))
        first = peak(lambda call=call: call(xf))
        assert last <= 1.1 * first + 2**16, (last, first, x.nbytes)


def test_channels_last_under_jit_and_compile():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(0).standard_normal((2, 9, 8, 3)).astype(np.float32)
    f = jax.jit(lambda t: poolspec.interpolate(t, size=(5, 4), mode="bicubic", layout="channels_last"))
    np.testing.assert_allclose(np.asarray(f(x)), poolspec.interpolate(x, size=(5, 4), mode="bicubic",
                                                                      layout="channels_last"), atol=2e-6)
    g = jax.grad(lambda t: poolspec.max_pool2d(t, 2, layout="channels_last").sum())(x)
    assert g.shape == x.shape and float(g.sum()) == 2 * 4 * 4 * 3
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x)
    c = torch.compile(lambda a: poolspec.avg_pool2d(a, 2, padding="same", layout="channels_last"), fullgraph=True)
    torch.testing.assert_close(c(t), poolspec.avg_pool2d(t, 2, padding="same", layout="channels_last"))


@pytest.mark.parametrize("op, args", [("adaptive_max_pool2d", dict(output_size=(3, 4))),
                                      ("adaptive_max_pool1d", dict(output_size=5)),
                                      ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
                                      ("max_pool1d", dict(kernel_size=3, stride=2))])
def test_channels_last_winners_with_ties_and_nans(backend, op, args):
    """Winners read across the channels of channels-last memory (torch takes another reduction there): the
    first maximum of a window with ties, the last NaN of a window with NaNs, as torch's own op, forward and
    backward."""
    import torch

    n = int(op[-2])
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, size=(2, 24) + (9, 11)[:n]).astype(np.float64)  # many ties
    x[rng.random(x.shape) < 0.05] = np.nan
    x[0, 0] = np.nan  # one all-NaN plane
    g = rng.standard_normal(tuple(getattr(torch.nn.functional, op)(torch.from_numpy(x), **args).shape))
    t = torch.from_numpy(x).requires_grad_()
    want, want_idx = getattr(torch.nn.functional, op)(t, **args, return_indices=True)
    (want_dx,) = torch.autograd.grad(want, t, torch.from_numpy(g))
    fn, bw = getattr(poolspec, op), getattr(poolspec, f"{op}_backward")
    got, idx = fn(backend.asarray(_last(x, n)), **args, return_indices=True, layout="channels_last")
    np.testing.assert_array_equal(_first(backend.to_numpy(got), n), want.detach().numpy())
    np.testing.assert_array_equal(_first(backend.to_numpy(idx), n), want_idx.numpy())
    dx = bw(backend.asarray(_last(g, n)), backend.asarray(_last(x, n)), **args, layout="channels_last")
    np.testing.assert_array_equal(_first(backend.to_numpy(dx), n), want_dx.numpy())


@pytest.mark.parametrize("op, shape, args", [
    ("avg_pool1d", (3, 40, 96), dict(kernel_size=4)),
    ("avg_pool2d", (2, 24, 32, 30), dict(kernel_size=2)),
    ("avg_pool2d", (2, 20, 27, 30), dict(kernel_size=3, stride=3)),
    ("avg_pool3d", (2, 16, 8, 12, 10), dict(kernel_size=2)),
    ("adaptive_avg_pool2d", (2, 24, 30, 28), dict(output_size=(10, 7))),
    ("lp_pool2d", (2, 24, 32, 30), dict(norm_type=2.0, kernel_size=2)),
    ("interpolate", (2, 24, 20, 18), dict(scale_factor=2, mode="nearest")),  # its transpose sums 2x2 blocks
    ("interpolate", (2, 12, 10, 6, 8), dict(scale_factor=(3, 2, 4), mode="nearest")),
])
def test_large_tiling_sums_in_either_layout(backend, op, shape, args):
    """Windows that tile arrays past the small-array size, whose cells NumPy adds in one einsum per axis where
    runs of cells lie inside the axis: the same sums as the strided slices (values of mixed magnitudes, so
    that another order of addition shows), bit for bit in either layout, and torch's values and gradients."""
    import torch

    n = len(shape) - 2
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 7, size=shape)
    t = torch.from_numpy(x).requires_grad_()
    want = getattr(torch.nn.functional, op)(t, **args)
    g = rng.standard_normal(tuple(want.shape))
    (want_dx,) = torch.autograd.grad(want, t, torch.from_numpy(g))
    fn, bw = getattr(poolspec, op), getattr(poolspec, f"{op}_backward")
    first = backend.to_numpy(fn(backend.asarray(x), **args))
    last = backend.to_numpy(fn(backend.asarray(_last(x, n)), **args, layout="channels_last"))
    np.testing.assert_array_equal(_first(last, n), first)
    # sums that cancel: torch adds in another order, so the bound is a few ulps of the largest term
    atol = 1e-15 * np.abs(x).max()
    np.testing.assert_allclose(first, want.detach().numpy(), rtol=1e-12, atol=atol)
    dx = backend.to_numpy(bw(backend.asarray(g), backend.asarray(x), **args))
    dx_last = backend.to_numpy(bw(backend.asarray(_last(g, n)), backend.asarray(_last(x, n)), **args,
                                  layout="channels_last"))
    np.testing.assert_array_equal(_first(dx_last, n), dx)
    np.testing.assert_allclose(dx, want_dx.numpy(), rtol=1e-12, atol=1e-15 * np.abs(g).max())
