"""interpolate's benchmark peer: ``jax.image.resize`` on JAX (nearest rounds half up there: nearest-exact)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...bench import BenchCase, Peers


def _jax_resize(jax: Any, case: BenchCase) -> tuple[str, Callable[..., Any]]:
    a = case.args
    size = a.get("size") or tuple(int(s * a["scale_factor"]) for s in case.shape[2:])
    method = {"linear": "linear", "bilinear": "linear", "trilinear": "linear", "nearest": "nearest",
              "bicubic": "cubic"}[a["mode"]]
    aa = bool(a.get("antialias"))
    note = "" if a["mode"] != "nearest" else " (rounds half up: nearest-exact, the nearest equivalent)"
    return (f"jax.image.resize {method}{' antialias' if aa else ''}{note}",
            lambda x: jax.image.resize(x, x.shape[:2] + tuple(size), method, antialias=aa))


PEERS = Peers(jax=_jax_resize)
