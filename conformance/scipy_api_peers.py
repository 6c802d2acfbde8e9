"""Other implementations of SciPy's own ``scipy.ndimage`` API against live SciPy: ``jax.scipy.ndimage`` and
``cupyx.scipy.ndimage`` on the random configurations that check poolspec's SciPy front-end
(``conformance/frontend_checks/scipy.py``), SciPy computing every reference.

    python conformance/scipy_api_peers.py --configs 2000          # every peer installed here
    python conformance/scipy_api_peers.py --peer jax.scipy.ndimage --configs 2000

A configuration a peer cannot express with the same meaning (a mode it lacks or names differently, an order it
does not have, an ``output`` dtype it has no argument for) is *not expressible*, never approximated. Each peer's
failures are attributed to the rules in ``FINDINGS`` (each with the configurations it concerns, so a rule states
how many of those fail); failures no rule explains are listed apart. Results go to
``conformance/results/scipy_api/<peer>.json``; ``conformance/matrix.py`` renders them in MATRIX.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
OUT = HERE / "results" / "scipy_api"


@dataclass(frozen=True)
class Finding:
    """A rule by which a peer differs from SciPy: ``scope(config)`` says whether a configuration is one the rule
    concerns (the rule then claims its failures)."""

    rule: str
    scope: Callable[[Any], bool]
    upstream: str = "new"


def _half_integer(config: Any) -> bool:
    c = np.asarray(config.arrays["coordinates"], dtype=np.float64)
    return bool(np.any(np.abs(c - np.floor(c)) == 0.5))


class JaxScipy:
    """``jax.scipy.ndimage.map_coordinates``: orders 0 and 1; its 'constant' and 'wrap' are SciPy's
    'grid-constant' and 'grid-wrap', and it has no mode for SciPy's 'constant' and 'wrap'."""

    name = "jax.scipy.ndimage"
    functions = ("map_coordinates",)
    modes = {"nearest": "nearest", "mirror": "mirror", "reflect": "reflect", "grid-mirror": "reflect",
             "grid-wrap": "wrap", "grid-constant": "constant"}
    arrays = "jax (CPU, float64 enabled)"
    findings = (
        Finding("order 0 rounds the coordinate half away from zero and then folds the cell index into the array "
                "by the mode, where SciPy folds the coordinate first and then rounds half up (floor(x + 0.5)): "
                "they read different cells at coordinates exactly halfway between two cells outside the array "
                "(every mode but 'nearest') and at negative half-integers: "
                "`jax.scipy.ndimage.map_coordinates(jnp.arange(7.), [jnp.array([7.5])], 0, mode='reflect')` is 5.0, "
                "`scipy.ndimage.map_coordinates(np.arange(7.), [[7.5]], order=0, mode='reflect')` 6.0",
                lambda c: c.options.get("order", 3) == 0 and _half_integer(c)),
        Finding("the interpolation runs in the coordinates' dtype: float32 coordinates give float32 weights and sums "
                "(errors about 1e-8 of the values), where SciPy converts the coordinates to double",
                lambda c: c.options.get("order", 3) == 1 and c.arrays["coordinates"].dtype == np.float32),
    )

    @staticmethod
    def available() -> str | None:
        try:
            import jax.scipy.ndimage  # noqa: F401
        except ImportError:
            return "jax is not installed"
        return None

    @staticmethod
    def version() -> str:
        import jax

        return f"jax {jax.__version__}"

    def express(self, function: str, config: Any) -> Callable[[], np.ndarray] | str:
        if function != "map_coordinates":
            return "no such function"
        o = config.options
        order = o.get("order", 3)
        if order > 1:
            return "order > 1 (jax#3928)"
        mode = self.modes.get(o.get("mode", "constant"))
        if mode is None:
            return f"no mode with the meaning of SciPy's {o.get('mode', 'constant')!r}"
        if o.get("output") is not None:
            return "no output dtype argument"
        x, coords = config.arrays["input"], config.arrays["coordinates"]
        if x.ndim != coords.shape[0] or x.dtype.kind not in "f":
            return "input dtype or coordinate shape SciPy alone accepts"
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        from jax.scipy import ndimage

        def call() -> np.ndarray:
            return np.asarray(ndimage.map_coordinates(jnp.asarray(x), [jnp.asarray(c) for c in coords], order,
                                                      mode=mode, cval=o.get("cval", 0.0)))

        return call


