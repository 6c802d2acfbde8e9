"""The card-driven argument checks (``poolspec.frontends._checks``): every constraint string of every front-end card
is either understood by the checker or declared hand-checked with the place that checks it; and for each understood
constraint, a value that breaks it, put into a stored case of the real front-end function (a call the library
accepted), is refused with a ValueError naming the function's argument, as the mirrored library refuses it where
it is installed (for ONNX: onnxruntime; the reference evaluator does not validate attributes)."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np
import pytest

from poolspec.conformance import conventions
from poolspec.frontends import _checks
from poolspec.spec import frontend_cards
from poolspec.spec._card import Argument
from poolspec.spec.frontends import FrontendCard

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

CARDS = {c.name: c for c in frontend_cards()}

# understood constraints whose violation the mirrored library accepts (poolspec refuses it; the card says why)
LIBRARY_ACCEPTS: dict[tuple[str, str, str], str] = {
    ("jax.image.resize", "shape", "entries >= 0"): "jax returns an empty axis for a negative entry",
}


def test_every_constraint_is_understood_or_hand_checked():
    used = set()
    for card in CARDS.values():
        for a in card.arguments:
            for constraint, rule in _checks.argument_rules(a):  # LookupError for an unknown constraint
                if rule is None and constraint not in _checks.HAND_CHECKED:
                    assert constraint in [c for c in a.constraints if _checks._TOKEN.fullmatch(c)], constraint
                used.add(constraint)
    stale = set(_checks.HAND_CHECKED) - used
    assert not stale, f"HAND_CHECKED names constraints no card states: {stale}"


def test_an_unknown_constraint_is_refused():
    with pytest.raises(LookupError, match="neither in the checks' vocabulary"):
        _checks.argument_rules(Argument("k", "int", 1, ("a prime",)))


def _case(function: str) -> conventions.Convention:
    found = [c for c in conventions.cases() if c.function == function]
    # onnxruntime validates ONNX attributes (the reference evaluator reads most without checking them)
    found.sort(key=lambda c: (c.library != "onnxruntime", str(c.arrays()[c.inputs[0]].dtype) != "float64"))
    return found[0]


def _int_sequence(a: Argument) -> bool:
    kinds = {p.strip() for p in a.type.split("|")} - {"None"}
    return bool(kinds & {"list[int]", "tuple[int, ...]", "tuple[int, int]"})


def _like(card: FrontendCard, options: dict[str, Any], a: Argument) -> list[int] | None:
    """The entries ``a`` has in the case, or those of the case's first int-sequence argument (its window)."""
    for name in [a.name] + [b.name for b in card.arguments if _int_sequence(b)]:
        v = options.get(name)
        if v is not None and not isinstance(v, str) and np.ndim(v) <= 1:
            return [int(e) for e in np.atleast_1d(np.asarray(v))]
    return None


def _violation(card: FrontendCard, a: Argument, constraint: str, options: dict[str, Any], arrays: dict[str, Any]
               ) -> dict[str, Any]:
    """The case's options with ``a`` set to a value that breaks ``constraint``."""
    out = dict(options)
    like = _like(card, options, a) or [1]
    if constraint == "0 or 1":
        out[a.name] = 2
    elif m := _checks._COUNT.fullmatch(constraint):
        counts = _checks._numbers(m[1])
        out[a.name] = [max(like[0], 1)] * (max(counts) + 1)
    elif m := _checks._BOUND.fullmatch(constraint):
        bad = int(m[2]) + {">=": -1, ">": 0, "<=": 1, "<": 0}[m[1]]
        out[a.name] = [bad] * len(like) if _int_sequence(a) else bad
    elif m := _checks._SAME_LEN.fullmatch(constraint):
        out[a.name] = [1] * (len(_like(card, options, next(b for b in card.arguments if b.name == m[1])) or []) + 1)
    elif m := _checks._NDIM.fullmatch(constraint):
        out[a.name] = [1] * (arrays[m[1]].ndim + 1)
    elif m := _checks._NOT_WITH.fullmatch(constraint):
        out[a.name] = out[m[1]] = True
    else:  # a choice
        out[a.name] = "NOT_A_CHOICE"
    return out


def _violations() -> list[tuple[str, str, str]]:
    found = []
    for card in CARDS.values():
        for a in card.arguments:
            done_tokens = False
            for constraint, rule in _checks.argument_rules(a):
                if rule is None:
                    continue
                if _checks._TOKEN.fullmatch(constraint):
                    if done_tokens:
                        continue
                    done_tokens = True
                found.append((card.name, a.name, constraint))
    return found


VIOLATIONS = _violations()


def _call(function: str, arrays: dict[str, Any], options: dict[str, Any]) -> Any:
    import importlib

    module, _, name = function.rpartition(".")
    return getattr(importlib.import_module(f"poolspec.frontends.{module}"), name)(*arrays.values(), **options)


def _library_refuses(case: conventions.Convention, arrays: dict[str, Any], options: dict[str, Any]) -> bool | None:
    """Whether the live library refuses the options (None: not installed, or the case does not replay there)."""
    from conformance.frontend_checks import Config, Refused, load

    if case.library == "onnx_reference":
        return None  # the reference evaluator reads attributes unchecked (ceil_mode=2, a negative pad); onnxruntime
        # validates them, and only its cases (preferred by _case) are a reference for ONNX
    module = load(case.library)
    if module.available() is not None:
        return None
    config = Config(case.function, arrays, dict(case.options))
    try:
        module.library(config, None)
    except Exception:  # the stored options do not replay through the check module's call
        return None
    try:
        module.library(Config(case.function, arrays, options), None)
    except (Refused, ValueError, TypeError, KeyError, IndexError):
        return True
    return False


@pytest.mark.parametrize("function,argument,constraint", VIOLATIONS)
def test_a_violation_is_refused_naming_the_argument(function, argument, constraint):
    card = CARDS[function]
    a = next(b for b in card.arguments if b.name == argument)
    case = _case(function)
    arrays = case.arrays()
    inputs = {k: arrays[k] for k in case.inputs}
    _call(function, inputs, dict(case.options))  # the case itself runs
    options = _violation(card, a, constraint, dict(case.options), inputs)
    with pytest.raises(ValueError) as caught:
        _call(function, inputs, options)
    assert f"{argument}=" in str(caught.value) or any(f"{o}=" in str(caught.value) for o in options
                                                     if options[o] is True)
    refused = _library_refuses(case, inputs, options)
    if refused is False:
        assert (function, argument, constraint) in LIBRARY_ACCEPTS, (
            f"{case.library} accepts {argument}={options[argument]!r}: {constraint!r} is not its rule")


def test_docstring_examples():
    import doctest

    result = doctest.testmod(_checks, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("function", sorted(n for n in CARDS if n.startswith("onnx.")))
def test_checked_types_are_type_errors(function):
    """On the front-ends that run the checker: a str where the card's type is int, float or an int sequence."""
    card = CARDS[function]
    case = _case(function)
    arrays = case.arrays()
    inputs = {k: arrays[k] for k in case.inputs}
    for a in card.arguments:
        if a.is_array or not ({p.strip() for p in a.type.split("|")} - {"None"} <= {
                "int", "float", "list[int]", "tuple[int, ...]", "tuple[int, int]"}):
            continue
        with pytest.raises(TypeError, match=f"{a.name}="):
            _call(function, inputs, dict(case.options) | {a.name: "x"})
