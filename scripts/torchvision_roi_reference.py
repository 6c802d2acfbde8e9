"""torchvision's roi_align values for the cases a request file lists: the computing half of
scripts/generate_golden_roi_align.py, run with the torchvision environment (numpy, torch and torchvision only).

    /work/tvenv/bin/python scripts/torchvision_roi_reference.py REQUEST.npz REQUEST.json RESULT.npz

For each case: ``output`` (torchvision.ops.roi_align), ``grad_input`` (its autograd for the seeded cotangent) and
``grad_grad_output`` (d<grad_input, v>/d(grad_output), which is roi_align(v) as the backward is linear in the
cotangent and torchvision has no double backward); half precision computed in float32 from the half values and
rounded once (poolspec's rule; torchvision's CPU kernel has no bfloat16). Error cases: whether torchvision refuses.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch
import torchvision
from torchvision.ops import roi_align

HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _tensor(a: np.ndarray, dtype: str) -> torch.Tensor:
    t = torch.from_numpy(a.copy())
    if dtype == "bfloat16":
        return t.to(torch.bfloat16).to(torch.float32)
    return t.to(torch.float32) if dtype == "float16" else t


def _round(t: torch.Tensor, dtype: str) -> np.ndarray:
    t = t.detach()
    if dtype in HALF:
        t = t.to(HALF[dtype])
        return (t.float() if dtype == "bfloat16" else t).numpy().copy()
    return t.numpy().copy()


def main() -> None:
    request, spec, result = sys.argv[1:4]
    arrays = dict(np.load(request))
    cases = json.loads(open(spec, encoding="utf-8").read())
    torch.set_num_threads(1)
    out: dict[str, np.ndarray] = {}
    refused: dict[str, bool] = {}
    for case in cases:
        name, dtype, args = case["name"], case["dtype"], case["args"]
        args = dict(args, output_size=tuple(args["output_size"]) if isinstance(args["output_size"], list)
                    else args["output_size"])
        x, boxes = (_tensor(arrays[f"{name}/{k}"], dtype) for k in ("input", "boxes"))
        if case["error"]:
            if 0 in x.shape[2:]:  # torchvision reads outside an empty image (a crash): not asked
                refused[name] = False
                continue
            try:
                roi_align(x, boxes, **args)
                refused[name] = False
            except Exception:  # noqa: BLE001 - any refusal counts
                refused[name] = True
            continue
        x.requires_grad_(True)
        y = roi_align(x, boxes, **args)
        out[f"{name}/output"] = _round(y, dtype)
        g = _tensor(arrays[f"{name}/grad_output"], dtype)
        (gi,) = torch.autograd.grad(y, x, g) if y.numel() else (torch.zeros_like(x),)
        out[f"{name}/grad_input"] = _round(gi, dtype)
        v = _tensor(arrays[f"{name}/grad_input_cotangent"], dtype)
        out[f"{name}/grad_grad_output"] = _round(roi_align(v, boxes, **args), dtype)
    np.savez(result, **out)
    versions = {"torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0]}
    with open(result + ".json", "w", encoding="utf-8") as f:
        json.dump({"refused": refused, "versions": versions}, f)


if __name__ == "__main__":
    main()
