"""MATRIX.md from ``results/<peer>.json``: per op and peer the cases passed / failed / not expressible and the
largest error, and per peer its findings (the adapter's FINDINGS, each with how many of the cases carrying its
flags fail) and the failures no finding explains, with the flags they share."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

# a problem's leading word names the check that failed
_CHECK = re.compile(r"^(output|indices|grad_\w+|two runs|an input|accepted a call|raised \w+|not expressible)")
_BOOK = ("random", "float64", "float32", "float16", "bfloat16", "int64", "int32", "uint8")  # not rules


@lru_cache(maxsize=1)
def deviations() -> dict[str, dict[str, Any]]:
    """poolspec's documented deviations from torch, by id (a flag of the cases where they apply)."""
    from importlib import resources

    text = resources.files("poolspec").joinpath("data/deviations.json").read_text(encoding="utf-8")
    return {d["id"]: d for d in json.loads(text)["deviations"]}


def at_deviation(finding: dict[str, Any]) -> bool:
    """Whether a finding is scoped by one of poolspec's deviations (a rule of its own where torch's is unsafe or
    inconsistent): the peer's failures there may agree with torch."""
    return any(f in deviations() for f in finding.get("flags", []))


@lru_cache(maxsize=1)
def _nan_inputs() -> frozenset[str]:
    """The cases whose stored input holds NaN (data the catalogue's flags do not name)."""
    from poolspec.conformance import golden

    return frozenset(c.name for c in golden.cases()
                     if (x := c.arrays()["input"]).dtype.kind == "f" and bool(np.isnan(x).any()))


def nan_input(case_id: str) -> bool:
    return case_id in _nan_inputs()


def failed_checks(case: dict[str, Any]) -> set[str]:
    out = set()
    for p in case["problems"]:
        m = _CHECK.match(p)
        word = m.group(1) if m else "other"
        out.add("raises" if word == "accepted a call" else "crash" if word.startswith("raised") else word)
    return out


def _offered(case: dict[str, Any]) -> bool:
    """False where the peer lacks the op ("<peer> has no <op>"), as opposed to a dtype its arrays lack."""
    return not (case["status"] == "skip" and any(p.endswith(f" has no {case['op']}") for p in case["problems"]))


def _matches(finding: dict[str, Any], case: dict[str, Any]) -> bool:
    if case["op"] not in finding["ops"] or not set(finding.get("flags", [])) <= set(case["flags"]):
        return False
    if finding.get("dtypes") and case["dtype"] not in finding["dtypes"]:
        return False
    return not finding.get("checks") or bool(failed_checks(case) & set(finding["checks"]))


def _where(finding: dict[str, Any]) -> str:
    parts = [f"`{', '.join(finding['ops'])}`"]
    if finding.get("flags"):
        parts.append("flagged " + " + ".join(f"`{f}`" for f in finding["flags"]))
    if finding.get("dtypes"):
        parts.append("in " + "/".join(finding["dtypes"]))
    return " ".join(parts)


def _where_all(fs: list[dict[str, Any]]) -> str:
    """The scopes of one rule's findings: the ops once where they share them, the flag sets as alternatives."""
    if len({tuple(f["ops"]) for f in fs}) > 1 or len({tuple(f.get("dtypes") or ()) for f in fs}) > 1:
        return "; or ".join(_where(f) for f in fs)
    sets = [" + ".join(f"`{x}`" for x in f.get("flags", [])) for f in fs]
    head = _where({**fs[0], "flags": []})
    return head if not any(sets) else head.replace(f"`{', '.join(fs[0]['ops'])}`",
                                                   f"`{', '.join(fs[0]['ops'])}` flagged " + " or ".join(sets), 1)


