"""The ``poolspec`` command line: ``cards`` prints the op cards, ``selfcheck`` checks the implemented ops on
one backend without torch (shape rule, <op(x), g> == <x, op_backward(g, x)>, bit-identical repeats)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import Any

import numpy as np

from . import spec
from .conformance.backends import NAMES as BACKEND_NAMES
from .registry import op as record

_SELFCHECK: list[tuple[str, tuple[int, ...], dict[str, Any]]] = [
    ("avg_pool1d", (2, 3, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 9, 8), dict(kernel_size=(3, 2), stride=2, padding=1, count_include_pad=False)),
    ("avg_pool2d", (3, 7, 7), dict(kernel_size=2, stride=3, ceil_mode=True, divisor_override=3)),
    ("avg_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 3), padding=1)),
    ("adaptive_avg_pool1d", (2, 3, 13), dict(output_size=7)),
    ("adaptive_avg_pool2d", (2, 3, 13, 5), dict(output_size=(7, 9))),
    ("adaptive_avg_pool3d", (1, 2, 5, 6, 7), dict(output_size=(3, None, 2))),
    ("max_pool1d", (2, 3, 11), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("max_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 3), padding=1)),
    ("adaptive_max_pool1d", (2, 3, 13), dict(output_size=7)),
    ("adaptive_max_pool2d", (2, 3, 13, 5), dict(output_size=(7, 9))),
    ("adaptive_max_pool3d", (1, 2, 5, 6, 7), dict(output_size=(3, None, 2))),
    ("max_unpool1d", (2, 3, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("max_unpool2d", (2, 3, 4, 5), dict(kernel_size=2)),
    ("max_unpool3d", (1, 2, 3, 3, 2), dict(kernel_size=2, stride=(1, 2, 2), output_size=(4, 7, 5))),
    ("lp_pool1d", (2, 3, 11), dict(norm_type=2.0, kernel_size=3, stride=2, ceil_mode=True)),
    ("lp_pool2d", (2, 3, 9, 8), dict(norm_type=1.5, kernel_size=(3, 2))),
    ("lp_pool3d", (1, 2, 5, 6, 7), dict(norm_type=float("inf"), kernel_size=2)),
    ("interpolate", (2, 3, 11), dict(scale_factor=2.1, mode="nearest")),
    ("interpolate", (2, 3, 7, 9), dict(size=(5, 14), mode="nearest-exact")),
    ("interpolate", (2, 3, 11), dict(size=17, mode="linear", align_corners=True)),
    ("interpolate", (2, 3, 9, 8), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ("interpolate", (2, 3, 9, 8), dict(size=(13, 5), mode="bicubic")),
    ("interpolate", (1, 2, 5, 6, 4), dict(scale_factor=1.5, mode="trilinear")),
    ("interpolate", (1, 2, 5, 6, 7), dict(size=(3, 4, 2), mode="area")),
    ("interpolate", (2, 3, 15, 12), dict(size=(6, 5), mode="bicubic", antialias=True)),
    ("interpolate", (2, 3, 15, 12), dict(size=(7, 20), mode="lanczos", antialias=True)),
    ("interpolate", (2, 3, 9, 8), dict(size=(14, 5), mode="lanczos")),
]


def selfcheck(backend: str) -> int:
    """<op(x), g> == <x, op_backward(g, x)> for every op: linear ops (avg, max_unpool, interpolate) are the
    adjoint pair, max ops gather x at their winners, and lp_pool is positively homogeneous of degree 1 (Euler)."""
    import poolspec

    from .conformance.backends import Backend

    bk = Backend(backend)
    make, _host = bk.asarray, bk.to_numpy
    rng = np.random.default_rng(0)
    failures = 0
    for op, shape, args in _SELFCHECK:
        x = rng.standard_normal(shape)
        operands: tuple[Any, ...] = ()
        if record(op).takes_indices:
            # unique indices per plane into the output (distinct values pooled would give them too)
            out_spatial = spec.output_shape(op, shape, **args)[2:]
            size, m = int(np.prod(out_spatial)), int(np.prod(shape[2:]))
            idx = np.stack([rng.permutation(size)[:m] for _ in range(shape[0] * shape[1])]).reshape(shape)
            operands = (make(idx),)
        if "norm_type" in args:
            x = np.abs(x) + 0.1  # powers of negative sums are NaN for fractional p
        out_shape = spec.output_shape(op, shape, **args)
        g = rng.standard_normal(out_shape)
        y = getattr(poolspec, op)(make(x), *operands, **args)
        gx1 = getattr(poolspec, op + "_backward")(make(g), make(x), *operands, **args)
        gx2 = getattr(poolspec, op + "_backward")(make(g), make(x), *operands, **args)
        y_h, gx_h = _host(y), _host(gx1)
        lhs, rhs = float(np.vdot(y_h, g)), float(np.vdot(x, gx_h))
        checks = {
            "shape": tuple(y.shape) == tuple(out_shape),
            "adjoint": abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)),
            "repeat": np.array_equal(gx_h, _host(gx2)),
        }
        ok = all(checks.values())
        failures += not ok
        status = "ok" if ok else "FAIL " + ",".join(k for k, v in checks.items() if not v)
        label = f"{op} {args['mode']}{' aa' if args.get('antialias') else ''}" if "mode" in args else op
        print(f"{label:<26} {str(shape):<18} <op(x),g>-<x,vjp(g)> = {lhs - rhs:+.1e}  {status}")
    print(f"{len(_SELFCHECK) - failures} passed, {failures} failed")
    return 1 if failures else 0


def conformance_command(args: argparse.Namespace) -> int:
    from .conformance import load_module, module_implementation, run

    if args.conventions:
        return conventions_command(args)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()] if args.ops else None
    progress = None if args.quiet else sys.stderr
    try:
        if args.peer:
            from .conformance.paths import run_peer

            if args.impl or args.path:
                raise ValueError("--peer runs a peer's own functions: not with --impl or --path")
            report, sampled = run_peer(args.peer, ops, progress=progress, per_op=args.per_op)
            print(f"{args.peer}: {sampled}")
        elif args.path:
            from .conformance.paths import run_path
            from .conformance.runner import poolspec_implementation

            impl = module_implementation(load_module(args.impl)) if args.impl else poolspec_implementation()
            report = run_path(impl, args.path, ops=ops, device=args.device, progress=progress)
        else:
            given = module_implementation(load_module(args.impl)) if args.impl else None
            report = run(args.backend, device=args.device, ops=ops, implementation=given, progress=progress,
                         jobs=args.jobs)
    except (ValueError, ImportError) as e:
        print(f"poolspec conformance: {e}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report.to_dict(), f, indent=1)
    return 0 if report.passed else 1


def conventions_command(args: argparse.Namespace) -> int:
    from collections import Counter

    from .conformance import conventions

    libs = None if args.conventions == "all" else [v.strip() for v in args.conventions.split(",") if v.strip()]
    try:
        report = conventions.run(args.backend, libs, device=args.device)
    except (ValueError, ImportError) as e:
        print(f"poolspec conformance: {e}", file=sys.stderr)
        return 2
    by_function: dict[str, Counter[str]] = {}
    for name, status, detail in report.results:
        by_function.setdefault(name.rsplit("-", 1)[0], Counter())[status] += 1
        if status == "failed":
            print(f"FAILED {name}: {detail}")
    print(f"{'function':40s} passed failed skipped")
    for fn, n in by_function.items():
        print(f"{fn:40s} {n['passed']:6d} {n['failed']:6d} {n['skipped']:7d}")
    total = report.counts()
    print(f"{len(report.results)} cases on {args.backend}: {total.get('passed', 0)} passed, "
          f"{total.get('failed', 0)} failed, {total.get('skipped', 0)} skipped")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"backend": args.backend, "results": report.results}, f, indent=1)
    return 0 if report.failed == 0 and report.results else 1


def parser() -> argparse.ArgumentParser:
    """The command line's parser (``poolspec bench`` has its own: :func:`bench_main`)."""
    from . import __version__

    parser = argparse.ArgumentParser(prog="poolspec", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"poolspec {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{cards,selfcheck,conformance,export,bench}")
    c = sub.add_parser("cards", help="print op cards as JSON, or write them as Markdown pages (--out)")
    c.add_argument("ops", nargs="*", help="op names (all if none)")
    c.add_argument("--out", default=None, help="write one Markdown page per op (and an index) to this folder")
    c.add_argument("--frontends", action="store_true",
                   help="the front-end cards (poolspec.frontends) instead of the op cards")
    s = sub.add_parser("selfcheck", help="check the implemented ops on one backend (no torch needed)")
    s.add_argument("--backend", default="numpy", choices=["numpy", "torch", "jax", "array_api_strict", "dask", "cupy"],
                   help="array library to check on (default numpy)")
    k = sub.add_parser("conformance", help="run the torch 2.13 reference vectors on a backend (no torch needed)")
    k.add_argument("--backend", default="numpy", choices=list(BACKEND_NAMES),
                   help="array library the cases' arrays are made in (default numpy)")
    k.add_argument("--device", default=None, help="device for the backend (torch: cuda:0, jax: gpu, cupy: 0)")
    k.add_argument("--ops", default=None, help="comma-separated op names (all if omitted)")
    k.add_argument("--impl", default=None, help="a module of torch-style functions to check instead of poolspec: "
                   "a dotted name importable from the current directory, or a .py path")
    k.add_argument("--path", default=None, metavar="PATH",
                   help="run the implementation through a compiler or exporter: compile, compile-dynamic, export-ort "
                        "(torch arrays), jit (JAX arrays); the backend is the path's")
    k.add_argument("--peer", default=None, metavar="NAME",
                   help="run one peer instead and print its table: the path peers inductor, inductor-dynamic, "
                        "export-ort from this package; the others (jax-jit, onnxruntime, ...) from conformance/peers "
                        "in a poolspec checkout, in this interpreter")
    k.add_argument("--per-op", type=int, default=None, metavar="N",
                   help="with --peer, a path peer's sample: up to N cases per op (default 3; inductor-dynamic 1) and "
                        "its first error case")
    k.add_argument("--json", default=None, help="write the per-case results to this file")
    k.add_argument("--quiet", action="store_true", help="no progress line")
    k.add_argument("--conventions", default=None, metavar="LIBRARIES",
                   help="instead: replay the stored cases of other libraries' conventions through the front-ends "
                        "(poolspec.frontends), 'all' or comma-separated libraries")
    k.add_argument("--jobs", type=int, default=None,
                   help="cases at once, in threads (default: one per CPU on jax, whose cost is compilation; 1 else)")
    e = sub.add_parser("export", help="write the reference vectors for porters")
    e.add_argument("--ops", default=None, help="comma-separated op names (all if omitted)")
    e.add_argument("--format", default="npz", choices=["npz", "safetensors", "json", "burn"],
                   help="npz (NumPy), safetensors, json, or burn (Rust test modules for the Burn framework)")
    e.add_argument("--out", required=True, help="output folder")
    e.add_argument("--dtype", default="float64", choices=["float32", "float64"],
                   help="the stored cases of this dtype (default float64)")
    e.add_argument("--conventions", default=None, metavar="LIBRARIES",
                   help="instead: the stored cases of other libraries' conventions (front-ends), 'all' or "
                        "comma-separated libraries (tensorflow, keras, jax, flax, onnx_reference, onnxruntime)")
    sub.add_parser("bench", help="benchmarks against the native kernels: ratio suite, --memory, --device cuda, "
                   "--models (poolspec bench --help)", add_help=False)
    return parser


