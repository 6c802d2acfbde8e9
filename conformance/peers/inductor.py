"""torch.nn.functional through torch.compile (inductor, static shapes): forward and backward (autograd of the
compiled function); torch.compile has no double backward."""

from __future__ import annotations

from typing import Any

from . import _paths

NAME = "inductor"
PATH = "compile"
BACKEND = "torch"
IMPORTS = ("torch",)
API = ('torch.nn.functional under torch.compile(fn, backend="inductor", fullgraph=True), one compilation '
       "per call signature, on a sample of the cases")
GRADIENTS = "autograd of the compiled function (AOTAutograd), first order only: torch.compile has no double backward"


def version() -> str:
    return _paths.torch_version() + " (inductor, CPU)"


def run(ops: list[str] | None) -> tuple[Any, str]:
    return _paths.run_torch(NAME, ops)


FINDINGS: list[dict[str, Any]] = [*_paths.INDUCTOR_FINDINGS]
