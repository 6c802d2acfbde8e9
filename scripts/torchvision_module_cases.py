"""Reference cases of what the stored conventions cannot hold, computed by live torchvision: the module classes
(``RoIAlign``, ``RoIPool``, ``PSRoIAlign``, ``PSRoIPool``, ``MultiScaleRoIAlign``)
and the functions with boxes as a list of (L, 4) arrays. Each case is a configuration of
conformance/frontend_checks/torchvision.py that torchvision accepts: its arrays and options, torchvision's outputs
(a module's repr as int32 bytes, a second output), a cotangent and torchvision's input gradients.

    PYTHONPATH=src /work/tvenv/bin/python scripts/torchvision_module_cases.py   # torch 2.14.1 + torchvision 0.29.1

Writes tests/data/torchvision_modules.npz and .json; tests/test_frontend_torchvision.py replays them on every
backend.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.frontend_checks import Refused  # noqa: E402
from conformance.frontend_checks import torchvision as tv  # noqa: E402

PER_GROUP = 6
GROUPS = ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool", "RoIAlign", "RoIPool", "PSRoIAlign", "PSRoIPool",
          "MultiScaleRoIAlign")


def encode(value: object) -> object:
    """JSON keeping tuples apart from lists (a module's repr shows which it was given)."""
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def main() -> int:
    rng = np.random.default_rng(7)
    cases, arrays = [], {}
    for group in GROUPS:
        name = f"torchvision.ops.{group}"
        found, tries = 0, 0
        while found < PER_GROUP and tries < 500:
            tries += 1
            config = tv.MODULES[name](rng)
            # functions: the list form only (the stored conventions hold the (K, 5) form); no refusals
            if (group[0].islower() and "boxes" in config.arrays) or "boxes_empty_list" in config.arrays:
                continue
            if sum(v.nbytes for v in config.arrays.values()) > 40_000:  # small files: small pyramids
                continue
            if any(k.startswith("boxes") and v.shape[-1] == 5 and k != "boxes" for k, v in config.arrays.items()):
                continue
            try:
                outputs, _ = tv.library(config, None)
                cots = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs[:1]]
                grads = tv.library(config, cots)[1] if config.differentiable else {}
            except Refused:
                continue
            if outputs[0].size == 0:
                continue
            cid = f"{group}-{found}"
            cases.append({"id": cid, "function": name, "arrays": list(config.arrays), "options": encode(config.options),
                          "outputs": len(outputs), "grads": list(grads)})
            for k, v in config.arrays.items():
                arrays[f"{cid}/{k}"] = v
            for i, o in enumerate(outputs):
                arrays[f"{cid}/output{i}"] = o
            if grads:
                arrays[f"{cid}/cotangent"] = cots[0]
                for k, g in grads.items():
                    arrays[f"{cid}/grad/{k}"] = g
            found += 1
        print(f"{name}: {found} cases")
    out = ROOT / "tests" / "data" / "torchvision_modules"
    np.savez_compressed(out.with_suffix(".npz"), **arrays)
    out.with_suffix(".json").write_text(json.dumps({"version": tv.version(), "cases": cases}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
