"""Running the shipped reference vectors against poolspec, or against any implementation, on one backend.

Per case: the forward (and int64 indices) against torch's values; the namespace, dtype and device of the
result; the backward (an explicit ``<op>_backward``, else the backend's autodiff); on torch and JAX the second
order through autodiff of the backward (d<grad_input, v>/d(grad_output), and d/dx where it is not zero); and
two runs of the backward bit for bit. Error cases must raise (ValueError or TypeError from poolspec).
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import golden, known_bugs
from .backends import Backend
from .families import Family, family, grad_name
from .golden import case_id as case_id  # the ids' home is golden (known_bugs names cases too)
from .golden import case_key as case_key

PHASES = ("forward", "backward", "double-backward")


class NotExpressible(Exception):
    """Raised by an implementation (a peer adapter) for a call its API cannot express with the same semantics:
    the case counts as "not expressible", neither passed nor failed."""


def case_phases(case: golden.Golden) -> tuple[str, ...]:
    """The phases a case has: forward always (for an error case, that it raises); backward where it stores
    gradients; double-backward where it stores second-order ones."""
    if case.error is not None or "grad_output" not in case.files:
        return PHASES[:1]
    return PHASES if "grad_grad_output" in case.files else PHASES[:2]


@dataclass
class CaseResult:
    name: str
    op: str
    dtype: str
    status: str  # "pass", "fail", "skip" or "inexpressible"
    checks: list[str] = field(default_factory=list)  # what was compared
    problems: list[str] = field(default_factory=list)
    max_ulp: float = 0.0
    max_abs: float = 0.0
    seconds: float = 0.0
    flags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)  # what was not checked and why
    id: str = ""  # the case's id without its phase (case_key), as pytest's ids begin


@dataclass
class Report:
    backend: str
    device: str | None
    implementation: str
    results: list[CaseResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return not any(r.status == "fail" for r in self.results)

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if r.status == "fail"]

    def per_op(self) -> dict[str, dict[str, Any]]:
        table: dict[str, dict[str, Any]] = {}
        for r in self.results:
            row = table.setdefault(r.op, {"cases": 0, "passed": 0, "failed": 0, "skipped": 0, "inexpressible": 0,
                                          "xfailed": 0, "max_ulp": 0.0, "max_abs": 0.0})
            row["cases"] += 1
            row[_COLUMN[r.status]] += 1
            row["max_ulp"] = max(row["max_ulp"], r.max_ulp)
            row["max_abs"] = max(row["max_abs"], r.max_abs)
        return table

    def table(self) -> str:
        per_op = self.per_op()
        # columns that are empty everywhere are left out: a plain run has no xfails and no inexpressible calls
        extra = [k for k in ("inexpressible", "xfailed") if any(row[k] for row in per_op.values())]
        head = {"inexpressible": "n/expr", "xfailed": "xfailed"}
        lines = [f"conformance of {self.implementation} on {self.backend}"
                 f"{' (' + self.device + ')' if self.device else ''}: torch 2.13 reference vectors",
                 f"{'op':<22}{'cases':>7}{'passed':>8}{'failed':>8}{'skipped':>9}"
                 + "".join(f"{head[k]:>9}" for k in extra) + f"{'max ulp':>11}{'max abs':>11}"]
        totals = dict.fromkeys(["cases", "passed", "failed", "skipped", *extra], 0)
        for op, row in per_op.items():
            lines.append(f"{op:<22}{row['cases']:>7}{row['passed']:>8}{row['failed']:>8}{row['skipped']:>9}"
                         + "".join(f"{row[k]:>9}" for k in extra)
                         + f"{row['max_ulp']:>11.3g}{row['max_abs']:>11.3g}")
            for key in totals:
                totals[key] += row[key]
        lines.append(f"{'total':<22}{totals['cases']:>7}{totals['passed']:>8}{totals['failed']:>8}"
                     f"{totals['skipped']:>9}" + "".join(f"{totals[k]:>9}" for k in extra)
                     + f"   in {self.seconds:.1f} s")
        # which known upstream bug classes (poolspec/data/known_bugs.json) the failures reproduce
        lines += known_bugs.section(r.id or r.name for r in self.failures)
        for r in self.failures[:20]:
            lines.append(f"FAIL {r.id or r.name}: " + "\n    ".join(r.problems))
        if len(self.failures) > 20:
            lines.append(f"... and {len(self.failures) - 20} more failures")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "device": self.device, "implementation": self.implementation,
                "passed": self.passed, "seconds": self.seconds, "per_op": self.per_op(),
                "cases": [r.__dict__ for r in self.results]}


_COLUMN = {"pass": "passed", "fail": "failed", "skip": "skipped", "inexpressible": "inexpressible",
           "xfail": "xfailed"}


class Implementation:
    """The functions under test, looked up by op name: poolspec itself, a module of torch-style functions, or
    one function. ``backward(op)`` is the explicit VJP if the implementation has one."""

    def __init__(self, name: str, lookup: Callable[[str], Callable[..., Any] | None],
                 backward: Callable[[str], Callable[..., Any] | None] = lambda op: None,
                 strict_errors: bool = False) -> None:
        self.name, self._lookup, self._backward, self.strict_errors = name, lookup, backward, strict_errors

    def forward(self, op: str) -> Callable[..., Any] | None:
        return self._lookup(op)

    def backward(self, op: str) -> Callable[..., Any] | None:
        return self._backward(op)


def poolspec_implementation() -> Implementation:
    import poolspec

    return Implementation("poolspec", lambda op: getattr(poolspec, op, None),
                          lambda op: getattr(poolspec, op + "_backward", None), strict_errors=True)


def load_module(spec: str) -> Any:
    """The module of torch-style functions ``spec`` names: a ``.py`` file's path, or a dotted name imported
    with the current directory on the path (as ``python -m`` has it, and plain ``pytest`` does not). A
    ValueError says what failed."""
    import importlib.util
    import sys
    from pathlib import Path

    if spec.endswith(".py"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise ValueError(f"implementation {spec!r}: no such file")
        loader = importlib.util.spec_from_file_location(path.stem, path)
        if loader is None or loader.loader is None:
            raise ValueError(f"implementation {spec!r}: not a Python module")
        module = importlib.util.module_from_spec(loader)
        sys.modules[path.stem] = module
        try:
            loader.loader.exec_module(module)
        except Exception as e:
            del sys.modules[path.stem]
            raise ValueError(f"implementation {spec!r} failed to import: {type(e).__name__}: {e}") from e
        return module
    here = str(Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        return importlib.import_module(spec)
    except Exception as e:
        raise ValueError(f"implementation {spec!r} failed to import (a dotted module name importable from "
                         f"{here}, or a .py path): {type(e).__name__}: {e}") from e


def module_implementation(module: Any) -> Implementation:
    """torch-style functions of ``module`` (``avg_pool2d(x, kernel_size, ...)``, ``max_pool2d(...,
    return_indices=True)`` giving (values, indices)); ``<op>_backward`` functions are used if present."""
    return Implementation(getattr(module, "__name__", str(module)), lambda op: getattr(module, op, None),
                          lambda op: getattr(module, op + "_backward", None))


# ---------------------------------------------------------------------------------------------- comparisons

def _ulp(want: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) * 2.0 ** 16
    if dtype.startswith("float"):
        return np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    return np.ones(want.shape)


def _compare(result: CaseResult, what: str, got: np.ndarray, want: np.ndarray, case: golden.Golden,
             exact: bool = False) -> None:
    result.checks.append(what)
    if tuple(got.shape) != tuple(want.shape):
        result.problems.append(f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}")
        return
    if want.size == 0:
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    with np.errstate(invalid="ignore"):
        return _compare_values(result, what, g, w, nan_g, nan_w, case, exact)


def _compare_values(result: CaseResult, what: str, g: np.ndarray, w: np.ndarray, nan_g: np.ndarray,
                    nan_w: np.ndarray, case: golden.Golden, exact: bool) -> None:
    if (nan_g != nan_w).any():
        result.problems.append(f"{what}: NaN at {int((nan_g != nan_w).sum())} other positions")
        return
    same_inf = (g == w) | nan_w
    err = np.where(same_inf, 0.0, np.abs(g - w))
    err = np.nan_to_num(err, nan=np.inf, posinf=np.inf)
    worst = float(err.max())
    result.max_abs = max(result.max_abs, worst)
    rtol, atol = (0.0, 0.0) if exact else (case.rtol, case.atol)
    # ulp where the relative tolerance governs (|want| >= atol / rtol): nearer 0 a value is the remainder of a
    # cancellation and only its absolute error means something
    floor = atol / rtol if rtol > 0 else 0.0
    meaningful = np.isfinite(w) & (np.abs(w) >= max(floor, np.finfo(np.float64).tiny))
    if meaningful.any():
        ulp = float((err[meaningful] / _ulp(w[meaningful], case.dtype)).max())
        result.max_ulp = max(result.max_ulp, ulp)
    bad = err > atol + rtol * np.abs(np.where(np.isfinite(w), w, 0.0))
    if bad.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), err.shape))
        at = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), err.shape))
        result.problems.append(
            f"{what}: {int(bad.sum())} of {err.size} elements off (rtol {rtol:g}, atol {atol:g}); first at "
            f"{list(first)}: implementation {float(g[first])!r}, reference {float(w[first])!r}; worst at "
            f"{list(at)}: implementation {float(g[at])!r}, reference {float(w[at])!r}")


# ------------------------------------------------------------------------------------------------- one case

def _call_forward(fn: Callable[..., Any], case: golden.Golden, arrays: dict[str, Any]) -> tuple[Any, Any]:
    return family(case.op).forward(fn, dict(case.arguments), arrays)


def _vjp(backend: Backend, impl: Implementation, case: golden.Golden, arrays: dict[str, Any], g: Any,
         winners: Any) -> tuple[Any, ...] | None:
    """The gradients w.r.t. the family's differentiable ports for cotangent g: the explicit backward, else the
    backend's autodiff."""
    fam = family(case.op)
    bw = impl.backward(case.op)
    fn = impl.forward(case.op)
    assert fn is not None  # cases of ops the implementation lacks are skipped before
    args = dict(case.arguments)
    if bw is not None:
        return fam.backward(bw, g, args, arrays, winners, impl.strict_errors)
    wrt = fam.differentiable
    if backend.autodiff == "torch":
        torch = sys.modules["torch"]
        tracked = {p: (a if p not in wrt or a.requires_grad else a.detach().requires_grad_(True))
                   for p, a in arrays.items()}
        y, _ = fam.forward(fn, args, tracked)
        # differentiable again: the second order
        return torch.autograd.grad(y, [tracked[p] for p in wrt], g, create_graph=True)
    if backend.autodiff == "jax":
        import jax

        def f(*diff: Any) -> Any:
            return fam.forward(fn, args, {**arrays, **dict(zip(wrt, diff))})[0]

        _, pullback = jax.vjp(f, *[arrays[p] for p in wrt])
        return tuple(pullback(g))
    return None


