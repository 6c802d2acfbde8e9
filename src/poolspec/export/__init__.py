"""Exporting the reference vectors for porters: ``npz``, ``safetensors``, ``json`` and Burn test modules.

``export(out, ops=..., fmt=..., dtype=...)`` writes one file per case (Burn: one Rust module per op) and
``out/manifest.json``: ``{"poolspec_version", "torch_version", "format", "dtype", "cases": [...]}``, each case
with ``id``, ``op`` (the torch.nn.functional name), ``arguments`` (the keyword arguments of that call, with
``size=`` instead of ``scale_factor`` wherever the two are the same call), ``torch_arguments`` (the call as
generated), ``dtype``, ``rtol``, ``atol``, ``cotangent``, ``flags``, ``reference`` and ``files``.

Array names in every format: ``input`` (the first argument: x, or affine_grid's theta), ``output``,
``grad_output``, ``grad_input``, and where they apply ``indices`` (max_pool's and fractional_max_pool's winners,
or max_unpool's input), ``grid`` and ``grad_grid`` (grid_sample), ``samples`` (fractional_max_pool's
``_random_samples``), ``grad_input_cotangent`` (v) and ``grad_grid_cotangent`` (w), ``grad_grad_output``
(d(<grad_input, v> + <grad_grid, w>)/d(grad_output)), ``grad_grad_input`` and ``grad_grad_grid`` (its
derivatives w.r.t. x and grid). ``conformance.families`` names each family's ports.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..conformance import golden
from ..conformance.golden import encode, write_npz
from .burn import burn_cases, write_burn
from .sizes import size_arguments

FORMATS = ("npz", "safetensors", "json", "burn")
_RENAME = {"output_indices": "indices"}


def _select(ops: list[str] | None, dtype: str) -> list[golden.Golden]:
    return [c for c in golden.cases(ops) if c.dtype == dtype]


def export(out: str | Path, ops: list[str] | None = None, fmt: str = "npz", dtype: str = "float64") -> dict[str, Any]:
    """Write the stored cases of ``ops`` (all if None) in ``dtype`` to ``out`` in format ``fmt``; return the
    manifest.

    >>> import tempfile, poolspec.export
    >>> m = poolspec.export.export(tempfile.mkdtemp(), ops=["avg_pool1d"], fmt="json")
    >>> m["cases"][0]["op"], m["format"]
    ('avg_pool1d', 'json')
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt={fmt!r}: must be one of {', '.join(FORMATS)}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype={dtype!r}: must be float32 or float64")
    if ops is not None:
        known = {c.op for c in golden.cases()}
        unknown = sorted(set(ops) - known)
        if unknown:
            raise ValueError(f"ops: no reference vectors for {', '.join(unknown)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cases = _select(ops, dtype)
    if fmt == "burn":
        cases = burn_cases(cases)
    entries = []
    for case in cases:
        arrays = {_RENAME.get(k, k): v for k, v in case.arrays().items()}
        arguments, size_only = size_arguments(case, tuple(arrays["input"].shape))
        entry: dict[str, Any] = {"id": case.name, "op": case.op,
                                 "arguments": {k: encode(v) for k, v in arguments.items()},
                 "torch_arguments": {k: encode(v) for k, v in case.arguments.items()},
                 "size_equivalent": size_only, "dtype": case.dtype, "rtol": case.rtol, "atol": case.atol,
                 "cotangent": case.cotangent, "flags": list(case.flags), "reference": case.reference,
                 "shapes": {k: list(v.shape) for k, v in arrays.items()}}
        if case.error is not None:
            entry["error"] = case.error
        if fmt == "npz":
            write_npz(out / f"{case.name}.npz", arrays)
            entry["files"] = [f"{case.name}.npz"]
        elif fmt == "safetensors":
            write_safetensors(out / f"{case.name}.safetensors", arrays, case.dtype)
            entry["files"] = [f"{case.name}.safetensors"]
        elif fmt == "json":
            (out / f"{case.name}.json").write_text(json.dumps(_json_arrays(arrays, case.dtype)) + "\n",
                                                   encoding="utf-8")
            entry["files"] = [f"{case.name}.json"]
        entries.append(entry)
    if fmt == "burn":
        files = write_burn(out, cases, entries)
        for entry in entries:
            entry["files"] = [files[entry["op"]]]
    manifest = {"poolspec_version": __version__, "torch_version": golden.manifest()["torch_version"],
                "format": fmt, "dtype": dtype, "cases": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def export_conventions(out: str | Path, libraries: list[str] | None = None, fmt: str = "npz") -> dict[str, Any]:
    """Write the stored cases of other libraries' conventions (``conformance.conventions``: inputs, the live
    library's outputs, cotangents and gradients) of ``libraries`` (all if None) to ``out``; return the manifest.

    >>> import tempfile, poolspec.export
    >>> poolspec.export.export_conventions(tempfile.mkdtemp(), fmt="json")["format"]
    'json'
    """
    from ..conformance import conventions

    if fmt not in ("npz", "safetensors", "json"):
        raise ValueError(f"fmt={fmt!r}: must be npz, safetensors or json for the convention cases")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for case in conventions.cases(libraries):
        arrays = case.arrays()
        dtype = str(arrays[case.inputs[0]].dtype)
        entry: dict[str, Any] = {"id": case.name, "library": case.library, "version": case.version,
                                 "function": f"poolspec.frontends.{case.function}",
                                 "options": {k: encode(v) for k, v in case.options.items()},
                                 "inputs": list(case.inputs), "outputs": [f"output{i}" for i in range(case.outputs)],
                                 "differentiable": list(case.differentiable), "dtype": dtype, "rtol": case.rtol,
                                 "atol": case.atol, "shapes": {k: list(v.shape) for k, v in arrays.items()}}
        name = f"{case.library}-{case.name}"
        if fmt == "npz":
            write_npz(out / f"{name}.npz", arrays)
        elif fmt == "safetensors":
            write_safetensors(out / f"{name}.safetensors", arrays, dtype)
        else:
            (out / f"{name}.json").write_text(json.dumps(_json_arrays(arrays, dtype)) + "\n", encoding="utf-8")
        entry["files"] = [f"{name}.{fmt}"]
        entries.append(entry)
    manifest = {"poolspec_version": __version__, "format": fmt, "kind": "conventions", "cases": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


# ----------------------------------------------------------------------------------------------- formats

_ST_DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
              "int32": "I32", "uint8": "U8", "bool": "BOOL"}


def write_safetensors(path: Path, arrays: dict[str, np.ndarray], dtype: str) -> None:
    """The safetensors layout (an 8-byte little-endian header length, a JSON header, raw little-endian data),
    written directly so that no extra package is needed. bfloat16 arrays (held as float32) are stored as BF16."""
    header: dict[str, Any] = {"__metadata__": {"format": "poolspec", "dtype": dtype}}
    blobs = []
    offset = 0
    for name, a in arrays.items():
        kind = a.dtype.name
        if dtype == "bfloat16" and kind == "float32":
            data = (np.ascontiguousarray(a, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
            kind = "bfloat16"
        else:
            data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _ST_DTYPES[kind], "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _json_arrays(arrays: dict[str, np.ndarray], dtype: str) -> dict[str, Any]:
    """{name: {"dtype", "shape", "data"}} with data flat in row-major order; floats printed to round-trip
    exactly, non-finite values as the strings "nan", "inf", "-inf"."""
    out = {}
    for name, a in arrays.items():
        kind = "bfloat16" if (dtype == "bfloat16" and a.dtype == np.float32) else a.dtype.name
        data = [_json_value(float(v)) if a.dtype.kind == "f" else int(v) for v in a.reshape(-1).tolist()]
        out[name] = {"dtype": kind, "shape": list(a.shape), "data": data}
    return {"arrays": out}


def load_json(path: str | Path) -> dict[str, np.ndarray]:
    """Read a case written by the ``json`` format back into NumPy arrays (bfloat16 as float32)."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))["arrays"]
    out = {}
    for name, spec in raw.items():
        dt = "float32" if spec["dtype"] == "bfloat16" else spec["dtype"]
        data = [float(v) if isinstance(v, str) else v for v in spec["data"]]
        out[name] = np.asarray(data, dtype=dt).reshape(spec["shape"])
    return out
