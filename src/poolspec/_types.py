"""The types of the public API.

``Array`` stands for the caller's array type (NumPy, CuPy, torch, JAX, Dask, array-api-strict...): an op
returns arrays of the type it was given. It is bound to ``Any`` because the array API standard has no
static protocol the libraries declare.

>>> import numpy as np, poolspec
>>> type(poolspec.avg_pool1d(np.ones((1, 4)), 2)).__name__
'ndarray'
"""

from __future__ import annotations

from typing import Any, TypeVar

Array = TypeVar("Array", bound=Any)
# the argument types the pools share
Size = int | tuple[int, ...]
Padding = int | str | tuple[int, ...] | tuple[tuple[int, int], ...]
OutputSize = int | None | tuple[int | None, ...]
