"""Resources: definitions, templates, ``resources/read`` and subscriptions to updates."""

from typing import Any

from msgspec import UNSET, UnsetType, field

from .base import Annotations, CacheableResult, Cursor, Icon, McpStruct
from .content import ResourceContents


class Resource(McpStruct):
    """A resource the server can read."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceTemplate(McpStruct):
    """A parameterised family of resources (RFC 6570 URI template)."""

    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListResourcesResult(CacheableResult, kw_only=True):
    """Result of ``resources/list``."""

    resources: list[Resource]
    next_cursor: Cursor | UnsetType = UNSET


class ListResourceTemplatesResult(CacheableResult, kw_only=True):
    """Result of ``resources/templates/list``."""

    resource_templates: list[ResourceTemplate]
    next_cursor: Cursor | UnsetType = UNSET


class ReadResourceParams(McpStruct):
    """Params of ``resources/read``."""

    uri: str
    #: MRTR (2026-07-28): the answers to an ``input_required`` result's requests, by key,
    #: and its ``requestState`` echoed byte-exact (see :mod:`.request_state`).
    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ReadResourceResult(CacheableResult, kw_only=True):
    """Result of ``resources/read``."""

    contents: list[ResourceContents]


class SubscribeParams(McpStruct):
    """Params of ``resources/subscribe``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class UnsubscribeParams(McpStruct):
    """Params of ``resources/unsubscribe``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceUpdatedParams(McpStruct):
    """Params of ``notifications/resources/updated``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
