"""A session of an older revision gets only the fields that revision defines.

A server registered with everything 2025-11-25 can describe (titles, icons, tool
annotations, output schemas, ``_meta`` on items, ``lastModified``...) talks to a
client of each legacy revision. Every object it sends is validated against that
revision's official schema made strict: the definitions of items (``Tool``,
``Resource``, ``Prompt``, ``Implementation``, content...) refuse properties they do
not list, which is how a strict peer of that revision reads them.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import jsonschema
import pytest
import referencing
from test_modern_server import raw_peer, result_of

from mcp_actors import SUPPORTED, Server, types
from mcp_actors.testing.wire import SCHEMA_DIR

#: Definitions made strict (``additionalProperties: false``) where the revision has them.
STRICT = (
    "Tool",
    "ToolAnnotations",
    "Resource",
    "ResourceTemplate",
    "Prompt",
    "PromptArgument",
    "Implementation",
    "Annotations",
    "TextContent",
    "ImageContent",
    "EmbeddedResource",
    "TextResourceContents",
    "BlobResourceContents",
    "CallToolResult",
    "ListToolsResult",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ListPromptsResult",
    "ReadResourceResult",
    "GetPromptResult",
    "InitializeResult",
)
ICON = types.Icon(src="https://example.com/icon.png", mime_type="image/png")
META = {"io.example/origin": "test"}


@functools.cache
def strict_validator(revision: str, definition: str) -> Any:
    schema = json.loads((SCHEMA_DIR / revision / "schema.json").read_text(encoding="utf-8"))
    schema = copy.deepcopy(schema)
    defs = schema.get("$defs") or schema["definitions"]
    for name in STRICT:
        if name in defs and "properties" in defs[name]:
            defs[name]["additionalProperties"] = False
    cls = jsonschema.validators.validator_for(schema)
    registry = referencing.Registry().with_resource(
        "urn:strict", referencing.Resource.from_contents(schema)
    )
    key = "$defs" if "$defs" in schema else "definitions"
    return cls({"$ref": f"urn:strict#/{key}/{definition}"}, registry=registry)


def rich_server() -> Server:
    server = Server("rich", "1.0", title="Rich server")

    @server.tool(
        title="Add",
        icons=[ICON],
        meta=META,
        annotations=types.ToolAnnotations(title="Add", read_only_hint=True),
    )
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.resource(
        "test://doc",
        title="Doc",
        icons=[ICON],
        meta=META,
        mime_type="text/plain",
        annotations=types.Annotations(priority=0.5, last_modified="2025-01-12T15:00:58Z"),
    )
    async def doc() -> str:
        return "text"

    @server.resource("test://items/{id}", title="Item", icons=[ICON], meta=META)
    async def item(id: str) -> str:
        return id

    @server.prompt(title="Greet", icons=[ICON], meta=META)
    async def greet(name: str) -> str:
        """Greet someone.

        Args:
            name: Who.
        """
        return f"Hello {name}"

    return server


@pytest.mark.parametrize("revision", SUPPORTED)
async def test_a_legacy_session_gets_only_its_revisions_fields(revision: str) -> None:
    async with raw_peer("memory", rich_server()) as peer:
        answers = {"InitializeResult": result_of(await peer.initialize(revision))}
        for method, definition, params in (
            ("tools/list", "ListToolsResult", {}),
            ("tools/call", "CallToolResult", {"name": "add", "arguments": {"a": 1, "b": 2}}),
            ("resources/list", "ListResourcesResult", {}),
            ("resources/templates/list", "ListResourceTemplatesResult", {}),
            ("resources/read", "ReadResourceResult", {"uri": "test://doc"}),
            ("prompts/list", "ListPromptsResult", {}),
            ("prompts/get", "GetPromptResult", {"name": "greet", "arguments": {"name": "A"}}),
        ):
            response, _ = await peer.request(method, params, revision=revision)
            answers[definition] = result_of(response)
    for definition, result in answers.items():
        errors = [e.message for e in strict_validator(revision, definition).iter_errors(result)]
        assert not errors, f"{revision} {definition}: {errors}"
    tool = answers["ListToolsResult"]["tools"][0]
    if revision == "2025-11-25":  # the newest legacy revision keeps everything
        assert {"title", "icons", "annotations", "outputSchema", "_meta"} <= set(tool)
    if revision == "2024-11-05":
        assert set(tool) == {"name", "description", "inputSchema"}
