"""Array operations per call (poolspec.bench_counts): each is a kernel launch and host time on a GPU, so a count
may only go down. Every case's forward and forward + backward on torch are held at or below the counts recorded
in benchmarks/results/op-counts.json (``poolspec bench --counts --json`` rewrites it when a change lowers them);
every op has a case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import poolspec
from poolspec import bench_counts

pytest.importorskip("torch")
RECORDED = {r["case"]: r for r in json.loads(
    (Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "op-counts.json").read_text())["rows"]}


def test_every_op_has_a_count_case_and_a_recorded_count():
    ops = {c.op for c in bench_counts.CASES}
    assert {c.name for c in poolspec.spec.cards()} <= ops
    assert {c.key for c in bench_counts.CASES} == set(RECORDED)


@pytest.mark.parametrize("case", bench_counts.CASES, ids=[c.key for c in bench_counts.CASES])
def test_array_operations_per_call_do_not_grow(case):
    (row,) = bench_counts.run([case])
    want = RECORDED[case.key]
    assert row["torch_forward"] == want["torch_forward"]  # the same torch: the same native count
    assert row["poolspec_forward"] <= want["poolspec_forward"], (row["poolspec_forward"], want["poolspec_forward"])
    assert row["poolspec_both"] <= want["poolspec_both"], (row["poolspec_both"], want["poolspec_both"])
    assert row["gpu_forward"] <= want["gpu_forward"], (row["gpu_forward"], want["gpu_forward"])
    assert row["gpu_both"] <= want["gpu_both"], (row["gpu_both"], want["gpu_both"])
    assert row["namespace_forward"] <= want["namespace_forward"], (row["namespace_forward"], want["namespace_forward"])
    assert row["namespace_both"] <= want["namespace_both"], (row["namespace_both"], want["namespace_both"])
    if want["within_budget"]:  # a call once within its budget stays there
        assert row["within_budget"], row


def test_the_counter_counts_aten_calls_and_views():
    import torch

    x = torch.ones(4, 4)
    assert bench_counts.count_torch(lambda: x + 1) == (1, 0)
    assert bench_counts.count_torch(lambda: x[1:].sum()) == (2, 1)


def test_the_namespace_counter_counts_calls_operators_and_indexing():
    import numpy as np

    from poolspec.counting import Counter

    counter = Counter()
    x = counter.wrap(np.arange(6.0))
    xp = x.__array_namespace__()
    y = xp.sum(x[1:] * 2.0 + 1.0)
    assert counter.calls == 4 and dict(counter.by_name) == {"__getitem__": 1, "__mul__": 1, "__add__": 1, "sum": 1}
    assert float(counter.unwrap(y)) == 35.0


def test_poolspec_runs_on_the_counting_namespace_with_numpys_values():
    import numpy as np

    from poolspec.counting import Counter

    x = np.random.default_rng(0).standard_normal((2, 3, 9, 8))
    for launch_bound in (False, True):
        counter = Counter(launch_bound=launch_bound)
        y = poolspec.interpolate(counter.wrap(x), scale_factor=2, mode="bicubic")
        np.testing.assert_allclose(counter.unwrap(y), poolspec.interpolate(x, scale_factor=2, mode="bicubic"),
                                   rtol=1e-13, atol=1e-13)
        assert counter.calls > 0
