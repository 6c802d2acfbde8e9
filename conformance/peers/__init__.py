"""Peer adapters: each module maps poolspec's torch-style calls onto one existing library's own API, only where
the library's call has the same semantics; anything else raises ``NotExpressible``.

An adapter module defines
- ``NAME``: the peer's name (``results/<NAME>.json``, ``requirements/<NAME>.txt``),
- ``BACKEND``: the poolspec.conformance backend its arrays arrive in ("numpy" or "jax"),
- ``IMPORTS``: the modules it needs (the peer is "not installed" if one is missing),
- ``version() -> str`` and ``API``: one line naming the calls it uses,
- torch-style functions named as poolspec's ops (``avg_pool2d(x, kernel_size, stride=None, padding=0, ...)``;
  with ``return_indices=True`` a max pool returns ``(values, indices)``, indices ``None`` where the peer has
  none), and optionally ``<op>_backward(grad_output, x, ...)`` through the peer's own gradient,
- ``FINDINGS``: what its failures share, as dicts ``{"ops": [...], "flags": [...], "dtypes": [...] (optional),
  "checks": [...] (optional: "output", "indices", "grad_input", "grad_grad_output", "raises", ...),
  "rule": "one sentence naming the rule the peer follows instead of torch's", "upstream": "<issue URL> or new",
  "repro": "a line of Python reproducing it (optional; MATRIX.md shows it)"}``.
  A failing case belongs to the first finding whose ops hold its op, whose flags it all carries, and whose dtypes
  and checks (if given) hold its dtype and a failed check; ``matrix.py`` reports, per finding, how many of the
  cases with those flags fail, and lists failures no finding explains.

A path peer (``_paths.py``: a framework's ops through a compiler or exporter) defines instead of the functions
``PATH`` (a ``poolspec.conformance.paths`` path), ``GRADIENTS`` (a sentence) and ``run(ops) -> (Report, sample)``,
which runs its sample of the cases and says what was sampled.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# name -> adapter module (in this package)
PEERS = {
    "onnxruntime": "ort",
    "onnx_reference": "onnx_reference",
    "onnxruntime-1.24": "ort_124",  # an older release: bugs a later one fixed
    "jax": "jax_lax",
    "flax": "flax_linen",
    "keras": "keras_jax",
    "tensorflow": "tensorflow_tf",
    "skimage": "skimage_block",
    "scipy": "scipy_ndimage",
    # more frameworks
    "paddle": "paddle_nn",
    "tinygrad": "tinygrad_tensor",
    "mlx": "mlx_nn",
    # path peers (peers/_paths.py): an op through a compiler or exporter
    "inductor": "inductor",
    "inductor-dynamic": "inductor_dynamic",
    "export-ort": "export_ort",
    "jax-jit": "jax_jit",
}


def load(name: str) -> ModuleType:
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
    return importlib.import_module(f"{__name__}.{PEERS[name]}")


def installed(name: str) -> bool:
    """Whether every module the peer's adapter needs imports here (without importing the adapter's peer)."""
    import importlib.util

    module = importlib.import_module(f"{__name__}.{PEERS[name]}")
    return all(importlib.util.find_spec(m) is not None for m in module.IMPORTS)
