"""The shipped reference vectors: one stored (uncompressed, fixed-timestamp) ``.npz`` per op and a manifest.

Written only by ``scripts/generate_golden.py`` (torch 2.13 CPU); read here with NumPy alone, so the conformance
suite and the exports need no torch. The writer is deterministic: the same arrays give the same bytes.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

# the arrays a case may hold, in the order they are stored (families.py names the ports)
ARRAYS = ("input", "indices", "grid", "samples", "boxes", "output", "output_indices", "grad_output", "grad_input",
          "grad_grid", "grad_input_cotangent", "grad_grid_cotangent", "grad_grad_output", "grad_grad_input",
          "grad_grad_grid")
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Golden:
    """One case's metadata from the manifest; ``arrays()`` reads its vectors."""

    name: str
    op: str
    arguments: dict[str, Any]
    dtype: str
    flags: tuple[str, ...]
    reference: str
    rtol: float
    atol: float
    cotangent: str
    error: str | None
    files: tuple[str, ...]
    store: str

    def arrays(self) -> dict[str, np.ndarray]:
        store = _store(self.store)
        return {key: store[f"{self.name}/{key}"] for key in self.files}


def case_id(case: Golden, phase: str) -> str:
    """The stable test id of one phase of a case: ``<op>-g012-float64-forward`` (grid case 12 in float64),
    ``<op>-r003-float64-backward`` (random), ``<op>-g002-float32-double-backward``, ``<op>-e001-float64-forward``
    (a call that must raise)."""
    kind = case.name[len(case.op) + 1:]
    if kind.startswith(case.dtype + "-"):
        kind = "g" + kind[len(case.dtype) + 1:]
    return f"{case.op}-{kind}-{case.dtype}-{phase}"


def case_key(case: Golden) -> str:
    """A case's id without its phase (``avg_pool2d-g018-float32``): how the CLI names a case."""
    return case_id(case, "forward").removesuffix("-forward")


def store_name(op: str, arguments: dict[str, Any]) -> str:
    """The file holding a case's arrays: one per op, and one per mode where the family's record splits its
    store (interpolate's: files stay small)."""
    from .families import family

    if not family(op).store_by_mode:
        return f"{op}.npz"
    return f"{op}-{arguments['mode']}{'-antialias' if arguments.get('antialias') else ''}.npz"


def encode(value: Any) -> Any:
    """JSON for argument values: tuples become lists, non-finite floats strings ("inf", "-inf")."""
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(decode(v) for v in value)
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def golden_dir() -> Path:
    return Path(str(resources.files("poolspec").joinpath("data/golden")))


@lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    path = golden_dir() / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"no golden vectors at {path.parent}: run scripts/generate_golden.py")
    return json.loads(path.read_text(encoding="utf-8"))


def cases(ops: list[str] | None = None) -> list[Golden]:
    """The stored cases, all or those of ``ops``, in the manifest's order."""
    out = []
    for c in manifest()["cases"]:
        if ops is not None and c["op"] not in ops:
            continue
        out.append(Golden(c["id"], c["op"], {k: decode(v) for k, v in c["arguments"].items()}, c["dtype"],
                          tuple(c["flags"]), c["reference"], c["rtol"], c["atol"], c["cotangent"], c.get("error"),
                          tuple(c["files"]), c["store"]))
    return out


@lru_cache(maxsize=64)
def _store(name: str) -> Any:
    return np.load(golden_dir() / name, allow_pickle=False)


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """A stored zip of .npy members with a fixed timestamp, in the given order: byte-for-byte reproducible."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())