def export_command(args: argparse.Namespace) -> int:
    """``poolspec export``: the golden cases (``--ops``, ``--dtype``) or the convention cases (``--conventions``)."""
    from .export import export, export_conventions

    def names(text: str | None) -> list[str] | None:
        return [v.strip() for v in text.split(",") if v.strip()] if text else None

    try:
        if args.conventions:
            manifest = export_conventions(args.out, None if args.conventions == "all" else names(args.conventions),
                                          fmt=args.format)
            what = f"convention cases ({args.format})"
        else:
            manifest = export(args.out, ops=names(args.ops), fmt=args.format, dtype=args.dtype)
            what = f"cases ({args.dtype}, {args.format})"
    except ValueError as err:
        print(f"poolspec export: {err}", file=sys.stderr)
        return 2
    print(f"{len(manifest['cases'])} {what} written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["bench"]:
        return bench_main(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "export":
        return export_command(args)
    if args.command == "conformance":
        return conformance_command(args)
    if args.command == "cards" and args.out:
        from .spec import write_pages as write
        from .spec.frontends import write as write_frontends

        paths = (write_frontends if args.frontends else write)(args.out)
        print(f"{len(paths)} pages written to {args.out}")
        return 0
    if args.command == "cards":
        chosen: list[Any] = ([spec.frontend_card(n) for n in args.ops] if args.ops else spec.frontend_cards()) \
            if args.frontends else ([spec.card(n) for n in args.ops] if args.ops else spec.cards())
        json.dump([c.to_dict() for c in chosen], sys.stdout, indent=2)
        print()
        return 0
    return selfcheck(args.backend)



def bench_main(argv: list[str] | None = None) -> int:
    """``poolspec bench``: the ratio suite (``poolspec.bench``) and, by option, the memory, device, model and
    count suites."""
    from . import bench
    from .bench import RUNNERS, environment, memory_suite, plot, run

    parser = argparse.ArgumentParser(prog="poolspec bench", description=(bench.__doc__ or "").splitlines()[0])
    parser.add_argument("--backends", default=None,
                        help="comma-separated: torch,jax,numpy (default: the installed ones), torch-compile")
    parser.add_argument("--repeat", type=int, default=11, help="timed calls per case (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="three cases, no scale sweep")
    parser.add_argument("--no-scale", action="store_true", help="skip the time-vs-size sweep")
    parser.add_argument("--scale-only", action="store_true", help="only the time-vs-size sweep")
    parser.add_argument("--grid-sample-only", action="store_true", help="only the grid_sample suite (torch)")
    parser.add_argument("--memory", action="store_true",
                        help="also the memory suite (poolspec.memory): peak and time per adversarial call, "
                             "torch beside it where installed")
    parser.add_argument("--memory-only", action="store_true", help="only the memory suite")
    parser.add_argument("--device", default=None,
                        help="the device suite instead (poolspec.device_bench): torch on this device (cuda, "
                             "cuda:1, cpu) against its native kernels, with CuPy and JAX columns")
    parser.add_argument("--small", action="store_true", help="with --device: 1/16 of the elements (a CPU check)")
    parser.add_argument("--models", action="store_true",
                        help="only the model suite (poolspec.bench_models): three small models, forward+backward, "
                             "eager and compiled, poolspec's ops against torch's (one thread)")
    parser.add_argument("--counts", action="store_true",
                        help="only the array operations per call (poolspec.bench_counts): aten calls forward and "
                             "forward+backward per op, rank and mode, torch's own op beside them")
    parser.add_argument("--json", default=None, help="write the rows and the environment to this file")
    parser.add_argument("--plot", default=None, help="write the time-vs-size plot to this image file")
    a = parser.parse_args(argv)
    if a.counts:
        from . import bench_counts

        return bench_counts.main(a.json)
    if a.models:
        from . import bench_models

        rows = bench_models.run(repeat=max(20, a.repeat))
        if a.json:
            with open(a.json, "w", encoding="utf-8") as f:
                json.dump({"environment": environment(), "models": rows}, f, indent=1)
        return 0
    if a.device is not None:
        from . import device_bench

        found = device_bench.run(a.device, repeat=max(3, a.repeat), reduced=a.small)
        if a.json:
            with open(a.json, "w", encoding="utf-8") as f:
                json.dump(found, f, indent=1)
        return 0
    wanted = (a.backends.split(",") if a.backends
              else [b for b in RUNNERS if b == "numpy" or (b in ("torch", "jax") and importlib.util.find_spec(b))])
    env = environment()
    print("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    results: dict[str, Any] = {"environment": env} if a.memory_only else run(
        wanted, a.repeat, a.quick, scale=not a.no_scale, cases=not a.scale_only, grid_only=a.grid_sample_only)
    if a.memory or a.memory_only:
        results["memory"] = memory_suite(torch="torch" in wanted and importlib.util.find_spec("torch") is not None,
                                         repeat=max(1, min(a.repeat, 3)))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    if a.plot:
        plot(results, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
