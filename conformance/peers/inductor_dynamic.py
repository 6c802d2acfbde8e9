"""torch.nn.functional through torch.compile (inductor, dynamic=True: symbolic shapes): forward and
backward (autograd of the compiled function); torch.compile has no double backward."""

from __future__ import annotations

from typing import Any

from . import _paths

NAME = "inductor-dynamic"
PATH = "compile-dynamic"
BACKEND = "torch"
IMPORTS = ("torch",)
API = ('torch.nn.functional under torch.compile(fn, backend="inductor", fullgraph=True, dynamic=True), one compilation '
       "per call signature, on a sample of the cases")
GRADIENTS = "autograd of the compiled function (AOTAutograd), first order only: torch.compile has no double backward"


def version() -> str:
    return _paths.torch_version() + " (inductor, CPU)"


def run(ops: list[str] | None) -> tuple[Any, str]:
    return _paths.run_torch(NAME, ops)


_HARNESS = ("from poolspec.conformance import paths, case; from poolspec.conformance.backends import Backend; "
            "from poolspec.conformance.runner import run_case; print(run_case(Backend('torch'), "
            "paths.torch_peer('inductor-dynamic'), case('{}'), ('forward', 'backward')).problems[0])")
_CASE = "c = poolspec.conformance.case('{}'); a = {{k: torch.from_numpy(v) for k, v in c.arrays().items()}}; "
FINDINGS: list[dict[str, Any]] = [
    {"ops": ["adaptive_avg_pool2d"], "flags": [], "checks": ["crash"],
     "rule": "with dynamic=True inductor's adaptive_avg_pool2d lowering fails on symbolic sizes "
             "in the runner's forward-then-backward sequence (LoweringException: "
             "'cannot determine truth value of Relational' deciding its window count > 25), where static shapes "
             "compile; a single forward call compiles",
     "upstream": "new",
     "repro": _HARNESS.format("adaptive_avg_pool2d-g000-float64")},
    {"ops": ["max_unpool1d", "max_unpool2d", "max_unpool3d"], "flags": [], "checks": ["crash"],
     "rule": "with dynamic=True inductor fails to compile max_unpool on symbolic sizes "
             "in the runner's forward-then-backward sequence (InductorError: 'Exponent must be non-negative')",
     "upstream": "new",
     "repro": _HARNESS.format("max_unpool1d-g000-float64")},
    {"ops": ["affine_grid"], "flags": [], "checks": ["crash"],
     "rule": "with dynamic=True affine_grid does not compile in the runner's forward-then-backward sequence: its "
             "composite implementation wants concrete sizes "
             "(BackendCompilerFailed: 'SymIntArrayRef expected to contain only concrete integers')", "upstream": "new",
     "repro": _HARNESS.format("affine_grid-g000-float64")},
    {"ops": ["lp_pool1d", "lp_pool2d", "lp_pool3d", "interpolate"], "flags": [], "checks": ["crash"],
     "rule": "with dynamic=True the compiled backward of lp_pool and interpolate donates its buffers and then refuses "
             "autograd.grad(create_graph=True) ('compiled with non-empty donated buffers which requires "
             "create_graph=False'): the runner keeps the graph for a second order, so these first-order gradients "
             "are refused rather than wrong (static shapes accept it)", "upstream": "new",
     "repro": _CASE.format("lp_pool2d-g000-float64") + "x = a['input'].requires_grad_(); torch.autograd.grad("
              "torch.compile(lambda x: torch.nn.functional.lp_pool2d(x, **c.arguments), dynamic=True)(x), x, "
              "a['grad_output'], create_graph=True)  # RuntimeError"},
    *_paths.INDUCTOR_FINDINGS,
]
