"""What a server asks of its client: sampling, elicitation, roots, and the MRTR
``input_required`` result that carries those questions in the 2026-07-28 era."""

from typing import Any, Literal

from msgspec import UNSET, UnsetType, field

from .base import IncludeContext, McpStruct, Result, Role
from .content import SamplingContent
from .tasks import TaskMetadata
from .tools import Tool


class ModelHint(McpStruct):
    """A (sub)string hint for model selection."""

    name: str | UnsetType = UNSET


class ModelPreferences(McpStruct):
    """Server preferences for model selection; priorities are in [0, 1]."""

    hints: list[ModelHint] | UnsetType = UNSET
    cost_priority: float | UnsetType = UNSET
    speed_priority: float | UnsetType = UNSET
    intelligence_priority: float | UnsetType = UNSET


class SamplingMessage(McpStruct):
    """A message in a sampling conversation; a content list is 2025-11-25."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ToolChoice(McpStruct):
    """How the model may use the offered tools (2025-11-25)."""

    mode: Literal["auto", "required", "none"] | UnsetType = UNSET


class CreateMessageParams(McpStruct):
    """Params of ``sampling/createMessage``. ``tools`` / ``tool_choice`` are 2025-11-25."""

    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
    include_context: IncludeContext | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    stop_sequences: list[str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    tools: list[Tool] | UnsetType = UNSET
    tool_choice: ToolChoice | UnsetType = UNSET
    task: TaskMetadata | UnsetType = UNSET  # 2025-11-25
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CreateMessageResult(McpStruct):
    """Result of ``sampling/createMessage``.

    ``stop_reason`` is e.g. ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``,
    ``"toolUse"`` or any other string.
    """

    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    stop_reason: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- elicitation


class ElicitParams(McpStruct):
    """Params of ``elicitation/create`` (2025-06-18+).

    Form mode (``mode`` absent or ``"form"``) needs ``requested_schema``; URL mode
    (2025-11-25, ``mode="url"``) needs ``url`` and ``elicitation_id``.
    """

    message: str
    mode: Literal["form", "url"] | UnsetType = UNSET
    requested_schema: dict[str, Any] | UnsetType = UNSET
    url: str | UnsetType = UNSET
    elicitation_id: str | UnsetType = UNSET
    task: TaskMetadata | UnsetType = UNSET  # 2025-11-25
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ElicitResult(McpStruct):
    """Result of ``elicitation/create``; ``content`` only with ``action="accept"``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ElicitationCompleteParams(McpStruct):
    """Params of ``notifications/elicitation/complete`` (2025-11-25)."""

    elicitation_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- roots


class Root(McpStruct):
    """A root directory or file the server may operate on (``file://`` URI)."""

    uri: str
    name: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class InputRequest(McpStruct):
    """One request of an MRTR ``input_required`` result (2026-07-28): ``elicitation/create``,
    ``sampling/createMessage`` or ``roots/list`` with its params — no ``jsonrpc``, no id."""

    method: str
    params: Any | UnsetType = UNSET


class InputRequiredResult(Result, kw_only=True):
    """``resultType: "input_required"`` (MRTR, 2026-07-28): the server needs the client to
    answer ``input_requests`` (by key) and retry the request with ``requestState``."""

    input_requests: dict[str, InputRequest] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class ListRootsResult(McpStruct):
    """Result of ``roots/list`` (params: ``EmptyParams``)."""

    roots: list[Root]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
