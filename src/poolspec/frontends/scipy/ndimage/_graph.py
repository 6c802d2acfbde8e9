"""The hook that sends a call being captured by torch.compile or torch.export to the front-end's graph node
(``_capture``, imported only then: torch is a test dependency).

>>> captured("uniform_filter1d")(lambda input, size: input)([1.0], 3)
[1.0]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ....autodiff import in_graph


def captured(name: str, arrays: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate public function ``name``: a torch tensor input being captured goes through one graph node.
    ``arrays``: the arguments after the input that are arrays (always: coordinates) or may be (shift, matrix,
    offset: where the call gives a tensor)."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            x = args[0] if args else kwargs.get("input")
            if not in_graph(x):
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            given = dict(bound.arguments)
            del given[next(iter(signature.parameters))]
            others = {k: given.pop(k) for k in arrays if k in given and not _plain(given[k])}
            from . import _capture

            return _capture.call(name, x, others, given)
        return call
    return wrap


def _plain(value: Any) -> bool:
    """A number or a sequence of numbers (an option), not an array."""
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, (list, tuple)) and all(_plain(v) for v in value)
