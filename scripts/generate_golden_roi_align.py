"""Generate the golden reference vectors of roi_align (or roi_pool, ps_roi_align, ps_roi_pool) from torchvision 0.29.1
poolspec's store.

    python scripts/generate_golden_roi_align.py [--op roi_align|roi_pool|ps_roi_align|ps_roi_pool]
                                                [--torchvision-python /work/tvenv/bin/python] [--out DIR]

scripts/generate_golden.py writes every other family from torch 2.13, which has no torchvision (and keeps these
vectors as they are). This one takes the op's cases and inputs from the catalogue (as that script does: the
drawn arrays, inputs and seeded cotangents, are made here with NumPy), has
scripts/torchvision_roi_reference.py compute torchvision's values in the torchvision environment (numpy, torch and
torchvision only: no value comes from poolspec), then writes ``<op>.npz`` and merges the cases into the manifest
at the catalogue's place, in the manifest's format (the other ops' cases and references kept). No other store
changes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from poolspec.conformance.catalogue import golden_cases, inputs  # noqa: E402
from poolspec.conformance.families import family  # noqa: E402
from poolspec.conformance.golden import ARRAYS, MANIFEST, encode, store_name, write_npz  # noqa: E402

OPS = ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool")  # the first is the default
# the half dtypes torchvision's CPU kernel computes itself, by op (the others: in float32, rounded once)
NATIVE_HALF = {"roi_pool": ("float16",), "ps_roi_pool": ("float16",)}
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}


def _seeded(seed: int, shape: tuple[int, ...], salt: int, ones: bool = False) -> np.ndarray:
    """generate_golden.py's cotangents: the same draws."""
    if ones:
        return np.ones(shape)
    return np.random.default_rng(seed + salt).standard_normal(shape)


def _storage(a: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(a, dtype=np.float32 if dtype == "bfloat16" else dtype)


def _output_shape(case) -> tuple[int, ...]:
    size = case.args["output_size"]
    ph, pw = (size, size) if isinstance(size, int) else size
    channels = case.shape[1] // (ph * pw) if case.op.startswith("ps_") else case.shape[1]
    return (case.ports["boxes"][0], channels, ph, pw)


def generate(out_dir: Path, python: str, OP: str = "roi_align") -> int:
    cases = golden_cases([OP])
    drawn: dict[str, dict[str, np.ndarray]] = {}
    for case in cases:
        arrays = inputs(case)
        if case.error is None:
            shape = _output_shape(case)
            arrays["grad_output"] = _storage(_seeded(case.seed, shape, 1, case.cotangent == "ones"), case.dtype)
            arrays["grad_input_cotangent"] = _storage(_seeded(case.seed, case.shape, 2), case.dtype)
        drawn[case.name] = arrays
    with tempfile.TemporaryDirectory() as tmp:
        request, spec, result = Path(tmp, "request.npz"), Path(tmp, "request.json"), Path(tmp, "result.npz")
        np.savez(request, **{f"{n}/{k}": v for n, a in drawn.items() for k, v in a.items()})
        spec.write_text(json.dumps([{"name": c.name, "dtype": c.dtype, "error": c.error,
                                     "args": {k: encode(v) for k, v in c.args.items()}} for c in cases]))
        subprocess.run([python, str(ROOT / "scripts" / "torchvision_roi_reference.py"), str(request), str(spec),
                        str(result), OP], check=True)
        computed = dict(np.load(result))
        meta = json.loads(Path(str(result) + ".json").read_text())
    versions = meta["versions"]
    entries, store = [], {}
    for case in cases:
        arrays = dict(drawn[case.name])
        if case.error is None:
            for key in ("output", "grad_input", "grad_grad_output"):
                arrays[key] = computed[f"{case.name}/{key}"]
            native = NATIVE_HALF.get(OP, ())
            kind = "torchvision-float32-rounded" if case.dtype in ("float16", "bfloat16") and case.dtype not in \
                native else "torchvision"
        else:
            kind = "torchvision" if meta["refused"][case.name] else "card"  # card: a rule torchvision lacks
        rtol, atol = family(OP).tolerance.get(case.dtype, TOL.get(case.dtype, (1e-12, 1e-13)))
        files = [k for k in ARRAYS if k in arrays]
        entry = {"id": case.name, "op": OP, "arguments": {k: encode(v) for k, v in case.args.items()},
                 "dtype": case.dtype, "flags": list(case.flags), "reference": kind, "rtol": rtol, "atol": atol,
                 "cotangent": "ones" if case.cotangent == "ones" else "seeded random", "files": files}
        if case.error is not None:
            entry["error"] = case.error
        entry["store"] = store_name(OP, case.args)
        entries.append(entry)
        for key in files:
            store[f"{case.name}/{key}"] = arrays[key]
    write_npz(out_dir / f"{OP}.npz", store)
    path = out_dir / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    order = {c.name: i for i, c in enumerate(golden_cases())}
    kept = [e for e in manifest["cases"] if e["op"] != OP]
    merged = sorted(kept + entries, key=lambda e: order.get(e["id"], len(order)))
    head = {k: v for k, v in manifest.items() if k != "cases"}
    how = "scripts/generate_golden_roi_align.py" + ("" if OP == OPS[0] else f" --op {OP}")
    reference = f"torch {versions['torch']} + torchvision {versions['torchvision']} CPU ({how})"
    head["references"] = {**manifest.get("references", {}), OP: reference}
    text = json.dumps(head)[:-1]
    lines = ",\n".join(json.dumps(e) for e in merged)
    path.write_text(f'{text}, "cases": [\n{lines}\n]}}\n', encoding="utf-8")
    return len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "poolspec" / "data" / "golden")
    parser.add_argument("--torchvision-python", default="/work/tvenv/bin/python")
    parser.add_argument("--op", choices=OPS, default="roi_align")
    a = parser.parse_args()
    print(f"{generate(a.out, a.torchvision_python, a.op)} {a.op} cases written to {a.out}")


if __name__ == "__main__":
    main()
