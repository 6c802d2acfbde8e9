"""The routed families' VJP at given indices (max_pool, adaptive_max_pool): at the forward's winners by their
windows' routes, elsewhere by torch's rule (each cotangent added at its index, by sorting: ``kernels.cells.Cells``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._calls import check_index_range, check_indices
from .._compat import WINNERS, is_traced, readable
from ..autodiff import max_backward, max_indices
from ..kernels.cells import Cells


def are_winners(windows: Any, xp: Any, x: Any, indices: Any) -> bool:
    """Whether ``indices`` are x's winners; taken as True where the values cannot be read. Concrete JAX arrays
    inside a jit trace are compared on the host: jnp operations there are staged, and a branch may never
    read a traced value."""
    if WINNERS[0] or not (readable(indices) and readable(x)):
        return True
    same = xp.all(indices == max_indices(windows, x))
    if is_traced(same):
        host = np.asarray(x).astype(np.float64)  # exact for every float dtype, bfloat16 included
        same = np.all(np.asarray(indices) == max_indices(windows, host))
    return bool(same)


def routed_vjp(op: str, windows: Any, grad_output: Any, x: Any, indices: Any, shape: tuple[int, ...]) -> Any:
    """The VJP at the forward's winners, or at ``indices`` given in their place. The windows' routes rely on
    each index being its output's winner (inside its window); other indices follow torch's rule instead,
    each cotangent added at its index anywhere in the plane (by sorting, :class:`Cells`). Under transforms,
    traces and Dask's lazy graphs, whose values are not read, indices are taken as the winners."""
    if indices is None:
        return max_backward(windows, grad_output, max_indices(windows, x), primal=x)
    xp = check_indices(f"{op}_backward", indices, x, shape)
    if are_winners(windows, xp, x, indices):
        return max_backward(windows, grad_output, indices, primal=x)
    n = len(windows.in_spatial)
    P, M, lead = math.prod(windows.in_spatial), math.prod(shape[-n:]), tuple(x.shape[:x.ndim - n])
    check_index_range(f"{op}_backward", xp, indices, P)
    grad = max_backward(Cells(P, M), xp.reshape(grad_output, lead + (M,)), xp.reshape(indices, lead + (M,)),
                        primal=xp.reshape(x, lead + (P,)))
    return xp.reshape(grad, tuple(x.shape))
