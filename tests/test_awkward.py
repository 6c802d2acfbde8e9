"""Awkward arrays: strided and negative-stride views, channels_last, read-only and big-endian buffers, empty
batches, half precision, torch's meta device, donated JAX buffers and concurrent callers. Each gives the
answer of the plain contiguous call (or a clear error), and no input is modified."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import poolspec

# (op, forward arguments, backward cotangent shape for a (2, 3, 10, 12) input)
OPS = [
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), (2, 3, 5, 6)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1), (2, 3, 5, 6)),
    ("adaptive_avg_pool2d", dict(output_size=(4, 5)), (2, 3, 4, 5)),
    ("adaptive_max_pool2d", dict(output_size=(4, 5)), (2, 3, 4, 5)),
    ("lp_pool2d", dict(norm_type=2.0, kernel_size=2), (2, 3, 5, 6)),
    ("interpolate", dict(scale_factor=2, mode="bilinear"), (2, 3, 20, 24)),
    ("interpolate", dict(size=(7, 9), mode="bicubic", antialias=True), (2, 3, 7, 9)),
    ("interpolate", dict(size=(13, 5), mode="nearest-exact"), (2, 3, 13, 5)),
]
IDS = [f"{op}-{i}" for i, (op, _, _) in enumerate(OPS)]


def _data(shape: tuple[int, ...] = (2, 3, 10, 12), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _both(op: str, args: dict[str, Any], x: Any, g: Any) -> tuple[np.ndarray, np.ndarray]:
    y = getattr(poolspec, op)(x, **args)
    dx = getattr(poolspec, op + "_backward")(g, x, **args)
    return np.asarray(y), np.asarray(dx)


@pytest.mark.parametrize("op,args,gshape", OPS, ids=IDS)
@pytest.mark.parametrize("view", ["strided", "negative", "transposed", "big_endian", "read_only"])
def test_numpy_views_give_the_contiguous_answer(op, args, gshape, view):
    base = _data((2, 3, 20, 24))
    x = np.ascontiguousarray(base[:, :, ::2, ::2])
    g = _data(gshape, 1)
    if view == "strided":
        v = base[:, :, ::2, ::2]
    elif view == "negative":  # the same values, reached through negative strides
        v = np.ascontiguousarray(x[:, :, ::-1, ::-1])[:, :, ::-1, ::-1]
    elif view == "transposed":
        v = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    elif view == "big_endian":
        v, g = x.astype(">f8"), g.astype(">f8")
    else:
        v = x.copy()
        v.setflags(write=False)
        g = g.copy()
        g.setflags(write=False)
    before = v.copy()
    want = _both(op, args, x, np.asarray(g, dtype=np.float64))
    got = _both(op, args, v, g)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(v, before)


def test_big_endian_indices_for_max_unpool():
    x = _data((1, 2, 6, 6))
    y, idx = poolspec.max_pool2d(x, 2, return_indices=True)
    want = poolspec.max_unpool2d(y, idx, 2)
    got = poolspec.max_unpool2d(y.astype(">f8"), idx.astype(">i8"), 2)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_torch_channels_last_and_strided():
    torch = pytest.importorskip("torch")
    for op, args, gshape in OPS:
        x = torch.from_numpy(_data())
        g = torch.from_numpy(_data(gshape, 1))
        want = _both(op, args, x, g)
        big = torch.zeros((2, 3, 20, 24), dtype=x.dtype)
        big[:, :, ::2, ::2] = x
        for v in (x.to(memory_format=torch.channels_last), big[:, :, ::2, ::2],
                  x.transpose(2, 3).contiguous().transpose(2, 3)):
            got = _both(op, args, v, g.to(memory_format=torch.channels_last))
            np.testing.assert_array_equal(got[0], want[0], err_msg=op)
            np.testing.assert_array_equal(got[1], want[1], err_msg=op)


def test_torch_meta_device_gives_shapes_only():
    torch = pytest.importorskip("torch")
    for op, args, gshape in OPS:
        x = torch.empty((2, 3, 10, 12), device="meta")
        y = getattr(poolspec, op)(x, **args)
        assert y.device.type == "meta" and tuple(y.shape) == gshape, op
        dx = getattr(poolspec, op + "_backward")(torch.empty(gshape, device="meta"), x, **args)
        assert dx.device.type == "meta" and tuple(dx.shape) == tuple(x.shape), op
    y, idx = poolspec.max_pool2d(torch.empty((1, 2, 6, 6), device="meta"), 2, return_indices=True)
    assert idx.dtype == torch.int64 and idx.device.type == "meta"
    out = poolspec.max_unpool2d(y, idx, 2)
    assert tuple(out.shape) == (1, 2, 6, 6) and out.device.type == "meta"


def test_meta_and_cpu_in_one_call_is_a_type_error():
    torch = pytest.importorskip("torch")
    x = torch.zeros((1, 2, 6, 6))
    with pytest.raises((TypeError, ValueError), match="grad_output"):
        poolspec.avg_pool2d_backward(torch.empty((1, 2, 3, 3), device="meta"), x, 2)


@pytest.mark.parametrize("op,args,gshape", OPS, ids=IDS)
def test_empty_batch(backend, op, args, gshape):
    x = backend.asarray(np.zeros((0, 3, 10, 12)))
    g = backend.asarray(np.zeros((0,) + gshape[1:]))
    y = getattr(poolspec, op)(x, **args)
    dx = getattr(poolspec, op + "_backward")(g, x, **args)
    assert tuple(y.shape) == (0,) + gshape[1:] and tuple(dx.shape) == (0, 3, 10, 12)


@pytest.mark.parametrize("op,args,gshape", OPS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_rounds_the_float32_result_once(backend, op, args, gshape, dtype):
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    x32 = backend.to_numpy(backend.asarray(_data(), dtype)).astype(np.float32)  # exactly representable
    y = getattr(poolspec, op)(backend.asarray(x32, dtype), **args)
    assert dtype in str(y.dtype)
    want = np.asarray(getattr(poolspec, op)(x32, **args))
    got = backend.to_numpy(y).astype(np.float32)
    rounded = backend.to_numpy(backend.asarray(want, dtype)).astype(np.float32)
    if op.startswith("lp_pool"):  # deviation lp_pool_half_precision: torch's own half rule
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, rounded)


def test_jax_jit_with_donated_buffers():
    jax = pytest.importorskip("jax")
    import warnings

    jnp = jax.numpy
    for op, args, gshape in OPS:
        x_host = _data().astype(np.float32)
        want = _both(op, args, x_host, _data(gshape, 1).astype(np.float32))

        def f(x, g, op=op, args=args):
            return getattr(poolspec, op)(x, **args), getattr(poolspec, op + "_backward")(g, x, **args)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CPU cannot donate: jax says so and copies
            y, dx = jax.jit(f, donate_argnums=(0, 1))(jnp.asarray(x_host), jnp.asarray(_data(gshape, 1), jnp.float32))
        np.testing.assert_allclose(np.asarray(y), want[0], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(dx), want[1], rtol=1e-6, atol=1e-6)


def test_eight_threads_agree_with_serial_calls():
    # fresh shapes, so the threads race to build and cache the same plans
    shapes = [(2, 3, 31 + k, 29 + 2 * k) for k in range(4)]
    calls = [(op, args, shape) for shape in shapes for op, args, _ in OPS]
    results: dict[int, list[np.ndarray]] = {}

    def work(tid: int) -> None:
        out = []
        for k in range(len(calls)):
            op, args, shape = calls[(k + tid) % len(calls)]
            x = _data(shape, seed=k % 5)
            y = getattr(poolspec, op)(x, **args)
            out.append(((k + tid) % len(calls), k % 5, np.asarray(y)))
        results[tid] = out

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    serial = {}
    for out in results.values():
        for i, seed, y in out:
            op, args, shape = calls[i]
            key = (i, seed)
            if key not in serial:
                serial[key] = np.asarray(getattr(poolspec, op)(_data(shape, seed=seed), **args))
            np.testing.assert_array_equal(y, serial[key])


def test_jax_without_64_bit_mode_gives_int32_indices_quietly():
    jax = pytest.importorskip("jax")
    import warnings

    x_host = _data((1, 2, 6, 6)).astype(np.float32)
    want_values, want_idx = poolspec.max_pool2d(x_host, 2, return_indices=True)
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "int64 truncated to int32" notes
            x = jax.numpy.asarray(x_host)
            values, idx = poolspec.max_pool2d(x, 2, return_indices=True)
            back = poolspec.max_unpool2d(values, idx, 2)
            _, amax_idx = poolspec.adaptive_max_pool2d(x, 4, return_indices=True)
        assert idx.dtype == jax.numpy.int32 and amax_idx.dtype == jax.numpy.int32
        np.testing.assert_array_equal(np.asarray(idx), want_idx)
        np.testing.assert_array_equal(np.asarray(values), want_values)
        np.testing.assert_array_equal(np.asarray(back), poolspec.max_unpool2d(want_values, want_idx, 2))
    finally:
        jax.config.update("jax_enable_x64", previous)
