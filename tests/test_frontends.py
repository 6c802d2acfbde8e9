"""The front-ends (``poolspec.frontends``) against the live libraries they mirror, on every installed backend:
random configurations from ``conformance/frontend_checks`` (forward values and index outputs; gradients on torch
and JAX against the library's own where it has them). Libraries not installed here skip;
``conformance/check_frontends.py`` runs thousands of configurations in each library's own venv."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from conformance.frontend_checks import LIBRARIES, check, load  # noqa: E402

COUNT = {"numpy": 40, "torch": 40, "jax": 40}  # other backends: 10


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_frontend_against_library(library, seed, backend):
    module = load(library)
    reason = module.available()
    if reason is not None:
        pytest.skip(reason)
    rng = np.random.default_rng(1000 * seed + LIBRARIES.index(library))
    problems, ran = [], 0
    for _ in range(COUNT.get(backend.name, 10)):
        config = module.config(rng)
        outcome = check(module, config, backend, rng)
        ran += outcome.status == "passed"
        if outcome.status in ("failed", "poolspec_refuses", "library_refuses"):
            problems.append(f"{outcome.status}: {config.describe()}: {outcome.detail}")
    assert not problems, "\n".join(problems[:10])
    assert ran > 0


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3"])
def test_samples_off_the_image_give_zeros_and_zero_gradients(method, backend):
    """An axis translated or mirrored off the image: every weight is zero (a table whose every tap reads the
    padding cell, and whose transpose still has one), against jax itself, gradients included."""
    module = load("jax")
    if module.available() is not None:
        pytest.skip(module.available())
    from conformance.frontend_checks import Config

    rng = np.random.default_rng(7)
    image = rng.standard_normal((3, 5, 4))
    for translation in ([0.0, 40.0], [-60.0, 0.0], [40.0, -40.0]):
        options = {"shape": (3, 6, 4), "spatial_dims": (1, 2), "scale": np.array([1.3, 1.0]),
                   "translation": np.array(translation), "antialias": False, "method": method}
        config = Config("jax.image.scale_and_translate", {"image": image}, options, differentiable=("image",))
        outcome = check(module, config, backend, rng)
        assert outcome.status == "passed", outcome.detail


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_keras_adaptive_max_pool_of_wide_unsigned_integers(dtype, backend):
    """keras.ops.adaptive_max_pool keeps uint16/32/64 inputs exact on every backend that holds them (torch's CPU
    kernels neither compare nor gather them), against the windows' maxima taken directly."""
    from poolspec.frontends.keras import ops

    info = np.iinfo(dtype)
    x = np.random.default_rng(5).integers(0, info.max, (2, 7, 5, 3), dtype=dtype, endpoint=True)
    x[0, 0, 0, 0], x[1, 6, 4, 2] = info.max, info.max - 1
    try:
        a = backend.asarray(x)
    except (TypeError, ValueError):
        pytest.skip(f"{backend.name} has no {dtype}")
    want = np.empty((2, 3, 2, 3), dtype=dtype)
    for i in range(3):
        for j in range(2):
            rows = slice(i * 7 // 3, -(-(i + 1) * 7 // 3))
            cols = slice(j * 5 // 2, -(-(j + 1) * 5 // 2))
            want[:, i, j, :] = x[:, rows, cols, :].max(axis=(1, 2))
    got = backend.to_numpy(ops.adaptive_max_pool(a, (3, 2)))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