def _second_order(backend: Backend, impl: Implementation, case: golden.Golden, arrays: dict[str, Any],
                  g: Any, vs: tuple[Any, ...], winners: Any, wrt: tuple[str, ...]) -> tuple[Any, ...]:
    """d(sum_p <vjp_p(g), v_p>)/dg and, for each port in ``wrt``, its derivative w.r.t. that port, through
    the backend's autodiff."""
    fam: Family = family(case.op)
    if backend.autodiff == "torch":
        torch = sys.modules["torch"]
        gr = g.detach().requires_grad_(True)
        tracked = {p: (a.detach().requires_grad_(p in wrt) if p in fam.differentiable else a)
                   for p, a in arrays.items()}
        grads = _vjp(backend, impl, case, tracked, gr, winners)
        assert grads is not None  # second order is asked of backends with autodiff
        total = sum((gi * v).sum() for gi, v in zip(grads, vs))
        return torch.autograd.grad(total, (gr,) + tuple(tracked[p] for p in wrt), allow_unused=True)
    import jax
    import jax.numpy as jnp

    def inner(gg: Any, *ports: Any) -> Any:
        grads = _vjp(backend, impl, case, {**arrays, **dict(zip(wrt, ports))}, gg, winners)
        assert grads is not None
        return functools.reduce(operator.add, [jnp.vdot(gi, v) for gi, v in zip(grads, vs)])

    # one program for all derivatives: eager grad-of-grad would compile each linearised piece on its own
    return jax.jit(jax.grad(inner, argnums=tuple(range(1 + len(wrt)))))(g, *[arrays[p] for p in wrt])


