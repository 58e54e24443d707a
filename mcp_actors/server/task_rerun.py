"""Running a task's call again on another worker (durable tasks): what to record, how to replay.

When the worker running a task dies, another one takes the task over
(:meth:`.tasks.TaskManager.take_over`). That worker has no connection, request or
session of the call — only the task's record. So the record keeps a
:class:`~mcp_actors.runtime.task_store.TaskCall`, made by :func:`task_call` when the
task starts, and :func:`rerun_work` rebuilds from it what the handler needs:

- the request and its state: a 2026-07-28 call's params carry its revision and the
  client's capabilities in their ``_meta``, admitted again up the same ladder
  (:func:`~mcp_actors.protocol.modern.admit`); a 2025-11-25 call's state is made from
  the recorded revision, capabilities and client info;
- the caller: the recorded principal (subject, client, scopes, claims, as the token
  said when the task started). The run is the same requestor's — the record keeps its
  requestor, so only that caller reaches the task, on any worker;
- a session with no client at the other end (:class:`DetachedStream`): what the
  handler sends outside its questions — log messages, progress — is dropped (nobody
  reads the old request's stream any more; the task's status still reaches pollers
  and listeners through its record). A modern-era handler's questions go to the
  task's input as on the first run (``input_required``, answered with
  ``tasks/update`` on any worker). A legacy one's would be requests on a session that
  died with its worker: they fail (no back channel), and the handler with them.

The server's middleware saw the call when it was made and does not see the re-run,
nor are the tool's scopes checked again (the recorded principal had them). A tool
that is gone from this worker's server (a different deployment version) is not run:
the task fails, saying so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import trio
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.lifecycle import SessionState
from ..protocol.methods import MethodSpec
from ..protocol.modern import ModernRequest, admit
from ..protocol.versions import REVISIONS, Revision
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..runtime.task_store import TaskCall, TaskRecord
from ..transports.abc import Inbound, MessageStream, Outgoing, TransportClosed
from ..transports.http.auth import Principal
from .server_session import ServerSession

if TYPE_CHECKING:
    from .task_run import RunningTask
    from .tasks import Work
    from .tools import RegisteredTool

#: How a tool's call is run (``handlers.run_tool``): given the view, request, tool, params.
RunTool = Callable[
    ["ServerSession", InboundRequest, "RegisteredTool", t.CallToolParams],
    Awaitable[t.CallToolResult | t.CreatedTask],
]


class RerunServer(Protocol):
    """The server, as a re-run needs it: its tools, versions, capabilities, sessions."""

    @property
    def supported_versions(self) -> tuple[str, ...]: ...

    def find_tool(self, name: str) -> RegisteredTool | None: ...

    def capabilities(
        self, revision: Revision | None = None, *, stateless: bool = False
    ) -> t.ServerCapabilities: ...

    def create_session(
        self, transport: MessageStream, state: SessionState | None = None
    ) -> Session: ...


def task_call(view: ServerSession, request: InboundRequest, tool: RegisteredTool) -> TaskCall:
    """What a task of ``request`` (a ``tools/call`` of ``tool``, served by ``view``)
    records so that another worker can run it again."""
    raw = request.raw_params
    capabilities = view.client_capabilities
    info = view.client_info
    return TaskCall(
        params=bytes(raw).decode() if raw is not UNSET else "{}",
        revision=view.protocol_version,
        capabilities=None if capabilities is None else msgspec.to_builtins(capabilities),
        client_info=None if info is None else msgspec.to_builtins(info),
        principal=_principal_fields(view.principal),
        rerun_safe=tool.rerun_safe,
    )


def rerun_work(server: RerunServer, run_tool: RunTool, record: TaskRecord) -> Work:
    """The work of running ``record``'s call again, as :meth:`.tasks.TaskManager.start`
    takes it (see the module docstring). Raises McpError (the task fails with it)
    when it cannot be: no call recorded, or a tool this server does not have."""
    call = record.call
    if call is None:
        raise McpError(errors.INTERNAL_ERROR, f"task {record.task_id!r} has no call to run again")
    tool = server.find_tool(record.tool)
    if tool is None:
        raise McpError(
            errors.INTERNAL_ERROR,
            f"the worker that took task {record.task_id!r} over has no tool {record.tool!r}",
        )
    raw = msgspec.Raw(call.params.encode())
    request_state, modern, spec = _state_of(server, call, raw)
    principal = _principal_of(call.principal)

    async def work(task: RunningTask) -> t.CallToolResult | t.CreatedTask:
        session = server.create_session(DetachedStream(principal), request_state)
        request = InboundRequest(session, record.task_id, "tools/call", spec, raw, modern)
        view = session.dispatcher
        params = request.decode_params()
        assert isinstance(params, t.CallToolParams)
        exchange = task if modern is not None else None  # legacy: no session to ask on
        async with trio.open_nursery() as nursery:
            await nursery.start(session.run)
            try:
                served = _view_of(view, modern).in_task(task, exchange)
                return await run_tool(served, request, tool, params)
            finally:
                session.close()

    return work


def _view_of(dispatcher: object, modern: ModernRequest | None) -> ServerSession:
    """The server's side of the re-run call: the session's, or the modern request's view."""
    assert isinstance(dispatcher, ServerSession)
    return dispatcher if modern is None else dispatcher.for_request(modern)


