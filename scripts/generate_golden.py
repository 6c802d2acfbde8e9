"""Generate poolspec's golden reference vectors from torch 2.13 CPU.

    python scripts/generate_golden.py [--out DIR] [--ops OP[,OP...]]

For every case of ``poolspec.conformance.catalogue.golden_cases()``: the input (and max_unpool's indices),
torch's output (and int64 indices), a seeded cotangent, torch's gradient, and the second order: a seeded
vector v of the input's shape, d<grad_input, v>/d(grad_output) (for linear ops the op applied to v, for max
ops v gathered at the winners) and, where it is not identically zero (lp_pool), d<grad_input, v>/dx.

References (the manifest's ``reference``): ``torch`` - the direct call; ``torch-float32-rounded`` - half
precision computed by torch in float32 from the half values and rounded once (poolspec's documented rule);
``torch-conv`` (``torch-conv-float32-rounded``) - avg_pool with poolspec's dilation extension, which torch's
avg_pool lacks: torch's conv with a ones kernel over the zero-padded input divided by the same conv of a ones
mask (``oracle.dilated_avg_pool``);
``torch-generic`` - interpolate calls in a recorded quirk zone, from the per-axis matrices of torch's generic
kernels; ``jax.image`` - Lanczos-3 without antialias; ``rule`` - max_unpool with duplicate indices, the
documented sequential rule (last wins) written as the loop it describes; ``torch-empty`` - an empty result
torch refuses to compute for a batched C = 0. No value comes from poolspec.

Deterministic in everything it draws: the manifest, inputs, cotangents and indices are the same bytes on
every machine. torch's computed values are not always: its vectorised CPU kernels (Sleef's pow in lp_pool,
the antialias and Lanczos weight sums) round differently on AVX2 and AVX-512 and with buffer alignment, by a
few ulps. So tests/test_conformance.py::test_golden_vectors_regenerate compares the drawn arrays bit for bit
and the computed ones within 64 ulps of their case's scale (the largest move measured was 7.4); the vectors'
own tolerances (rtol 1e-12 in float64) are far wider than either.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import poolspec  # noqa: E402
from poolspec.conformance.catalogue import GoldenCase, golden_cases, inputs  # noqa: E402
from poolspec.conformance.families import Family, family, grad_name  # noqa: E402
from poolspec.conformance.golden import ARRAYS, MANIFEST, encode, store_name, write_npz  # noqa: E402
from poolspec.families.interpolate.conformance import interp_axes, interp_quirks  # noqa: E402
from poolspec.registry import op as record  # noqa: E402

import oracle  # noqa: E402  torch's reference computations (scripts/oracle.py, no poolspec inside), the tests' too

F = torch.nn.functional
TOL = {"float64": (1e-12, 1e-13), "float32": (2e-5, 2e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}
TORCH_DTYPE = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
               "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8}


def _arguments(case: GoldenCase) -> dict[str, Any]:
    """The keyword arguments of the poolspec (and torch.nn.functional) call."""
    return {k: v for k, v in case.args.items() if k not in record(case.op).arrays}


def _rank(case: GoldenCase) -> int:
    return record(case.op).fixed_rank


def _half(dtype: str) -> bool:
    return dtype in ("float16", "bfloat16")


def _round(t: torch.Tensor, dtype: str) -> np.ndarray:
    """A float tensor rounded once to ``dtype`` and returned as stored: bfloat16 values in float32."""
    t = t.detach().to(TORCH_DTYPE[dtype])
    return (t.float() if dtype == "bfloat16" else t).numpy().copy()


def _storage(a: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(a, dtype=np.float32 if dtype == "bfloat16" else dtype)


def _dilated(case: GoldenCase, args: dict[str, Any]) -> bool:
    """A call with poolspec's dilation extension of the average pools (torch's avg_pool has none: its conv is the
    reference); the max pools' dilation is torch's own."""
    return "dilation" in args and record(case.op).kind == "linear" and args["dilation"] not in (1, (1,) * _rank(case))


def _call(case: GoldenCase, args: dict[str, Any], x: torch.Tensor, idx: torch.Tensor | None) -> Any:
    if record(case.op).takes_indices:
        return getattr(F, case.op)(x, idx, **args)
    if record(case.op).indexed:
        return getattr(F, case.op)(x, **args, return_indices=True)
    return oracle.torch_fn(case.op, args)(x)


def _seeded(case: GoldenCase, shape: tuple[int, ...], salt: int, ones: bool = False) -> np.ndarray:
    if ones:
        return np.ones(shape)
    return np.random.default_rng(case.seed + salt).standard_normal(shape)


def _torch_refuses(case: GoldenCase, args: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
    fam = family(case.op)
    tensors = {}
    for port in fam.ports:
        t = torch.from_numpy(arrays[port].copy())
        tensors[port] = t.to(torch.bfloat16) if case.dtype == "bfloat16" and port != "indices" else t
    try:
        if fam.reference == "torch-autograd":
            fam.forward(getattr(F, case.op), args, tensors)
        else:
            _call(case, args, tensors["input"], tensors.get("indices"))
    except Exception:
        return True
    return False


def _window_sums(case: GoldenCase, args: dict[str, Any], powers: torch.Tensor) -> torch.Tensor:
    """torch's S / prod(k) of lp_pool: avg_pool of x^p with padding 0 and count_include_pad (ceil windows averaged
    over their n cells, torch's quirk)."""
    n = _rank(case)
    pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[n - 1]
    k = args["kernel_size"]
    k = k[0] if n == 1 and isinstance(k, tuple) else k
    return pool(powers, k, args.get("stride"), 0, args.get("ceil_mode", False))


