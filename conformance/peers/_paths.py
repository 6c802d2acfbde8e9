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
