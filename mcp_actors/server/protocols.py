"""What the modules around a server need of it, as Protocols: the leaf they type against.

:class:`~.app.Server` and :class:`~.server_session.ServerSession` are the hub every
helper works with, and they in turn use those helpers. Typed against the concrete
classes, every helper would import the hub and the hub every helper: one circle of
modules. Typed against these Protocols instead, the helpers import only this module,
which imports nothing else of the server package: the imports run one way (held by
``tests/test_server_layers.py``). ``Server`` and ``ServerSession`` satisfy them
structurally (mypy checks it where one is passed for the other).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol

import trio
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import ServerDescription, SessionState
from ..protocol.request_state import StateKeys
from ..protocol.versions import Revision
from ..runtime.actors import ActorHost
from ..runtime.bus import Bus
from ..runtime.config import SessionConfig
from ..runtime.middleware import Middleware
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..runtime.task_store import TaskStore
from ..transports.abc import MessageStream
from ..transports.http.auth import Principal


class InputExchange(Protocol):
    """Where a handler's questions go when they cannot be requests on its session (see
    :func:`.client_requests.ask`): an MRTR run (:class:`.mrtr.Run`, modern era) or a
    task's input (:class:`.task_run.RunningTask`)."""

    #: The handler's contexts (each a :class:`.context.Context`): an MRTR retry may
    #: resume them on another request.
    contexts: list[Any]

    async def ask(self, questions: Sequence[Any]) -> list[Any]:
        """The decoded answers to ``questions`` (:class:`.client_requests.Question`)."""
        ...


class TaskRun(Protocol):
    """One run of a task, as its handler learns of it (``ctx.task_id``, ``ctx.attempt``):
    a :class:`.task_run.RunningTask` is one."""

    @property
    def task_id(self) -> str: ...

    @property
    def attempt(self) -> int: ...


class Resumable(Protocol):
    """The server's side of a request whose handler may ask the client (see :mod:`.mrtr`):
    a :class:`~.server_session.ServerSession` is one."""

    input_exchange: InputExchange | None

    @property
    def principal(self) -> Principal | None: ...

    @property
    def client_identity(self) -> Hashable: ...

    def follow(self, request: InboundRequest) -> None:
        """Serve ``request`` from now on (a retry resumed the handler)."""
        ...


class Asks(Protocol):
    """The server's side of a session, as :mod:`.client_requests` puts questions to its
    client: a :class:`~.server_session.ServerSession` is one."""

    input_exchange: InputExchange | None

    @property
    def state(self) -> SessionState: ...

    @property
    def client_capabilities(self) -> t.ClientCapabilities | None: ...

    async def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = None,
        timeout: float | UnsetType | None = UNSET,
        related_request: RequestId | None = None,
    ) -> Any:
        """Send the client a request (through the server's middleware); its result."""
        ...


class Scoped(Protocol):
    """A tool or prompt, as far as OAuth scopes go (see :mod:`.authorization`)."""

    @property
    def scopes(self) -> frozenset[str]: ...


class ScopedServer(Protocol):
    """A server, as :func:`.authorization.scopes_needed` reads what a request needs."""

    def find_tool(self, name: str) -> Scoped | None: ...

    def find_prompt(self, name: str) -> Scoped | None: ...

    def resource_scopes(self, uri: str) -> frozenset[str]: ...


class ToolSchema(Protocol):
    """A registered tool, as the HTTP endpoint checks ``Mcp-Param-*`` headers against it."""

    @property
    def definition(self) -> t.Tool: ...

    @property
    def mirrors_arguments(self) -> bool: ...


class TaskBounds(Protocol):
    """The tasks settings, as shared state is sized by them."""

    @property
    def max_tasks(self) -> int: ...


class Connects(Protocol):
    """Mounted servers, as a host connects them before serving (see :mod:`.mount`)."""

    async def connect(self, host: ActorHost) -> None: ...


class HostedServer(Protocol):
    """A server, as the hosting modules (:mod:`.hosting`, :mod:`.serve`,
    :mod:`.serve_http`, :mod:`.serve_websocket`, :mod:`.workers`) put it on the air."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> SessionConfig: ...

    @property
    def supported_versions(self) -> tuple[str, ...]: ...

    @property
    def tasks(self) -> TaskBounds: ...

    @property
    def mounts(self) -> Connects: ...

    def capabilities(
        self, revision: Revision | None = None, *, stateless: bool = False
    ) -> t.ServerCapabilities: ...

    def describe(self, revision: Revision, *, stateless: bool = False) -> ServerDescription: ...

    def create_session(
        self, transport: MessageStream, state: SessionState | None = None
    ) -> Session: ...

    async def serve_session(
        self,
        transport: MessageStream,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None: ...

    def find_tool(self, name: str) -> ToolSchema | None: ...

    @property
    def middleware(self) -> tuple[Middleware, ...]: ...

    @property
    def roots_changed_handlers(self) -> tuple[object, ...]: ...

    def scopes_needed(self, method: str, target: str | None) -> frozenset[str]: ...

    def share_state(
        self,
        *,
        bus: Bus | None = None,
        task_store: TaskStore | None = None,
        state_keys: StateKeys | None = None,
    ) -> None: ...

    async def take_over_tasks(
        self, host: ActorHost, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None: ...
