"""Every public function documents itself in numpydoc style: each parameter of its signature (in order, with a
type and a description), what it returns, what it raises, and an example; parsed by the same parser (griffe's)
that renders the docs site's API reference."""

from __future__ import annotations

import importlib
import inspect
import logging

import griffe
import pytest

import poolspec

PUBLIC = [name for name in poolspec.__all__ if inspect.isfunction(getattr(poolspec, name))]
# the front-ends' functions, by their path under poolspec.frontends (their cards list them)
FRONTENDS = [f"frontends.{c.name}" for c in poolspec.spec.frontend_cards()]


def _function(name: str) -> object:
    if not name.startswith("frontends."):
        return getattr(poolspec, name)
    module, _, fn = name.rpartition(".")
    return getattr(importlib.import_module(f"poolspec.{module}"), fn)


def _sections(name: str, caplog) -> dict[str, object]:
    text = inspect.getdoc(_function(name))
    assert text, f"{name} has no docstring"
    with caplog.at_level(logging.WARNING):
        parsed = griffe.Docstring(text, parser="numpy").parse()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    sections: dict[str, object] = {}
    for s in parsed:
        assert s.kind.value not in sections, f"{name}: two {s.kind.value} sections"
        sections[s.kind.value] = s.value
    return sections


def test_public_functions_are_listed():
    assert len(PUBLIC) >= 45 and "interpolate" in PUBLIC and "grid_sample_backward" in PUBLIC


@pytest.mark.parametrize("name", PUBLIC + FRONTENDS)
def test_numpydoc_sections(name, caplog):
    sections = _sections(name, caplog)
    assert "text" in sections, f"{name}: no summary line"
    params = [p for p in inspect.signature(_function(name)).parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    documented = sections.get("parameters", [])
    assert [p.name for p in documented] == [p.name for p in params], f"{name}: Parameters section vs signature"
    for p in documented:
        assert p.annotation and p.description.strip(), f"{name}: parameter {p.name} needs a type and a description"
    assert sections.get("returns"), f"{name}: no Returns section"
    for r in sections["returns"]:
        assert r.annotation and r.description.strip(), f"{name}: a Returns entry needs a type and a description"
    assert sections.get("raises"), f"{name}: no Raises section"
    for r in sections["raises"]:
        assert r.annotation in {"ValueError", "TypeError", "RuntimeError", "KeyError", "NotImplementedError"}, r
    assert sections.get("examples"), f"{name}: no Examples section"
