"""Run poolspec's torch 2.13 reference cases against every installed peer implementation and write
``results/<peer>.json`` and ``MATRIX.md``.

    python conformance/run_peers.py                 # every peer installed here or in conformance/.venvs/<peer>
    python conformance/run_peers.py --setup         # first create one venv per peer from requirements/<peer>.txt
    python conformance/run_peers.py --peers onnxruntime,jax --ops avg_pool2d,interpolate
    python conformance/run_peers.py --matrix-only   # rewrite MATRIX.md from the stored results

Each peer runs in its own process (its own venv where one exists), so peers never share an interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))  # `conformance.peers` as a package, whichever directory we are run from


def _python(peer: str) -> str:
    venv = HERE / ".venvs" / peer / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def setup(peer: str) -> None:
    venv = HERE / ".venvs" / peer
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
                    "-e", str(ROOT), "-r", str(HERE / "requirements" / f"{peer}.txt")], check=True)


def run_one(peer: str, ops: list[str] | None, out: Path) -> dict:
    """Run one peer in this interpreter and write its results file."""
    from conformance import peers
    from poolspec.conformance import Implementation, golden, run

    if not peers.installed(peer):
        return {"peer": peer, "installed": False}
    adapter = peers.load(peer)
    # a path peer (peers/_paths.py) runs itself: an op through a compiler or exporter, in the phases the path
    # has, on a sample of the cases (compiling costs seconds per case)
    impl = Implementation(adapter.NAME, lambda op: getattr(adapter, op, None),
                          lambda op: getattr(adapter, op + "_backward", None))
    sampled = None
    if hasattr(adapter, "run"):
        report, sampled = adapter.run(ops)
    else:
        report = run(adapter.BACKEND, ops=ops, implementation=impl)
    by_name = {c.name: c for c in golden.cases(ops)}
    cases = []
    for r in report.results:
        case = by_name[r.name]
        cases.append({"id": r.name, "op": r.op, "dtype": r.dtype, "status": r.status, "flags": list(r.flags),
                      "arguments": {k: golden.encode(v) for k, v in case.arguments.items()},
                      "error": case.error, "problems": r.problems, "notes": r.notes,
                      "max_abs": r.max_abs if r.max_abs != float("inf") else "inf", "max_ulp": r.max_ulp})
    own = sorted(name[:-9] for name in dir(adapter) if name.endswith("_backward"))
    gradients = getattr(adapter, "GRADIENTS", None) or (
        "JAX autodiff, to second order" if adapter.BACKEND == "jax" else
        f"the peer's own ({', '.join(own)})" if own else "none (forward only)")
    data = {"peer": adapter.NAME, "installed": True, "version": adapter.version(), "api": adapter.API,
            "backend": adapter.BACKEND, "gradients": gradients, "findings": getattr(adapter, "FINDINGS", []),
            "python": sys.version.split()[0], "seconds": round(report.seconds, 1),
            "ops": ops, "table": report.table(), "cases": cases,
            **({"path": adapter.PATH, "sample": sampled} if hasattr(adapter, "PATH") else {})}
    write_results(data, out)
    return data


def write_results(data: dict, out: Path) -> None:
    # one line per case: a rerun's diff shows exactly the cases whose outcome changed
    head = json.dumps({k: v for k, v in data.items() if k != "cases"}, indent=1)[:-2]
    body = ",\n".join(json.dumps(c) for c in data["cases"])
    out.write_text(f'{head},\n "cases": [\n{body}\n]}}\n', encoding="utf-8")


def refresh_findings(peer: str) -> None:
    """Rewrite results/<peer>.json's findings from its adapter's FINDINGS, without running it again."""
    from conformance import peers

    out = RESULTS / f"{peer}.json"
    data = json.loads(out.read_text(encoding="utf-8"))
    data["findings"] = getattr(peers.load(peer), "FINDINGS", [])
    write_results(data, out)


def main(argv: list[str] | None = None) -> int:
    from conformance import peers

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", help="comma-separated peers (default: all)")
    parser.add_argument("--ops", help="comma-separated ops (default: all)")
    parser.add_argument("--setup", action="store_true", help="create conformance/.venvs/<peer> first")
    parser.add_argument("--matrix-only", action="store_true", help="only rewrite MATRIX.md from results/")
    parser.add_argument("--refresh-findings", action="store_true",
                        help="only copy each chosen peer's FINDINGS into its results file (no run), then MATRIX.md")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process: run this peer here
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    ops = args.ops.split(",") if args.ops else None
    if args.one:
        data = run_one(args.one, ops, Path(args.out))
        print(data.get("table", f"{args.one}: not installed"))
        return 0 if data["installed"] else 3
    chosen = args.peers.split(",") if args.peers else list(peers.PEERS)
    RESULTS.mkdir(exist_ok=True)
    if args.refresh_findings:
        for peer in chosen:
            refresh_findings(peer)
    elif not args.matrix_only:
        for peer in chosen:
            if args.setup:
                setup(peer)
            start = time.perf_counter()
            out = RESULTS / f"{peer}.json"
            proc = subprocess.run([_python(peer), str(Path(__file__).resolve()), "--one", peer, "--out", str(out)]
                                  + (["--ops", args.ops] if args.ops else []), cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                      filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
            state = {0: "done", 3: "not installed"}.get(proc.returncode, f"crashed (exit {proc.returncode})")
            print(f"{peer}: {state} in {time.perf_counter() - start:.0f} s", flush=True)
    from conformance.matrix import write_matrix

    write_matrix(RESULTS, HERE / "MATRIX.md")
    print(f"wrote {HERE / 'MATRIX.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
