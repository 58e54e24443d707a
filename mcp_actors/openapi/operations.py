"""From an OpenAPI operation to a tool's description: name, input schema, output schema.

Each operation (a method under a path) is one tool:

- **name**: its ``operationId``, else ``METHOD_path`` (``get_pets_petId``), with any
  character outside ``A-Z a-z 0-9 _ -`` turned into ``_``;
- **description**: its ``summary`` and ``description``;
- **input schema**: one property per parameter (``in: path``, ``query`` and
  ``header``; cookies are not sent), named as the parameter, with its schema and
  description, required as declared (a path parameter always). A JSON request body
  (``application/json``) whose schema is an object adds its properties beside them
  (required if the body is); any other JSON body is one property, ``body``. A name
  used twice (a query parameter and a body field both called ``id``) is refused;
- **output schema**, where one makes sense: the JSON schema of the first 2xx
  response; an object as it is, anything else (a list of pets) wrapped as
  ``{"result": ...}``. A response without a JSON schema gives the tool no output
  schema: what the API answers is the result's text.

Every ``$ref`` is resolved first (:func:`~.document.resolve`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from .document import OpenApiError, resolve

__all__ = ["Operation", "operations"]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
Location = Literal["path", "query", "header", "body", "whole-body"]
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_-]")
_JSON = "application/json"


@attrs.frozen
class Operation:
    """One operation, as a tool calls it."""

    name: str
    method: str
    path: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    #: Whether the output is wrapped as ``{"result": ...}``.
    wraps_output: bool
    #: Where each argument goes in the request.
    locations: dict[str, Location]


def operations(document: dict[str, Any]) -> list[Operation]:
    """Every operation of ``document``, in the document's order."""
    found = []
    for path, item in document["paths"].items():
        if not isinstance(item, dict):
            raise OpenApiError(f"paths.{path}: expected an object")
        item = resolve(document, item)
        shared = item.get("parameters") or []
        for method in METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                found.append(_operation(path, method, operation, shared))
    names = [operation.name for operation in found]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise OpenApiError(f"two operations are both named {doubled[0]!r}")
    return found


def _operation(path: str, method: str, operation: dict[str, Any], shared: list[Any]) -> Operation:
    name = _NOT_A_NAME.sub("_", operation.get("operationId") or f"{method}_{path.strip('/')}")
    inputs = _Inputs(f"{method.upper()} {path}")
    inputs.add_parameters([*shared, *(operation.get("parameters") or [])])
    body = operation.get("requestBody")
    if isinstance(body, dict):
        inputs.add_body(body)
    output, wraps = _output(operation)
    text = [part for part in (operation.get("summary"), operation.get("description")) if part]
    return Operation(
        name=name,
        method=method.upper(),
        path=path,
        description="\n\n".join(text) or None,
        input_schema={
            "type": "object",
            "properties": inputs.properties,
            "required": inputs.required,
        },
        output_schema=output,
        wraps_output=wraps,
        locations=inputs.locations,
    )


@attrs.define
class _Inputs:
    """An operation's arguments, as they are found (see the module docstring)."""

    where: str
    properties: dict[str, Any] = attrs.field(factory=dict)
    required: list[str] = attrs.field(factory=list)
    locations: dict[str, Location] = attrs.field(factory=dict)

    def add(self, prop: str, schema: Any, location: Location, needed: bool) -> None:
        if prop in self.properties:
            raise OpenApiError(f"{self.where}: two arguments are both named {prop!r}")
        self.properties[prop] = schema if isinstance(schema, dict) else {}
        self.locations[prop] = location
        if needed:
            self.required.append(prop)

    def add_parameters(self, parameters: list[Any]) -> None:
        """The path, query and header ones (an operation's own replace the path's)."""
        by_key = {(p.get("name"), p.get("in")): p for p in parameters if isinstance(p, dict)}
        for (prop, location), parameter in by_key.items():
            if location not in ("path", "query", "header") or not isinstance(prop, str):
                continue
            schema = dict(parameter.get("schema") or {})
            if isinstance(parameter.get("description"), str):
                schema.setdefault("description", parameter["description"])
            needed = location == "path" or bool(parameter.get("required"))
            self.add(prop, schema, location, needed)

    def add_body(self, body: dict[str, Any]) -> None:
        """A JSON body's fields (or the body as one argument, ``body``)."""
        schema = (body.get("content") or {}).get(_JSON, {}).get("schema")
        needed = bool(body.get("required"))
        if isinstance(schema, dict) and schema.get("type") == "object":
            inner_required = set(schema.get("required") or ()) if needed else set()
            for prop, prop_schema in (schema.get("properties") or {}).items():
                self.add(prop, prop_schema, "body", prop in inner_required)
        elif isinstance(schema, dict):
            self.add("body", schema, "whole-body", needed)


def _output(operation: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The output schema of the first 2xx JSON response, and whether it is wrapped."""
    responses = operation.get("responses") or {}
    for status, response in sorted(responses.items(), key=lambda item: str(item[0])):
        if not str(status).startswith("2"):
            continue
        content = (response if isinstance(response, dict) else {}).get("content") or {}
        schema = (content.get(_JSON) or {}).get("schema")
        if not isinstance(schema, dict):
            return None, False
        if schema.get("type") == "object":
            return schema, False
        wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        return wrapped, True
    return None, False
