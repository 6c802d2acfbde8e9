"""max_unpool's op-count call: torch's own max pool of x gives the values and indices it unpools."""

from __future__ import annotations

from typing import Any

from ...bench import BenchCase, Peers


def _count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    rank = len(case.shape) - 2
    y, idx = getattr(torch.nn.functional, f"max_pool{rank}d")(x, a["kernel_size"], return_indices=True)
    return [y, idx], dict(a, output_size=case.shape[-rank:]), 1


PEERS = Peers(count_inputs=_count_inputs)
