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
    import json
    import sys
    from pathlib import Path

    from poolspec.conformance import Implementation
    from poolspec.conformance.paths import run_sample, wrap

    impl = wrap(Implementation("jax", lambda op: getattr(jax_lax, op, None)), PATH)
    # the jax row's stored results say which cases its functions express: the sample is drawn from those, so that
    # each case sampled is one jit can change
    stored = Path(__file__).resolve().parents[1] / "results" / "jax.json"
    ran = {c["id"] for c in json.loads(stored.read_text(encoding="utf-8"))["cases"] if c["status"] in ("pass", "fail")}
    return run_sample(impl, BACKEND, ops=ops, per_op=5, only=lambda c: c.name in ran,
                      only_text="the cases the jax row runs (results/jax.json: passed or failed)", progress=sys.stderr)


# the jax peer's rules hold under jit too; findings of jit's own come first
FINDINGS: list[dict[str, Any]] = [*jax_lax.FINDINGS]
