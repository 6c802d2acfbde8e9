"""torchvision's roi_align (or roi_pool) values for the cases a request file lists: the computing half of
scripts/generate_golden_roi_align.py, run with the torchvision environment (numpy, torch and torchvision only).

    /work/tvenv/bin/python scripts/torchvision_roi_reference.py REQUEST.npz REQUEST.json RESULT.npz [OP]

For each case: ``output`` (torchvision.ops.roi_align), ``grad_input`` (its autograd for the seeded cotangent) and
``grad_grad_output`` (d<grad_input, v>/d(grad_output), which is roi_align(v) as the backward is linear in the
cotangent and torchvision has no double backward); half precision computed in float32 from the half values and
rounded once (poolspec's rule; torchvision's CPU kernel has no bfloat16). Error cases: whether torchvision refuses.

OP roi_pool (default roi_align): ``output`` is torchvision.ops.roi_pool, float16 in float16 (torchvision's own
kernel), bfloat16 in float32 from the bfloat16 values; ``grad_grad_output`` is v read at torchvision's argmax
(``torch.ops.torchvision.roi_pool``; 0 where it is -1), as torchvision has no double backward of roi_pool.

OP ps_roi_align (half as roi_align's) or ps_roi_pool (half as roi_pool's): ``grad_grad_output`` is the transpose of
torchvision's backward applied to v, built from it one output element at a time (<grad_input(e_j), v>): it is not
the forward (ps_roi_pool's backward windows differ from its forward's; ps_roi_align's bins without samples are NaN
forward and contribute nothing backward).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch
import torchvision
from torchvision.ops import ps_roi_align, ps_roi_pool, roi_align, roi_pool

HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _tensor(a: np.ndarray, dtype: str, native_half: bool = False) -> torch.Tensor:
    t = torch.from_numpy(a.copy())
    if dtype == "bfloat16":
        return t.to(torch.bfloat16).to(torch.float32)
    if dtype == "float16" and native_half:
        return t.to(torch.float16)
    return t.to(torch.float32) if dtype == "float16" else t


def _selected(v: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, args: dict) -> torch.Tensor:
    """v (shaped like x) read at torchvision's roi_pool argmax: d<grad_input, v>/d(grad_output)."""
    size = args["output_size"]
    ph, pw = (size, size) if isinstance(size, int) else size
    _, arg = torch.ops.torchvision.roi_pool(x.detach(), boxes, float(args["spatial_scale"]), ph, pw)
    arg = arg.long()
    batch = boxes[:, 0].long()
    K, C = arg.shape[:2]
    planes = v.reshape(v.shape[0], v.shape[1], -1)[batch]  # (K, C, H * W)
    planes = torch.cat([planes, planes.new_zeros(K, C, 1)], 2)
    idx = torch.where(arg < 0, planes.shape[2] - 1, arg).reshape(K, C, ph * pw)
    return planes.gather(2, idx).reshape(arg.shape)


def _round(t: torch.Tensor, dtype: str) -> np.ndarray:
    t = t.detach()
    if dtype in HALF:
        t = t.to(HALF[dtype])
        return (t.float() if dtype == "bfloat16" else t).numpy().copy()
    return t.numpy().copy()


def _linear(v: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, args: dict) -> torch.Tensor:
    """roi_align is linear in x: d<grad_input, v>/d(grad_output) is roi_align(v)."""
    return roi_align(v, boxes, **args)


def _transposed(fn):
    """d<grad_input, v>/d(grad_output) of a backward linear in its cotangent, from torchvision's autograd: per
    output element j, <grad_input(e_j), v>, summed in float64 (then rounded to v's dtype)."""
    def second(v: torch.Tensor, x: torch.Tensor, boxes: torch.Tensor, args: dict) -> torch.Tensor:
        y = fn(x, boxes, **args)
        out = torch.zeros(y.numel(), dtype=torch.float64)
        for j in range(y.numel()):
            e = torch.zeros(y.numel(), dtype=y.dtype)
            e[j] = 1
            (gi,) = torch.autograd.grad(y, x, e.reshape(y.shape), retain_graph=True)
            out[j] = (gi.double() * v.double()).sum()
        return out.reshape(y.shape).to(v.dtype)
    return second


# per op: torchvision's function, whether its CPU kernel computes float16 itself, and the second order
OPS = {"roi_align": (roi_align, False, _linear), "roi_pool": (roi_pool, True, _selected),
       "ps_roi_align": (ps_roi_align, False, _transposed(ps_roi_align)),
       "ps_roi_pool": (ps_roi_pool, True, _transposed(ps_roi_pool))}


def main() -> None:
    request, spec, result = sys.argv[1:4]
    fn, native, second_order = OPS[sys.argv[4] if len(sys.argv) > 4 else "roi_align"]
    arrays = dict(np.load(request))
    cases = json.loads(open(spec, encoding="utf-8").read())
    torch.set_num_threads(1)
    out: dict[str, np.ndarray] = {}
    refused: dict[str, bool] = {}
    for case in cases:
        name, dtype, args = case["name"], case["dtype"], case["args"]
        args = dict(args, output_size=tuple(args["output_size"]) if isinstance(args["output_size"], list)
                    else args["output_size"])
        x, boxes = (_tensor(arrays[f"{name}/{k}"], dtype, native) for k in ("input", "boxes"))
        if case["error"]:
            size = args["output_size"]
            if 0 in x.shape[2:] or 0 in (size if isinstance(size, tuple) else (size,)):
                # torchvision reads outside an empty image, and divides C by PH * PW (crashes): not asked
                refused[name] = False
                continue
            try:
                fn(x, boxes, **args)
                refused[name] = False
            except Exception:  # noqa: BLE001 - any refusal counts
                refused[name] = True
            continue
        x.requires_grad_(True)
        y = fn(x, boxes, **args)
        out[f"{name}/output"] = _round(y, dtype)
        g = _tensor(arrays[f"{name}/grad_output"], dtype, native)
        (gi,) = torch.autograd.grad(y, x, g) if y.numel() else (torch.zeros_like(x),)
        out[f"{name}/grad_input"] = _round(gi, dtype)
        v = _tensor(arrays[f"{name}/grad_input_cotangent"], dtype, native)
        out[f"{name}/grad_grad_output"] = _round(second_order(v, x, boxes, args), dtype)
    np.savez(result, **out)
    versions = {"torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0]}
    with open(result + ".json", "w", encoding="utf-8") as f:
        json.dump({"refused": refused, "versions": versions}, f)


if __name__ == "__main__":
    main()
