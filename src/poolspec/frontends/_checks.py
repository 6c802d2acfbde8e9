"""Card-driven argument checks: the constraints a front-end card states in prose, enforced as written.

Each constraint string of a card argument is either in the vocabulary below (choices, bounds, entry counts, 0/1
flags, lengths tied to another argument, mutually exclusive flags) and enforced by :func:`check`, or named in
:data:`HAND_CHECKED` with the place that checks it. Types are read from ``Argument.type`` where they are plain:
``int`` (not bool), ``float`` (a real number) and int sequences (``list[int]``, ``tuple[int, ...]``: an int or a
list, tuple or 1-d array of ints). A value of None is "not given": the caller supplies defaults and refuses a
missing required argument. Refusals read ``{function}: {name}={value!r}: {rule}`` (``_common.fail``): a value of
the wrong type is a TypeError, a value out of range a ValueError.

>>> from poolspec.spec import frontend_card
>>> check(frontend_card("onnx.MaxPool"), {"ceil_mode": 2})
Traceback (most recent call last):
...
ValueError: MaxPool: ceil_mode=2: must be 0 or 1
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..spec._card import Argument
from ..spec.frontends import FrontendCard
from ._common import fail

# a rule: (value, every value of the call) -> None, or the rule the value breaks (a str: a ValueError; with an
# exception type: that type)
Refusal = tuple[str, type[Exception]]
Rule = Callable[[Any, Mapping[str, Any]], "str | Refusal | None"]
_NOT_INTS: Refusal = ("must be an int or a sequence of ints", TypeError)

# constraints the vocabulary does not express, and where each is checked by hand
HAND_CHECKED: dict[str, str] = {
    "batch and channel entries 1": "frontends.tf.nn._spatial (which entries are batch and channel follows "
                                   "data_format)",
    "or 3 [low, high] pairs, batch/channel [0, 0], spatial entries < ksize": "frontends.tf.nn._padding",
    "or 4 [low, high] pairs, batch/channel [0, 0], spatial entries < ksize": "frontends.tf.nn._padding",
    "int32 or int64": "frontends.tf.nn._index_dtype (a dtype or its name)",
    "a tuple has one entry per spatial axis": "frontends.keras.ops._sizes (the count follows the input's rank)",
    "'SAME', 'SAME_LOWER', 'VALID' (any case) or one (low, high) pair per window axis":
        "frontends.flax._pool._pads",
    "pairs only with at most one batch axis": "frontends.flax._pool.pool_windows (follows the input's rank)",
    "the identity of reduce_fn": "frontends.flax._pool.check_init",
    "jax.lax.max, jax.lax.add or jax.lax.min (or the names 'max', 'add', 'min')": "frontends.flax._pool.reduction",
    "nearest, linear/bilinear/trilinear/triangle, cubic/bicubic/tricubic, cubic-pytorch/bicubic-pytorch, lanczos3, "
    "lanczos5, area, or a ResizeMethod member": "frontends.jax.image._method",
    "not nearest (jax raises)": "frontends.jax.image.scale_and_translate",
    "distinct axes of image": "frontends.jax.image.scale_and_translate (negative axes count from the end)",
    "concrete, not traced": "frontends.jax.image._concrete",
    "(N, C, *S), read on the host": "frontends.onnx.pool.MaxUnpool",
    "begins then ends": "frontends.onnx.pool._geometry (2 entries per spatial axis)",
    "<= (kernel - 1) * dilation": "frontends.onnx.pool._geometry",
}

_SEQUENCES = ("list[int]", "tuple[int, ...]", "tuple[int, int]")
_OPS: dict[str, Callable[[int, int], bool]] = {">": operator.gt, ">=": operator.ge, "<": operator.lt,
                                               "<=": operator.le}
_BOUND = re.compile(r"(?:entries )?(>=|>|<=|<) (-?\d+)")
_COUNT = re.compile(r"(\d+(?:, \d+)*(?: or \d+)?) entries(?:, each (>=|>|<=|<) (-?\d+))?")
_QUOTED = re.compile(r"'[^']*'(?:, '[^']*')*(?: or '[^']*')?(?P<tail>, any case| only)?")
_ONE_OF = re.compile(r"one of (\w+(?:, \w+)*)")
_BARS = re.compile(r"\w+(?: \| \w+)+")
_TOKEN = re.compile(r"[A-Za-z_]\w*")
_SAME_LEN = re.compile(r"len == len\((\w+)\)")
_NDIM = re.compile(r"len\(\w+\) == (\w+)\.ndim")
_NOT_WITH = re.compile(r"not with (\w+)")


def _kinds(argument: Argument) -> set[str]:
    return {p.strip() for p in argument.type.split("|")} - {"None"}


def _ints(value: Any) -> tuple[int, ...] | None:
    """``value``'s int entries (an int is one entry), or None if it is not an int or ints."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in vals):
        return None
    return tuple(int(v) for v in vals)