def analyse(data: dict[str, Any]) -> dict[str, Any]:
    """Attribute each failing case to the first finding it matches; count, per finding, the expressible cases
    with its ops/flags/dtypes and how many of them fail."""
    cases = data["cases"]
    failing = [c for c in cases if c["status"] == "fail"]
    expressible = [c for c in cases if c["status"] in ("pass", "fail")]
    findings = []
    claimed: set[str] = set()
    deviant: set[str] = set()
    for f in data.get("findings", []):
        scope = dict(f, checks=None)
        mine = [c for c in failing if c["id"] not in claimed and _matches(f, c)]
        claimed |= {c["id"] for c in mine}
        if at_deviation(f):
            deviant |= {c["id"] for c in mine}
        within = [c for c in expressible if _matches(scope, c)]
        findings.append({**f, "failing": len(mine), "scope": len(within),
                         "scope_failing": sum(c["status"] == "fail" for c in within),
                         "examples": [c["id"] for c in mine[:3]],
                         "nan_failing": sum(nan_input(c["id"]) for c in mine),
                         "nan_scope": sum(nan_input(c["id"]) for c in within),
                         "nan_scope_failing": sum(nan_input(c["id"]) and c["status"] == "fail" for c in within)})
    rest = [c for c in failing if c["id"] not in claimed]
    return {"findings": findings, "unexplained": rest, "deviant": deviant}


def _shared(cases: list[dict[str, Any]], population: list[dict[str, Any]]) -> str:
    """The rule flags every one of ``cases`` carries, and flags on which every expressible case of the op fails."""
    if not cases:
        return ""
    common = set.intersection(*(set(c["flags"]) for c in cases)) - set(_BOOK)
    counts = Counter(f for c in cases for f in c["flags"] if f not in _BOOK)
    exact = [f for f, n in counts.items() if n == sum(f in c["flags"] for c in population)]
    text = []
    if common:
        text.append("all carry " + ", ".join(f"`{f}`" for f in sorted(common)))
    if exact:
        text.append("every expressible case flagged " + ", ".join(f"`{f}`" for f in sorted(exact)) + " fails")
    return "; ".join(text) or "no flag in common"


def _link(url: str) -> str:
    """``owner/repo#N`` for a GitHub issue or pull request; "new (no upstream report found)" for new."""
    if url == "new":
        return "new (no upstream report found)"
    m = re.match(r"https://github.com/([^/]+)/([^/]+)/(?:issues|pull)/(\d+)", url)
    return f"[{m[1]}/{m[2]}#{m[3]}]({url})" if m else url


def _err(value: Any) -> str:
    return "inf" if value == "inf" else f"{float(value):.2g}" if value else "0"


def write_matrix(results: Path, out: Path) -> None:
    peers = []
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("installed"):
            peers.append(data)
    ops = list(dict.fromkeys(c["op"] for p in peers for c in p["cases"]))
    lines = ["# Conformance matrix: existing pooling and resampling implementations against torch 2.13",
             "",
             "Generated by `python conformance/run_peers.py` from `conformance/results/<peer>.json`; do not edit.",
             "Each peer runs poolspec's stored torch 2.13 reference cases through an adapter that maps the torch-style",
             "call onto the peer's own API only where the peer's call has the same semantics; anything else is *not",
             "expressible* (n/e), never approximated. A case passes when the forward (and, where the peer has",
             "gradients, the gradients and second order) match torch within the case's tolerance",
             "(float64: rtol 1e-12).",
             "",
             "The column *own convention* is the other direction: poolspec's front-end for the library",
             "(`poolspec.frontends`, the library's own signatures, layouts and rules) against the live library on",
             "random configurations (`conformance/check_frontends.py`, section at the end).",
             "",
             "| peer | version | API | arrays | gradients | cases run | time | own convention |",
             "|---|---|---|---|---|---|---|---|"]
    own = _own_conventions(results / "frontends")
    for p in peers:
        ran = sum(c["status"] in ("pass", "fail") for c in p["cases"])
        lines.append(f"| {p['peer']} | {p['version']} | {p['api']} | {p['backend']} | {p['gradients']} |"
                     f" {ran} | {p['seconds']:.0f} s | {_own_cell(own.get(p['peer']))} |")
    lines += ["", "## Passed / failed / not expressible, per op", "",
              "`—`: the peer has no such op. Cases a peer's array library cannot hold (bfloat16 on NumPy) are left",
              "out. `(+k dev)`: k more failures in cases whose reference is one of poolspec's documented",
              "deviations from torch (`src/poolspec/data/deviations.json`: a call poolspec refuses where torch's",
              "answer is unsafe, or a gradient made consistent with its forward); there the peer may agree with torch.",
              "", "| op | " + " | ".join(p["peer"] for p in peers) + " |",
              "|---|" + "---|" * len(peers)]
    analysed = {p["peer"]: analyse(p) for p in peers}
    for op in ops:
        cells = []
        for p in peers:
            mine = [c for c in p["cases"] if c["op"] == op]
            if not any(_offered(c) for c in mine):
                cells.append("—")
                continue
            n = Counter(c["status"] for c in mine)
            dev = sum(c["id"] in analysed[p["peer"]]["deviant"] for c in mine)
            fail = f"{n['fail'] - dev}" + (f" (+{dev} dev)" if dev else "")
            cells.append(f"{n['pass']} / {fail} / {n['inexpressible']}")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    lines += _paths_section([p for p in peers if p.get("path")], analysed)
    lines += _known_bugs_section(peers)
    for p in peers:
        lines += _peer_section(p, analysed[p["peer"]])
    lines += _own_section(own)
    lines += _scipy_api_section(results / "scipy_api")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


