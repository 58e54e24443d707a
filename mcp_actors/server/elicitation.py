"""Elicitation forms: the restricted schema a server may ask with, and checking the answer.

``elicitation/create`` (2025-06-18+) asks the user, through the client, to fill a
form described by a *restricted* JSON Schema: a flat object whose properties are
primitives only. This module checks both directions:

- :func:`check_form_schema` before a request is sent — a schema the protocol does
  not allow (nesting, ``anyOf``, a format it does not list, a 2025-11-25 enum form
  under 2025-06-18) raises :class:`~mcp_actors.protocol.errors.ProtocolViolation`
  and nothing is sent;
- :func:`check_content` on an ``accept`` answer — the content must match the
  schema (types, bounds, formats, enum members, required fields), else
  :class:`ElicitationContentError`; optional fields the user left out get the
  schema's ``default``.

The property kinds (the official schemas' ``PrimitiveSchemaDefinition``)::

    string   {"type": "string", minLength, maxLength, format: email|uri|date|date-time}
    number   {"type": "number" | "integer", minimum, maximum}
    boolean  {"type": "boolean"}
    enum     {"type": "string", "enum": [...]}                 (+ legacy "enumNames")
    2025-11-25 also:
      titled single select  {"type": "string", "oneOf": [{"const", "title"}, ...]}
      multi select          {"type": "array", "items": {"type": "string", "enum": [...]}}
      titled multi select   {"type": "array", "items": {"anyOf": [{"const", "title"}, ...]}}
    every kind may carry "title" and "description"; "default" is 2025-11-25
    (booleans had it in 2025-06-18 already).

A form may also be given as a type — a msgspec Struct, dataclass or TypedDict with
primitive fields (``Literal``/``Enum`` for choices, ``list[Literal[...]]`` for
multi-select). :func:`form_schema` turns it into the schema, and the accepted
content is then decoded into that type.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any, Final, Generic, Literal, TypeVar

import attrs
import msgspec

from ..protocol.errors import INVALID_PARAMS, ProtocolViolation
from ..protocol.versions import Revision
from .signature import object_schema
from .tool_error import ToolError

T = TypeVar("T")

FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
_COMMON: Final = frozenset({"type", "title", "description"})
_KEYS: Final[dict[str, frozenset[str]]] = {
    "string": _COMMON | {"minLength", "maxLength", "format", "default"},
    "number": _COMMON | {"minimum", "maximum", "default"},
    "boolean": _COMMON | {"default"},
    "enum": _COMMON | {"enum", "enumNames", "default"},
    "titled_enum": _COMMON | {"oneOf", "default"},
    "multi_enum": _COMMON | {"items", "minItems", "maxItems", "default"},
}
_TOP_KEYS: Final = frozenset({"type", "properties", "required", "$schema", "title", "description"})
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$")

Action = Literal["accept", "decline", "cancel"]


class ElicitationContentError(ToolError, ValueError):
    """The client accepted an elicitation with content that does not match the schema.

    The client's mistake: raised out of a tool, its text is the tool's ``isError``
    result and it is not logged as the server's error (a :class:`ToolError`)."""


@attrs.frozen
class ElicitationResult(Generic[T]):
    """The user's answer: ``action``, and for an accepted form its checked ``content``.

    ``content`` is a dict, or an instance of the type the form was given as; it is
    None unless ``action == "accept"`` (and always None in URL mode).
    """

    action: Action
    content: T | None = None
    #: URL mode: the id the server chose for this elicitation.
    elicitation_id: str | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


# --------------------------------------------------------------------------- the schema


def form_schema(form: Mapping[str, Any] | type) -> dict[str, Any]:
    """The ``requestedSchema`` for ``form``: a schema dict as given, or derived from a type."""
    if isinstance(form, Mapping):
        return dict(form)
    schema = object_schema(form)
    definitions: dict[str, Any] = schema.pop("$defs", {})
    properties = {
        name: _normalize(_inline(prop, definitions))
        for name, prop in schema.get("properties", {}).items()
    }
    return {"type": "object", "properties": properties, **_pick(schema, "required")}


