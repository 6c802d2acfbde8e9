"""The RoI families' benchmark peers: the op-count call with boxes of a detector's sizes over the whole map (x
differentiated, not the boxes), and torchvision's op of the same name, counted where it imports (torch has none).

>>> roi_peers("roi_pool").count_inputs is count_inputs
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers


def count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    """x and ``a["boxes"]`` rois (batch index, x1, y1, x2, y2) of 5 % to 55 % of the map each; x differentiated."""
    a = dict(a)
    k = a.pop("boxes")
    H, W = case.shape[2:]
    corner = torch.rand((k, 2), generator=gen) * torch.tensor([W, H]) * 0.8
    size = (torch.rand((k, 2), generator=gen) * 0.5 + 0.05) * torch.tensor([W, H])
    index = torch.randint(0, case.shape[0], (k, 1), generator=gen).to(x.dtype)
    return [x, torch.cat([index, corner, corner + size], 1)], a, 1


def roi_peers(torchvision_name: str) -> Peers:
    """The peers of an RoI family: its op-count call, and torchvision's op of each op's name as the native op
    (``torchvision.ops.<op>``: the position-sensitive ops share their plain twin's family; else
    ``torchvision_name``; None where torchvision is absent or built for another torch)."""
    def native(torch: Any, op: str) -> Callable[..., Any] | None:
        try:
            ops = importlib.import_module("torchvision.ops")
        except Exception:  # torchvision absent, or built for another torch
            return None
        return getattr(ops, op, None) or getattr(ops, torchvision_name, None)

    return Peers(count_inputs=count_inputs, native=native)
