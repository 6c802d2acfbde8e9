"""The case catalogue: every family's edge-rule grid and seeded random configurations (each family's record, in
its folder: ``poolspec/families/<family>/conformance.py``), and the cases whose torch reference values ship with
poolspec (``golden_cases``: the conformance suite and the exports), with their dtypes and inputs. Whether a case
is valid is decided by torch, never here: cases that torch refuses are kept as error cases.
"""

from __future__ import annotations

import numpy as np

from .cases import Case, GoldenCase
from .families import families, family

__all__ = ["Case", "GoldenCase", "golden_cases", "inputs"]


def golden_cases(ops: list[str] | None = None) -> list[GoldenCase]:
    """The cases whose torch reference vectors ship with poolspec, in a stable order: every grid case in
    float64, the first seeded random ones, a spread of the grid in the other dtypes torch's rules depend on,
    and error cases, family by family (``families.families()``). Names are ``<op>-g###`` (grid), ``-r###``
    (random), ``-<dtype>-###`` and ``-e###``."""
    order: list[str] = []
    by_op: dict[str, list[GoldenCase]] = {}
    for fam in families():
        counters: dict[str, int] = {}
        for case in fam.grid():
            k = counters.get(case.op, 0)
            counters[case.op] = k + 1
            flags = case.flags + fam.deviation_flags(case)
            empty = "ValueError" if "max_pool_empty_window" in flags else None
            by_op.setdefault(case.op, []).append(GoldenCase(
                f"{case.op}-g{k:03d}", case.op, case.shape, case.args, flags, "float64",
                "ones" if k % 5 == 4 else "random", error=empty, ports=case.ports))
            for dtype, every in fam.dtypes:
                if k % every == every // 2:
                    extra = fam.half_flags if dtype in ("float16", "bfloat16") else ()
                    more, error = fam.dtype_rule(case, dtype)
                    extra, error = (more, error) if error is not None else (extra + more, empty)
                    by_op[case.op].append(GoldenCase(f"{case.op}-{dtype}-{k:03d}", case.op, case.shape, case.args,
                                                     flags + (dtype,) + extra, dtype, error=error, ports=case.ports))
        counters = {}
        for case in fam.random():
            k = counters.get(case.op, 0)
            counters[case.op] = k + 1
            flags = case.flags + fam.deviation_flags(case)
            by_op.setdefault(case.op, []).append(GoldenCase(
                f"{case.op}-r{k:03d}", case.op, case.shape, case.args, flags, "float64",
                error="ValueError" if "max_pool_empty_window" in flags else None, ports=case.ports))
        for case in fam.errors():
            by_op.setdefault(case.op, []).append(case)
        order += sorted(op for op in by_op if op in fam.ops and op not in order)
    chosen = order if ops is None else [op for op in order if op in ops]
    return [c for op in chosen for c in by_op[op]]


def inputs(case: GoldenCase) -> dict[str, np.ndarray]:
    """The input arrays of a case (seeded, NumPy only), by stored name (``input``, then the family's other
    ports). Values are exactly representable in the case's dtype."""
    fam = family(case.op)
    if case.error is not None:  # the call must be refused before the values matter
        out = {"input": np.zeros(case.shape, dtype=np.float32 if case.dtype == "bfloat16" else case.dtype)}
        for port in fam.ports[1:]:
            out[port] = np.zeros(case.ports.get(port, case.shape), dtype=np.int64 if port == "indices" else
                                 out["input"].dtype)
        return out
    return fam.inputs(case, np.random.default_rng(case.seed))
