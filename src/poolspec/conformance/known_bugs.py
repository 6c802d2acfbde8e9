"""Known upstream bug classes as stored cases (``poolspec/data/known_bugs.json``): each class names the upstream
issues, the torch rule the buggy implementations break, and the reference cases that catch it, so a failing run
can say "you have bug class X, see Y".

>>> classes()[0].id
'export-avg-pool-ceil-count-include-pad'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class KnownBug:
    id: str
    title: str
    upstream: tuple[str, ...]
    rule: str
    ops: tuple[str, ...]
    cases: tuple[str, ...]  # case keys (``runner.case_key``: ``avg_pool2d-g018-float32``)


@lru_cache(maxsize=1)
def classes() -> tuple[KnownBug, ...]:
    """The catalogue's classes, in its order."""
    text = resources.files("poolspec").joinpath("data/known_bugs.json").read_text(encoding="utf-8")
    return tuple(KnownBug(c["id"], c["title"], tuple(c["upstream"]), c["rule"], tuple(c["ops"]), tuple(c["cases"]))
                 for c in json.loads(text)["classes"])


@lru_cache(maxsize=1)
def _by_case() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for c in classes():
        for key in c.cases:
            out.setdefault(key, []).append(c.id)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def _keys_by_name() -> dict[str, str]:
    from . import golden
    from .golden import case_key

    return {c.name: case_key(c) for c in golden.cases()}


def hits(failed: Iterable[str]) -> list[tuple[KnownBug, int]]:
    """The classes whose cases are among ``failed`` (case keys, or the stored case names), with how many of each
    class's cases failed, in catalogue order."""
    names = _keys_by_name()
    count: dict[str, int] = {}
    for f in set(failed):
        for bug in _by_case().get(names.get(f, f), ()):
            count[bug] = count.get(bug, 0) + 1
    return [(c, count[c.id]) for c in classes() if c.id in count]


def cases_among(bug: KnownBug, names: Iterable[str]) -> list[str]:
    """Which of ``names`` (case keys or stored case names) are cases of ``bug``."""
    keys, mine = _keys_by_name(), set(bug.cases)
    return [n for n in names if keys.get(n, n) in mine]


def section(failed: Iterable[str]) -> list[str]:
    """The report's lines naming the known bug classes a run hit (none if it hit none)."""
    found = hits(failed)
    if not found:
        return []
    lines = [f"Known bug classes hit: {len(found)} of {len(classes())}"]
    for bug, n in found:
        lines.append(f"known bug {bug.id}: {n} of {len(bug.cases)} cases failed; {bug.title}; "
                     f"see {' '.join(bug.upstream)}")
    return lines
