"""affine_grid's op-count call: x is theta, and the case's ``size`` the grid's."""

from __future__ import annotations

from typing import Any

from ...bench import BenchCase, Peers


def _count_inputs(torch: Any, case: BenchCase, x: Any, a: dict[str, Any], gen: Any) -> tuple[list[Any], dict, int]:
    return [x], {"size": a["size"], "align_corners": False}, 1


PEERS = Peers(count_inputs=_count_inputs)