def _duplicated(idx: np.ndarray, n: int) -> bool:
    rows = idx.reshape(-1, math.prod(idx.shape[-n:])) if idx.size else np.zeros((0, 1), dtype=np.int64)
    return any(len(set(row.tolist())) < row.size for row in rows)


def _rule_unpool(x: np.ndarray, idx: np.ndarray, n: int, out_spatial: tuple[int, ...]) -> np.ndarray:
    """The documented max_unpool rule: assign in row-major order, so the last of duplicate indices wins."""
    lead = x.shape[:-n]
    m = math.prod(x.shape[-n:])
    xs, ids = x.reshape(-1, m), idx.reshape(-1, m)
    out = np.zeros((xs.shape[0], math.prod(out_spatial)), dtype=x.dtype)
    for plane in range(xs.shape[0] if out.size else 0):
        for o, j in enumerate(ids[plane]):
            out[plane, j] = xs[plane, o]
    return out.reshape(lead + out_spatial)


def _rule_unpool_grad(g: np.ndarray, idx: np.ndarray, n: int, in_spatial: tuple[int, ...]) -> np.ndarray:
    """Its adjoint: each input gets g at its index if it is that index's winner (the last), else 0."""
    lead = idx.shape[:-n]
    m = math.prod(in_spatial)
    ids = idx.reshape(-1, m)
    gs = g.reshape(ids.shape[0], -1)
    out = np.zeros(ids.shape)
    for plane in range(ids.shape[0] if gs.size else 0):
        winner = {int(j): o for o, j in enumerate(ids[plane])}
        for j, o in winner.items():
            out[plane, o] = gs[plane, j]
    return out.reshape(lead + in_spatial)