def _inline(prop: dict[str, Any], definitions: Mapping[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str):
        target = dict(definitions.get(ref.rsplit("/", 1)[-1], {}))
        target.pop("title", None)
        prop = {**target, **{k: v for k, v in prop.items() if k != "$ref"}}
    items = prop.get("items")
    if isinstance(items, dict):
        prop = {**prop, "items": _inline(items, definitions)}
    return prop


def _normalize(prop: dict[str, Any]) -> dict[str, Any]:
    """msgspec writes ``Literal``/``Enum`` choices without ``"type": "string"``; add it."""
    if "enum" in prop and "type" not in prop:
        prop = {"type": "string", **prop}
    items = prop.get("items")
    if isinstance(items, dict) and "enum" in items and "type" not in items:
        prop = {**prop, "items": {"type": "string", **items}}
    return prop


def _pick(mapping: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {key: mapping[key] for key in keys if key in mapping}


def check_form_schema(schema: Mapping[str, Any], revision: Revision) -> None:
    """Raise :class:`ProtocolViolation` unless ``schema`` is a valid form at ``revision``."""
    problems = list(_schema_problems(schema, revision))
    if problems:
        raise ProtocolViolation(
            INVALID_PARAMS,
            "requestedSchema is not a valid elicitation form for protocol revision"
            f" {revision.name}: " + "; ".join(problems),
        )


def property_kind(prop: Mapping[str, Any]) -> str | None:
    """Which primitive kind a property schema is (see the module docstring), or None."""
    kind = prop.get("type")
    if kind == "string":
        if "oneOf" in prop:
            return "titled_enum"
        return "enum" if "enum" in prop else "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return "multi_enum"
    return None


def _schema_problems(schema: Mapping[str, Any], revision: Revision) -> Any:
    if schema.get("type") != "object":
        yield 'the top level must be {"type": "object", ...}'
    extra = set(schema) - _TOP_KEYS
    if extra:
        yield f"unsupported top-level keys {sorted(extra)}"
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        yield '"properties" must be an object'
        return
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        yield '"required" must be a list of property names'
    else:
        for name in required:
            if name not in properties:
                yield f"required property {name!r} is not in properties"
    new = revision.url_elicitation  # 2025-11-25's richer forms came with URL mode
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            yield f"{name}: a property schema must be an object"
            continue
        kind = property_kind(prop)
        if kind is None:
            yield (
                f"{name}: only string, number, integer, boolean and enum properties are"
                f" allowed (no nesting), got type {prop.get('type')!r}"
            )
            continue
        extra = set(prop) - _KEYS[kind]
        if extra:
            yield f"{name}: unsupported keys {sorted(extra)} for a {kind.replace('_', ' ')}"
        if kind in ("titled_enum", "multi_enum") and not new:
            yield f"{name}: {kind.replace('_', ' ')} properties need protocol revision 2025-11-25"
        if "default" in prop and kind != "boolean" and not new:
            yield f"{name}: defaults on non-boolean properties need protocol revision 2025-11-25"
        yield from (f"{name}: {problem}" for problem in _property_problems(kind, prop))


def _property_problems(kind: str, prop: Mapping[str, Any]) -> Any:
    if kind == "string":
        if "format" in prop and prop["format"] not in FORMATS:
            yield f"format {prop['format']!r} is not one of {sorted(FORMATS)}"
        for key in ("minLength", "maxLength"):
            if key in prop and not _is_int(prop[key]):
                yield f"{key} must be an integer"
    elif kind == "number":
        for key in ("minimum", "maximum"):
            if key in prop and not _is_number(prop[key]):
                yield f"{key} must be a number"
    elif kind == "enum":
        if not _strings(prop["enum"]):
            yield "enum must be a non-empty list of strings"
        elif "enumNames" in prop and (
            not _strings(prop["enumNames"]) or len(prop["enumNames"]) != len(prop["enum"])
        ):
            yield "enumNames must be strings, one per enum value"
    elif kind == "titled_enum":
        if not _options(prop["oneOf"]):
            yield 'oneOf must be a non-empty list of {"const": str, "title": str}'
    elif kind == "multi_enum":
        items = prop.get("items")
        if not isinstance(items, Mapping) or not (
            (items.get("type") == "string" and _strings(items.get("enum")) and len(items) == 2)
            or (set(items) == {"anyOf"} and _options(items["anyOf"]))
        ):
            yield (
                'items must be {"type": "string", "enum": [...]} or'
                ' {"anyOf": [{"const": str, "title": str}, ...]}'
            )
    if "default" in prop and _check_value(kind, prop, prop["default"]):
        yield f"default {prop['default']!r} does not match the property"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _options(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(option, Mapping)
            and isinstance(option.get("const"), str)
            and isinstance(option.get("title"), str)
            for option in value
        )
    )


def choices(prop: Mapping[str, Any]) -> list[str]:
    """The allowed values of an enum property (single or multi select, titled or not)."""
    kind = property_kind(prop)
    if kind == "enum":
        return list(prop["enum"])
    if kind == "titled_enum":
        return [option["const"] for option in prop["oneOf"]]
    if kind == "multi_enum":
        items = prop["items"]
        if "enum" in items:
            return list(items["enum"])
        return [option["const"] for option in items["anyOf"]]
    return []


# --------------------------------------------------------------------------- the answer


def check_content(schema: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """``content`` checked against the form ``schema``, with defaults filled in.

    Raises :class:`ElicitationContentError` listing every mismatch.
    """
    if not isinstance(content, Mapping):
        raise ElicitationContentError("accepted elicitation content must be an object")
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    problems: list[str] = []
    checked: dict[str, Any] = {}
    for name, value in content.items():
        prop = properties.get(name)
        if prop is None:
            problems.append(f"{name}: not a property of the requested schema")
            continue
        kind = property_kind(prop)
        assert kind is not None
        problems.extend(f"{name}: {p}" for p in _check_value(kind, prop, value))
        checked[name] = value
    for name, prop in properties.items():
        if name in checked:
            continue
        if name in required:
            problems.append(f"{name}: required but missing")
        elif "default" in prop:
            checked[name] = prop["default"]
    if problems:
        raise ElicitationContentError(
            "the accepted elicitation content does not match the requested schema: "
            + "; ".join(problems)
        )
    return checked


def _check_value(kind: str, prop: Mapping[str, Any], value: Any) -> list[str]:
    problems: list[str] = []
    if kind in ("string", "enum", "titled_enum"):
        if not isinstance(value, str):
            return [f"expected a string, got {_json_type(value)}"]
        if kind != "string":
            if value not in choices(prop):
                problems.append(f"{value!r} is not one of {choices(prop)}")
            return problems
        if "minLength" in prop and len(value) < prop["minLength"]:
            problems.append(f"shorter than {prop['minLength']} characters")
        if "maxLength" in prop and len(value) > prop["maxLength"]:
            problems.append(f"longer than {prop['maxLength']} characters")
        fmt = prop.get("format")
        if fmt is not None and not _format_ok(fmt, value):
            problems.append(f"{value!r} is not a valid {fmt}")
    elif kind == "number":
        integer = prop.get("type") == "integer"
        valid = _is_int(value) if integer else _is_number(value)
        if integer and isinstance(value, float) and value.is_integer():
            valid = True
        if not valid:
            return [f"expected {'an integer' if integer else 'a number'}, got {_json_type(value)}"]
        if "minimum" in prop and value < prop["minimum"]:
            problems.append(f"{value} is less than the minimum {prop['minimum']}")
        if "maximum" in prop and value > prop["maximum"]:
            problems.append(f"{value} is more than the maximum {prop['maximum']}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            return [f"expected a boolean, got {_json_type(value)}"]
    elif kind == "multi_enum":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return [f"expected a list of strings, got {_json_type(value)}"]
        allowed = choices(prop)
        problems.extend(f"{v!r} is not one of {allowed}" for v in value if v not in allowed)
        if len(set(value)) != len(value):
            problems.append("a value is selected twice")
        if "minItems" in prop and len(value) < prop["minItems"]:
            problems.append(f"fewer than {prop['minItems']} selected")
        if "maxItems" in prop and len(value) > prop["maxItems"]:
            problems.append(f"more than {prop['maxItems']} selected")
    return problems


def _format_ok(fmt: str, value: str) -> bool:
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


def decode_content(content: dict[str, Any], form: Mapping[str, Any] | type) -> Any:
    """``content`` as the form's type (a dict form gives the dict back)."""
    if isinstance(form, Mapping):
        return content
    try:
        return msgspec.convert(content, form, strict=False)
    except msgspec.ValidationError as invalid:
        raise ElicitationContentError(
            f"accepted content does not fit {form.__name__}: {invalid}"
        ) from None
