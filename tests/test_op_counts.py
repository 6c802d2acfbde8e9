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
    if want["within_budget"]:  # a call once within its budget stays there
        assert row["within_budget"], row


def test_the_counter_counts_aten_calls_and_views():
    import torch

    x = torch.ones(4, 4)
    assert bench_counts.count_torch(lambda: x + 1) == (1, 0)
    assert bench_counts.count_torch(lambda: x[1:].sum()) == (2, 1)
