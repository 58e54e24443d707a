"""Prompts and completion: ``prompts/list``, ``prompts/get`` and ``completion/complete``
(whose references point at a prompt or a resource template)."""

from typing import Any, TypeAlias

from msgspec import UNSET, UnsetType, field

from .base import CacheableResult, Cursor, Icon, McpStruct, Result, Role
from .content import ContentBlock


class PromptArgument(McpStruct):
    """An argument a prompt template accepts."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(McpStruct):
    """A prompt or prompt template offered by the server."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListPromptsResult(CacheableResult, kw_only=True):
    """Result of ``prompts/list``."""

    prompts: list[Prompt]
    next_cursor: Cursor | UnsetType = UNSET


class GetPromptParams(McpStruct):
    """Params of ``prompts/get``."""

    name: str
    arguments: dict[str, str] | UnsetType = UNSET
    #: MRTR (2026-07-28): the answers to an ``input_required`` result's requests, by key,
    #: and its ``requestState`` echoed byte-exact (see :mod:`.request_state`).
    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class PromptMessage(McpStruct):
    """One message of a prompt (the spec gives it no ``_meta``)."""

    role: Role
    content: ContentBlock


class GetPromptResult(Result, kw_only=True):
    """Result of ``prompts/get``."""

    messages: list[PromptMessage]
    description: str | UnsetType = UNSET


# --------------------------------------------------------------------------- completion


class PromptReference(McpStruct, tag_field="type", tag="ref/prompt"):
    """Identifies a prompt for ``completion/complete``."""

    name: str
    title: str | UnsetType = UNSET


class ResourceTemplateReference(McpStruct, tag_field="type", tag="ref/resource"):
    """Identifies a resource (template) for ``completion/complete``."""

    uri: str


ResourceReference = ResourceTemplateReference
"""Name used by revisions 2024-11-05 and 2025-03-26."""

Reference: TypeAlias = PromptReference | ResourceTemplateReference


class CompletionArgument(McpStruct):
    """The argument being completed."""

    name: str
    value: str


class CompletionContext(McpStruct):
    """Previously resolved argument values (2025-06-18+)."""

    arguments: dict[str, str] | UnsetType = UNSET


class CompleteParams(McpStruct):
    """Params of ``completion/complete``."""

    ref: Reference
    argument: CompletionArgument
    context: CompletionContext | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class Completion(McpStruct):
    """Completion values (at most 100)."""

    values: list[str]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class CompleteResult(Result, kw_only=True):
    """Result of ``completion/complete``."""

    completion: Completion
