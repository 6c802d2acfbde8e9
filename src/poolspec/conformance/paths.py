"""Paths: the way a model reaches a kernel (a compiler, an exporter and a runtime), wrapped around an
implementation so that the conformance cases run through it.

A path takes an :class:`~poolspec.conformance.Implementation` whose functions are torch-style (torch tensors in
and out for the torch paths, JAX arrays for ``jit``) and returns one whose every call goes through the path:

- ``compile``: ``torch.compile(fn, backend="inductor", fullgraph=True)``, static shapes (a new input shape,
  dtype or argument compiles anew); gradients by autograd of the compiled function (AOTAutograd's compiled
  backward). torch.compile has no double backward, so the path has no second order.
- ``compile-dynamic``: the same with ``dynamic=True`` (symbolic shapes).
- ``export-ort``: ``torch.export.export`` then ``torch.onnx.export(..., dynamo=True)``, run in an onnxruntime
  ``InferenceSession`` (CPU, one thread): forward only (needs onnx, onnxscript and onnxruntime).
- ``jit``: ``jax.jit`` with the non-array arguments static; gradients by ``jax.vjp`` of the jitted function, to
  second order.

Each compiled callable is cached per (op, non-array arguments, input shapes and dtypes); the torch paths reset
dynamo (``torch._dynamo.reset()``) before each new compilation, so its recompile limit never turns a case into
an eager run. torch and JAX are imported only when a path is used: the library imports with NumPy alone.

>>> from poolspec.conformance import paths
>>> sorted(paths.PATHS)
['compile', 'compile-dynamic', 'export-ort', 'jit']
>>> paths.PATHS["jit"].backend
'jax'
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import logging
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .runner import PHASES, Implementation, NotExpressible


@dataclass(frozen=True)
class Path:
    """A named path: the backend its arrays are in, the phases it can run, and what it needs installed."""

    name: str
    backend: str  # the poolspec.conformance backend the wrapped functions take
    phases: tuple[str, ...]
    needs: tuple[str, ...]  # modules that must import
    description: str

    def missing(self) -> list[str]:
        """The modules this path needs that are not installed here."""
        return [m for m in self.needs if importlib.util.find_spec(m) is None]


PATHS = {p.name: p for p in (
    Path("compile", "torch", PHASES[:2], ("torch",),
         'torch.compile(fn, backend="inductor", fullgraph=True); backward by autograd of the compiled function'),
    Path("compile-dynamic", "torch", PHASES[:2], ("torch",),
         'torch.compile(fn, backend="inductor", fullgraph=True, dynamic=True); backward by autograd of the '
         "compiled function"),
    Path("export-ort", "torch", PHASES[:1], ("torch", "onnx", "onnxscript", "onnxruntime"),
         "torch.export.export + torch.onnx.export(dynamo=True), run in onnxruntime (CPU, 1 thread); forward only"),
    Path("jit", "jax", PHASES, ("jax",),
         "jax.jit with the non-array arguments static; gradients by jax.vjp of the jitted function"),
)}


def get(name: str) -> Path:
    """The path ``name``; a ValueError names the choices, or the modules it lacks."""
    if name not in PATHS:
        raise ValueError(f"unknown path {name!r}; choose one of {', '.join(PATHS)}")
    path = PATHS[name]
    if path.missing():
        raise ValueError(f"path {name!r} needs {', '.join(path.missing())} (not installed)")
    return path


def _is_array(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype")


def _signature(v: Any) -> Any:
    return ("array", tuple(v.shape), str(v.dtype), bool(getattr(v, "requires_grad", False))) if _is_array(v) \
        else ("value", repr(v))


class _Wrapped:
    """One op of an implementation through one path: splits each call into its arrays (traced) and the rest
    (static), and compiles once per signature."""

    def __init__(self, path: str, op: str, fn: Callable[..., Any]) -> None:
        self.path, self.op, self.fn = path, op, fn
        self.cache: dict[Any, Callable[..., Any]] = {}
        self.lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        slots = [i for i, a in enumerate(args) if _is_array(a)]
        names = [k for k, v in kwargs.items() if _is_array(v)]
        key = (tuple(_signature(a) for a in args), tuple((k, _signature(v)) for k, v in sorted(kwargs.items())))
        arrays = [args[i] for i in slots] + [kwargs[k] for k in names]
        fn = self.fn

        def call(*dyn: Any) -> Any:
            full = list(args)
            for i, a in zip(slots, dyn):
                full[i] = a
            kw = {**kwargs, **dict(zip(names, dyn[len(slots):]))}
            return fn(*full, **kw)

        with self.lock:
            compiled = self.cache.get(key)
            if compiled is None:
                compiled = self.cache[key] = _COMPILERS[self.path](call, arrays)
        return compiled(*arrays)


def _torch_compile(dynamic: bool) -> Callable[..., Any]:
    def make(call: Callable[..., Any], arrays: list[Any]) -> Callable[..., Any]:
        import torch

        # every new compilation starts from a clean dynamo: its recompile limit (8 per code object, and every
        # wrapped call shares one code object) would otherwise make later cases silently run eagerly
        torch._dynamo.reset()
        _quiet()
        return torch.compile(call, backend="inductor", fullgraph=True, dynamic=dynamic)
    return make


def _quiet() -> None:
    """No log lines for what the runner reports itself: a refused call's traceback from fake-tensor propagation
    (the case's exception), the exporter's progress."""
    for name in ("torch._subclasses.fake_tensor", "torch.onnx", "torch._dynamo", "torch._inductor"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class _Module:  # torch.export needs an nn.Module
    def __new__(cls, call: Callable[..., Any]) -> Any:
        import torch

        class M(torch.nn.Module):
            def forward(self, *dyn: Any) -> Any:
                return call(*dyn)

        return M()


def _export_ort(call: Callable[..., Any], arrays: list[Any]) -> Callable[..., Any]:
    import torch

    # imported by name: onnxruntime is not a test dependency (and ships no type information)
    onnxruntime = importlib.import_module("onnxruntime")
    if any(a.dtype == torch.bfloat16 for a in arrays):
        raise NotExpressible("bfloat16 inputs: onnxruntime's CPU provider has no bfloat16 pooling or Resize")
    # the exporter reports its progress and torchvision's absence on stdout, warnings and logging: not results
    _quiet()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exported = torch.export.export(_Module(call), tuple(arrays))
        program: Any = torch.onnx.export(exported, tuple(arrays), dynamo=True, verbose=False)
    model = program.model_proto.SerializeToString()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    inputs = [i.name for i in session.get_inputs()]

    def run(*dyn: Any) -> Any:
        if any(getattr(a, "requires_grad", False) for a in dyn):
            raise NotExpressible("export-ort is forward only (onnxruntime has no autodiff)")
        feeds = {n: a.detach().cpu().numpy() for n, a in zip(inputs, dyn)}
        outs = [torch.from_numpy(o.copy()) for o in session.run(None, feeds)]
        return outs[0] if len(outs) == 1 else tuple(outs)
    return run


def _jit(call: Callable[..., Any], arrays: list[Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(call)


_COMPILERS: dict[str, Callable[[Callable[..., Any], list[Any]], Callable[..., Any]]] = {
    "compile": _torch_compile(False), "compile-dynamic": _torch_compile(True), "export-ort": _export_ort,
    "jit": _jit}


def wrap(implementation: Implementation, path: str) -> Implementation:
    """``implementation`` with every forward call through ``path`` (its explicit ``<op>_backward`` dropped: the
    gradients come from autodiff of the path's compiled function).

    >>> from poolspec.conformance import paths, runner
    >>> paths.wrap(runner.poolspec_implementation(), "jit").name
    'poolspec via jit'
    """
    get(path)
    wrapped: dict[str, _Wrapped | None] = {}

    def forward(op: str) -> Callable[..., Any] | None:
        if op not in wrapped:
            fn = implementation.forward(op)
            wrapped[op] = None if fn is None else _Wrapped(path, op, fn)
        return wrapped[op]

    return Implementation(f"{implementation.name} via {path}", forward, lambda op: None,
                          strict_errors=False)  # a compiler may re-raise an error as its own type


# ----------------------------------------------------------------------------------------- path peers

# the path peers built from torch's own ops (torch.nn.functional; torchvision's roi ops are not installed beside
# torch 2.13, so they are "has no <op>"): name -> path
TORCH_PEERS = {"inductor": "compile", "inductor-dynamic": "compile-dynamic", "export-ort": "export-ort"}
PER_OP = 3  # a path peer's sample: cases per op (each adds an edge flag or dtype), and the op's first error case
# symbolic-shape compilation costs several times a static one: the dynamic peer's sample is one case per op, so the
# whole matrix stays within half an hour on two cores
PEER_PER_OP = {"inductor-dynamic": 1}


def sample(cases: list[Any], per_op: int) -> list[Any]:
    """A deterministic sample of ``cases``: per op, in catalogue order, each case that carries an edge flag or
    dtype no case taken before for that op carries, up to ``per_op`` cases (then the op's first error case).
    Compiling costs seconds per case, so a path peer runs the cases that exercise the most rules first.

    >>> from poolspec.conformance import golden
    >>> [c.name for c in sample(golden.cases(["avg_pool1d"]), 2)]
    ['avg_pool1d-g000', 'avg_pool1d-g001', 'avg_pool1d-r008']
    """
    taken: dict[str, list[Any]] = {}
    seen: dict[str, set[str]] = {}
    errors: dict[str, Any] = {}
    for c in cases:
        if c.error is not None:
            errors.setdefault(c.op, c)
            continue
        mine = taken.setdefault(c.op, [])
        features = set(c.flags) | {c.dtype}
        if len(mine) < per_op and not features <= seen.setdefault(c.op, set()):
            mine.append(c)
            seen[c.op] |= features
    chosen = {id(c) for group in taken.values() for c in group} | {id(c) for c in errors.values()}
    return [c for c in cases if id(c) in chosen]


def torch_peer(name: str) -> Implementation:
    """torch.nn.functional through the path of the path peer ``name`` (``inductor``, ``inductor-dynamic``,
    ``export-ort``)."""
    if name not in TORCH_PEERS:
        raise ValueError(f"unknown path peer {name!r}; choose one of {', '.join(TORCH_PEERS)}")
    get(TORCH_PEERS[name])
    import torch.nn.functional as F  # noqa: N812 - torch's own name

    eager = Implementation("torch.nn.functional", lambda op: getattr(F, op, None))
    return Implementation(name, wrap(eager, TORCH_PEERS[name]).forward)


def torch_eager() -> Implementation:
    """torch.nn.functional called eagerly: the baseline a torch path peer's sample is drawn from."""
    import torch.nn.functional as F  # noqa: N812 - torch's own name

    return Implementation("torch.nn.functional", lambda op: getattr(F, op, None))


def run_sample(implementation: Implementation, backend: str, *, ops: list[str] | None = None, per_op: int = PER_OP,
               phases: tuple[str, ...] = PHASES, baseline: Implementation | None = None,
               only: Callable[[Any], bool] | None = None, only_text: str = "", progress: Any = None) -> tuple[Any, str]:
    """Run ``implementation`` on ``sample(cases, per_op)`` in ``phases``; with a ``baseline`` (torch's eager
    ops for a torch path), the sample is drawn from the cases the baseline passes, so that every failure is the
    path's own (the others are poolspec's extensions and deviations, which torch's call does not express);
    ``only`` (a test of a case, described by ``only_text``) narrows the cases first. Returns the Report and a
    sentence saying what was sampled."""
    import time

    from . import golden
    from .backends import Backend
    from .runner import Report, run_case

    bk = Backend(backend)
    cases = [c for c in golden.cases(ops) if only is None or only(c)]
    start = time.perf_counter()
    left_out = 0
    if baseline is not None:
        kept = [c for c in cases if run_case(bk, baseline, c, phases).status == "pass"]
        left_out = len(cases) - len(kept)
        cases = kept
    chosen = sample(cases, per_op)
    results = []
    for i, c in enumerate(chosen):
        if progress is not None:
            progress.write(f"[{i + 1:>4}/{len(chosen)}] {c.name}\n")
            progress.flush()
        results.append(run_case(bk, implementation, c, phases))
    report = Report(bk.name, None, implementation.name, results, time.perf_counter() - start)
    text = (f"{len(chosen)} of {len(cases)} cases (per op, up to {per_op} in catalogue order, each adding an edge "
            "flag or dtype the op's earlier sampled cases lack, and the op's first error case)")
    if only is not None:
        text += f", drawn from {only_text}"
    if baseline is not None:
        text += (f", drawn from the cases {baseline.name}'s eager call passes ({left_out} it does not: poolspec's "
                 "extensions and deviations, and ops it lacks)")
    return report, text


def run_torch_peer(name: str, ops: list[str] | None = None, per_op: int | None = None,
                   progress: Any = None) -> tuple[Any, str]:
    """The path peer ``name`` (``TORCH_PEERS``) on its sample (``per_op`` cases per op; by default the peer's
    ``PEER_PER_OP``, else ``PER_OP``); see ``run_sample``."""
    impl = torch_peer(name)
    per_op = PEER_PER_OP.get(name, PER_OP) if per_op is None else per_op
    return run_sample(impl, "torch", ops=ops, per_op=per_op, phases=PATHS[TORCH_PEERS[name]].phases,
                      baseline=torch_eager(), progress=progress)


def run_path(implementation: Implementation, path: str, *, ops: list[str] | None = None,
             device: str | None = None, progress: Any = None) -> Any:
    """Every case of ``ops`` with ``implementation`` through ``path``, in the phases the path has, on the path's
    backend (the CLI's ``poolspec conformance --path``). Returns a Report."""
    import time

    from . import golden
    from .backends import Backend
    from .runner import Report, run_case

    p = get(path)
    bk = Backend(p.backend, device)
    impl = wrap(implementation, path)
    chosen = golden.cases(ops)
    start = time.perf_counter()
    results = []
    for i, c in enumerate(chosen):
        if progress is not None:
            progress.write(f"[{i + 1:>5}/{len(chosen)}] {c.name}\n")
            progress.flush()
        results.append(run_case(bk, impl, c, p.phases))
    return Report(bk.name, device, impl.name, results, time.perf_counter() - start)


def run_peer(name: str, ops: list[str] | None = None, progress: Any = None,
             per_op: int | None = None) -> tuple[Any, str]:
    """The peer ``name``'s Report and a sentence on its sample: a torch path peer (``TORCH_PEERS``) from this
    package; any other peer from a poolspec checkout's ``conformance/peers`` (the current directory, or an
    ancestor of it, holding ``conformance/peers/__init__.py``), run in this interpreter."""
    if name in TORCH_PEERS:
        return run_torch_peer(name, ops, per_op, progress=progress)
    import importlib
    import sys
    from pathlib import Path as FilePath

    from .runner import run

    root = next((d for d in (FilePath.cwd(), *FilePath.cwd().parents)
                 if (d / "conformance" / "peers" / "__init__.py").is_file()), None)
    if root is None:
        raise ValueError(f"peer {name!r}: not a path peer of this package ({', '.join(TORCH_PEERS)}), and no "
                         "poolspec checkout (conformance/peers) here or above to load a repository peer from")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    peers = importlib.import_module("conformance.peers")
    adapter = peers.load(name)  # a ValueError names the peers
    if not peers.installed(name):
        raise ValueError(f"peer {name!r} needs {', '.join(adapter.IMPORTS)} in this interpreter (its venv: "
                         f"conformance/.venvs/{name}; `python conformance/run_peers.py --peers {name}` uses it)")
    if hasattr(adapter, "run"):
        report, sampled = adapter.run(ops)
        return report, sampled
    impl = Implementation(adapter.NAME, lambda op: getattr(adapter, op, None),
                          lambda op: getattr(adapter, op + "_backward", None))
    return run(adapter.BACKEND, ops=ops, implementation=impl, progress=progress), "every case"