def entries(function: str, name: str, value: Any) -> tuple[int, ...]:
    """``value`` as its int entries (an int is one entry); TypeError if it is not an int or ints.

    >>> entries("f", "k", [2, 3])
    (2, 3)
    """
    vals = _ints(value)
    if vals is None:
        fail(function, name, value, *_NOT_INTS)
    return vals  # type: ignore[return-value]


def _bound(op: str, limit: int) -> Rule:
    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        vals = _ints(value)
        if vals is None:
            return _NOT_INTS
        return None if all(_OPS[op](v, limit) for v in vals) else f"every entry must be {op} {limit}"
    return rule


def _count(counts: tuple[int, ...], text: str) -> Rule:
    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        vals = _ints(value)
        if vals is None:
            return _NOT_INTS
        return None if len(vals) in counts else f"must have {text} entries"
    return rule


def _flag(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
    # ONNX's int flags: a bool is an int of the wrong value kind (ValueError), anything else the wrong type
    if not isinstance(value, (int, np.integer)):
        return "must be 0 or 1", TypeError
    return None if not isinstance(value, bool) and int(value) in (0, 1) else "must be 0 or 1"


def _choice(allowed: tuple[str, ...], any_case: bool, only_str: bool) -> Rule:
    """One of ``allowed`` (``any_case``: compared case-insensitively); a non-str value is refused only where the
    argument's type is str alone (elsewhere another constraint or the front-end reads it)."""
    folded = {a.casefold() for a in allowed} if any_case else set(allowed)
    text = "must be one of " + ", ".join(allowed) + (" (any case)" if any_case else "")

    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        v = value.decode() if isinstance(value, bytes) else value  # ONNX attributes may arrive as bytes
        if not isinstance(v, str):
            return text if only_str else None
        return None if (v.casefold() if any_case else v) in folded else text
    return rule


def _same_length(other: str) -> Rule:
    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        vals, others = _ints(value), _ints(values.get(other))
        if vals is None:
            return _NOT_INTS
        return None if others is None or len(vals) == len(others) else f"must have len({other}) entries"
    return rule


def _ndim(other: str) -> Rule:
    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        vals, ndim = _ints(value), getattr(values.get(other), "ndim", None)
        if vals is None:
            return _NOT_INTS
        return None if ndim is None or len(vals) == ndim else f"must have {other}.ndim = {ndim} entries"
    return rule


def _not_with(other: str) -> Rule:
    def rule(value: Any, values: Mapping[str, Any]) -> str | Refusal | None:
        return f"cannot be combined with {other}" if value and values.get(other) else None
    return rule


def _numbers(counts: str) -> tuple[int, ...]:
    return tuple(int(c) for c in re.split(r", | or ", counts))


def understand(constraint: str) -> Rule | None:
    """The rule of one constraint string in the vocabulary (bare choice tokens aside), or None.

    >>> understand("entries >= 1") is not None, understand("begins then ends")
    (True, None)
    """
    if constraint == "0 or 1":
        return _flag
    if m := _BOUND.fullmatch(constraint):
        return _bound(m[1], int(m[2]))
    if m := _COUNT.fullmatch(constraint):
        count = _count(_numbers(m[1]), m[1])
        if m[2] is None:
            return count
        bound = _bound(m[2], int(m[3]))
        return lambda value, values: count(value, values) or bound(value, values)
    for pattern, make in ((_SAME_LEN, _same_length), (_NDIM, _ndim), (_NOT_WITH, _not_with)):
        if m := pattern.fullmatch(constraint):
            return make(m[1])
    return None


def _choices(constraint: str) -> tuple[tuple[str, ...], bool] | None:
    """The choices of a one-string choice constraint and whether any case goes."""
    if m := _QUOTED.fullmatch(constraint):
        body = constraint[:m.start("tail")] if m["tail"] else constraint
        return tuple(re.findall(r"'([^']*)'", body)), m["tail"] == ", any case"
    if m := _ONE_OF.fullmatch(constraint):
        return tuple(m[1].split(", ")), False
    if _BARS.fullmatch(constraint):
        return tuple(constraint.split(" | ")), False
    return None


def _type_rule(argument: Argument, flag: bool) -> Rule | None:
    """The check of ``Argument.type`` where it is plain: int, float, an int sequence."""
    kinds = _kinds(argument)
    if kinds == {"int"} and not flag:
        return lambda value, values: (
            ("must be an int", TypeError) if isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, np.integer)) else None)
    if kinds == {"float"}:
        return lambda value, values: (
            ("must be a float", TypeError) if isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, float, np.integer, np.floating)) else None)
    if kinds & set(_SEQUENCES) and kinds <= set(_SEQUENCES) | {"int"}:
        return lambda value, values: _NOT_INTS if _ints(value) is None else None
    return None


