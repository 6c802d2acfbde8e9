"""fractional_max_pool's op-count call: fixed ``_random_samples``, so that both libraries pool the same windows."""

from __future__ import annotations

from typing import Any

from ...bench import BenchCase, Peers


def _count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    samples = torch.rand((case.shape[0], case.shape[1], len(case.shape) - 2), generator=gen)
    return [x], dict(a, _random_samples=samples), 1


PEERS = Peers(count_inputs=_count_inputs)
