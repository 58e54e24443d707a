"""The elicitation form's property kinds as a table of rules, one small rule per keyword.

A form (see :mod:`.elicitation`) is a flat object whose properties each have one of
six *kinds* — the official schemas' ``PrimitiveSchemaDefinition``::

    kind          recognised by                  keywords (besides type, title, description)
    string        "type": "string"               minLength, maxLength, format, default
    number        "type": "number" | "integer"   minimum, maximum, default
    boolean       "type": "boolean"              default
    enum          "type": "string" + "enum"      enum, enumNames (legacy), default
    titled enum   "type": "string" + "oneOf"     oneOf, default                     2025-11-25
    multi enum    "type": "array"                items, minItems, maxItems, default  2025-11-25

Each kind is one :class:`Kind` row of :data:`KINDS`, and a row is itself three small
tables keyed by keyword:

- ``keywords`` — every keyword the kind allows, each with the *schema rule* its value
  in the form must pass (``minLength`` must be an integer, ``format`` one of
  :data:`FORMATS`, ...). A keyword missing from the table is refused, so the table is
  also the allow-list. A schema rule takes the keyword's value and the whole property
  and returns a problem, or None.
- ``accepts`` — the JSON type an *answer* must have. A wrong type is the only problem
  reported for that answer: the keyword rules below assume the type.
- ``constraints`` — for each keyword that constrains an answer, the *answer rule* that
  applies when the property has that keyword (``minLength`` → not shorter). An answer
  rule takes the keyword's value and the answer and returns its problems.

Every rule returns its own message, so an error says which keyword was broken and how.
A property's ``default`` is checked by the same answer rules as a user's answer, once
the property's keywords have passed their schema rules (the answer rules rely on them).

Why a table and not the ``jsonschema`` package: the core must not depend on it (it is
a test-only dependency), its messages for a ``PrimitiveSchemaDefinition``-shaped
meta-schema (an ``anyOf`` of six schemas) say only that nothing matched, and its
format checks for ``email``/``uri``/``date-time`` need further optional packages —
without them a bad answer passes silently.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import attrs

from ..protocol.versions import Revision

#: The string formats a form may ask for.
FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$")

#: (the keyword's value in the schema, the whole property) -> a problem, or None.
SchemaRule = Callable[[Any, Mapping[str, Any]], "str | None"]
#: (the keyword's value in the schema, the answer) -> the answer's problems.
AnswerRule = Callable[[Any, Any], list[str]]
#: (the property, the answer) -> the problem if the answer has the wrong JSON type.
TypeRule = Callable[[Mapping[str, Any], Any], "str | None"]


@attrs.frozen
class Kind:
    """One property kind: what its schema may say, and what an answer to it must be."""

    #: As named in messages: ``"titled enum"``.
    name: str
    #: Every keyword the kind allows, with the rule its value must pass (None: any value;
    #: ``default`` passes the kind's answer rules instead, see :func:`schema_problems`).
    keywords: Mapping[str, SchemaRule | None]
    #: The answer's JSON type.
    accepts: TypeRule
    #: Keyword -> the rule an answer must pass when the property has that keyword.
    constraints: Mapping[str, AnswerRule] = attrs.field(factory=dict)
    #: Keywords whose rule runs even when the property lacks them (they are required).
    required: frozenset[str] = frozenset()
    #: Only protocol revision 2025-11-25 and later know this kind.
    rich: bool = False
    #: Only protocol revision 2025-11-25 and later allow this kind a ``default``.
    rich_default: bool = True


# --------------------------------------------------------------------------- value tests


def _is_int(value: Any) -> bool:
    """A JSON integer (a bool is not one, though Python says so)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A JSON number (a bool is not one, though Python says so)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _option(option: Any) -> bool:
    return (
        isinstance(option, Mapping)
        and isinstance(option.get("const"), str)
        and isinstance(option.get("title"), str)
    )


def _options(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_option(o) for o in value)


def _consts(options: list[Mapping[str, Any]]) -> list[str]:
    return [option["const"] for option in options]


