"""The array libraries the conformance suite and the self-check run on: making arrays, reading them back, and
the autodiff each one has. A backend's module is imported only when that backend is asked for."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np

NAMES = ("numpy", "torch", "jax", "array_api_strict", "dask", "cupy")
_NO_HALF = {"array_api_strict": ("float16", "bfloat16"), "numpy": ("bfloat16",), "dask": ("bfloat16",),
            "cupy": ("bfloat16",)}


@dataclass
class Backend:
    """One array library on one device."""

    name: str
    device: str | None = None

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"unknown backend {self.name!r}; choose one of {', '.join(NAMES)}")
        if self.name == "jax":
            jax = importlib.import_module("jax")
            jax.config.update("jax_enable_x64", True)  # float64 vectors need 64-bit JAX
        elif self.name == "cupy":
            importlib.import_module("cupy")
        else:
            importlib.import_module({"numpy": "numpy", "torch": "torch", "array_api_strict": "array_api_strict",
                                     "dask": "dask.array"}[self.name])

    @property
    def autodiff(self) -> str | None:
        return self.name if self.name in ("torch", "jax") else None

    def supports(self, dtype: str) -> bool:
        return dtype not in _NO_HALF.get(self.name, ())

    def asarray(self, a: np.ndarray, dtype: str | None = None) -> Any:
        """A new array of this backend and device holding ``a`` (bfloat16 values arrive as float32)."""
        a = np.array(a, copy=True)
        dtype = dtype or a.dtype.name
        cast_later = dtype == "bfloat16"
        if not cast_later:
            a = a.astype(dtype)
        if self.name == "numpy":
            out: Any = a
        elif self.name == "torch":
            torch = importlib.import_module("torch")
            out = torch.from_numpy(a)
            if self.device:
                out = out.to(self.device)
            if cast_later:
                out = out.to(torch.bfloat16)
        elif self.name == "jax":
            jax = importlib.import_module("jax")
            jnp = importlib.import_module("jax.numpy")
            out = jnp.asarray(a)
            if cast_later:
                out = out.astype(jnp.bfloat16)
            if self.device:
                out = jax.device_put(out, jax.devices(self.device)[0])
        elif self.name == "array_api_strict":
            out = importlib.import_module("array_api_strict").asarray(a)
        elif self.name == "dask":
            da = importlib.import_module("dask.array")
            chunks = tuple(a.shape[:-1]) + (max(1, (a.shape[-1] + 1) // 2),) if a.ndim else ()
            out = da.from_array(a, chunks=chunks)
        else:
            cupy = importlib.import_module("cupy")
            if self.device:
                with cupy.cuda.Device(int(self.device.split(":")[-1])):
                    out = cupy.asarray(a)
            else:
                out = cupy.asarray(a)
        return out

    def to_numpy(self, x: Any) -> np.ndarray:
        """``x`` on the host as NumPy (bfloat16 widened to float32)."""
        if self.name == "torch":
            torch = importlib.import_module("torch")
            x = x.detach().cpu()
            return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
        if self.name == "dask":
            return np.asarray(x.compute())
        if self.name == "cupy":
            return x.get()
        if self.name == "array_api_strict":
            return np.asarray(x._array) if hasattr(x, "_array") else np.from_dlpack(x)
        out = np.asarray(x)
        return out.astype(np.float32) if out.dtype.name == "bfloat16" else out

    def namespace_of(self, x: Any) -> Any:
        import array_api_compat

        return array_api_compat.array_namespace(x)

    def device_of(self, x: Any) -> Any:
        import array_api_compat

        return array_api_compat.device(x)

    def dtype_name(self, x: Any) -> str:
        text = str(x.dtype)
        return "bfloat16" if "bfloat16" in text else text.rsplit(".", 1)[-1]