def run_case(backend: Backend, impl: Implementation, case: golden.Golden,
             phases: tuple[str, ...] = PHASES) -> CaseResult:
    """One case's checks, those of ``phases`` only (the pytest entry runs each phase as its own test; the
    backward phase calls the forward too, without comparing it)."""
    result = CaseResult(case.name, case.op, case.dtype, "pass", flags=case.flags, id=case_key(case))
    start = time.perf_counter()
    try:
        with np.errstate(all="ignore"):  # NaN/inf data is part of the catalogue
            _run_case(backend, impl, case, result, phases)
    except NotExpressible as e:
        result.status = "inexpressible"
        result.problems.append(f"not expressible: {str(e)[:200]}")
    except Exception as e:  # an implementation's crash is a failed case, not a crash of the suite
        result.problems.append(f"raised {type(e).__name__}: {str(e)[:200]}")
    if result.status not in ("skip", "inexpressible"):
        result.status = "fail" if result.problems else "pass"
    if result.status == "fail":
        result.problems[1:1] = [f"call: {call_line(case)}",
                               f"flags: {', '.join(case.flags) or '(none)'}; reference: {case.reference}",
                               f"a = poolspec.conformance.case({case_id(case, phases[0])!r}).arrays()  "
                               "# inputs, reference outputs and gradients"]
    result.seconds = time.perf_counter() - start
    return result