def _state_of(
    server: RerunServer, call: TaskCall, raw: msgspec.Raw
) -> tuple[SessionState, ModernRequest | None, MethodSpec]:
    """The state the call is served with again, its modern part (None: legacy), its spec."""
    supported = server.supported_versions
    revision = REVISIONS.get(call.revision)
    if revision is None:
        raise McpError(errors.INTERNAL_ERROR, f"unknown protocol revision {call.revision!r}")
    if not revision.handshake:
        spec, modern = admit(
            "tools/call",
            raw,
            supported=supported,
            local_capabilities=lambda revision: server.capabilities(revision, stateless=True),
        )
        return modern.state, modern, spec
    # a legacy session's call: its client as recorded
    capabilities = server.capabilities(revision, stateless=True)
    state = SessionState.stateless("server", capabilities, revision.name, supported)
    try:
        if call.capabilities is not None:
            state.peer_capabilities = msgspec.convert(call.capabilities, t.ClientCapabilities)
        if call.client_info is not None:
            state.peer_info = msgspec.convert(call.client_info, t.Implementation)
    except msgspec.ValidationError as error:
        raise McpError(errors.INTERNAL_ERROR, f"the task's recorded client: {error}") from None
    return state, None, state.check_inbound("tools/call")


def _principal_fields(principal: Principal | None) -> dict[str, Any] | None:
    if principal is None:
        return None
    return {
        "subject": principal.subject,
        "scopes": sorted(principal.scopes),
        "client_id": principal.client_id,
        "claims": dict(principal.claims),
        "expires_at": principal.expires_at,
        "authenticated": principal.authenticated,
    }


def _principal_of(fields: dict[str, Any] | None) -> Principal | None:
    if fields is None:
        return None
    return Principal(
        fields["subject"],
        frozenset(fields["scopes"]),
        fields["client_id"],
        fields["claims"],
        fields["expires_at"],
        fields["authenticated"],
    )


class DetachedStream(MessageStream):
    """The transport of a re-run task's session: no client at the other end. Nothing
    arrives (``receive`` waits until the stream is closed); what is sent is dropped.
    ``principal`` is the caller the task ran for."""

    stateless = True

    def __init__(self, principal: Principal | None) -> None:
        self.principal = principal
        self._closed = trio.Event()

    async def receive(self) -> Inbound:
        await self._closed.wait()
        raise TransportClosed("a re-run task's session has no client")

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self._closed.set()
