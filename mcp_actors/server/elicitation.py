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

Each kind's keywords, and what each one demands of the schema and of an answer, are
one row of the table in :mod:`.elicitation_rules`; this module checks the top level
and puts the rows' messages together.

A form may also be given as a type — a msgspec Struct, dataclass or TypedDict with
primitive fields (``Literal``/``Enum`` for choices, ``list[Literal[...]]`` for
multi-select). :func:`form_schema` turns it into the schema, and the accepted
content is then decoded into that type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, Generic, Literal, TypeVar

import attrs
import msgspec

from ..protocol.errors import INVALID_PARAMS, ProtocolViolation
from ..protocol.versions import Revision
from .elicitation_rules import answer_problems, property_kind, schema_problems
from .signature import object_schema
from .tool_error import ToolError

T = TypeVar("T")

_TOP_KEYS: Final = frozenset({"type", "properties", "required", "$schema", "title", "description"})

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


def _schema_problems(schema: Mapping[str, Any], revision: Revision) -> Iterator[str]:
    if schema.get("type") != "object":
        yield 'the top level must be {"type": "object", ...}'
    extra = set(schema) - _TOP_KEYS
    if extra:
        yield f"unsupported top-level keys {sorted(extra)}"
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        yield '"properties" must be an object'
        return
    yield from _required_problems(schema.get("required", []), properties)
    for name, prop in properties.items():
        yield from (f"{name}: {problem}" for problem in schema_problems(prop, revision))


def _required_problems(required: Any, properties: Mapping[str, Any]) -> Iterator[str]:
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        yield '"required" must be a list of property names'
        return
    for name in required:
        if name not in properties:
            yield f"required property {name!r} is not in properties"


# --------------------------------------------------------------------------- the answer


def check_content(schema: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """``content`` checked against the form ``schema``, with defaults filled in.

    Raises :class:`ElicitationContentError` listing every mismatch.
    """
    if not isinstance(content, Mapping):
        raise ElicitationContentError("accepted elicitation content must be an object")
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    problems = [*_answer_problems(properties, content), *_missing(properties, required, content)]
    if problems:
        raise ElicitationContentError(
            "the accepted elicitation content does not match the requested schema: "
            + "; ".join(problems)
        )
    defaults = {
        name: prop["default"]
        for name, prop in properties.items()
        if name not in content and "default" in prop
    }
    return {**content, **defaults}


def _answer_problems(properties: Mapping[str, Any], content: Mapping[str, Any]) -> Iterator[str]:
    for name, value in content.items():
        prop = properties.get(name)
        if prop is None:
            yield f"{name}: not a property of the requested schema"
            continue
        kind = property_kind(prop)
        assert kind is not None  # the schema passed check_form_schema
        yield from (f"{name}: {problem}" for problem in answer_problems(kind, prop, value))


def _missing(
    properties: Mapping[str, Any], required: set[str], content: Mapping[str, Any]
) -> list[str]:
    return [
        f"{name}: required but missing"
        for name in properties
        if name in required and name not in content
    ]


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