def reference(case: GoldenCase) -> tuple[str, dict[str, np.ndarray]]:
    """(reference kind, arrays) of one case."""
    args = _arguments(case)
    arrays = inputs(case)
    fam = family(case.op)
    out: dict[str, np.ndarray] = dict(arrays)
    if case.error is not None:
        deviation = any(f in {d["id"] for d in poolspec.spec.deviations()} for f in case.flags)
        if "max_pool_empty_window" in case.flags:  # the claim: torch returns -inf there
            probe = getattr(F, case.op)(torch.zeros(case.shape, dtype=torch.float64), **args)
            assert bool(torch.isneginf(probe).any()), case.name
        elif "empty_window" in case.flags and _dilated(case, args):  # the claim: 0 / 0 in torch's conv quotient
            probe = oracle.dilated_avg_pool(case.op, torch.ones(case.shape, dtype=torch.float64), args)
            assert bool(probe.isnan().any()) and case.dtype == "int64", case.name
            return "torch-conv", out
        elif not deviation and not _torch_refuses(case, args, arrays):
            raise AssertionError(f"{case.name}: torch accepts a call the catalogue calls an error")
        return "torch" if not deviation else "deviation", out
    # validity is torch's, asked in float64 (a dtype torch lacks is a dtype rule, handled below)
    probe = dict(args, antialias=True) if args.get("mode") == "lanczos" else args  # (interpolate's mode)
    as64 = {k: (v.astype(np.float64) if k != "indices" else v) for k, v in arrays.items()}
    adaptive = record(case.op).card.category == "adaptive_pooling"
    if not adaptive and _torch_refuses(replace(case, dtype="float64"), probe, as64):
        return "torch-refuses", out
    if fam.reference == "torch-autograd":
        return _by_autograd(case, fam, args, arrays)
    dtype, floating = case.dtype, case.dtype.startswith(("float", "bfloat"))
    if "uint8_fixed_point" in case.flags:
        out["output"] = oracle.uint8_interpolate(arrays["input"], args)
        return "torch", out
    if fam.reference == "torch+quirk-matrices":
        q = interp_quirks(case.shape, args)
        lanczos = args["mode"] == "lanczos" and not args.get("antialias")
        if lanczos or q["forward"] or q["backward"]:
            return _by_matrices(case, args, arrays, "jax.image" if lanczos else "torch-generic")
    if fam.reference == "torch+unpool-rule" and (_duplicated(arrays["indices"], _rank(case))
                                   or not case.dtype.startswith("float")):
        # torch's winner among duplicates is unspecified, and its CPU max_unpool has no integer kernels
        return _by_rule(case, args, arrays)
    compute = torch.float32 if _half(dtype) else TORCH_DTYPE[dtype]
    x = torch.from_numpy(arrays["input"].copy())
    if dtype == "bfloat16":
        x = x.to(torch.bfloat16)
    x = x.to(compute)
    idx = torch.from_numpy(arrays["indices"]) if "indices" in arrays else None
    kind = "torch-float32-rounded" if _half(dtype) else "torch"
    if _dilated(case, args):
        kind = kind.replace("torch", "torch-conv")
    if "adaptive_pool3d_empty_channels" in case.flags:
        # deviation adaptive_pool3d_empty_channels: torch refuses a batched C = 0; the result is empty
        single = _call(case, args, x[0], idx)
        shape = (case.shape[0],) + tuple((single[0] if isinstance(single, tuple) else single).shape)
        out["output"] = np.zeros(shape, dtype=arrays["input"].dtype)
        if fam.indexed:
            out["output_indices"] = np.zeros(shape, dtype=np.int64)
        if floating:
            out["grad_output"] = out["output"].copy()
            out["grad_input"] = np.zeros_like(arrays["input"])
        return "torch-empty", out
    if floating:
        x.requires_grad_(True)
    result = _call(case, args, x, idx)
    values, winners = (result if isinstance(result, tuple) else (result, None))
    out["output"] = _round(values, dtype) if floating else values.numpy().copy()
    if winners is not None:
        out["output_indices"] = winners.numpy().copy()
    if not floating:
        return kind, out
    g = _storage(_seeded(case, tuple(values.shape), 1, case.cotangent == "ones"), dtype)
    v = _storage(_seeded(case, tuple(x.shape), 2), dtype)
    gt = torch.from_numpy(g.copy())
    gt = (gt.to(torch.bfloat16) if dtype == "bfloat16" else gt).to(compute).requires_grad_(True)
    vt = torch.from_numpy(v.copy())
    vt = (vt.to(torch.bfloat16) if dtype == "bfloat16" else vt).to(compute)
    out["grad_output"] = g
    out["grad_input_cotangent"] = v
    if values.numel() == 0:
        out["grad_input"] = np.zeros_like(arrays["input"])
        out["grad_grad_output"] = np.zeros_like(g)
        return kind, out
    (gi,) = torch.autograd.grad(values, x, gt, create_graph=True)
    out["grad_input"] = _round(gi, dtype)
    inner = (gi * vt).sum()
    wrt = (gt, x) if fam.second_order == ("input",) else (gt,)
    second = torch.autograd.grad(inner, wrt, allow_unused=True, retain_graph=True)
    out["grad_grad_output"] = _round(second[0], dtype)
    if fam.reference == "torch+lp-forward-mode":
        p = float(args["norm_type"])
        if math.isfinite(p):
            # grad_input is linear in grad_output, so d<grad_input, v>/d(grad_output) = J v with J torch's first
            # order Jacobian. torch's forward mode gives J v except where a window's power sum S is 0: there
            # torch's first order takes the root's slope as 0 (its documented rule), so J v = 0 * K *
            # avg(p x^(p-1) v) - 0, or NaN where x = 0 with p < 1 - while its double backward and forward mode
            # multiply by the infinite slope and give NaN (deviation lp_pool_double_backward_at_zero_sum).
            xd = x.detach()
            _, jv = torch.func.jvp(lambda t: oracle.torch_fn(case.op, args)(t), (xd,), (vt,))
            total = _window_sums(case, args, xd.pow(p))
            at_zero = 0.0 * _window_sums(case, args, p * xd.pow(p - 1) * vt)
            out["grad_grad_output"] = _round(torch.where(total == 0, at_zero, jv), dtype)
            if bool((total == 0).any()):
                kind += "+zero-sum"  # the generator adds the deviation's flag for it
        out["grad_grad_input"] = (_round(second[1], dtype) if second[1] is not None
                                  else np.zeros_like(arrays["input"]))
    return kind, out


