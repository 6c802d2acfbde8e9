"""Burn test modules: for each small case of an op Burn has, a forward test (and indices for max pools) and a
backward test through Burn's autodiff, in the idiom of Burn's own backend tests: its ``burn_tensor::module``
functions (the ModuleOps names and arguments), ``InterpolateOptions`` with ``align_corners`` explicit,
literal ``TestTensor::from_floats`` arrays and a ``Tolerance``. ``TestTensor``, ``TestTensorInt``,
``TestAutodiffTensor`` and ``FloatElem`` come from the including test harness (``use super::*``), as in Burn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..conformance import golden
from ..registry import op as record

MAX_ELEMENTS = 600  # input + output: keeps the literals readable
MODES = {"nearest": "Nearest", "bilinear": "Bilinear", "bicubic": "Bicubic", "lanczos": "Lanczos3"}
PADDING = {"zeros": "Zeros", "border": "Border", "reflection": "Reflection"}


def _rank(op: str) -> int:
    """The spatial rank of a Burn test: the op's, 2 where the input decides (Burn's interpolate and
    grid_sample are 2-d)."""
    return record(op).rank or 2


def _eligible(case: golden.Golden) -> bool:
    rule = _rules().get(record(case.op).family)
    n = _rank(case.op)
    if rule is None or n not in rule.ranks or case.error is not None or not case.dtype.startswith("float"):
        return False
    a = case.arrays()
    x, y = a["input"], a["output"]
    if x.ndim != n + 2 or 0 in x.shape or 0 in y.shape or x.size + y.size > MAX_ELEMENTS:
        return False
    if any(not np.isfinite(v).all() for v in a.values() if v.dtype.kind == "f"):
        return False
    return rule.eligible(case, a, n)


def burn_cases(cases: list[golden.Golden]) -> list[golden.Golden]:
    """The cases a Burn test can express: Burn's ops, 1-d/2-d, float, finite, small, sizes not scales."""
    return [c for c in cases if _eligible(c)]


def tuple_of(v: Any, n: int) -> tuple[Any, ...]:
    if v is None:
        return (None,) * n
    return tuple(v) * (n if len(v) == 1 else 1) if isinstance(v, (tuple, list)) else (v,) * n


def _float(v: float, dtype: str) -> str:
    text = str(np.float32(v)) if dtype == "float32" else repr(float(v))  # shortest round-trip digits
    return text if any(c in text for c in ".en") else text + ".0"


def _literal(a: np.ndarray, dtype: str, indent: int = 8) -> str:
    """A nested Rust array literal, one innermost row per line."""
    if a.ndim == 1:
        items = [_float(v, dtype) if a.dtype.kind == "f" else str(int(v)) for v in a.tolist()]
        return "[" + ", ".join(items) + "]"
    pad = " " * indent
    inner = ",\n".join(pad + "    " + _literal(sub, dtype, indent + 4) for sub in a)
    return "[\n" + inner + ",\n" + pad + "]"


def arr(v: Any, n: int) -> str:
    t = tuple_of(v, n)
    return str(t[0]) if n == 1 else "[" + ", ".join(str(i) for i in t) + "]"


def flag(v: Any) -> str:
    return "true" if v else "false"


def window(args: dict[str, Any], n: int) -> tuple[str, str, str]:
    k = args.get("kernel_size")
    s = args.get("stride") if args.get("stride") not in (None, ()) else k
    return arr(k, n), arr(s, n), arr(args.get("padding", 0), n)


def always(case: golden.Golden, a: dict[str, np.ndarray], n: int) -> bool:
    return True


@dataclass(frozen=True)
class BurnOp:
    """How a family's cases become Burn calls: which are expressible, the call, the imports."""

    call: Callable[[golden.Golden, str, tuple[int, ...], bool, int], str]
    eligible: Callable[[golden.Golden, dict[str, np.ndarray], int], bool] = always
    ranks: tuple[int, ...] = (1, 2)  # the spatial ranks Burn has
    module_fn: bool = True  # a burn_tensor::module function (else a Tensor method)
    with_indices: bool = False  # also <op>_with_indices
    uses: tuple[str, ...] = ()  # more burn_tensor::ops imports
    # why Burn's autodiff cannot run the backward test (emitted ignored, with the vectors a porter needs)
    no_autodiff: str = ""


@functools.cache
def _rules() -> dict[str, BurnOp]:
    """The families Burn has: each family folder's ``burn.py`` (its ``RULE``), found by name, keyed by family."""
    from ..families import parts

    return {name: module.RULE for name, module in parts("burn").items()}



def _call(case: golden.Golden, x: str, shape: tuple[int, ...], with_indices: bool = False) -> str:
    return _rules()[record(case.op).family].call(case, x, shape, with_indices, _rank(case.op))


