"""An OpenAPI document as plain data: loaded from YAML or JSON, its local ``$ref``s resolved.

:func:`load` takes a document as a dict already, as text (YAML of several lines — JSON
is YAML too — or one JSON object) or as a path to a ``.yaml``/``.yml``/``.json`` file;
PyYAML (``yaml.safe_load``, the extra ``mcp-actors[openapi]``) parses text, msgspec a
``.json`` file. Only OpenAPI 3.0 and
3.1 documents are taken (Swagger 2.0 is refused, naming the version).

:func:`resolve` replaces every ``{"$ref": "#/..."}`` with what it points to (a JSON
pointer into the same document), so that the schemas handed to clients stand alone. A
reference to another file or URL is refused (:class:`OpenApiError`); a schema that
refers to itself (a tree of nodes) is expanded ``max_depth`` levels deep, then left as
``{}`` (any value): a tool's schema is a description for a model, not a validator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

__all__ = ["OpenApiError", "load", "resolve"]


class OpenApiError(ValueError):
    """A document that cannot be turned into tools; the message says where and why."""


def load(spec: dict[str, Any] | str | Path) -> dict[str, Any]:
    """The document ``spec`` is (a dict), holds (YAML or JSON text) or names (a path)."""
    if isinstance(spec, dict):
        document: Any = spec
    elif isinstance(spec, Path) or not ("\n" in spec or spec.lstrip().startswith("{")):
        document = _read(Path(spec))
    else:
        document = _parse_yaml(spec, "<text>")
    if not isinstance(document, dict):
        raise OpenApiError(f"an OpenAPI document is an object, not {type(document).__name__}")
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        found = document.get("swagger") or version
        raise OpenApiError(f"only OpenAPI 3.x documents are taken, not version {found!r}")
    if not isinstance(document.get("paths"), dict):
        raise OpenApiError("the document has no 'paths' object")
    return document


def _read(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise OpenApiError(f"cannot read {path}: {error.strerror or error}") from None
    if path.suffix == ".json":
        try:
            return msgspec.json.decode(data)
        except msgspec.DecodeError as error:
            raise OpenApiError(f"{path}: not valid JSON: {error}") from None
    return _parse_yaml(data.decode("utf-8", errors="replace"), str(path))


def _parse_yaml(text: str, source: str) -> Any:
    try:
        import yaml
    except ImportError:  # pragma: no cover - the extra is part of the test install
        raise ImportError("reading YAML needs PyYAML: pip install 'mcp-actors[openapi]'") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise OpenApiError(f"{source}: not valid YAML: {error}") from None


def resolve(document: dict[str, Any], value: Any, max_depth: int = 8) -> Any:
    """``value`` (a part of ``document``) with its local ``$ref``s replaced (see the
    module docstring)."""
    return _resolve(document, value, max_depth, ())


def _resolve(document: dict[str, Any], value: Any, depth: int, seen: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_resolve(document, item, depth, seen) for item in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    if isinstance(ref, str):
        if seen.count(ref) >= 1 and depth <= 0:
            return {}
        target = _pointer(document, ref)
        return _resolve(document, target, depth - 1 if ref in seen else depth, (*seen, ref))
    return {key: _resolve(document, item, depth, seen) for key, item in value.items()}


def _pointer(document: dict[str, Any], ref: str) -> Any:
    """What the local reference ``ref`` (``#/components/schemas/Pet``) points to."""
    if not ref.startswith("#/"):
        raise OpenApiError(f"only references within the document are followed, not {ref!r}")
    node: Any = document
    for part in ref[2:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise OpenApiError(f"reference {ref!r} points to nothing")
    return node