def _format_ok(fmt: str, value: str) -> bool:
    """Whether ``value`` is a valid ``fmt`` (one of :data:`FORMATS`; others pass)."""
    if fmt == "email":
        return _EMAIL.match(value) is not None
    if fmt == "uri":
        return _URI.match(value) is not None
    try:
        if fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "date-time":
            if "T" not in value.upper():
                return False
            datetime.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _json_type(value: Any) -> str:
    """``value``'s JSON type, for a message: ``"a string"``, ``"null"``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# --------------------------------------------------------------------------- schema rules


def _integer(keyword: str) -> SchemaRule:
    return lambda value, prop: None if _is_int(value) else f"{keyword} must be an integer"


def _number(keyword: str) -> SchemaRule:
    return lambda value, prop: None if _is_number(value) else f"{keyword} must be a number"


def _string(keyword: str) -> SchemaRule:
    return lambda value, prop: None if isinstance(value, str) else f"{keyword} must be a string"


def _format(value: Any, prop: Mapping[str, Any]) -> str | None:
    return (
        None
        if isinstance(value, str) and value in FORMATS
        else f"format {value!r} is not one of {sorted(FORMATS)}"
    )


def _enum(value: Any, prop: Mapping[str, Any]) -> str | None:
    return None if _strings(value) else "enum must be a non-empty list of strings"


def _enum_names(value: Any, prop: Mapping[str, Any]) -> str | None:
    if not _strings(prop["enum"]):
        return None  # the enum's own rule reports it
    if _strings(value) and len(value) == len(prop["enum"]):
        return None
    return "enumNames must be strings, one per enum value"


def _one_of(value: Any, prop: Mapping[str, Any]) -> str | None:
    if _options(value):
        return None
    return 'oneOf must be a non-empty list of {"const": str, "title": str}'


def _items(value: Any, prop: Mapping[str, Any]) -> str | None:
    if isinstance(value, Mapping) and (
        (value.get("type") == "string" and _strings(value.get("enum")) and len(value) == 2)
        or (set(value) == {"anyOf"} and _options(value["anyOf"]))
    ):
        return None
    return (
        'items must be {"type": "string", "enum": [...]} or'
        ' {"anyOf": [{"const": str, "title": str}, ...]}'
    )


# --------------------------------------------------------------------------- answer rules


def _expect(python_type: type, expected: str) -> TypeRule:
    return lambda prop, value: (
        None if isinstance(value, python_type) else f"expected {expected}, got {_json_type(value)}"
    )


def _a_number(prop: Mapping[str, Any], value: Any) -> str | None:
    if prop.get("type") != "integer":
        return None if _is_number(value) else f"expected a number, got {_json_type(value)}"
    if _is_int(value) or (isinstance(value, float) and value.is_integer()):
        return None
    return f"expected an integer, got {_json_type(value)}"


def _a_selection(prop: Mapping[str, Any], value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return f"expected a list of strings, got {_json_type(value)}"


def _min_length(bound: int, value: str) -> list[str]:
    return [f"shorter than {bound} characters"] if len(value) < bound else []


def _max_length(bound: int, value: str) -> list[str]:
    return [f"longer than {bound} characters"] if len(value) > bound else []


def _formatted(fmt: str, value: str) -> list[str]:
    return [] if _format_ok(fmt, value) else [f"{value!r} is not a valid {fmt}"]


def _minimum(bound: float, value: float) -> list[str]:
    return [f"{value} is less than the minimum {bound}"] if value < bound else []


def _maximum(bound: float, value: float) -> list[str]:
    return [f"{value} is more than the maximum {bound}"] if value > bound else []


def _member(allowed: list[str], value: str) -> list[str]:
    return [] if value in allowed else [f"{value!r} is not one of {allowed}"]


def _selection(items: Mapping[str, Any], value: list[str]) -> list[str]:
    allowed = list(items["enum"]) if "enum" in items else _consts(items["anyOf"])
    problems = [f"{v!r} is not one of {allowed}" for v in value if v not in allowed]
    if len(set(value)) != len(value):
        problems.append("a value is selected twice")
    return problems


def _min_items(bound: int, value: list[str]) -> list[str]:
    return [f"fewer than {bound} selected"] if len(value) < bound else []


def _max_items(bound: int, value: list[str]) -> list[str]:
    return [f"more than {bound} selected"] if len(value) > bound else []


# --------------------------------------------------------------------------- the table

_ANNOTATIONS: Final[dict[str, SchemaRule | None]] = {
    "type": None,  # the kind's own, else property_kind had found no kind
    "title": _string("title"),
    "description": _string("description"),
}
_a_string: Final = _expect(str, "a string")

KINDS: Final[dict[str, Kind]] = {
    "string": Kind(
        "string",
        {
            **_ANNOTATIONS,
            "format": _format,
            "minLength": _integer("minLength"),
            "maxLength": _integer("maxLength"),
            "default": None,
        },
        _a_string,
        {"minLength": _min_length, "maxLength": _max_length, "format": _formatted},
    ),
    "number": Kind(
        "number",
        {
            **_ANNOTATIONS,
            "minimum": _number("minimum"),
            "maximum": _number("maximum"),
            "default": None,
        },
        _a_number,
        {"minimum": _minimum, "maximum": _maximum},
    ),
    "boolean": Kind(
        "boolean",
        {**_ANNOTATIONS, "default": None},
        _expect(bool, "a boolean"),
        rich_default=False,  # booleans had defaults in 2025-06-18 already
    ),
    "enum": Kind(
        "enum",
        {**_ANNOTATIONS, "enum": _enum, "enumNames": _enum_names, "default": None},
        _a_string,
        {"enum": lambda allowed, value: _member(list(allowed), value)},
    ),
    "titled_enum": Kind(
        "titled enum",
        {**_ANNOTATIONS, "oneOf": _one_of, "default": None},
        _a_string,
        {"oneOf": lambda options, value: _member(_consts(options), value)},
        rich=True,
    ),
    "multi_enum": Kind(
        "multi enum",
        {
            **_ANNOTATIONS,
            "items": _items,
            "minItems": _integer("minItems"),
            "maxItems": _integer("maxItems"),
            "default": None,
        },
        _a_selection,
        {"items": _selection, "minItems": _min_items, "maxItems": _max_items},
        required=frozenset({"items"}),
        rich=True,
    ),
}


def property_kind(prop: Mapping[str, Any]) -> Kind | None:
    """Which row of :data:`KINDS` a property schema is, or None if it is none of them."""
    kind = prop.get("type")
    if kind == "string":
        if "oneOf" in prop:
            return KINDS["titled_enum"]
        return KINDS["enum" if "enum" in prop else "string"]
    if kind in ("number", "integer"):
        return KINDS["number"]
    if kind in ("boolean", "array"):
        return KINDS["boolean" if kind == "boolean" else "multi_enum"]
    return None


# --------------------------------------------------------------------------- checking


def schema_problems(prop: Any, revision: Revision) -> Iterator[str]:
    """What is wrong with one property schema at ``revision`` (nothing: it is valid)."""
    if not isinstance(prop, Mapping):
        yield "a property schema must be an object"
        return
    kind = property_kind(prop)
    if kind is None:
        yield (
            "only string, number, integer, boolean and enum properties are"
            f" allowed (no nesting), got type {prop.get('type')!r}"
        )
        return
    extra = set(prop) - set(kind.keywords)
    if extra:
        yield f"unsupported keys {sorted(extra)} for a {kind.name}"
    yield from _revision_problems(kind, prop, revision)
    broken = list(_keyword_problems(kind, prop))
    yield from broken
    # A default is an answer, checked by the keywords' answer rules: only sound once
    # those keywords passed their schema rules (a bound "1" compares with nothing).
    if not broken and "default" in prop and answer_problems(kind, prop, prop["default"]):
        yield f"default {prop['default']!r} does not match the property"


def _revision_problems(kind: Kind, prop: Mapping[str, Any], revision: Revision) -> Iterator[str]:
    rich = revision.url_elicitation  # 2025-11-25's richer forms came with URL mode
    if kind.rich and not rich:
        yield f"{kind.name} properties need protocol revision 2025-11-25"
    if "default" in prop and kind.rich_default and not rich:
        yield "defaults on non-boolean properties need protocol revision 2025-11-25"


def _keyword_problems(kind: Kind, prop: Mapping[str, Any]) -> Iterator[str]:
    for keyword, rule in kind.keywords.items():
        if rule is not None and (keyword in prop or keyword in kind.required):
            problem = rule(prop.get(keyword), prop)
            if problem is not None:
                yield problem


def answer_problems(kind: Kind, prop: Mapping[str, Any], value: Any) -> list[str]:
    """What is wrong with ``value`` as an answer to the property ``prop`` of ``kind``."""
    wrong_type = kind.accepts(prop, value)
    if wrong_type is not None:
        return [wrong_type]
    return [
        problem
        for keyword, rule in kind.constraints.items()
        if keyword in prop
        for problem in rule(prop[keyword], value)
    ]
