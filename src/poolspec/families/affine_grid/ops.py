"""affine_grid and its explicit backward: the base grid of torch's linspace rule times theta (the card, in
``card.py``, states the rule), linear in theta.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..._compat import (
    dtype_name,
    is_torch_array,
    matmul,
    namespace,
    to_namespace,
)
from ..._types import Array
from ...autodiff import anchor, graph_node, in_graph
from ...spec import card

__all__ = ["affine_grid", "affine_grid_backward"]

# --- affine_grid ---------------------------------------------------------------------------------------

def _linspace(L: int, align: bool, dtype: np.dtype) -> np.ndarray:
    """torch's linspace_from_neg_one: linspace(-1, 1, L) by torch's symmetric formula (-1 + i * step for the
    first half, 1 - (L - 1 - i) * step for the rest, step rounded to the dtype, each point rounded once as
    its fused kernel does), times (L - 1) then divided by L without align_corners; one point is 0."""
    if L <= 1:
        return np.zeros(max(L, 1), dtype)
    step = Fraction(float(dtype.type(2) / dtype.type(L - 1)))
    exact = [-1 + i * step if i < L // 2 else 1 - (L - 1 - i) * step for i in range(L)]
    r = np.array([float(v) for v in exact], dtype=np.float64).astype(dtype)
    if not align:
        r = (r * dtype.type(L - 1) / dtype.type(L)).astype(dtype)
    return r


@lru_cache(maxsize=256)
def _base(size: tuple[int, ...], align: bool, dtype: str) -> np.ndarray:
    """(prod(S), n + 1) rows (x, y[, z], 1) in row-major order of S."""
    host = np.dtype(dtype if dtype in ("float32", "float64") else "float32")
    spatial = size[2:]
    axes = [_linspace(L, align, host) for L in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # (D, H, W) order
    cols = [m.reshape(-1) for m in mesh[::-1]] + [np.ones(math.prod(spatial), host)]
    out = np.stack(cols, axis=-1)
    out.flags.writeable = False
    return out


def _affine(xp: Any, theta: Any, size: tuple[int, ...], align: bool, dtype: str) -> Any:
    base = to_namespace(_base(size, align, dtype), xp, theta, theta.dtype)
    n = len(size) - 2
    out = matmul(xp, base, xp.permute_dims(theta, (0, 2, 1)))  # (N, S, n): base rows times theta^T
    return xp.reshape(out, (theta.shape[0],) + tuple(size[2:]) + (n,))


def affine_grid(theta: Array, size: tuple[int, ...], align_corners: bool | None = None) -> Array:
    """The sampling grid of the affine maps ``theta``, as ``torch.nn.functional.affine_grid``.

    A matrix product with a fixed base grid (torch's ``linspace(-1, 1, L)`` per axis, times (L - 1) / L when
    ``align_corners`` is False): deterministic on every backend; with :func:`grid_sample`, a spatial transformer.

    Parameters
    ----------
    theta : array
        Affine matrices acting on normalised (x, y[, z], 1): (N, 2, 3) for a 4-entry ``size``, (N, 3, 4) for a
        5-entry one; float16, bfloat16, float32 or float64, any array-API array.
    size : tuple of int
        The size (N, C, H, W) or (N, C, D, H, W) of the image the grid will sample into; entries > 0, ``size[0]``
        equal to ``theta``'s batch size.
    align_corners : bool or None, default None
        As in :func:`grid_sample`; None means False.

    Returns
    -------
    array
        The grid (N, H, W, 2) or (N, D, H, W, 3), of ``theta``'s namespace, device and dtype.

    Raises
    ------
    ValueError
        If ``size`` has not 4 or 5 entries or an entry <= 0, or ``theta``'s shape does not fit ``size``.
    TypeError
        If ``theta`` is not a supported array or not floating, ``size`` is not a tuple of ints, or
        ``align_corners`` is not a bool.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.affine_grid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 1, 2))[0, 0].tolist()
    [[-0.5, 0.0], [0.5, 0.0]]
    """
    if in_graph(theta):
        return graph_node("affine_grid", dict(size=size, align_corners=align_corners), theta)
    xp = namespace(theta, names=("theta",), op="affine_grid")
    dtype = dtype_name(xp, theta.dtype)
    r = card("affine_grid").resolve(tuple(theta.shape), dtype, size=size, align_corners=align_corners)
    return _affine(xp, theta, r.params["size"], r.params["align_corners"], dtype)


def affine_grid_backward(grad_grid: Array, theta: Array, size: tuple[int, ...],
                         align_corners: bool | None = None) -> Array:
    """The gradient of :func:`affine_grid` with respect to ``theta`` for the cotangent ``grad_grid``.

    The sum over the grid's points of ``grad_grid`` (x) the base grid: a matrix product, deterministic.

    Parameters
    ----------
    grad_grid : array
        The cotangent of the grid: its shape (N, H, W, 2) or (N, D, H, W, 3), ``theta``'s library.
    theta : array
        The forward's affine matrices, (N, 2, 3) or (N, 3, 4).
    size : tuple of int
        As in :func:`affine_grid`.
    align_corners : bool or None, default None
        As in :func:`affine_grid`.

    Returns
    -------
    array
        The gradient with respect to ``theta``, shaped (N, n, n + 1) like ``theta``, in ``theta``'s namespace.

    Raises
    ------
    ValueError
        If the arguments break :func:`affine_grid`'s rules, or ``grad_grid``'s shape is not the grid's.
    TypeError
        As :func:`affine_grid`, or if ``grad_grid`` is not an array of ``theta``'s library.

    Examples
    --------
    >>> import numpy as np, poolspec
    >>> poolspec.affine_grid_backward(np.ones((1, 1, 2, 2)), np.zeros((1, 2, 3)), (1, 1, 1, 2)).tolist()
    [[[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]]]
    """
    if in_graph(theta):
        return graph_node("affine_grid_backward", dict(size=size, align_corners=align_corners), grad_grid, theta)
    op = "affine_grid_backward"
    xp = namespace(grad_grid, theta, names=("grad_grid", "theta"), op=op)
    dtype = dtype_name(xp, theta.dtype)
    r = card("affine_grid").resolve(tuple(theta.shape), dtype, size=size, align_corners=align_corners)
    size = r.params["size"]
    if tuple(grad_grid.shape) != tuple(r.output_shape):
        raise ValueError(f"{op}: grad_grid.shape={tuple(grad_grid.shape)}: must equal the grid's shape "
                         f"{tuple(r.output_shape)}")
    base = to_namespace(_base(size, r.params["align_corners"], dtype), xp, theta, theta.dtype)
    n = len(size) - 2
    g = xp.reshape(grad_grid, (theta.shape[0], math.prod(size[2:]), n))
    out = matmul(xp, xp.permute_dims(g, (0, 2, 1)), base)  # (N, n, n + 1)
    return anchor(out, theta) if is_torch_array(theta) else out
