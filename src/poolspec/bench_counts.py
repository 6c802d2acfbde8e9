"""Array operations per call, counted: on a GPU each one is at least one kernel launch and several microseconds of
host time whatever its size, and CuPy has no compiler to fuse them, so their number is a speed figure of its own.

``count_torch`` counts every aten call a function makes on torch (a dispatch mode), and how many of them are
views (slices, reshapes: metadata only, no kernel). ``run`` counts the forward and the forward plus backward of
one call per op, rank and main mode, poolspec's and torch's own op under the same count; poolspec's twice, on
the paths the CPU takes and on those a GPU takes (``as_on_a_gpu``: one gather over every tap and one reduction
where the CPU takes many cheap strided passes), the budgets holding the latter; and ``count_namespace`` counts
the same call, forward and explicit backward, on NumPy arrays wrapped by a counting array-API namespace
(``poolspec.counting``: the portable path, as on any array library without special cases); ``poolspec bench --counts``
prints them, and ``tests/test_op_counts.py`` holds each below its recorded ceiling
(``benchmarks/results/op-counts.json``), so that a count can only go down.

>>> from poolspec.bench_counts import count_torch
>>> import torch
>>> count_torch(lambda: torch.ones(3) + 1)
(2, 0)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from .bench_cases import BenchCase

# The budgets the ops are to meet (array operations, views included): ops whose taps come from plans, and ops that
# sample at data-dependent positions.
BUDGETS = {"plans": (16, 48), "sampled": (60, 160)}
_SAMPLED = ("grid_sample", "affine_grid", "fractional_max_pool2d", "fractional_max_pool3d", "roi_align", "roi_pool",
            "ps_roi_align", "ps_roi_pool")


def budget(case: BenchCase) -> tuple[int, int]:
    """The (forward, forward + backward) budget of a case's op."""
    return BUDGETS["sampled" if case.op in _SAMPLED else "plans"]


def _c(key: str, op: str, shape: tuple[int, ...], **args: Any) -> BenchCase:
    return BenchCase(key, op, shape, args)


_2D, _1D, _3D = (8, 64, 56, 56), (8, 64, 3136), (2, 16, 16, 32, 32)
CASES = [
    _c("max_pool1d 3/2", "max_pool1d", _1D, kernel_size=3, stride=2),
    _c("max_pool2d 3x3/2 p1", "max_pool2d", _2D, kernel_size=3, stride=2, padding=1),
    _c("max_pool2d 2x2/2", "max_pool2d", _2D, kernel_size=2),
    _c("max_pool3d 2", "max_pool3d", _3D, kernel_size=2),
    _c("avg_pool1d 4/4", "avg_pool1d", _1D, kernel_size=4),
    _c("avg_pool2d 3x3/2 p1", "avg_pool2d", _2D, kernel_size=3, stride=2, padding=1),
    _c("avg_pool2d 3x3/1 p1 excl. pad", "avg_pool2d", _2D, kernel_size=3, stride=1, padding=1, count_include_pad=False),
    _c("avg_pool3d 2", "avg_pool3d", _3D, kernel_size=2),
    _c("adaptive_avg_pool1d -> 7", "adaptive_avg_pool1d", _1D, output_size=7),
    _c("adaptive_avg_pool2d -> 7", "adaptive_avg_pool2d", _2D, output_size=7),
    _c("adaptive_avg_pool2d 17 -> 5", "adaptive_avg_pool2d", (16, 128, 17, 17), output_size=5),
    _c("adaptive_avg_pool3d -> 3", "adaptive_avg_pool3d", _3D, output_size=3),
    _c("adaptive_max_pool1d -> 1", "adaptive_max_pool1d", _1D, output_size=1),
    _c("adaptive_max_pool2d -> 7", "adaptive_max_pool2d", _2D, output_size=7),
    _c("adaptive_max_pool2d -> 1", "adaptive_max_pool2d", (4, 64, 32, 32), output_size=1),
    _c("adaptive_max_pool3d -> 1", "adaptive_max_pool3d", _3D, output_size=1),
    _c("lp_pool1d p2 3/2", "lp_pool1d", _1D, norm_type=2.0, kernel_size=3, stride=2),
    _c("lp_pool2d p2 3x3/2", "lp_pool2d", _2D, norm_type=2.0, kernel_size=3, stride=2),
    _c("lp_pool3d p2 2", "lp_pool3d", _3D, norm_type=2.0, kernel_size=2),
    _c("max_unpool1d 2", "max_unpool1d", _1D, kernel_size=2),
    _c("max_unpool2d 2", "max_unpool2d", _2D, kernel_size=2),
    _c("max_unpool3d 2", "max_unpool3d", _3D, kernel_size=2),
    _c("nearest x2", "interpolate", _2D, scale_factor=2, mode="nearest"),
    _c("nearest-exact x0.5", "interpolate", _2D, scale_factor=0.5, mode="nearest-exact"),
    _c("linear x2", "interpolate", _1D, scale_factor=2, mode="linear"),
    _c("bilinear x2", "interpolate", _2D, scale_factor=2, mode="bilinear"),
    _c("bicubic x2", "interpolate", _2D, scale_factor=2, mode="bicubic"),
    _c("bicubic antialias x0.5", "interpolate", _2D, scale_factor=0.5, mode="bicubic", antialias=True),
    _c("trilinear x2", "interpolate", _3D, scale_factor=2, mode="trilinear"),
    _c("area 56 -> 24", "interpolate", _2D, size=(24, 24), mode="area"),
    _c("grid_sample bilinear zeros", "grid_sample", _2D, out=(28, 28), mode="bilinear", padding_mode="zeros"),
    _c("grid_sample bicubic reflection", "grid_sample", _2D, out=(28, 28), mode="bicubic",
       padding_mode="reflection"),
    _c("grid_sample 3-d bilinear border", "grid_sample", _3D, out=(8, 16, 16), mode="bilinear",
       padding_mode="border"),
    _c("affine_grid 2-d", "affine_grid", (8, 2, 3), size=(8, 64, 56, 56)),
    _c("fractional_max_pool2d k3 -> 20", "fractional_max_pool2d", _2D, kernel_size=3, output_size=20),
    _c("fractional_max_pool3d k2 -> 10", "fractional_max_pool3d", _3D, kernel_size=2, output_size=10),
    _c("roi_align 64 boxes 7x7 s2 aligned", "roi_align", (2, 64, 50, 76), boxes=64, output_size=7,
       spatial_scale=1.0, sampling_ratio=2, aligned=True),
    _c("roi_pool 64 boxes 7x7", "roi_pool", (2, 64, 50, 76), boxes=64, output_size=7, spatial_scale=1.0),
    _c("ps_roi_align 64 boxes 7x7 s2", "ps_roi_align", (2, 98, 50, 76), boxes=64, output_size=7, spatial_scale=1.0,
       sampling_ratio=2),
    _c("ps_roi_pool 64 boxes 7x7", "ps_roi_pool", (2, 98, 50, 76), boxes=64, output_size=7, spatial_scale=1.0),
]