def call_line(case: golden.Golden) -> str:
    """The case's call as a line of Python, its arrays read from ``a = poolspec.conformance.case(id).arrays()``
    and its other arguments as literals."""
    fam = family(case.op)
    arrays = [f"a[{p!r}]" for p in fam.ports if p not in fam.keyword_ports]
    arrays += [f"{k}=a[{p!r}]" for p, k in fam.keyword_ports.items() if p in case.files]
    kwargs = [f"{k}={v!r}" for k, v in case.arguments.items()]
    return f"{case.op}({', '.join(arrays + kwargs)})  # {case.dtype}"


def case(test_id: str) -> golden.Golden:
    """The stored case a test id names (``avg_pool2d-g018-float32-forward``, with or without a device suffix;
    the CLI's ``avg_pool2d-g018-float32``), or a case's name (``Golden.name``): its arguments, flags,
    tolerances, and ``.arrays()`` (inputs, reference outputs, cotangents, gradients).

    >>> from poolspec import conformance
    >>> c = conformance.case("avg_pool1d-g000-float64-forward")
    >>> c.op, sorted(c.arrays())[-3:]
    ('avg_pool1d', ['grad_output', 'input', 'output'])
    """
    op = next((o for o in sorted({c.op for c in golden.cases()}, key=len, reverse=True)
               if test_id == o or test_id.startswith(o + "-")), None)
    if op is not None:
        for c in golden.cases([op]):
            if test_id in (c.name, case_key(c)) or any(
                    test_id == case_id(c, p) or test_id.startswith(case_id(c, p) + "-") for p in PHASES):
                return c
    raise KeyError(f"no stored case has the id {test_id!r} (ids look like 'avg_pool2d-g018-float32-forward')")