_OUTCOMES = ("passed", "both_refuse", "library_refuses", "poolspec_refuses", "failed")


def _own_conventions(folder: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("available"):
            found[data["library"]] = data
    return found


def _own_cell(data: dict[str, Any] | None) -> str:
    if data is None:
        return "—"
    total = Counter[str]()
    for counts in data["functions"].values():
        total.update({k: v for k, v in counts.items() if k in _OUTCOMES})
    # a call the library alone refuses is counted apart: a library's own failure (onnxruntime's overflow on a
    # negative RoiAlign sample grid), no value to compare
    bad = total["failed"] + total["poolspec_refuses"]
    alone = f", {total['library_refuses']} refused by the library alone" if total["library_refuses"] else ""
    return (f"{data['configs']} configs, {bad} differ ({total['passed']} pass, {total['both_refuse']} refused by "
            f"both{alone})")


def _own_section(own: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["", "## Under its own convention: poolspec's front-ends against the live libraries", "",
             "Random configurations over each function's whole argument space (`python conformance/check_frontends.py"
             " --all --configs 2000`, each library in its venv; the RoI functions, which a module's mix draws rarely,"
             " 2,000 of their own each: `--per-function 2000`). *both refuse*: the library raises and so does the "
             "front-end (with a message naming the argument). Gradients: poolspec's through torch or JAX autodiff "
             "against the library's own, where it has them. Forward on NumPy, JAX and torch in turn (torchvision: "
             "every configuration on torch, with its input gradient, and on NumPy, every tenth on JAX too).", "",
             "| library | function | configs | passed | both refuse | library refuses | poolspec refuses | failed | "
             "gradients checked |", "|---|---|---|---|---|---|---|---|---|"]
    for data in own.values():
        for fn, c in data["functions"].items():
            lines.append(f"| {data['version']} | `poolspec.frontends.{fn}` | {c.get('configs', 0)} | "
                         + " | ".join(str(c.get(k, 0)) for k in _OUTCOMES) + f" | {c.get('gradients_checked', 0)} |")
    runs = [(data["library"], fn, r) for data in own.values() for fn, r in data.get("dedicated_runs", {}).items()]
    if runs:
        lines += ["", "Functions with configurations of their own (`--per-function`, merged into the library's "
                  "results by `--only-dedicated`):", ""]
        lines += [f"- `{fn}` against {library}: {r['configs']} configurations (seed {r['seed']}), {r['backends']}."
                  for library, fn, r in runs]
    return lines


def _paths_section(paths: list[dict[str, Any]], analysed: dict[str, dict[str, Any]]) -> list[str]:
    """The path peers: a framework's own ops through a compiler or exporter (``poolspec.conformance.paths``), so
    that a failure is the path's, not the kernel's."""
    if not paths:
        return []
    lines = ["", "## Paths", "",
             "A path peer runs a framework's own ops through the path a model takes to a kernel: a compiler",
             "(torch.compile's inductor, static and `dynamic=True`; `jax.jit`) or an exporter and runtime",
             "(torch.export + torch.onnx.export(dynamo=True) into onnxruntime). The torch paths run",
             "`torch.nn.functional`, whose eager call gives the reference, on a sample drawn from the cases that",
             "eager call passes, so every failure is the path's own; `jax-jit` runs the jax peer's functions,",
             "whose eager row is beside it. Compiling costs seconds per case, hence the samples (each peer's",
             "section says which). The same paths wrap any implementation: `pytest --pyargs",
             "poolspec.conformance.test_suite --poolspec-path compile` (or `compile-dynamic`, `export-ort`, `jit`),",
             "`poolspec conformance --path compile`, `poolspec conformance --peer inductor`.", "",
             "| path peer | path | version | cases run | passed | failed | time | findings |",
             "|---|---|---|---|---|---|---|---|"]
    for p in paths:
        n = Counter(c["status"] for c in p["cases"])
        found = sum(1 for f in analysed[p["peer"]]["findings"] if f["failing"])
        lines.append(f"| {p['peer']} | `{p['path']}` | {p['version']} | {n['pass'] + n['fail']} | {n['pass']} | "
                     f"{n['fail']} | {p['seconds']:.0f} s | {found} |")
    return lines


def _known_bugs_section(peers: list[dict[str, Any]]) -> list[str]:
    """Per known bug class (``poolspec.conformance.known_bugs``), how many of its cases each peer fails: a
    failure there reproduces the class's rule, though a case can also fail for a rule of the peer's own (the
    findings say which)."""
    from poolspec.conformance import known_bugs

    hit = {p["peer"]: {b.id: n for b, n in known_bugs.hits(c["id"] for c in p["cases"] if c["status"] == "fail")}
           for p in peers}
    shown = [p for p in peers if hit[p["peer"]]]
    if not shown:
        return []
    lines = ["", "## Known bug classes hit", "",
             "Per known bug class (conformance/README.md, *Known bug classes*): the class's cases each peer fails,",
             "of those it ran. A case can fail for a rule of the peer's own as well: the peer's findings say which.",
             "", "| class | upstream | " + " | ".join(p["peer"] for p in shown) + " |",
             "|---|---|" + "---|" * len(shown)]
    for bug in known_bugs.classes():
        cells = []
        for p in shown:
            ran = {c["id"] for c in p["cases"] if c["status"] in ("pass", "fail")}
            total = len(known_bugs.cases_among(bug, ran))
            n = hit[p["peer"]].get(bug.id, 0)
            cells.append(f"**{n} / {total}**" if n else (f"0 / {total}" if total else "—"))
        lines.append(f"| `{bug.id}` | {', '.join(_link(u) for u in bug.upstream)} | " + " | ".join(cells) + " |")
    return lines


def _peer_section(p: dict[str, Any], result: dict[str, Any]) -> list[str]:
    lines = ["", f"## {p['peer']}", "", f"{p['version']}. API: {p['api']}. Arrays: {p['backend']}; gradients: "
             f"{p['gradients']}.", *([f"Sample: {p['sample']}.", ""] if p.get("sample") else [""]),
             "| op | passed | failed | not expressible | largest error (passed) | largest error (failed) |",
             "|---|---|---|---|---|---|"]
    by_op: dict[str, list[dict[str, Any]]] = {}
    for c in p["cases"]:
        by_op.setdefault(c["op"], []).append(c)
    for op, mine in by_op.items():
        if not any(_offered(c) for c in mine):
            continue
        n = Counter(c["status"] for c in mine)
        ok = max([c["max_abs"] for c in mine if c["status"] == "pass"] or [0], key=lambda v: float(v))
        bad = max([c["max_abs"] for c in mine if c["status"] == "fail"] or [0], key=lambda v: float(v))
        lines.append(f"| {op} | {n['pass']} | {n['fail']} | {n['inexpressible']} | {_err(ok)} | "
                     f"{_err(bad) if n['fail'] else ''} |")
    if result["findings"]:
        lines += ["", "Findings:", ""]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}  # one bullet per rule, however many flag sets
    for f in result["findings"]:
        groups.setdefault((f["rule"], f["upstream"]), []).append(f)
    for (text, link), fs in groups.items():
        total, failing = sum(f["scope"] for f in fs), sum(f["scope_failing"] for f in fs)
        scope = (f"all {total} expressible cases" if failing == total
                 else f"{failing} of the {total} expressible cases")
        rule = text.rstrip() + ("" if text.rstrip().endswith(".") else ".")
        dev = [d for f in fs for d in f.get("flags", []) if d in deviations()]
        if dev:
            rule += (f" This is a case of poolspec's deviation `{dev[0]}` (torch: {deviations()[dev[0]]['torch']};"
                     f" poolspec: {deviations()[dev[0]]['poolspec']}).")
        upstream = "none needed (a poolspec deviation)" if dev and link == "new" else _link(link)
        examples = [e for f in fs for e in f["examples"]][:3]
        nan = ""
        # NaN is in the data, not in a flag: say how far it explains the finding
        if "NaN" in text and sum(f["nan_scope"] for f in fs):
            nan = (f" NaN in the input: {sum(f['nan_scope'] for f in fs)} of these cases, "
                   f"{sum(f['nan_scope_failing'] for f in fs)} of them failing; {sum(f['nan_failing'] for f in fs)}"
                   f" of the attributed failures.")
        repro = next((f["repro"] for f in fs if f.get("repro")), None)
        lines.append(f"- **{_where_all(fs)}**: {rule} Fails {scope} "
                     f"({sum(f['failing'] for f in fs)} attributed here; e.g. {', '.join(examples) or 'none'}).{nan} "
                     f"Upstream: {upstream}." + (f" Reproducer: `{repro}`" if repro else ""))
    if result["unexplained"]:
        lines += ["", f"Failures no finding explains ({len(result['unexplained'])}):", ""]
        by: dict[str, list[dict[str, Any]]] = {}
        for c in result["unexplained"]:
            by.setdefault(c["op"], []).append(c)
        for op, mine in by.items():
            population = [c for c in p["cases"] if c["op"] == op and c["status"] in ("pass", "fail")]
            checks = sorted(set().union(*(failed_checks(c) for c in mine)))
            lines.append(f"- `{op}`: {len(mine)} cases ({', '.join(c['id'] for c in mine[:4])}"
                         f"{', ...' if len(mine) > 4 else ''}), failing {', '.join(checks)}; "
                         f"{_shared(mine, population)}.")
    return lines


def _scipy_api_section(folder: Path) -> list[str]:
    """Other implementations of SciPy's own API (``conformance/scipy_api_peers.py``) against live SciPy."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))] if folder.exists() else []
    if not runs:
        return []
    lines = ["", "## SciPy's ndimage API: other implementations against SciPy", "",
             "`python conformance/scipy_api_peers.py --configs 2000`: each peer's function of the same name on the "
             "random configurations of poolspec's SciPy front-end check, SciPy 1.17.1 computing every reference "
             "(float64 rtol 1e-10, float32 rtol 1e-5, integers exact). *n/e*: configurations the peer cannot express "
             "with SciPy's meaning (counted by reason), never approximated.", "",
             "| peer | function | passed | failed | refused by SciPy | not expressible |", "|---|---|---|---|---|---|"]
    notes: list[str] = []
    for r in runs:
        if not r.get("installed"):
            notes.append(f"- **{r['peer']}**: not run: {r['reason']}.")
            continue
        for fn, c in r["functions"].items():
            ne = {k.removeprefix("not expressible: "): v for k, v in c.items() if k.startswith("not expressible")}
            lines.append(f"| {r['version']} ({r['peer']}) | `{fn}` | {c.get('passed', 0)} | {c.get('failed', 0)} | "
                         f"{c.get('refused by SciPy', 0)} | {sum(ne.values())}"
                         + (f" ({'; '.join(f'{k}: {v}' for k, v in ne.items())})" if ne else "") + " |")
        for f in r["findings"]:
            if f["scope"]:
                eg = f"; e.g. `{f['examples'][0]}`" if f["examples"] else ""
                notes.append(f"- **{r['peer']}**: {f['rule']}. Fails {f['failing']} of the {f['scope']} configurations "
                             f"it concerns{eg}. Upstream: {_link(f['upstream'])}.")
        if r["unexplained_count"]:
            notes.append(f"- **{r['peer']}**: {r['unexplained_count']} failures no rule explains, e.g. "
                         f"`{r['unexplained'][0]['reproducer']}` ({r['unexplained'][0]['error']}).")
    return lines + ([""] + notes if notes else [])
