"""The Keras front-end functions and their shape rules, by name (``"keras.ops.max_pool"``): filled by the modules
that define them, read by the operation a symbolic call records (``_operation.FrontendOperation``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FUNCTIONS: dict[str, Callable[..., Any]] = {}
SPECS: dict[str, Callable[..., tuple[tuple[Any, ...], str]]] = {}