def _run_case(backend: Backend, impl: Implementation, case: golden.Golden, result: CaseResult,
              phases: tuple[str, ...]) -> None:
    fn = impl.forward(case.op)
    if fn is None:
        result.status = "skip"
        result.problems.append(f"{impl.name} has no {case.op}")
        return
    if not backend.supports(case.dtype):
        result.status = "skip"
        result.problems.append(f"{backend.name} has no {case.dtype}")
        return
    if "forward" not in phases and case.error is None:
        # a gradient phase that cannot run is skipped before the call, so that a failing forward is reported by
        # the forward's test alone
        if not backend.autodiff and (phases == ("double-backward",) or impl.backward(case.op) is None):
            result.status = "skip"
            result.problems.append(f"no {'second order' if phases == ('double-backward',) else 'backward'}: "
                                   f"{impl.name} has no {case.op}_backward and {backend.name} no autodiff")
            return
    a = case.arrays()
    fam = family(case.op)
    arrays = {p: backend.asarray(a[p], None if p == "indices" else case.dtype) for p in fam.ports if p in a}
    x = arrays["input"]
    if case.error is not None:
        result.checks.append("raises")
        try:
            for out in _call_forward(fn, case, arrays):
                if out is not None:
                    backend.to_numpy(out)  # a lazy backend (Dask) checks index values when it computes
        except NotExpressible:
            raise
        except (ValueError, TypeError):
            return
        except Exception as e:
            if impl.strict_errors:
                result.problems.append(f"raised {type(e).__name__}, not ValueError/TypeError: {e}")
            return
        result.problems.append(f"accepted a call that must raise {case.error}")
        return
    before = {p: backend.to_numpy(v).copy() for p, v in arrays.items()}
    y, winners = _call_forward(fn, case, arrays)
    if "forward" in phases:
        _check_forward(backend, case, result, a, x, y, winners)
    if "grad_output" not in a or not {"backward", "double-backward"} & set(phases):
        return
    g = backend.asarray(a["grad_output"], case.dtype)
    try:
        grads = _vjp(backend, impl, case, arrays, g, winners)
    except NotExpressible as e:
        if "forward" not in phases:
            raise
        # the forward was the same call and has been judged; only the gradient is beyond the peer
        result.notes.append(f"backward not expressible: {str(e)[:200]}")
        return
    if grads is None:
        # (a gradient phase alone was skipped before the call)
        result.notes.append(f"no backward: {impl.name} has no {case.op}_backward and {backend.name} no autodiff")
        return
    if "backward" in phases:
        for port, grad in zip(fam.differentiable, grads):
            _compare(result, grad_name(port), backend.to_numpy(grad), a[grad_name(port)], case)
        again = _vjp(backend, impl, case, arrays, g, winners)
        assert again is not None  # the same call gave gradients the first time
        result.checks.append("bit-identical repeat")
        if any(backend.to_numpy(p).tobytes() != backend.to_numpy(q).tobytes() for p, q in zip(grads, again)):
            result.problems.append("two runs of the backward differ in their bits")
        if any(not np.array_equal(backend.to_numpy(v), before[p], equal_nan=True) for p, v in arrays.items()):
            result.problems.append("an input was modified")
    if "double-backward" in phases and "grad_grad_output" in a:
        if not backend.autodiff:
            result.notes.append(f"no second order: {backend.name} has no autodiff")
            return
        vs = tuple(backend.asarray(a[grad_name(p) + "_cotangent"], case.dtype) for p in fam.differentiable)
        wrt = tuple(p for p in fam.second_order if "grad_" + grad_name(p) in a)
        second = _second_order(backend, impl, case, arrays, g, vs, winners, wrt)
        _compare(result, "grad_grad_output", backend.to_numpy(second[0]), a["grad_grad_output"], case)
        for port, d in zip(wrt, second[1:]):
            name = "grad_" + grad_name(port)
            _compare(result, name, backend.to_numpy(d) if d is not None else np.zeros_like(a[name]), a[name], case)


