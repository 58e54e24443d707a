"""From a Python function to an MCP tool: input schema, argument decoder, structured output.

The function's signature *is* the tool's contract. Its parameters become the
fields of a msgspec Struct made for it, so that:

- ``inputSchema`` is that Struct's JSON Schema (``Annotated[int, msgspec.Meta(...)]``
  adds descriptions and constraints);
- a call's ``arguments`` are decoded straight from the wire bytes into the Struct,
  validated in the same pass; an error names the argument (``at `$.a` ``);
- a parameter annotated with the server's ``Context`` type is not an argument: it is
  injected.

Argument types: what msgspec decodes — ``str``, ``int``, ``float``, ``bool``,
``None``, lists, tuples, sets, dicts, unions, msgspec Structs, dataclasses, attrs
classes, TypedDicts, NamedTuples, enums, ``Literal``, ``datetime``/``UUID``/
``Decimal``, and ``Annotated[T, msgspec.Meta(ge=0, max_length=10, description=...)]``
for constraints — plus, for tools, Pydantic models when pydantic is installed
(validated with ``model_validate`` after decoding; pydantic is not a dependency) and
``pathlib`` paths (``Path``, ``PurePath``... or ``Path | None``): a non-empty string on
the wire, schema ``{"type": "string", "minLength": 1}`` (no ``format``: JSON Schema
defines none for paths, and strict client validators refuse unknown ones), made the
annotated path type before the call. Nothing is checked about the path itself (that it
exists, or stays inside a folder): the tool decides what it may touch.
Anything else is refused when the function is registered, with a ``TypeError``
naming the tool (or prompt, or resource) and the parameter.

The return annotation decides the output: ``str``, content blocks or a
``CallToolResult`` are unstructured; an object type (a Struct, dataclass,
TypedDict, attrs class, ``dict``) gives ``outputSchema``/``structuredContent``;
any other type (``int``, ``list[str]``...) is wrapped as ``{"result": value}``.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import attrs
import msgspec

from ..protocol import types as t

__all__ = ["ToolSignature", "inspect_tool"]

_NO_OUTPUT = frozenset({str, type(None), inspect.Signature.empty})
_CONTENT_TYPES = (
    t.TextContent,
    t.ImageContent,
    t.AudioContent,
    t.ResourceLink,
    t.EmbeddedResource,
    t.CallToolResult,
)


@attrs.frozen
class ToolSignature:
    """What :func:`inspect_tool` learned from a function."""

    arguments: type[msgspec.Struct]
    argument_names: tuple[str, ...]
    context_parameter: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    #: True when the output is wrapped as ``{"result": value}``.
    wraps_output: bool
    decoder: msgspec.json.Decoder[Any] = attrs.field(eq=False, repr=False)
    #: Arguments validated after decoding (Pydantic models): name -> validator.
    validators: Mapping[str, Callable[[Any], Any]] = attrs.field(factory=dict, eq=False)


SUPPORTED_TYPES = (
    "str, int, float, bool, None, list, tuple, set, dict, unions, msgspec Structs,"
    " dataclasses, attrs classes, TypedDicts, NamedTuples, enums, Literal, datetime, UUID,"
    " Decimal, Annotated[T, msgspec.Meta(...)], Pydantic models and pathlib paths (tools)"
)


def inspect_tool(
    function: Callable[..., Any],
    context_type: type,
    *,
    kind: str = "tool",
    name: str | None = None,
) -> ToolSignature:
    """Build the :class:`ToolSignature` of ``function``; ``context_type`` marks injected params.

    ``kind`` and ``name`` (default: the function's name) say what is being
    registered, for the error raised when a parameter's type is not supported.
    """
    label = f"{kind} {name or function.__name__!r}"
    try:
        hints = get_type_hints(function, include_extras=True)
    except Exception as error:
        raise TypeError(f"{label}: cannot resolve its type hints: {error}") from error
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    validators: dict[str, Callable[[Any], Any]] = {}
    schemas: dict[str, dict[str, Any]] = {}
    context_parameter = None
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"{label}: *args/**kwargs cannot become arguments")
        annotation = hints.get(name, Any)
        if _is_context(annotation, context_type):
            context_parameter = name
            continue
        model = _pydantic_model(annotation) if kind == "tool" else None
        path = _path_argument(annotation) if kind == "tool" else None
        if model is not None:
            annotation = dict[str, Any]
            validators[name] = model.model_validate
            schemas[name] = model.model_json_schema()
        elif path is not None:
            annotation, validators[name] = path
        else:
            _check_argument_type(annotation, label, name)
        if parameter.default is parameter.empty:
            fields.append((name, annotation))
        else:
            fields.append((name, annotation, parameter.default))
    struct_name = "".join(part.title() for part in function.__name__.split("_")) + "Arguments"
    arguments = msgspec.defstruct(struct_name, fields, kw_only=True, forbid_unknown_fields=False)
    output_schema, wraps = _output_schema(hints.get("return", inspect.Signature.empty))
    input_schema = object_schema(arguments)
    for name, schema in schemas.items():
        _put_property_schema(input_schema, name, schema)
    return ToolSignature(
        arguments=arguments,
        argument_names=tuple(field[0] for field in fields),
        context_parameter=context_parameter,
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=wraps,
        decoder=msgspec.json.Decoder(arguments),
        validators=validators,
    )


def _check_argument_type(annotation: Any, label: str, parameter: str) -> None:
    """Raise a TypeError naming ``label`` and ``parameter`` if msgspec cannot decode the type."""
    try:
        msgspec.json.Decoder(annotation)
        msgspec.json.schema(annotation)
    except (TypeError, ValueError):
        shown = getattr(annotation, "__qualname__", None) or repr(annotation)
        raise TypeError(
            f"{label}, parameter {parameter!r}: {shown} is not a supported argument type"
            f" (supported: {SUPPORTED_TYPES})"
        ) from None


def _pydantic_model(annotation: Any) -> Any:
    """``annotation`` if it is a Pydantic model class (pydantic already imported), else None."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(annotation, type):
        return None
    return annotation if issubclass(annotation, pydantic.BaseModel) else None


def _path_argument(annotation: Any) -> tuple[Any, Callable[[Any], Any]] | None:
    """For a ``pathlib`` path parameter (or ``path | None``): the type it has on the
    wire (a non-empty string) and what makes the value a path; None for any other type."""
    arguments = get_args(annotation)
    optional = type(None) in arguments and len(arguments) == 2
    if optional and get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(argument for argument in arguments if argument is not type(None))
    if not (isinstance(annotation, type) and issubclass(annotation, PurePath)):
        return None
    path_type: type[PurePath] = annotation
    wire: Any = Annotated[str, msgspec.Meta(min_length=1)]

    def to_path(value: str | None) -> PurePath | None:
        return None if value is None else path_type(value)

    return (wire | None if optional else wire), to_path


def _put_property_schema(
    schema: dict[str, Any], name: str, property_schema: dict[str, Any]
) -> None:
    """Replace the schema of property ``name``, moving its ``$defs`` to the top level."""
    property_schema = dict(property_schema)
    definitions = property_schema.pop("$defs", None)
    if definitions:
        schema.setdefault("$defs", {}).update(definitions)
    schema["properties"][name] = property_schema


def object_schema(type_: Any) -> dict[str, Any]:
    """The JSON Schema of an object type, with its definition inlined at the top level."""
    schema = msgspec.json.schema(type_)
    ref = schema.get("$ref")
    if ref is None:
        return schema
    definitions: dict[str, Any] = schema.pop("$defs", {})
    top: dict[str, Any] = dict(definitions.pop(ref.rsplit("/", 1)[-1]))
    top.pop("title", None)
    top.setdefault("properties", {})
    if definitions:
        top["$defs"] = definitions
    return top


def _is_context(annotation: Any, context_type: type) -> bool:
    if get_origin(annotation) is typing.Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, context_type)


def _output_schema(annotation: Any) -> tuple[dict[str, Any] | None, bool]:
    if annotation in _NO_OUTPUT or _is_content(annotation):
        return None, False
    if _is_object_type(annotation):
        return object_schema(annotation), False
    wrapper = msgspec.defstruct("Output", [("result", annotation)])
    return object_schema(wrapper), True


def _is_object_type(annotation: Any) -> bool:
    if get_origin(annotation) is typing.Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is dict or annotation is dict:
        return True
    if not isinstance(annotation, type):
        return False
    return (
        issubclass(annotation, msgspec.Struct)
        or dataclasses.is_dataclass(annotation)
        or attrs.has(annotation)
        or typing.is_typeddict(annotation)
    )


def _is_content(annotation: Any) -> bool:
    """Whether the annotation mentions content blocks or ``CallToolResult`` anywhere."""
    if isinstance(annotation, type) and issubclass(annotation, _CONTENT_TYPES):
        return True
    return any(_is_content(argument) for argument in get_args(annotation))


def describe(function: Callable[..., Any]) -> str | None:
    """The first paragraph of a function's docstring, as a one-line description."""
    doc = inspect.getdoc(function)
    if not doc:
        return None
    return " ".join(doc.split("\n\n", 1)[0].split())
