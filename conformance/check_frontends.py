"""Run the front-ends against the live libraries on thousands of random configurations and write
``results/frontends/<library>.json`` (counts per function: passed, failed, refused by either side).

    python conformance/check_frontends.py --library jax --configs 2000
    python conformance/check_frontends.py --all --configs 2000    # each library in its conformance/.venvs venv

``--configs N`` is per front-end module: TensorFlow's run draws N for ``tf.nn`` and N for ``tf.image``.

The libraries without a venv here run in this interpreter. Backends: NumPy always (forward), JAX and torch where
installed (forward and, where the library has them, gradients).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "results" / "frontends"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def run(library: str, count: int, seed: int, only: list[str] | None = None) -> dict:
    import numpy as np

    from conformance.frontend_checks import check, load

    from backends import ALL, available

    module = load(library)
    reason = module.available()
    if reason is not None:
        return {"library": library, "available": False, "reason": reason}
    have = available()
    if have.get("jax") is None:
        import jax

        jax.config.update("jax_enable_x64", True)
    backends = [ALL[b] for b in ("numpy", "jax", "torch") if have.get(b) is None]
    rng = np.random.default_rng(seed)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    examples: dict[str, list[str]] = defaultdict(list)
    start = time.perf_counter()
    # A library with several front-end modules (tf.nn and tf.image, say) gets `count` configurations for each.
    groups = getattr(module, "MODULES", {library: module.config})
    if only:
        groups = {g: f for g, f in groups.items() if g in only}
    draws = [(group, i) for group in groups for i in range(count)]
    # a module's SCHEDULE(i) names the backends configuration i runs on (each of them; its status is the first
    # that is not "passed"); by default the backends take turns
    schedule = getattr(module, "SCHEDULE", None)
    by_name = {b.name: b for b in backends}
    for i, (group, _) in enumerate(draws):
        config = groups[group](rng)
        chosen = [by_name[n] for n in schedule(i) if n in by_name] if schedule else [backends[i % len(backends)]]
        c = counts[config.function]
        c["configs"] += 1
        outcomes = []
        for backend in chosen:
            outcome = check(module, config, backend, rng)
            outcomes.append(outcome)
            if schedule:
                c[f"on_{backend.name}"] += 1
            c["gradients_checked"] += outcome.gradient_checked
            if outcome.status != "passed" and len(examples[outcome.status]) < 20:
                examples[outcome.status].append(f"[{backend.name}] {config.describe()}: {outcome.detail}")
        c[next((o.status for o in outcomes if o.status != "passed"), "passed")] += 1
    return {"library": library, "available": True, "version": module.version(), "seed": seed,
            "configs": len(draws), "configs_per_module": {g: count for g in groups},
            "backends": [b.name for b in backends], "seconds": round(time.perf_counter() - start, 1),
            "functions": {k: dict(v) for k, v in sorted(counts.items())}, "examples": dict(examples)}


def _merged(path: Path, result: dict) -> dict:
    """A run of some groups (--group) merged into the library's stored results: its functions replace theirs, the
    counts are summed, and each run is listed with its groups, seed and time."""
    if not path.exists() or not result.get("available"):
        return result
    old = json.loads(path.read_text())
    if not old.get("available") or old.get("version") != result["version"]:
        return result
    runs = old.get("runs") or [{"groups": sorted(old["configs_per_module"]), "seed": old["seed"],
                                "seconds": old["seconds"]}]
    runs = [r for r in runs if not set(r["groups"]) <= set(result["configs_per_module"])]
    runs.append({"groups": sorted(result["configs_per_module"]), "seed": result["seed"],
                 "seconds": result["seconds"]})
    per_module = {g: n for g, n in old["configs_per_module"].items() if g not in result["configs_per_module"]}
    per_module |= result["configs_per_module"]
    functions = {k: v for k, v in old["functions"].items() if k not in result["functions"]} | result["functions"]
    examples = dict(old.get("examples", {}))
    for status, lines in result.get("examples", {}).items():
        examples[status] = (lines + examples.get(status, []))[:20]
    return {**result, "configs": sum(per_module.values()), "configs_per_module": dict(sorted(per_module.items())),
            "seconds": round(sum(r["seconds"] for r in runs), 1), "runs": runs,
            "functions": dict(sorted(functions.items())), "examples": examples}


def store(library: str, per_function: int, seed: int) -> int:
    from conformance.frontend_checks import load
    from conformance.frontend_checks import store as make
    from poolspec.conformance import conventions

    from backends import ALL

    module = load(library)
    if module.available() is not None:
        print(f"{library}: not available ({module.available()})")
        return 1
    entries, arrays, counts = make(module, per_function, seed, ALL["numpy"])
    conventions.write(library, entries, arrays, ROOT / "src" / "poolspec" / "data" / "conventions")
    print(f"{library}: {len(entries)} cases stored ({dict(counts)})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", action="append", default=[])
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--configs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--here", action="store_true", help="run in this interpreter (no venv switch)")
    parser.add_argument("--group", action="append", default=[], metavar="NAME",
                        help="run only this group of the library's MODULES (repeatable); its counts replace the "
                             "group's in the stored results")
    parser.add_argument("--store", type=int, default=0, metavar="K",
                        help="instead: store K cases per function (the library's outputs and gradients) in "
                             "src/poolspec/data/conventions")
    args = parser.parse_args()
    from conformance.frontend_checks import LIBRARIES

    libraries = list(LIBRARIES) if args.all else args.library
    OUT.mkdir(parents=True, exist_ok=True)
    failed = 0
    for library in libraries:
        venv = HERE / ".venvs" / library / "bin" / "python"
        if not args.here and venv.exists() and Path(sys.prefix).resolve() != venv.parent.parent.resolve():
            failed += subprocess.call([str(venv), __file__, "--here", "--library", library, "--configs",
                                       str(args.configs), "--seed", str(args.seed), "--store", str(args.store)]
                                      + [a for g in args.group for a in ("--group", g)]) != 0
            continue
        if args.store:
            failed += store(library, args.store, args.seed) != 0
            continue
        result = run(library, args.configs, args.seed, args.group)
        if args.group:
            result = _merged(OUT / f"{library}.json", result)
        (OUT / f"{library}.json").write_text(json.dumps(result, indent=1) + "\n")
        bad = sum(v.get("failed", 0) + v.get("poolspec_refuses", 0) for v in result.get("functions", {}).values())
        print(f"{library}: {result.get('configs', 0)} configurations, {bad} failed"
              + ("" if result["available"] else f" (not available: {result['reason']})"))
        failed += bad > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