def argument_rules(argument: Argument) -> list[tuple[str, Rule | None]]:
    """Each constraint of ``argument`` with its rule (None: hand-checked); LookupError for a constraint neither
    understood nor in :data:`HAND_CHECKED`. Bare tokens (``NOTSET``, ``SAME_UPPER``, ...) together are one choice
    list, attached to the first of them."""
    tokens = tuple(c for c in argument.constraints if _TOKEN.fullmatch(c))
    only_str = _kinds(argument) == {"str"}
    out: list[tuple[str, Rule | None]] = []
    for c in argument.constraints:
        rule: Rule | None
        if c in tokens:
            rule = _choice(tokens, False, only_str) if c == tokens[0] else None
        elif (found := _choices(c)) is not None:
            rule = _choice(found[0], found[1], only_str)
        elif (rule := understand(c)) is None and c not in HAND_CHECKED:
            raise LookupError(f"{argument.name}: constraint {c!r} is neither in the checks' vocabulary nor in "
                              "_checks.HAND_CHECKED")
        out.append((c, rule))
    return out


_COMPILED: dict[str, tuple[tuple[str, tuple[Rule, ...]], ...]] = {}


def _compiled(card: FrontendCard) -> tuple[tuple[str, tuple[Rule, ...]], ...]:
    found = _COMPILED.get(card.id)
    if found is None:
        rules = []
        for a in card.arguments:
            if a.is_array:
                continue
            pairs = argument_rules(a)
            typed = _type_rule(a, "0 or 1" in a.constraints)
            rules.append((a.name, tuple(r for r in [typed] + [r for _, r in pairs] if r is not None)))
        found = _COMPILED[card.id] = tuple((n, r) for n, r in rules if r)
    return found


def check(card: FrontendCard, values: Mapping[str, Any], function: str | None = None) -> None:
    """Enforce every understood constraint (and plain type) of ``card``'s arguments on ``values`` (name ->
    value; missing names and None values are skipped), in the card's argument order, before any computation.
    ``function`` names the function in the messages (default: the last part of the card's name)."""
    function = function or card.name.rpartition(".")[2]
    for name, rules in _compiled(card):
        value = values.get(name)
        if value is None:
            continue
        for rule in rules:
            broken = rule(value, values)
            if broken is not None:
                text, kind = (broken, ValueError) if isinstance(broken, str) else broken
                fail(function, name, value, text, kind)
