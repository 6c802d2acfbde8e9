"""Asymmetric (low, high) padding and TensorFlow's 'valid' / 'same' in the avg and max pools, against
``jax.lax.reduce_window`` (what Flax's pooling and ``jax.example_libraries.stax`` call) in float64: values, the
max pools' indices and the gradients, on every installed backend. torch has no asymmetric padding: lax's
windows are the independent reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

import poolspec

jax = pytest.importorskip("jax")
jnp, lax = jax.numpy, jax.lax


def _configs(seed: int, count: int) -> list[tuple[str, int, tuple[int, ...], dict]]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n = int(rng.integers(1, 4))
        op = str(rng.choice(["max", "avg"]))
        spatial = tuple(int(v) for v in rng.integers(1, 10, n))
        k = tuple(int(v) for v in rng.integers(1, 5, n))
        s = tuple(int(v) for v in rng.integers(1, 4, n))
        d = tuple(int(v) for v in rng.integers(1, 3, n)) if op == "max" else (1,) * n
        form = str(rng.choice(["pairs", "same", "valid"], p=[0.6, 0.3, 0.1]))
        padding = (tuple((int(rng.integers(0, (a - 1) * b + 1)), int(rng.integers(0, (a - 1) * b + 1)))
                         for a, b in zip(k, d)) if form == "pairs" else form)
        kw: dict = dict(kernel_size=k, stride=s, padding=padding)
        if op == "max":
            kw["dilation"] = d
        else:
            kw["count_include_pad"] = bool(rng.integers(2))
        try:
            poolspec.output_shape(f"{op}_pool{n}d", (2, 3) + spatial, **kw)
        except ValueError:
            continue  # a window past the input (lax would give -inf or 0/0 there)
        out.append((op, n, spatial, kw))
    return out


def _lax(op: str, x: np.ndarray, g: np.ndarray | None, kw: dict) -> tuple[np.ndarray, np.ndarray | None]:
    """lax.reduce_window's pool (the divisor: the window's size with count_include_pad, else its input cells)
    and its VJP for cotangent g."""
    n = x.ndim - 2
    pad = kw["padding"].upper() if isinstance(kw["padding"], str) else [(0, 0), (0, 0)] + list(kw["padding"])
    win, strides = (1, 1) + kw["kernel_size"], (1, 1) + kw["stride"]
    dil = (1, 1) + kw.get("dilation", (1,) * n)

    def pool(t):
        if op == "max":
            return lax.reduce_window(t, -jnp.inf, lax.max, win, strides, pad, window_dilation=dil)
        total = lax.reduce_window(t, 0.0, lax.add, win, strides, pad)
        if kw["count_include_pad"]:
            return total / math.prod(kw["kernel_size"])
        return total / lax.reduce_window(jnp.ones_like(t), 0.0, lax.add, win, strides, pad)

    with jax.enable_x64(True):
        if op == "max":  # lax has no VJP for dilated max windows: the winners' rule, from lax's values
            y = np.asarray(pool(jnp.asarray(x)))
            return y, None if g is None else _max_grad(x, y, g, kw)
        y, vjp = jax.vjp(pool, jnp.asarray(x))
        grad = None if g is None else np.asarray(vjp(jnp.asarray(g))[0])
        return np.asarray(y), grad


def _max_grad(x: np.ndarray, y: np.ndarray, g: np.ndarray, kw: dict) -> np.ndarray:
    """Each output's cotangent added at the first cell of its window (row-major order of the taps) that holds
    its maximum, a loop over outputs."""
    n = x.ndim - 2
    lo = _low(x.shape[2:], kw)
    k, s, d = kw["kernel_size"], kw["stride"], kw["dilation"]
    dx = np.zeros_like(x)
    for b in np.ndindex(x.shape[:2]):
        for o in np.ndindex(y.shape[2:]):
            for t in np.ndindex(k):
                cell = tuple(o[i] * s[i] - lo[i] + t[i] * d[i] for i in range(n))
                if all(0 <= c < L for c, L in zip(cell, x.shape[2:])) and x[b + cell] == y[b + o]:
                    dx[b + cell] += g[b + o]
                    break
    return dx


def _low(spatial: tuple[int, ...], kw: dict) -> tuple[int, ...]:
    p = kw["padding"]
    if p == "valid":
        return (0,) * len(spatial)
    if p == "same":
        k, s, d = kw["kernel_size"], kw["stride"], kw.get("dilation", (1,) * len(spatial))
        return tuple(max((-(-L // st) - 1) * st + (kk - 1) * dd + 1 - L, 0) // 2
                     for L, kk, st, dd in zip(spatial, k, s, d))
    return tuple(a for a, _ in p)


@pytest.mark.parametrize("seed", range(3))
def test_padding_matches_lax_reduce_window(backend, seed):
    for op, n, spatial, kw in _configs(seed, 40 if backend.name in ("numpy", "torch") else 10):
        x = np.random.default_rng(seed).standard_normal((2, 3) + spatial)
        ref, _ = _lax(op, x, None, kw)
        g = np.random.default_rng(seed + 1).standard_normal(ref.shape)
        _, dref = _lax(op, x, g, kw)
        xb = backend.asarray(x)
        y = poolspec.__dict__[f"{op}_pool{n}d"](xb, **kw)
        assert tuple(y.shape) == ref.shape, (op, spatial, kw)
        np.testing.assert_allclose(backend.to_numpy(y), ref, rtol=1e-12, atol=1e-13, err_msg=str((op, kw)))
        dx = poolspec.__dict__[f"{op}_pool{n}d_backward"](backend.asarray(g), xb, **kw)
        np.testing.assert_allclose(backend.to_numpy(dx), dref, rtol=1e-12, atol=1e-13, err_msg=str((op, kw)))
        if op == "max":  # the indices: flat positions in each (unpadded) input plane of the winners
            _, idx = poolspec.__dict__[f"max_pool{n}d"](xb, **kw, return_indices=True)
            idx = backend.to_numpy(idx).reshape(6, -1)
            picked = np.take_along_axis(x.reshape(6, -1), idx, axis=1)
            np.testing.assert_array_equal(picked, ref.reshape(6, -1))


def test_same_is_tensorflows_rule():
    """'same': ceil(L / s) outputs; total padding max((ceil(L/s) - 1) s + (k - 1) d + 1 - L, 0), the odd cell at
    the end (checked above against lax's 'SAME'); it equals explicit pairs."""
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 10))
    for k, s, d in (((3, 4), (2, 3), (1, 1)), ((2, 2), (1, 1), (2, 1)), ((5, 1), (3, 2), (1, 1))):
        y = poolspec.max_pool2d(x, k, s, padding="same", dilation=d)
        assert y.shape[-2:] == tuple(-(-L // st) for L, st in zip(x.shape[-2:], s))
        total = [max((-(-L // st) - 1) * st + (kk - 1) * dd + 1 - L, 0)
                 for L, kk, st, dd in zip(x.shape[-2:], k, s, d)]
        pairs = tuple((t // 2, t - t // 2) for t in total)
        np.testing.assert_array_equal(y, poolspec.max_pool2d(x, k, s, padding=pairs, dilation=d))
    np.testing.assert_array_equal(poolspec.avg_pool2d(x, 3, 2, padding="valid"), poolspec.avg_pool2d(x, 3, 2))


def test_symmetric_pairs_equal_torchs_ints():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 8))
    for kw in (dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=(4, 2), stride=(3, 1))):
        ref = torch.nn.functional.avg_pool2d(torch.from_numpy(x), padding=1, count_include_pad=False, **kw).numpy()
        np.testing.assert_allclose(poolspec.avg_pool2d(x, padding=((1, 1), (1, 1)), count_include_pad=False, **kw),
                                   ref, rtol=1e-12)


@pytest.mark.parametrize("padding, match", [("SAME", "'valid' or 'same'"), (((1, 0),), "2 pairs"),
                                            (((1, 0), (0, 1, 2)), "2 pairs"), (((-1, 0), (0, 0)), ">= 0"),
                                            (((3, 0), (0, 0)), "at most \\(kernel_size - 1\\) \\* dilation"),
                                            (((1, 0), 1), "2 pairs")])
def test_padding_errors_name_the_rule(padding, match):
    with pytest.raises(ValueError, match=match):
        poolspec.max_pool2d(np.zeros((1, 5, 5)), 3, padding=padding)
    with pytest.raises(TypeError):
        poolspec.avg_pool2d(np.zeros((1, 5, 5)), 3, padding=((1.5, 0), (0, 0)))


def _torch_native(torch, op: str, x, k, s, pairs, d):
    """torch's own ops on the explicitly padded input: -inf (max) or zeros (avg, dividing by the window)."""
    F = torch.nn.functional
    flat = [v for lo_hi in reversed(pairs) for v in lo_hi]  # F.pad: last axis first
    if op == "max":
        return F.max_pool2d(F.pad(x, flat, value=float("-inf")), k, s, dilation=d)
    return F.avg_pool2d(F.pad(x, flat), k, s)


@pytest.mark.parametrize("op", ["max", "avg"])
def test_padding_under_torch_transforms(op):
    """torch.func (vmap, jacrev, jvp), forward-mode AD and torch.compile(fullgraph=True) of the asymmetric pools,
    against torch's native pool of the explicitly padded input under the same transform."""
    torch = pytest.importorskip("torch")
    tf = torch.func
    k, s, d = (3, 2), (2, 1), ((2, 1) if op == "max" else (1, 1))
    pairs = ((0, 2), (1, 0))
    kw = dict(dilation=d) if op == "max" else {}
    ours = lambda t: getattr(poolspec, f"{op}_pool2d")(t, k, s, pairs, **kw)  # noqa: E731
    theirs = lambda t: _torch_native(torch, op, t, k, s, pairs, d)  # noqa: E731
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(tf.vmap(ours)(x), tf.vmap(theirs)(x), rtol=1e-12, atol=1e-13)
    xs = x[:1, :1]
    torch.testing.assert_close(tf.jacrev(ours)(xs), tf.jacrev(theirs)(xs), rtol=1e-12, atol=1e-13)
    v = torch.randn_like(xs)
    torch.testing.assert_close(tf.jvp(ours, (xs,), (v,))[1], tf.jvp(theirs, (xs,), (v,))[1], rtol=1e-12,
                               atol=1e-13)
    compiled = torch.compile(ours, fullgraph=True)
    torch.testing.assert_close(compiled(x), theirs(x), rtol=1e-12, atol=1e-13)


def _cubed(f):
    return lambda t: (f(t) ** 3).sum()


def _grad_of_grad(f):
    return jax.grad(lambda t: jax.grad(_cubed(f))(t).sum())


def test_padding_under_jax_transforms():
    """jit, grad, grad of grad and vmap of the asymmetric and 'same' pools, against lax.reduce_window's."""
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 6))
    with jax.enable_x64(True):
        xj = jnp.asarray(x)
        for kw in (dict(kernel_size=(3, 2), stride=(2, 1), padding=((0, 2), (1, 0)), count_include_pad=False),
                   dict(kernel_size=3, stride=2, padding="same", count_include_pad=True)):
            k = kw["kernel_size"] if isinstance(kw["kernel_size"], tuple) else (3, 3)
            s = kw["stride"] if isinstance(kw["stride"], tuple) else (2, 2)
            pad = kw["padding"].upper() if isinstance(kw["padding"], str) else [(0, 0), (0, 0)] + list(kw["padding"])

            def ref(t, k=k, s=s, pad=pad, cip=kw["count_include_pad"]):
                total = lax.reduce_window(t, 0.0, lax.add, (1, 1) + k, (1, 1) + s, pad)
                if cip:
                    return total / math.prod(k)
                return total / lax.reduce_window(jnp.ones_like(t), 0.0, lax.add, (1, 1) + k, (1, 1) + s, pad)

            def ours(t, kw=kw):
                return poolspec.avg_pool2d(t, **kw)

            np.testing.assert_allclose(jax.jit(ours)(xj), ref(xj), rtol=1e-12)
            np.testing.assert_allclose(jax.jit(jax.grad(_cubed(ours)))(xj), jax.grad(_cubed(ref))(xj), rtol=1e-12)
            np.testing.assert_allclose(_grad_of_grad(ours)(xj), _grad_of_grad(ref)(xj), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(jax.vmap(ours)(xj[:, None]), jax.vmap(ref)(xj[:, None]), rtol=1e-12)


def test_padding_on_devices_without_reading_values():
    """torch's meta device and array-api-strict's second device: shapes and devices follow, nothing is read."""
    torch = pytest.importorskip("torch")
    x = torch.empty(2, 3, 9, 8, device="meta")
    y = poolspec.max_pool2d(x, 3, 2, padding="same")
    assert y.device.type == "meta" and tuple(y.shape) == (2, 3, 5, 4)
    g = poolspec.avg_pool2d_backward(torch.empty(2, 3, 3, 4, device="meta"), x, (3, 2), padding=((1, 0), (0, 1)))
    assert g.device.type == "meta" and tuple(g.shape) == (2, 3, 9, 8)
    xps = pytest.importorskip("array_api_strict")
    dev = xps.Device("device1")
    a = xps.asarray(np.random.default_rng(0).standard_normal((1, 2, 7, 5)), device=dev)
    b = poolspec.max_pool2d(a, 3, 2, padding=((2, 0), (1, 1)))
    assert b.device == dev
    cpu = xps.Device("CPU_DEVICE")
    np.testing.assert_array_equal(np.asarray(b.to_device(cpu)),
                                  poolspec.max_pool2d(np.asarray(a.to_device(cpu)), 3, 2, padding=((2, 0), (1, 1))))