def _by_autograd(case: GoldenCase, fam: Family, args: dict[str, Any],
                 arrays: dict[str, np.ndarray]) -> tuple[str, dict[str, np.ndarray]]:
    """The same call on torch.nn.functional with autograd for every differentiable port and torch's double
    backward for the record's second-order ports; half precision computed in float32 and rounded once."""
    dtype = case.dtype
    compute = torch.float32 if _half(dtype) else TORCH_DTYPE[dtype]
    tensors = {}
    for port in fam.ports:
        t = torch.from_numpy(arrays[port].copy())
        if port != "indices":
            t = (t.to(torch.bfloat16) if dtype == "bfloat16" else t).to(compute)
        tensors[port] = t.requires_grad_(True) if port in fam.differentiable else t
    values, winners = fam.forward(getattr(F, case.op), args, tensors)
    out = dict(arrays)
    out["output"] = _round(values, dtype)
    if winners is not None:
        out["output_indices"] = winners.numpy().copy()
    g = _storage(_seeded(case, tuple(values.shape), 1, case.cotangent == "ones"), dtype)
    gt = torch.from_numpy(g.copy())
    gt = (gt.to(torch.bfloat16) if dtype == "bfloat16" else gt).to(compute).requires_grad_(True)
    out["grad_output"] = g
    diff = [tensors[p] for p in fam.differentiable]
    grads = torch.autograd.grad(values, diff, gt, create_graph=True, allow_unused=True, materialize_grads=True)
    inner = 0
    for i, (port, gi) in enumerate(zip(fam.differentiable, grads)):
        out[grad_name(port)] = _round(gi, dtype)
        v = _storage(_seeded(case, tuple(arrays[port].shape), 2 + i), dtype)
        out[grad_name(port) + "_cotangent"] = v
        vt = torch.from_numpy(v.copy())
        inner = inner + (gi * (vt.to(torch.bfloat16) if dtype == "bfloat16" else vt).to(compute)).sum()
    wrt = [gt] + [tensors[p] for p in fam.second_order]
    second = torch.autograd.grad(inner, wrt, allow_unused=True, materialize_grads=True)
    out["grad_grad_output"] = _round(second[0], dtype)
    for port, d in zip(fam.second_order, second[1:]):
        out["grad_" + grad_name(port)] = _round(d, dtype)
    return ("torch-float32-rounded" if _half(dtype) else "torch"), out