def _tolerance(case: golden.Golden) -> str:
    return f"Tolerance::rel_abs({case.rtol!r}, {case.atol!r})"


def _tests(case: golden.Golden) -> str:
    a = case.arrays()
    x, y = a["input"], a["output"]
    d = x.ndim
    fn = case.name.replace("-", "_")
    lines = [f"/// {case.name}: {', '.join(case.flags)}",
             "#[test]", f"fn {fn}() {{", "    let device = Default::default();",
             f"    let x = TestTensor::<{d}>::from_floats({_literal(x, case.dtype, 4)}, &device);"]
    if "grid" in a:
        grid = _literal(a["grid"], case.dtype, 4)
        lines.append(f"    let grid = TestTensor::<{a['grid'].ndim}>::from_floats({grid}, &device);")
    indexed = "output_indices" in a
    if indexed:
        lines.append(f"    let (output, indices) = {_call(case, 'x', tuple(x.shape), with_indices=True)};")
    else:
        lines.append(f"    let output = {_call(case, 'x', tuple(x.shape))};")
    lines += [f"    let expected = TestTensor::<{d}>::from_floats({_literal(y, case.dtype, 4)}, &device);",
              f"    output.into_data().assert_approx_eq::<FloatElem>(&expected.into_data(), {_tolerance(case)});"]
    if indexed:
        lines += [f"    let expected_indices = TestTensorInt::<{d}>::from_ints("
                  f"{_literal(a['output_indices'], 'int64', 4)}, &device);",
                  "    indices.into_data().assert_eq(&expected_indices.into_data(), false);"]
    lines.append("}")
    if "grad_input" in a:
        reason = _rules()[record(case.op).family].no_autodiff
        ignored = [f'#[ignore = "{reason}"]'] if reason else []
        lines += ["", f"/// {case.name}: the gradient for the cotangent grad_output (torch's autograd)",
                  "#[test]", *ignored, f"fn {fn}_backward() {{", "    let device = Default::default();",
                  f"    let x = TestAutodiffTensor::<{d}>::from_floats({_literal(x, case.dtype, 4)}, &device)"
                  ".require_grad();"]
        if "grid" in a:
            lines.append(f"    let grid = TestAutodiffTensor::<{a['grid'].ndim}>::from_floats("
                         f"{_literal(a['grid'], case.dtype, 4)}, &device).require_grad();")
        lines += [f"    let grad_output = TestAutodiffTensor::<{d}>::from_floats("
                  f"{_literal(a['grad_output'], case.dtype, 4)}, &device);",
                  f"    let output = {_call(case, 'x.clone()', tuple(x.shape))};",
                  "    let grads = (output * grad_output).sum().backward();",
                  "    let x_grad = x.grad(&grads).unwrap();",
                  f"    let expected = TestTensor::<{d}>::from_floats({_literal(a['grad_input'], case.dtype, 4)}, "
                  "&device);",
                  f"    x_grad.into_data().assert_approx_eq::<FloatElem>(&expected.into_data(), {_tolerance(case)});"]
        if "grad_grid" in a:
            g = a["grad_grid"]
            lines += ["    let grid_grad = grid.grad(&grads).unwrap();",
                      f"    let expected = TestTensor::<{g.ndim}>::from_floats({_literal(g, case.dtype, 4)}, &device);",
                      "    grid_grad.into_data().assert_approx_eq::<FloatElem>(&expected.into_data(), "
                      f"{_tolerance(case)});"]
        lines.append("}")
    return "\n".join(lines)


def write_burn(out: Path, cases: list[golden.Golden], entries: list[dict[str, Any]]) -> dict[str, str]:
    """One ``<op>.rs`` per op under ``out/burn``; returns {op: relative file}."""
    from .._version import __version__

    folder = out / "burn"
    folder.mkdir(parents=True, exist_ok=True)
    by_op: dict[str, list[golden.Golden]] = {}
    for case in cases:
        by_op.setdefault(case.op, []).append(case)
    files = {}
    torch_version = golden.manifest()["torch_version"]
    for op, group in by_op.items():
        rule = _rules()[record(op).family]
        uses = sorted({op} | ({op + "_with_indices"} if rule.with_indices else set()))
        head = [f"// Generated by poolspec {__version__} from torch {torch_version} reference vectors; do not edit.",
                f"// Regenerate: poolspec export --ops {op} --format burn --dtype {group[0].dtype} --out DIR",
                "use super::*;"]
        if rule.module_fn:
            head.append(f"use burn_tensor::module::{{{', '.join(uses)}}};")
        head.append("use burn_tensor::Tolerance;")
        head += rule.uses
        body = "\n\n".join(_tests(case) for case in group)
        (folder / f"{op}.rs").write_text("\n".join(head) + "\n\n" + body + "\n", encoding="utf-8")
        files[op] = f"burn/{op}.rs"
    return files