class CupyxScipy:
    """``cupyx.scipy.ndimage``: SciPy's names and arguments, on a CUDA GPU."""

    name = "cupyx.scipy.ndimage"
    functions = ("map_coordinates", "affine_transform", "zoom", "shift", "rotate", "spline_filter",
                 "spline_filter1d", "uniform_filter", "uniform_filter1d", "maximum_filter", "maximum_filter1d",
                 "minimum_filter", "minimum_filter1d")
    arrays = "cupy (CUDA)"
    findings = ()

    @staticmethod
    def available() -> str | None:
        try:
            import cupy
        except ImportError:
            return "cupy is not installed here (it needs a CUDA GPU; benchmarks/gpu_check.py runs this peer)"
        try:
            cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            return f"no CUDA GPU ({type(e).__name__})"
        return None

    @staticmethod
    def version() -> str:
        import cupy

        return f"cupy {cupy.__version__}"

    def express(self, function: str, config: Any) -> Callable[[], np.ndarray] | str:
        if function not in self.functions:
            return "no such function"
        import cupy
        from cupyx.scipy import ndimage

        def call() -> np.ndarray:
            arrays = [cupy.asarray(a) for a in config.arrays.values()]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cupy.asnumpy(getattr(ndimage, function)(*arrays, **config.options))

        return call


PEERS = {p.name: p for p in (JaxScipy(), CupyxScipy())}


def _reproducer(peer: str, config: Any) -> str:
    """The call as a line of Python (arrays of more than 12 values by shape and dtype)."""
    arrays = ", ".join(f"{k}=np.array({v.tolist()!r})" if v.size <= 12 else f"{k}=<{v.dtype} {v.shape}>"
                       for k, v in ((k, np.asarray(v)) for k, v in config.arrays.items()))
    return f"{peer}.{config.function.rpartition('.')[2]}({arrays}, **{config.options!r})"


def run(peer_name: str, count: int, seed: int) -> dict[str, Any]:
    from conformance.frontend_checks import Refused, close
    from conformance.frontend_checks import scipy as checks

    peer = PEERS[peer_name]
    reason = peer.available()
    if reason is not None:
        return {"peer": peer.name, "installed": False, "reason": reason}
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    functions: dict[str, Counter[str]] = {}
    failures: list[dict[str, Any]] = []
    scopes = Counter[int]()
    for function in peer.functions:
        key = f"scipy.ndimage.{function}"
        if key not in checks.DEDICATED:
            continue
        tally = functions.setdefault(function, Counter())
        for _ in range(count):
            config = checks.DEDICATED[key](rng)
            try:
                (want,), _ = checks.library(config, None)
            except Refused:
                tally["refused by SciPy"] += 1
                continue
            call = peer.express(function, config)
            if isinstance(call, str):
                tally[f"not expressible: {call}"] += 1
                continue
            for i, f in enumerate(peer.findings):
                scopes[i] += f.scope(config)
            try:
                got = call()
            except Exception as e:  # the peer refused a call SciPy answers
                ok, err = False, f"raised {type(e).__name__}: {str(e)[:120]}"
            else:
                ok, worst = close(np.asarray(got), want, config.rtol, config.atol)
                err = "" if ok else f"max abs error {worst:.3g}"
            tally["passed" if ok else "failed"] += 1
            if not ok:
                claimed = [i for i, f in enumerate(peer.findings) if f.scope(config)]
                failures.append({"function": function, "finding": claimed[0] if claimed else None, "error": err,
                                 "reproducer": _reproducer(peer.name, config)})
    findings = []
    for i, f in enumerate(peer.findings):
        mine = [x for x in failures if x["finding"] == i]
        findings.append({"rule": f.rule, "upstream": f.upstream, "scope": scopes[i], "failing": len(mine),
                         "examples": [x["reproducer"] for x in mine[:2]]})
    return {"peer": peer.name, "installed": True, "version": peer.version(), "arrays": peer.arrays,
            "configs": count, "seed": seed, "seconds": round(time.perf_counter() - start, 1),
            "functions": {k: dict(v) for k, v in functions.items()}, "findings": findings,
            "unexplained": [x for x in failures if x["finding"] is None][:20],
            "unexplained_count": sum(x["finding"] is None for x in failures)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", choices=sorted(PEERS), action="append")
    parser.add_argument("--configs", type=int, default=2000, help="configurations per function")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.peer or sorted(PEERS):
        result = run(name, args.configs, args.seed)
        (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(name, json.dumps({k: result.get(k) for k in ("installed", "reason", "functions", "seconds")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