def _by_matrices(case: GoldenCase, args: dict[str, Any], arrays: dict[str, np.ndarray],
                 kind: str) -> tuple[str, dict[str, np.ndarray]]:
    """Linear interpolation as the tensor product of per-axis matrices (torch's generic kernels, or jax.image's
    Lanczos), evaluated in float64 and rounded once to the case's dtype."""
    dtype = case.dtype
    mats = oracle.interp_matrices(case.shape, args)
    x = arrays["input"].astype(np.float64)
    y = oracle.apply_axes(x, mats)
    out = {"input": arrays["input"]}
    if dtype == "uint8":
        out["output"] = np.round(y).astype(np.uint8)
        return kind, out
    out["output"] = _storage(_round(torch.from_numpy(y), dtype), dtype)
    g = _storage(_seeded(case, y.shape, 1, case.cotangent == "ones"), dtype)
    v = _storage(_seeded(case, x.shape, 2), dtype)
    out["grad_output"] = g
    out["grad_input"] = _round(torch.from_numpy(oracle.apply_axes(g.astype(np.float64), mats, transpose=True)), dtype)
    out["grad_input_cotangent"] = v
    out["grad_grad_output"] = _round(torch.from_numpy(oracle.apply_axes(v.astype(np.float64), mats)), dtype)
    return kind, out


def _by_rule(case: GoldenCase, args: dict[str, Any], arrays: dict[str, np.ndarray]) -> tuple[str, dict[str, Any]]:
    n = _rank(case)
    x, idx = arrays["input"], arrays["indices"]
    y = torch.zeros(tuple(getattr(F, case.op)(torch.zeros(x.shape, dtype=torch.float64),
                                              torch.zeros(idx.shape, dtype=torch.int64), **args).shape))
    out_spatial = tuple(y.shape[-n:])
    out = {"input": x, "indices": idx, "output": _rule_unpool(x, idx, n, out_spatial)}
    if not case.dtype.startswith("float"):
        return "rule", out
    g = _storage(_seeded(case, tuple(y.shape), 1, case.cotangent == "ones"), case.dtype)
    v = _storage(_seeded(case, x.shape, 2), case.dtype)
    out["grad_output"] = g
    out["grad_input"] = _rule_unpool_grad(g.astype(np.float64), idx, n, x.shape[-n:]).astype(g.dtype)
    out["grad_input_cotangent"] = v
    out["grad_grad_output"] = _rule_unpool(v, idx, n, out_spatial)
    return "rule", out


def tolerance(case: GoldenCase, kind: str) -> tuple[float, float]:
    if not case.dtype.startswith(("float", "bfloat")):
        return 0.0, 0.0
    rtol, atol = family(case.op).tolerance.get(case.dtype, TOL[case.dtype])
    if case.dtype == "float64" and family(case.op).reference == "torch+lp-forward-mode":
        rtol, atol = 1e-11, 1e-12  # powers and roots, and their second derivatives
    if kind == "jax.image" and case.dtype == "float64":
        # jax's kernel is 1 for 0 < |x| <= 1e-3, off the exact sinc product by up to 2e-6
        recompute = case.args.get("recompute_scale_factor")
        if any(oracle.jax_lanczos_near_integer(L, O, None if recompute else sf)
               for L, O, sf in interp_axes(case.shape, case.args)):
            rtol = 5e-6
    return rtol, atol


