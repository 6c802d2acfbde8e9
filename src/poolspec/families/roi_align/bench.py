"""roi_align's (and ps_roi_align's) op-count call: boxes of a detector's sizes over the whole map (x differentiated,
not the boxes); torch has no roi_align of its own, and torchvision's is counted where it imports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers


def _count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    a = dict(a)
    k = a.pop("boxes")
    H, W = case.shape[2:]
    corner = torch.rand((k, 2), generator=gen) * torch.tensor([W, H]) * 0.8
    size = (torch.rand((k, 2), generator=gen) * 0.5 + 0.05) * torch.tensor([W, H])
    index = torch.randint(0, case.shape[0], (k, 1), generator=gen).to(x.dtype)
    return [x, torch.cat([index, corner, corner + size], 1)], a, 1


def _native(torch: Any, op: str) -> Callable[..., Any] | None:
    try:
        import torchvision.ops  # type: ignore[import-not-found]
    except Exception:  # torchvision absent, or built for another torch
        return None
    return getattr(torchvision.ops, op)  # (roi_align or ps_roi_align)


PEERS = Peers(count_inputs=_count_inputs, native=_native)
