"""The jax peer's functions (jax.lax.reduce_window, jax.image; peers/jax_lax.py) under jax.jit.

Why the jax peer's own functions rather than poolspec's JAX ops: the path should change nothing but the
compilation of a framework's own ops, as inductor does torch's; the jax row beside it is the same functions run
eagerly, so a case that passes there and fails here is jit's own."""

from __future__ import annotations

from typing import Any

from . import jax_lax

NAME = "jax-jit"
PATH = "jit"
BACKEND = "jax"
IMPORTS = ("jax",)
API = f"the jax peer's calls ({jax_lax.API}) under jax.jit, non-array arguments static, on a sample of the cases"
GRADIENTS = "jax.vjp of the jitted function, to second order"
version = jax_lax.version


def run(ops: list[str] | None) -> tuple[Any, str]:
    import sys

    from poolspec.conformance import Implementation
    from poolspec.conformance.paths import run_sample, wrap

    impl = wrap(Implementation("jax", lambda op: getattr(jax_lax, op, None)), PATH)
    return run_sample(impl, BACKEND, ops=ops, per_op=5, progress=sys.stderr)


# the jax peer's rules hold under jit too; findings of jit's own come first
FINDINGS: list[dict[str, Any]] = [*jax_lax.FINDINGS]
