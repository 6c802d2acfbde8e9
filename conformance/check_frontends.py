"""Run the front-ends against the live libraries on thousands of random configurations and write
``results/frontends/<library>.json`` (counts per function: passed, failed, refused by either side).

    python conformance/check_frontends.py --library jax --configs 2000
    python conformance/check_frontends.py --all --configs 2000    # each library in its conformance/.venvs venv

``--configs N`` is per front-end module: TensorFlow's run draws N for ``tf.nn`` and N for ``tf.image``. A function
that a check module names in ``DEDICATED`` (its own generator, for a function the module's mix draws only now and
then: the RoI ops) gets ``--per-function M`` configurations of its own (default: N), and the module's N draws are
then over its other functions (a draw of a dedicated function is drawn again), so adding a function to a module
takes no configurations from the others:

    python conformance/check_frontends.py --library onnxruntime --configs 2000 --per-function 2000

``--only-dedicated`` draws the dedicated functions alone and merges their counts into the stored results (the
other functions' counts kept, each dedicated function's run recorded under ``dedicated_runs``); ``--jax-every K``
runs every K-th dedicated configuration on JAX and the others on NumPy and torch in turn (JAX compiles every op at
every new shape: a second per configuration).

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


def run(library: str, count: int, seed: int, per_function: int | None = None, only_dedicated: bool = False,
        jax_every: int = 1, only: list[str] | None = None, functions: list[str] | None = None) -> dict:
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
    dedicated = getattr(module, "DEDICATED", {})
    if functions:  # --function: these dedicated functions alone
        dedicated = {f: g for f, g in dedicated.items() if f in functions or f.rpartition(".")[2] in functions}
    per_function = count if per_function is None else per_function
    draws = [] if only_dedicated else [(group, False) for group in groups for _ in range(count)]
    draws += [(function, True) for function in dedicated for _ in range(per_function)]
    others = [b for b in backends if b.name != "jax"]
    # a module's SCHEDULE(i) names the backends configuration i runs on (each of them; its status is the first
    # that is not "passed"); by default the backends take turns
    schedule = getattr(module, "SCHEDULE", None)
    by_name = {b.name: b for b in backends}
    seconds: dict[str, float] = defaultdict(float)
    turn = 0  # the dedicated draws' NumPy / torch turns
    for i, (group, own) in enumerate(draws):
        t0 = time.perf_counter()
        config = (dedicated if own else groups)[group](rng)
        while not own and config.function in dedicated:  # counted by its own draws
            config = groups[group](rng)
        chosen = [backends[i % len(backends)]]
        if own and jax_every > 1:
            if i % jax_every == 0 and have.get("jax") is None:
                chosen = [ALL["jax"]]
            else:
                chosen, turn = [others[turn % len(others)]], turn + 1
        elif schedule:
            chosen = [by_name[n] for n in schedule(i) if n in by_name]
        c = counts[config.function]
        c["configs"] += 1
        outcomes = []
        for backend in chosen:
            outcome = check(module, config, backend, rng)
            outcomes.append(outcome)
            c[f"on_{backend.name}"] += 1
            c["gradients_checked"] += outcome.gradient_checked
            if outcome.status != "passed" and len(examples[outcome.status]) < 20:
                examples[outcome.status].append(f"[{backend.name}] {config.describe()}: {outcome.detail}")
        c[next((o.status for o in outcomes if o.status != "passed"), "passed")] += 1
        seconds[config.function] += time.perf_counter() - t0
    if only_dedicated:
        return merge(library, module, {k: dict(v) for k, v in counts.items()}, dict(examples), seed, per_function,
                     jax_every, [b.name for b in backends], seconds)
    return {"library": library, "available": True, "version": module.version(), "seed": seed,
            "configs": len(draws), "configs_per_module": {g: count for g in groups},
            "configs_per_function": {f: per_function for f in dedicated},
            "backends": [b.name for b in backends], "seconds": round(time.perf_counter() - start, 1),
            "functions": {k: dict(v) for k, v in sorted(counts.items())}, "examples": dict(examples)}


def merge(library: str, module: object, functions: dict, examples: dict, seed: int, per_function: int,
          jax_every: int, backends: list[str], seconds: dict[str, float]) -> dict:
    """The stored results with the dedicated functions' counts replaced by this run's (the others kept)."""
    old = json.loads((OUT / f"{library}.json").read_text(encoding="utf-8"))
    if old.get("version") != module.version():  # type: ignore[attr-defined]
        raise SystemExit(f"{library}: the stored results are of {old.get('version')}, not "
                         f"{module.version()}: run every function")  # type: ignore[attr-defined]
    kept = {k: v for k, v in old["functions"].items() if k not in functions}
    runs = {**old.get("dedicated_runs", {})}
    how = ("NumPy, JAX and torch in turn" if jax_every <= 1 else
           f"JAX on one configuration in {jax_every}, NumPy and torch in turn otherwise")
    for f in functions:
        runs[f] = {"seed": seed, "configs": per_function, "backends": how, "seconds": round(seconds[f], 1)}
    old_examples = {k: [e for e in v if not any(f"] {f}(" in e for f in functions)]
                    for k, v in old.get("examples", {}).items()}
    for k, v in examples.items():
        old_examples[k] = (old_examples.get(k, []) + v)[:40]
    merged = {k: v for k, v in sorted({**kept, **functions}.items())}
    return {**old, "configs": sum(v["configs"] for v in merged.values()),
            "configs_per_function": {**old.get("configs_per_function", {}), **{f: per_function for f in functions}},
            "dedicated_runs": runs, "functions": merged, "examples": {k: v for k, v in old_examples.items() if v}}


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


def store_regressions(library: str) -> int:
    """Only the library's REGRESSIONS cases: (re)written, its other stored cases kept as they are."""
    import numpy as np

    from conformance.frontend_checks import load, regressions
    from poolspec.conformance import conventions

    from backends import ALL

    module = load(library)
    if module.available() is not None:
        print(f"{library}: not available ({module.available()})")
        return 1
    entries, arrays = regressions(module, ALL["numpy"])
    folder = ROOT / "src" / "poolspec" / "data" / "conventions"
    ids = {e["id"] for e in entries}
    old = json.loads((folder / conventions.MANIFEST).read_text(encoding="utf-8"))["cases"]
    kept = [c for c in old if c["library"] == library and c["id"] not in ids]
    with np.load(folder / f"{library}.npz", allow_pickle=False) as stored:
        kept_arrays = {k: stored[k] for k in stored.files if k.split("/")[0] not in ids}
    conventions.write(library, kept + entries, {**kept_arrays, **arrays}, folder)
    print(f"{library}: {len(entries)} regression cases stored ({len(kept)} others kept)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", action="append", default=[])
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--configs", type=int, default=2000)
    parser.add_argument("--per-function", type=int, default=None, metavar="M",
                        help="configurations of each function a check module names in DEDICATED (default: --configs)")
    parser.add_argument("--only-dedicated", action="store_true",
                        help="draw only the DEDICATED functions; merge their counts into the stored results")
    parser.add_argument("--jax-every", type=int, default=1, metavar="K",
                        help="dedicated draws: every K-th on JAX, NumPy and torch in turn otherwise (default 1: all "
                             "three in turn)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--here", action="store_true", help="run in this interpreter (no venv switch)")
    parser.add_argument("--group", action="append", default=[], metavar="NAME",
                        help="run only this group of the library's MODULES (repeatable); its counts replace the "
                             "group's in the stored results")
    parser.add_argument("--function", action="append", default=[], metavar="NAME",
                        help="with --only-dedicated: draw only this dedicated function (repeatable; the full path or "
                             "its last part)")
    parser.add_argument("--store", type=int, default=0, metavar="K",
                        help="instead: store K cases per function (the library's outputs and gradients) in "
                             "src/poolspec/data/conventions")
    parser.add_argument("--regressions", action="store_true",
                        help="instead: store only the check modules' REGRESSIONS cases, the other stored cases kept")
    args = parser.parse_args()
    from conformance.frontend_checks import LIBRARIES

    libraries = list(LIBRARIES) if args.all else args.library
    OUT.mkdir(parents=True, exist_ok=True)
    failed = 0
    for library in libraries:
        venv = HERE / ".venvs" / library / "bin" / "python"
        if not args.here and venv.exists() and Path(sys.prefix).resolve() != venv.parent.parent.resolve():
            extra = [] if args.per_function is None else ["--per-function", str(args.per_function)]
            extra += ["--regressions"] if args.regressions else []
            extra += ["--only-dedicated"] if args.only_dedicated else []
            extra += ["--jax-every", str(args.jax_every)]
            extra += [a for f in args.function for a in ("--function", f)]
            failed += subprocess.call([str(venv), __file__, "--here", "--library", library, "--configs",
                                       str(args.configs), "--seed", str(args.seed), "--store", str(args.store)]
                                      + extra + [a for g in args.group for a in ("--group", g)]) != 0
            continue
        if args.regressions:
            failed += store_regressions(library) != 0
            continue
        if args.store:
            failed += store(library, args.store, args.seed) != 0
            continue
        result = run(library, args.configs, args.seed, args.per_function, args.only_dedicated, args.jax_every,
                     args.group, args.function)
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
