"""grid_sample's op-count call: a grid of sample points partly outside the image (both x and the grid
differentiated)."""

from __future__ import annotations

from typing import Any

from ...bench import BenchCase, Peers


def _count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    out = a.pop("out")
    grid = torch.rand((case.shape[0], *out, len(out)), generator=gen) * 2.4 - 1.2
    return [x, grid], dict(a, align_corners=False), 2


PEERS = Peers(count_inputs=_count_inputs)
