"""The method table: every MCP method, who sends it, its types, its revisions, its capability.

One row per method says everything the runtime needs to route, gate and decode
a message, so neither side hard-codes "is this allowed now?" rules:

- ``sender``: ``"client"``, ``"server"`` or ``"both"``;
- ``params`` / ``result``: the msgspec types (``result`` is None for notifications);
- ``since`` / ``until``: the revisions that have the method. The table is keyed by
  era this way: the modern era (2026-07-28) drops ``initialize``, ``ping``,
  ``logging/setLevel``, ``resources/(un)subscribe``, the roots and URL-elicitation
  notifications, and the server→client requests (which it replaces with input
  requests inside results, MRTR); it adds ``server/discover``. :func:`method_table`
  gives one revision's view;
- ``capability``: the capability path that must be declared for the method to be
  used — by the *receiver* for a request (``tools/call`` needs the server's
  ``tools``), by the *sender* for a notification (``notifications/message`` needs
  the server's ``logging``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

import attrs
import msgspec

from . import skills as s
from . import types as t
from .versions import REVISIONS, Revision

Sender = Literal["client", "server", "both"]

_ORDER: Final = {name: index for index, name in enumerate(reversed(list(REVISIONS)))}
#: The last revision of the legacy (handshake) era: ``until`` of what the modern era drops.
_LEGACY: Final = "2025-11-25"
#: The client's notification that its roots changed (what a server's roots handlers hear).
ROOTS_CHANGED: Final = "notifications/roots/list_changed"


@attrs.frozen
class MethodSpec:
    """One MCP method, as data."""

    name: str
    sender: Sender
    params: type[msgspec.Struct]
    result: type[msgspec.Struct] | None
    since: str = "2024-11-05"
    until: str | None = None
    capability: tuple[str, ...] = ()
    #: The revision from which ``capability`` is enforced (older ones lacked the flag).
    capability_since: str = "2024-11-05"
    params_decoder: msgspec.json.Decoder[Any] = attrs.field(init=False, eq=False, repr=False)
    result_decoder: msgspec.json.Decoder[Any] | None = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "params_decoder", msgspec.json.Decoder(self.params))
        decoder = msgspec.json.Decoder(self.result) if self.result is not None else None
        object.__setattr__(self, "result_decoder", decoder)

    @property
    def is_request(self) -> bool:
        return self.result is not None

    def available_in(self, revision: Revision) -> bool:
        """Whether the method exists in ``revision``."""
        position = _ORDER[revision.name]
        if position < _ORDER[self.since]:
            return False
        return self.until is None or position <= _ORDER[self.until]

    def capability_required(self, revision: Revision) -> tuple[str, ...]:
        """The capability path to check under ``revision`` (empty: nothing to check)."""
        if self.capability and _ORDER[revision.name] >= _ORDER[self.capability_since]:
            return self.capability
        return ()


def _spec(*args: Any, **kwargs: Any) -> tuple[str, MethodSpec]:
    spec = MethodSpec(*args, **kwargs)
    return spec.name, spec


METHODS: Final[dict[str, MethodSpec]] = dict(
    [
        # lifecycle and utilities
        _spec("initialize", "client", t.InitializeParams, t.InitializeResult, until=_LEGACY),
        _spec("notifications/initialized", "client", t.EmptyParams, None, until=_LEGACY),
        _spec("ping", "both", t.EmptyParams, t.EmptyResult, until=_LEGACY),
        _spec("server/discover", "client", t.DiscoverParams, t.DiscoverResult, since="2026-07-28"),
        _spec("notifications/cancelled", "both", t.CancelledParams, None),
        _spec("notifications/progress", "both", t.ProgressParams, None),
        # subscriptions/listen (2026-07-28): the stream that replaces resources/subscribe
        _spec(
            "subscriptions/listen",
            "client",
            t.SubscriptionsListenParams,
            t.SubscriptionsListenResult,
            since="2026-07-28",
        ),
        _spec(
            "notifications/subscriptions/acknowledged",
            "server",
            t.SubscriptionsAcknowledgedParams,
            None,
            since="2026-07-28",
        ),
        # tools
        _spec("tools/list", "client", t.PaginatedParams, t.ListToolsResult, capability=("tools",)),
        _spec("tools/call", "client", t.CallToolParams, t.CallToolResult, capability=("tools",)),
        _spec(
            "notifications/tools/list_changed",
            "server",
            t.EmptyParams,
            None,
            capability=("tools", "list_changed"),
        ),
        # resources
        _spec(
            "resources/list",
            "client",
            t.PaginatedParams,
            t.ListResourcesResult,
            capability=("resources",),
        ),
        _spec(
            "resources/templates/list",
            "client",
            t.PaginatedParams,
            t.ListResourceTemplatesResult,
            capability=("resources",),
        ),
        _spec(
            "resources/read",
            "client",
            t.ReadResourceParams,
            t.ReadResourceResult,
            capability=("resources",),
        ),
        _spec(
            "resources/subscribe",
            "client",
            t.SubscribeParams,
            t.EmptyResult,
            until=_LEGACY,
            capability=("resources", "subscribe"),
        ),
        _spec(
            "resources/unsubscribe",
            "client",
            t.UnsubscribeParams,
            t.EmptyResult,
            until=_LEGACY,
            capability=("resources", "subscribe"),
        ),
        _spec(
            "notifications/resources/updated",
            "server",
            t.ResourceUpdatedParams,
            None,
            capability=("resources", "subscribe"),
        ),
        _spec(
            "notifications/resources/list_changed",
            "server",
            t.EmptyParams,
            None,
            capability=("resources", "list_changed"),
        ),
        # the Skills extension (io.modelcontextprotocol/skills), both eras: its methods
        # exist where the server declares the extension (resources/directory/read: with
        # its directoryRead setting)
        _spec(
            "skills/list",
            "client",
            t.PaginatedParams,
            s.ListSkillsResult,
            capability=("extensions", s.SKILLS_EXTENSION),
        ),
        _spec(
            "skills/get",
            "client",
            s.GetSkillParams,
            s.GetSkillResult,
            capability=("extensions", s.SKILLS_EXTENSION),
        ),
        _spec(
            "resources/directory/read",
            "client",
            s.ReadDirectoryParams,
            s.ReadDirectoryResult,
            capability=("extensions", s.SKILLS_EXTENSION, "directoryRead"),
        ),
        # prompts
        _spec(
            "prompts/list",
            "client",
            t.PaginatedParams,
            t.ListPromptsResult,
            capability=("prompts",),
        ),
        _spec(
            "prompts/get", "client", t.GetPromptParams, t.GetPromptResult, capability=("prompts",)
        ),
        _spec(
            "notifications/prompts/list_changed",
            "server",
            t.EmptyParams,
            None,
            capability=("prompts", "list_changed"),
        ),
        # completion and logging
        _spec(
            "completion/complete",
            "client",
            t.CompleteParams,
            t.CompleteResult,
            capability=("completions",),
            capability_since="2025-03-26",
        ),
        _spec(
            "logging/setLevel",
            "client",
            t.SetLevelParams,
            t.EmptyResult,
            until=_LEGACY,
            capability=("logging",),
        ),
        _spec(
            "notifications/message",
            "server",
            t.LoggingMessageParams,
            None,
            capability=("logging",),
        ),
        # client features
        _spec(
            "sampling/createMessage",
            "server",
            t.CreateMessageParams,
            t.CreateMessageResult,
            until=_LEGACY,
            capability=("sampling",),
        ),
        _spec(
            "elicitation/create",
            "server",
            t.ElicitParams,
            t.ElicitResult,
            since="2025-06-18",
            until=_LEGACY,
            capability=("elicitation",),
        ),
        _spec(
            "notifications/elicitation/complete",
            "server",
            t.ElicitationCompleteParams,
            None,
            since="2025-11-25",
            until=_LEGACY,
        ),
        _spec(
            "roots/list",
            "server",
            t.EmptyParams,
            t.ListRootsResult,
            until=_LEGACY,
            capability=("roots",),
        ),
        # tasks: the 2025-11-25 experimental core tasks (legacy sessions) and the
        # 2026-07-28 extension io.modelcontextprotocol/tasks, whose tasks/get and
        # tasks/cancel keep their names (and params) with other results. The server
        # checks who may use them (server/tasks_methods.py): neither era declares a
        # capability the table could check on the receiving side.
        _spec("tasks/get", "client", t.TaskIdParams, t.GetTaskResult, since="2025-11-25"),
        _spec("tasks/cancel", "client", t.TaskIdParams, t.CancelTaskResult, since="2025-11-25"),
        _spec(
            "tasks/result",
            "client",
            t.GetTaskPayloadParams,
            t.CallToolResult,
            since="2025-11-25",
            until=_LEGACY,
        ),
        _spec(
            "tasks/list",
            "client",
            t.PaginatedParams,
            t.ListTasksResult,
            since="2025-11-25",
            until=_LEGACY,
        ),
        _spec(
            "notifications/tasks/status",
            "server",
            t.TaskStatusNotificationParams,
            None,
            since="2025-11-25",
            until=_LEGACY,
        ),
        _spec("tasks/update", "client", t.UpdateTaskParams, t.EmptyResult, since="2026-07-28"),
        _spec("notifications/tasks", "server", t.DetailedTask, None, since="2026-07-28"),
        _spec(
            ROOTS_CHANGED,
            "client",
            t.EmptyParams,
            None,
            until=_LEGACY,
            capability=("roots", "list_changed"),
        ),
    ]
)


def register_method(spec: MethodSpec) -> None:
    """Add an extension's method to the table (idempotent for an identical row).

    The table is protocol knowledge shared by every connection of the process; who
    may use the method is still decided per connection, by ``spec.capability``
    (e.g. ``("extensions", "com.example/thing")``: a server that does not declare
    the extension answers -32601). A different row for a known method raises
    ValueError: two extensions cannot both own a method name.
    """
    known = METHODS.get(spec.name)
    if known is not None:
        if known != spec:
            raise ValueError(f"method {spec.name!r} is already defined differently: {known!r}")
        return
    METHODS[spec.name] = spec
    method_table.cache_clear()


@functools.cache
def method_table(revision: Revision) -> Mapping[str, MethodSpec]:
    """The methods that exist in ``revision``, by name (unknown there: -32601)."""
    return MappingProxyType(
        {name: spec for name, spec in METHODS.items() if spec.available_in(revision)}
    )


def has_capability(capabilities: object, path: tuple[str, ...]) -> bool:
    """Whether ``capabilities`` (a capabilities Struct) declares ``path``.

    ``("resources", "subscribe")`` is true when ``capabilities.resources.subscribe``
    is true; a capability given as a plain object (``sampling: {}``) is declared by
    its presence.
    """
    node: object = capabilities
    for name in path:
        if isinstance(node, dict):
            node = node.get(name, msgspec.UNSET)
        else:
            node = getattr(node, name, msgspec.UNSET)
        if node is msgspec.UNSET or node is None or node is False:
            return False
    return True
