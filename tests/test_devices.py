"""Every op, forward and backward, on a device that is not the default one: torch's ``meta`` device (no
data at all: a host round trip, ``.item()`` or a host-side table fails there) and array-api-strict's
``device1`` (which refuses any operation that mixes devices). Outputs must stay on the input's device and
strict's device1 must give the same bits as its default device. These two stand in, on a machine without a
GPU, for the bugs that show on CUDA and CuPy as a host-side array in a device computation.

The cases are the stored conformance cases, up to a few per golden store (each interpolate mode, each
grid_sample mode, every op's edge rules).
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict

import numpy as np
import pytest

from poolspec import registry
from poolspec.conformance import golden
from poolspec.conformance.families import family

_PER_STORE = 6


def _cases() -> dict[str, list[golden.Golden]]:
    by_store: dict[str, list[golden.Golden]] = defaultdict(list)
    for c in golden.cases():
        if c.error is None and c.reference != "torch-refuses" and c.dtype in ("float32", "float64"):
            by_store[golden.store_name(c.op, c.arguments)].append(c)
    per_op: dict[str, list[golden.Golden]] = defaultdict(list)
    for cases in by_store.values():
        step = max(1, len(cases) // _PER_STORE)
        per_op[cases[0].op] += cases[::step][:_PER_STORE]
    return per_op


_CASES = _cases()


def _run(case: golden.Golden, make, read) -> dict[str, tuple[object, ...]]:
    """(device, dtype, shape, values) of each result of the case's forward and backward."""
    a = case.arrays()
    fam = family(case.op)
    d = registry.op(case.op)
    arrays = {p: make(a[p], None if p == "indices" else case.dtype) for p in fam.ports if p in a}
    args = dict(case.arguments)
    y, idx = fam.forward(d.forward, args, arrays)
    out = {"output": y} if idx is None else {"output": y, "indices": idx}
    if "grad_output" in a:
        g = make(a["grad_output"], case.dtype)
        grads = fam.backward(d.backward, g, args, arrays, idx, True)
        out.update({f"grad_{p}": t for p, t in zip(fam.differentiable, grads)})
    return {k: read(v) for k, v in out.items()}


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("op", list(registry.OPS))
def test_every_op_on_torch_meta(op):
    import torch

    def make(a, dtype):
        t = torch.from_numpy(np.array(a))
        return (t.to(getattr(torch, dtype)) if dtype else t).to("meta")

    def read(t):
        return (str(t.device), t.dtype, tuple(t.shape))

    def make_cpu(a, dtype):
        t = torch.from_numpy(np.array(a))
        return t.to(getattr(torch, dtype)) if dtype else t

    for case in _CASES[op]:
        got = _run(case, make, read)
        want = _run(case, make_cpu, lambda t: ("meta", t.dtype, tuple(t.shape)))
        assert got == want, case.name


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None, reason="array-api-strict is not installed")
@pytest.mark.parametrize("op", list(registry.OPS))
def test_every_op_on_a_second_strict_device(op):
    import array_api_strict as xps

    second = xps.Device("device1")

    def make(device):
        def f(a, dtype):
            x = xps.asarray(np.array(a), device=device)
            return xps.astype(x, getattr(xps, dtype)) if dtype else x
        return f

    def read(x):
        return (str(x.device), str(x.dtype), tuple(x.shape), np.asarray(x.to_device(xps.Device("CPU_DEVICE"))))

    for case in _CASES[op]:
        got = _run(case, make(second), read)
        want = _run(case, make(xps.Device("CPU_DEVICE")), read)
        assert got.keys() == want.keys(), case.name
        for key in want:
            assert got[key][0] == str(second), f"{case.name} {key}: on {got[key][0]}"
            assert got[key][1:3] == want[key][1:3], f"{case.name} {key}"
            assert got[key][3].tobytes() == want[key][3].tobytes(), f"{case.name} {key}"
