"""Tools described by a JSON Schema rather than by a Python signature.

``@server.tool`` derives a tool's input schema from its function's parameters. A tool
made from a description that exists already — an OpenAPI operation
(:mod:`mcp_actors.openapi`), a tool list written elsewhere — has its schema first, and a
function that takes the arguments as one dict::

    async def lookup(arguments: dict[str, Any], ctx: Context) -> Any: ...

    server.add_tool(schema_tool("lookup", {"type": "object", "properties": {...}}, lookup))

The arguments are still decoded and checked in one pass, as for any tool: each top-level
property becomes a field typed by its JSON Schema ``type`` (``string`` -> str,
``integer`` -> int, ``number`` -> float, ``boolean`` -> bool, ``array`` -> list,
``object`` -> dict; anything else, any JSON value), the ``required`` ones required, an
unknown one refused unless ``additionalProperties`` allows it (then it is dropped). A
wrong call is an ``isError`` result naming the argument (``Expected `int`, got `str` -
at `$.petId```). Finer constraints (formats, enums, nested objects) are the function's
to check, or the service's behind it. The function gets only the arguments given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import msgspec
from msgspec import UNSET

from ..protocol import types as t
from .context import Context
from .signature import ToolSignature
from .tools import RegisteredTool

__all__ = ["SchemaFunction", "schema_tool"]

#: What a schema tool runs: its arguments (those given) and the request's Context.
SchemaFunction = Callable[[dict[str, Any], Context], Awaitable[Any]]

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}
#: The keyword the runtime gives a schema tool's Context under (never a field's name:
#: fields are named f0, f1...).
_CONTEXT = "context"


def _field_type(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str) and kind in _TYPES:
        typ = _TYPES[kind]
        return typ | None if schema.get("nullable") else typ
    return Any


def arguments_struct(name: str, schema: dict[str, Any]) -> type[msgspec.Struct]:
    """The Struct that decodes and checks arguments of ``schema`` (see the module docstring)."""
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise TypeError(f"tool {name!r}: inputSchema.properties must be an object")
    required = set(schema.get("required") or ())
    missing = required - set(properties)
    if missing:
        raise TypeError(f"tool {name!r}: required {sorted(missing)} not among its properties")
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    # required fields first: a Struct's fields without defaults come before the others
    ordered = sorted(properties, key=lambda prop: prop not in required)
    for index, prop in enumerate(ordered):
        field = f"f{index}"
        rename[field] = prop
        kind = _field_type(properties[prop])
        fields.append((field, kind) if prop in required else (field, kind | None, UNSET))
    return msgspec.defstruct(
        f"{name}_arguments",
        fields,
        rename=rename,
        forbid_unknown_fields=schema.get("additionalProperties", False) is False,
    )


def schema_tool(
    name: str,
    input_schema: dict[str, Any],
    function: SchemaFunction,
    *,
    description: str | None = None,
    title: str | None = None,
    output_schema: dict[str, Any] | None = None,
    annotations: t.ToolAnnotations | None = None,
    scopes: Iterable[str] = (),
) -> RegisteredTool:
    """A tool named ``name`` taking arguments of ``input_schema`` (a JSON Schema object),
    served by ``function(arguments, ctx)``; add it with ``server.add_tool``. With an
    ``output_schema``, what ``function`` returns is the result's ``structuredContent``
    (a JSON object)."""
    struct = arguments_struct(name, input_schema)
    names = struct.__struct_encode_fields__
    fields = struct.__struct_fields__

    async def run(**given: Any) -> Any:
        context = given.pop(_CONTEXT)
        arguments = {
            names[i]: given[field] for i, field in enumerate(fields) if given[field] is not UNSET
        }
        return await function(arguments, context)

    signature = ToolSignature(
        arguments=struct,
        argument_names=tuple(names),
        context_parameter=_CONTEXT,
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=False,
        decoder=msgspec.json.Decoder(struct),
    )
    definition = t.Tool(
        name=name,
        input_schema=input_schema,
        title=title if title is not None else UNSET,
        description=description if description is not None else UNSET,
        output_schema=output_schema if output_schema is not None else UNSET,
        annotations=annotations if annotations is not None else UNSET,
    )
    return RegisteredTool(definition, run, signature, scopes=scopes)