def count_torch(fn: Callable[[], Any], warm: bool = False) -> tuple[int, int]:
    """(aten calls, views among them) made by ``fn()`` on torch; with ``warm``, on its second call (a loop's
    cost: the plan tables' device copies, made by the first call, are cached)."""
    if warm:
        fn()
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counter(TorchDispatchMode):
        calls = views = 0

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            node = _node(func)
            if node is not None:  # a poolspec node run eagerly (roi_align under CPU autograd): what it runs
                with Counter():
                    return node(*args, **(kwargs or {}))
            Counter.calls += 1
            Counter.views += bool(getattr(func, "is_view", False))
            return func(*args, **(kwargs or {}))

    with Counter():
        fn()
    return Counter.calls, Counter.views


def _node(func: Any) -> Callable[..., Any] | None:
    """The Python implementation of a poolspec custom op (``poolspec::*``), None for any other op."""
    if getattr(func, "namespace", None) != "poolspec":
        return None
    from torch._library.custom_ops import OPDEFS

    opdef = OPDEFS.get(func._schema.name)
    return None if opdef is None else opdef._init_fn


def _inputs(torch: Any, case: BenchCase) -> tuple[list[Any], dict[str, Any], int, Any]:
    """(arrays, keywords, differentiated arrays, cotangent) of a case's call, made from a fixed seed (the arrays
    beyond x by the family's ``count_inputs``, in its folder's bench.py)."""
    import poolspec

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(case.shape, generator=gen)
    prepare = _peers(case).count_inputs
    arrays, kwargs, ndiff = ([x], dict(case.args), 1) if prepare is None else \
        prepare(torch, case, x, dict(case.args), gen)
    with torch.no_grad():
        cotangent = torch.randn(getattr(poolspec, case.op)(*arrays, **kwargs).shape, generator=gen)
    return arrays, kwargs, ndiff, cotangent


def _peers(case: BenchCase) -> Any:
    from .bench_runners import peers
    from .registry import op

    return peers(op(case.op).family)


def _native(torch: Any, case: BenchCase) -> Callable[..., Any] | None:
    """torch's own op of a case (None where torch has none)."""
    find = _peers(case).native
    return getattr(torch.nn.functional, case.op) if find is None else find(torch, case.op)