def _check_forward(backend: Backend, case: golden.Golden, result: CaseResult, a: dict[str, np.ndarray], x: Any,
                   y: Any, winners: Any) -> None:
    _compare(result, "output", backend.to_numpy(y), a["output"], case, exact=not case.dtype.startswith(
        ("float", "bfloat")))
    if "output_indices" in a:
        if winners is None:  # a peer whose max pool gives values only (JAX's reduce_window, Keras)
            result.notes.append("indices: not produced")
        else:
            _compare(result, "indices", backend.to_numpy(winners), a["output_indices"], case, exact=True)
    result.checks.append("namespace/dtype/device")
    if backend.namespace_of(y) is not backend.namespace_of(x):
        result.problems.append("the result is in another namespace than the input")
    if backend.dtype_name(y) != backend.dtype_name(x):
        result.problems.append(f"dtype {backend.dtype_name(y)} instead of {backend.dtype_name(x)}")
    if backend.device_of(y) != backend.device_of(x):
        result.problems.append(f"device {backend.device_of(y)} instead of {backend.device_of(x)}")


# ---------------------------------------------------------------------------------------------------- runs

def run(backend: str = "numpy", *, device: str | None = None, ops: list[str] | None = None,
        implementation: Implementation | None = None, progress: Any = None, jobs: int | None = None) -> Report:
    """Run the catalogue's reference vectors on ``backend``; ``progress`` is a stream for a progress line.
    ``jobs``: cases run at once in threads (default: one per CPU on JAX, whose cost per case is XLA
    compilation, which runs outside Python's lock; one elsewhere). Each case's checks run in order in one
    thread, and the results are reported in catalogue order."""
    bk = Backend(backend, device)
    impl = implementation or poolspec_implementation()
    chosen = golden.cases(ops)
    if ops is not None:
        unknown = sorted(set(ops) - {c.op for c in golden.cases()})
        if unknown:
            raise ValueError(f"ops: no reference vectors for {', '.join(unknown)}")
    if jobs is None:
        jobs = (os.cpu_count() or 1) if backend == "jax" else 1
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: must be at least 1")
    for op in {c.op for c in chosen}:  # the lazy imports the cases need, done before any thread starts: two
        family(op)                      # threads importing one module can see it half-initialised
    start = time.perf_counter()
    results = []
    tty = progress is not None and getattr(progress, "isatty", lambda: False)()
    last_op = None
    with ThreadPoolExecutor(jobs) if jobs > 1 else nullcontext() as pool:
        outcomes = (pool.map(lambda c: run_case(bk, impl, c), chosen) if pool is not None
                    else (run_case(bk, impl, c) for c in chosen))
        for i, (case, result) in enumerate(zip(chosen, outcomes)):
            if progress is not None and (tty or case.op != last_op):
                line = f"[{i + 1:>5}/{len(chosen)}] {case.name:<40}"
                progress.write(("\r" + line) if tty else line + "\n")
                progress.flush()
                last_op = case.op
            results.append(result)
    if tty:
        progress.write("\r" + " " * 60 + "\r")
    return Report(backend, device, impl.name, results, time.perf_counter() - start)


def check(fn: Callable[..., Any], op: str, backend: str = "numpy", *, backward: Callable[..., Any] | None = None,
          device: str | None = None) -> Report:
    """Check one implementation ``fn`` of ``op`` (torch's signature) against the reference vectors.

    >>> import poolspec
    >>> from poolspec.conformance import check
    >>> check(poolspec.avg_pool1d, "avg_pool1d").passed
    True
    """
    name = getattr(fn, "__qualname__", repr(fn))
    impl = Implementation(name, lambda o: fn if o == op else None, lambda o: backward if o == op else None)
    return run(backend, device=device, ops=[op], implementation=impl)

