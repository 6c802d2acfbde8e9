"""What the path peers share: torch's own ops (torch.nn.functional) or another peer's functions run through a
compiler or exporter (``poolspec.conformance.paths``), on a sample of the cases. The reference is torch 2.13
eager, whose ``torch.nn.functional`` gives it, so a torch path peer's sample is drawn from the cases torch's
eager call passes, and every failure is the path's own."""

from __future__ import annotations

import sys
from typing import Any


def torch_version() -> str:
    import torch

    return f"torch {torch.__version__}"


def run_torch(name: str, ops: list[str] | None) -> tuple[Any, str]:
    from poolspec.conformance.paths import run_torch_peer

    return run_torch_peer(name, ops, progress=sys.stderr)  # paths.PER_OP cases per op


# what torch.compile (inductor) does instead of torch's eager rule; shared by the static and dynamic peers
_AVG = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]
_MAXES = ["max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
          "adaptive_max_pool3d", "fractional_max_pool2d", "fractional_max_pool3d"]
_UNPOOL = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
INDUCTOR_FINDINGS: list[dict[str, Any]] = [
    {"ops": _AVG, "flags": [], "checks": ["grad_input"],
     "rule": "inductor's avg_pool backward divides every window by prod(kernel_size) when count_include_pad=True, "
             "where torch (and inductor's own forward) divide a ceil-mode window that overhangs the padded input by "
             "its clipped size, so those cells get a fraction of their gradient; lp_pool (avg_pool of x^p times "
             "prod(k)) inherits it",
     "upstream": "https://github.com/pytorch/pytorch/issues/198119",
     "repro": "x = torch.ones(1, 1, 7, requires_grad=True); f = lambda y: torch.nn.functional.avg_pool1d(y, 2, 3, "
              "ceil_mode=True); print(torch.autograd.grad(f(x).sum(), x)[0][0, 0, -1].item(), "
              "torch.autograd.grad(torch.compile(f)(x).sum(), x)[0][0, 0, -1].item())  # 1.0 0.5"},
    {"ops": ["fractional_max_pool3d"], "flags": [], "checks": ["output"],
     "rule": "inductor's fractional_max_pool3d picks other cells than torch's eager kernel for the same "
             "_random_samples (here with kernel_size 1, and at the output-size limit), so values differ",
     "upstream": "new",
     "repro": "a = poolspec.conformance.case('fractional_max_pool3d-g002-float64').arrays(); x, s = "
              "torch.from_numpy(a['input']), torch.from_numpy(a['samples']); f = lambda x: "
              "torch.nn.functional.fractional_max_pool3d(x, 1, output_size=(3, 3, 3), _random_samples=s); "
              "print((f(x).isnan() != torch.compile(f)(x).isnan()).sum().item())  # 8 (eager: 0)"},
    {"ops": _MAXES, "flags": [], "checks": ["indices", "grad_input"],
     "rule": "inductor's max pools (max_pool, adaptive_max_pool, fractional_max_pool) give a window holding "
             "several NaN the index of its first NaN, torch's eager kernels the last, so the indices and the "
             "gradient (routed through them) go to another cell; the values (NaN) agree",
     "upstream": "new",
     "repro": "nan = float('nan'); f = lambda x: torch.nn.functional.max_pool1d(x, 3, return_indices=True)[1]; "
              "x = torch.tensor([[[nan, 0., nan]]]); print(f(x).item(), torch.compile(f)(x).item())  # 2 0"},
    {"ops": _UNPOOL, "flags": [], "checks": ["raises"],
     "rule": "inductor's max_unpool does not check an index against its plane's output size (torch eager raises "
             "'Found an invalid max index'): an index past the plane but inside the tensor is silently dropped",
     "upstream": "new",
     "repro": "f = lambda x, i: torch.nn.functional.max_unpool1d(x, i, 2, output_size=(4,)); x, i = "
              "torch.tensor([[[1., 2.], [3., 4.]]]), torch.tensor([[[0, 5], [0, 1]]]); print(torch.compile(f)(x, i))"
              "  # eager: RuntimeError; compiled: [[1, 0, 0, 0], [3, 4, 0, 0]]"},
    {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
     "rule": "the compiled interpolate accepts dtypes torch's eager kernels refuse (uint8 for area, whose eager "
             "adaptive_avg_pool has no Byte kernel) and computes a result",
     "upstream": "https://github.com/pytorch/pytorch/issues/193811",
     "repro": "f = lambda x: torch.nn.functional.interpolate(x, scale_factor=2.1, mode='area'); "
              "print(torch.compile(f)(torch.arange(4, dtype=torch.uint8).reshape(1, 1, 4)))  # eager: "
              "NotImplementedError"},
]
