"""The one place that knows the test backends: how to make an array of each and read it back."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import numpy as np


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _cupy_usable() -> bool:
    if not _installed("cupy"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@dataclass
class Backend:
    name: str
    dtypes: tuple[str, ...]

    @property
    def xp(self) -> Any:
        import array_api_compat

        return array_api_compat.array_namespace(self.asarray(np.zeros(1)))

    def supports(self, dtype: str) -> bool:
        return dtype in self.dtypes

    def asarray(self, a: np.ndarray, dtype: str | None = None) -> Any:
        """A fresh array of this backend holding ``a`` (cast to ``dtype`` on the backend, so bfloat16
        works where NumPy has none)."""
        a = np.array(a, copy=True)
        if dtype is not None and dtype != "bfloat16" and self.name in ("numpy", "dask", "cupy"):
            a, dtype = a.astype(dtype), None
        if self.name == "numpy":
            out: Any = a
        elif self.name == "torch":
            import torch

            out = torch.from_numpy(a)
        elif self.name == "jax":
            import jax.numpy as jnp

            out = jnp.asarray(a)
        elif self.name == "array_api_strict":
            import array_api_strict as xps

            out = xps.asarray(a)
        elif self.name == "dask":
            import dask.array as da

            # two chunks along the last axis: enough to exercise chunk borders, cheap enough to run often
            chunks = tuple(a.shape[:-1]) + (max(1, (a.shape[-1] + 1) // 2),) if a.ndim else ()
            out = da.from_array(a, chunks=chunks)
        elif self.name == "cupy":
            import cupy

            out = cupy.asarray(a)
        else:
            raise AssertionError(self.name)
        if dtype is not None:
            import array_api_compat

            xp = array_api_compat.array_namespace(out)
            out = xp.astype(out, getattr(xp, dtype) if hasattr(xp, dtype) else _bf16(self.name))
        return out

    def to_numpy(self, x: Any) -> np.ndarray:
        from poolspec.conformance.backends import Backend as Library

        return Library.to_numpy(self, x)  # the same read-back as the conformance suite (it uses only .name)


def _bf16(name: str) -> Any:
    if name == "torch":
        import torch

        return torch.bfloat16
    if name == "jax":
        import jax.numpy as jnp

        return jnp.bfloat16
    raise TypeError(f"{name} has no bfloat16")


_INTS = ("int8", "int16", "int32", "int64", "uint8")
ALL = {
    "numpy": Backend("numpy", ("float16", "float32", "float64") + _INTS),
    "torch": Backend("torch", ("float16", "bfloat16", "float32", "float64") + _INTS),
    "jax": Backend("jax", ("float16", "bfloat16", "float32", "float64") + _INTS),
    "array_api_strict": Backend("array_api_strict", ("float32", "float64") + _INTS),
    "dask": Backend("dask", ("float16", "float32", "float64") + _INTS),
    "cupy": Backend("cupy", ("float16", "float32", "float64") + _INTS),
}


def available() -> dict[str, str | None]:
    """Backend name -> None if usable, else the reason it is skipped."""
    out: dict[str, str | None] = {}
    for name in ALL:
        if name == "cupy":
            out[name] = None if _cupy_usable() else "cupy needs a CUDA GPU"
        else:
            out[name] = None if _installed(name) else f"{name} is not installed"
    return out