def _calls(torch: Any, case: BenchCase, native: bool) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """(forward, forward + backward) of one case, inputs and cotangents made beforehand (not counted)."""
    import poolspec

    fn = _native(torch, case) if native else getattr(poolspec, case.op)
    assert fn is not None
    arrays, kwargs, ndiff, cotangent = _inputs(torch, case)

    def forward() -> Any:
        return fn(*arrays, **kwargs)

    def both() -> Any:
        tracked = [t.detach().requires_grad_(True) for t in arrays[:ndiff]]
        return torch.autograd.grad(fn(*tracked, *arrays[ndiff:], **kwargs), tracked, cotangent)

    return forward, both


def count_namespace(case: BenchCase, launch_bound: bool = True) -> tuple[int, int]:
    """(forward, forward + explicit backward) operations of a case on NumPy arrays wrapped by
    :class:`poolspec.counting.Counter`: the portable path a library without special cases takes (with
    ``launch_bound``, its few-operation paths, as on a GPU); on the second call, as ``count_torch(warm=True)``."""
    import numpy as np
    import torch

    import poolspec
    from poolspec.counting import Counter

    arrays, kwargs, _, cotangent = _inputs(torch, case)
    counter = Counter(launch_bound=launch_bound)

    def wrap(v: Any) -> Any:
        return counter.wrap(np.asarray(v.numpy())) if isinstance(v, torch.Tensor) else v

    wrapped, kw, g = [wrap(a) for a in arrays], {k: wrap(v) for k, v in kwargs.items()}, wrap(cotangent)
    getattr(poolspec, case.op)(*wrapped, **kw)  # a loop's cost, as count_torch(warm=True): constants made
    getattr(poolspec, case.op + "_backward")(g, *wrapped, **kw)
    counter.calls = 0
    getattr(poolspec, case.op)(*wrapped, **kw)
    forward = counter.calls
    getattr(poolspec, case.op + "_backward")(g, *wrapped, **kw)
    return forward, counter.calls


def run(cases: list[BenchCase] | None = None) -> list[dict[str, Any]]:
    """One row per case: poolspec's and torch's aten calls (views among them) forward and forward + backward."""
    import torch

    rows = []
    for case in cases or CASES:
        row: dict[str, Any] = {"case": case.key, "op": case.op, "budget": list(budget(case))}
        for who, native in (("poolspec", False), ("torch", True)):
            if native and _native(torch, case) is None:  # torch has no such op (roi_align: torchvision's)
                row.update(torch_forward=None, torch_forward_views=None, torch_both=None, torch_both_views=None)
                continue
            forward, both = _calls(torch, case, native)
            (row[f"{who}_forward"], row[f"{who}_forward_views"]), (row[f"{who}_both"], row[f"{who}_both_views"]) = \
                count_torch(forward, warm=True), count_torch(both, warm=True)
        forward, both = _calls(torch, case, False)
        with as_on_a_gpu():
            (row["gpu_forward"], row["gpu_forward_views"]), (row["gpu_both"], row["gpu_both_views"]) = \
                count_torch(forward, warm=True), count_torch(both, warm=True)
        row["namespace_forward"], row["namespace_both"] = count_namespace(case)
        forward_budget, both_budget = budget(case)
        row["within_budget"] = row["gpu_forward"] <= forward_budget and row["gpu_both"] <= both_budget
        rows.append(row)
    return rows


def _n(v: int | None) -> str:
    return "-" if v is None else str(v)  # torch has no such op


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = ["| call | forward: GPU paths (views) / CPU paths / namespace / torch "
             "| forward+backward: GPU paths (views) / CPU paths / namespace / torch | budget |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['gpu_forward']} ({r['gpu_forward_views']}) / {r['poolspec_forward']} / "
                     f"{r['namespace_forward']} / {_n(r['torch_forward'])} | {r['gpu_both']} ({r['gpu_both_views']}) / "
                     f"{r['poolspec_both']} / {r['namespace_both']} / {_n(r['torch_both'])} | "
                     f"{r['budget'][0]} / {r['budget'][1]}{'' if r['within_budget'] else ' (over)'} |")
    within = sum(r["within_budget"] for r in rows)
    lines.append(f"\n{within} of {len(rows)} calls within the budgets on the paths a GPU takes.")
    return "\n".join(lines)


def main(json_path: str | None = None) -> int:
    rows = run()
    print(table(rows))
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"torch": __import__("torch").__version__, "rows": rows}, f, indent=1)
    return 0


@contextlib.contextmanager
def as_on_a_gpu() -> Iterator[None]:
    """Arrays on the CPU take the paths a GPU takes in this block (``_compat.launch_bound``), so that the
    operations a GPU call makes can be counted without a GPU.

    >>> import numpy as np, poolspec
    >>> with as_on_a_gpu():
    ...     y = poolspec.avg_pool1d(np.ones((1, 1, 8)), 2)
    """
    from . import _compat

    before = _compat.AS_ON_A_GPU[0]
    _compat.AS_ON_A_GPU[0] = True
    try:
        yield
    finally:
        _compat.AS_ON_A_GPU[0] = before
