"""Content blocks: what tools return, prompts hold and sampling exchanges.

Text, image, audio, resource links and embedded resources are one tagged union on
``type`` (:data:`ContentBlock`); sampling adds tool use and tool results
(:data:`SamplingContent`). Resource contents (text or blob) are one struct.
"""

from typing import Any, TypeAlias

from msgspec import UNSET, UnsetType, field

from .base import Annotations, Icon, McpStruct


class ResourceContents(McpStruct):
    """Contents of a resource: text (``text``) or binary (base64 ``blob``).

    One struct for the spec's ``TextResourceContents`` and ``BlobResourceContents``
    because msgspec cannot decode an untagged union of Structs; set exactly one of
    ``text`` and ``blob``.
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class TextContent(McpStruct, tag_field="type", tag="text"):
    """Plain text content."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ImageContent(McpStruct, tag_field="type", tag="image"):
    """Base64-encoded image content."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class AudioContent(McpStruct, tag_field="type", tag="audio"):
    """Base64-encoded audio content (2025-03-26+)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceLink(McpStruct, tag_field="type", tag="resource_link"):
    """A link to a resource the client may read or subscribe to (2025-06-18+)."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class EmbeddedResource(McpStruct, tag_field="type", tag="resource"):
    """Resource contents embedded in a prompt or tool result."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
"""Content of tool results and prompt messages (tagged on ``type``)."""


class ToolUseContent(McpStruct, tag_field="type", tag="tool_use"):
    """A model's request to call a tool, in sampling (2025-11-25)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ToolResultContent(McpStruct, tag_field="type", tag="tool_result"):
    """The result of a tool use, fed back to the model in sampling (2025-11-25)."""

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


SamplingContent: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
"""Content of sampling messages (tagged on ``type``)."""
