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