def generate(out_dir: Path, ops: list[str] | None = None) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    stores: dict[str, dict[str, np.ndarray]] = {}
    # families whose reference is another library's (roi_align: torchvision, which torch 2.13 lacks) are written
    # by their own generator (scripts/generate_golden_roi_align.py [--op roi_pool]); their stored cases are kept as
    # they are
    stored = _stored_elsewhere()
    for case in golden_cases(ops):
        if case.name in stored:
            entry, arrays = stored[case.name]
            entries.append(entry)
            stores.setdefault(entry["store"], {}).update({f"{case.name}/{k}": arrays[k] for k in entry["files"]})
            continue
        kind, arrays = reference(case)
        rtol, atol = tolerance(case, kind)
        files = [k for k in ARRAYS if k in arrays]
        flags = list(case.flags)
        if kind.endswith("+zero-sum"):
            kind = kind[: -len("+zero-sum")]
            flags.append("lp_pool_double_backward_at_zero_sum")
        if kind == "rule" and "indices" in arrays and _duplicated(arrays["indices"], _rank(case)):
            flags += [] if "max_unpool_duplicate_indices" in flags else ["max_unpool_duplicate_indices"]
        if kind == "rule" and not case.dtype.startswith("float"):
            flags.append("max_unpool_integer_values")
        entry = {"id": case.name, "op": case.op, "arguments": {k: encode(v) for k, v in _arguments(case).items()},
                 "dtype": case.dtype, "flags": flags, "reference": kind, "rtol": rtol, "atol": atol,
                 "cotangent": "ones" if case.cotangent == "ones" else "seeded random", "files": files}
        if case.error is not None:
            entry["error"] = case.error
        elif kind == "torch-refuses":
            entry["error"] = "ValueError or TypeError"
        entry["store"] = store_name(case.op, case.args)
        entries.append(entry)
        store = stores.setdefault(entry["store"], {})
        for key in files:
            store[f"{case.name}/{key}"] = arrays[key]
    for name, store in stores.items():
        write_npz(out_dir / name, store)
    manifest = {"poolspec_version": poolspec.__version__, "torch_version": torch.__version__.split("+")[0],
                "generator": "scripts/generate_golden.py", **_other_references(), "cases": entries}
    head = json.dumps({k: v for k, v in manifest.items() if k != "cases"})[:-1]
    lines = ",\n".join(json.dumps(entry) for entry in entries)  # one case per line: diffs stay readable
    (out_dir / MANIFEST).write_text(f'{head}, "cases": [\n{lines}\n]}}\n', encoding="utf-8")
    return manifest


def _stored_elsewhere() -> dict[str, tuple[dict[str, Any], dict[str, np.ndarray]]]:
    """The stored cases of the families whose record names another reference library, by case id."""
    from poolspec.conformance.golden import golden_dir

    path = golden_dir() / MANIFEST
    if not path.exists():
        return {}
    other = {op for f in poolspec.conformance.families.families() if f.reference.startswith("torchvision")
             for op in f.ops}
    out = {}
    for entry in json.loads(path.read_text(encoding="utf-8"))["cases"]:
        if entry["op"] in other:
            with np.load(golden_dir() / entry["store"]) as store:
                out[entry["id"]] = (entry, {k: store[f"{entry['id']}/{k}"] for k in entry["files"]})
    return out


def _other_references() -> dict[str, Any]:
    """The manifest's note of those families' reference libraries, as their generator wrote it."""
    from poolspec.conformance.golden import golden_dir

    path = golden_dir() / MANIFEST
    if not path.exists():
        return {}
    found = json.loads(path.read_text(encoding="utf-8")).get("references")
    return {"references": found} if found else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "poolspec" / "data" / "golden")
    parser.add_argument("--ops", default=None, help="comma-separated op names (all if omitted)")
    a = parser.parse_args()
    torch.set_num_threads(1)  # reductions in one fixed order
    manifest = generate(a.out, a.ops.split(",") if a.ops else None)
    size = sum(p.stat().st_size for p in a.out.iterdir())
    print(f"{len(manifest['cases'])} cases, {size / 2**20:.1f} MiB in {a.out}")


if __name__ == "__main__":
    main()
