"""Helpers shared by the adapters: argument normalisation and torch's shape rule, used only to decide whether
a peer's call is the same call (never to compute a result)."""

from __future__ import annotations

from typing import Any

from poolspec.conformance import NotExpressible

# pool_out is torch's pooled length, poolspec's own rule (the last ceil-mode window starts inside the input or the
# left padding); it checks no argument, so an adapter never refuses a call on the peer's behalf
from poolspec.spec._rules import pool_output_size as pool_out

__all__ = ["NotExpressible", "ntuple", "pool_out", "ceil_adds_window", "require"]


def ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """``value`` as an n-tuple (an int or a 1-tuple repeated)."""
    if isinstance(value, (tuple, list)):
        return tuple(value) * n if len(value) == 1 else tuple(value)
    return (value,) * n


def ceil_adds_window(sizes: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...],
                     d: tuple[int, ...] | None = None) -> bool:
    """Whether ceil_mode=True gives a longer output than floor on any axis (else the two are the same call)."""
    d = d or (1,) * len(sizes)
    return any(pool_out(n, *a, True) != pool_out(n, *a, False) for n, *a in zip(sizes, k, s, p, d))


def require(condition: bool, reason: str) -> None:
    """Raise NotExpressible(reason) unless ``condition``."""
    if not condition:
        raise NotExpressible(reason)


def even_adaptive_window(x: Any, n: int, output_size: Any, peer: str) -> tuple[int, ...]:
    """k = s = L / O where every O divides its L (None keeps L): torch's adaptive windows are then exactly one
    strided pool; otherwise not the same call."""
    sizes = tuple(x.shape[-n:])
    out = tuple(L if o is None else o for L, o in zip(sizes, ntuple(output_size, n)))
    require(all(o > 0 and L % o == 0 for L, o in zip(sizes, out)),
            f"output_size {out} does not divide {sizes}: torch's adaptive windows are not one {peer} pool")
    return tuple(L // o for L, o in zip(sizes, out))


def per_rank(avg: Any = None, max: Any = None, adaptive_avg: Any = None,  # noqa: A002 - torch's op names
             adaptive_max: Any = None) -> dict[str, Any]:
    """The 1-d, 2-d and 3-d torch-style functions from rank-generic ones: ``avg(x, n, *args, **kwargs)``,
    ``max(x, n, ...)``, ``adaptive_avg(x, n, output_size)``, ``adaptive_max(x, n, output_size,
    return_indices=False)``; for an adapter's ``globals().update(...)``."""
    made: dict[str, Any] = {}
    for name, fn in (("avg_pool", avg), ("max_pool", max), ("adaptive_avg_pool", adaptive_avg),
                     ("adaptive_max_pool", adaptive_max)):
        for n in ((1, 2, 3) if fn is not None else ()):
            def op(x: Any, *args: Any, _fn: Any = fn, _n: int = n, **kwargs: Any) -> Any:
                return _fn(x, _n, *args, **kwargs)

            op.__name__ = op.__qualname__ = f"{name}{n}d"
            made[op.__name__] = op
    return made


def dense_average(fwd: Any, bwd: Any) -> tuple[Any, Any]:
    """An average pool and its backward with torch's explicit signature less ``dilation`` (poolspec's extension):
    the runner then counts dilated cases as not expressible, for a peer whose average has no dilation."""
    def forward(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                count_include_pad: bool = True, divisor_override: Any = None) -> Any:
        return fwd(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def backward(g: Any, x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> Any:
        return bwd(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    return forward, backward
