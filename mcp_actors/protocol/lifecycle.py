"""The session lifecycle as a state machine in data: who may send what, and when.

:class:`SessionState` is one side's view of one session. The runtime asks it
before dispatching an inbound message (:meth:`SessionState.check_inbound`, which
returns the method's row or raises the :class:`McpError` to answer) and before
sending one (:meth:`SessionState.check_outbound`, which raises
:class:`ProtocolViolation` — our mistake, caught before any byte moves).

Phases::

    NEW --initialize--> INITIALIZING --notifications/initialized--> OPERATING --> CLOSED

Before ``initialize`` only ``ping`` is accepted. Between the ``initialize``
response and the ``initialized`` notification requests are already served: the
spec says the client *should not* send them then, not that the server must refuse.
"""

from __future__ import annotations

import enum
from typing import Literal, Protocol

import attrs

from . import types as t
from .errors import INVALID_REQUEST, McpError, ProtocolViolation, method_not_found
from .methods import METHODS, MethodSpec, has_capability
from .versions import LATEST, REVISIONS, SUPPORTED, Revision, accept, negotiate

Role = Literal["client", "server"]

_ALWAYS_ALLOWED = frozenset({"ping", "initialize", "notifications/cancelled"})


class Phase(enum.Enum):
    NEW = "new"
    INITIALIZING = "initializing"
    OPERATING = "operating"
    CLOSED = "closed"


@attrs.define
class SessionState:
    """One side's knowledge of a session: phase, revision and both sides' capabilities."""

    role: Role
    local_capabilities: t.ServerCapabilities | t.ClientCapabilities
    supported_versions: tuple[str, ...] = SUPPORTED
    phase: Phase = Phase.NEW
    #: Until negotiated, the revision we would propose (used to gate early pings).
    revision: Revision = attrs.field(factory=lambda: REVISIONS[LATEST])
    peer_capabilities: t.ServerCapabilities | t.ClientCapabilities | None = None
    peer_info: t.Implementation | None = None
    #: Whether the peer can answer our requests and keep state between its own. False
    #: for a stateless exchange (each request served by a session of its own): our
    #: requests are then refused locally, and what needs a session is refused to it.
    back_channel: bool = True

    @classmethod
    def stateless(
        cls,
        role: Role,
        local_capabilities: t.ServerCapabilities | t.ClientCapabilities,
        version: str,
        supported_versions: tuple[str, ...] = SUPPORTED,
    ) -> SessionState:
        """A session that starts OPERATING at ``version``, with no handshake of its own.

        For exchanges that stand alone, like Streamable HTTP's stateless mode where
        every POST is served by a fresh session: the client initialized once, long
        ago, on another one. Nothing is known about the peer, and it could not answer
        a request of ours anyway: there is no back channel.
        """
        peer: t.ServerCapabilities | t.ClientCapabilities = (
            t.ClientCapabilities() if role == "server" else t.ServerCapabilities()
        )
        return cls(
            role,
            local_capabilities,
            supported_versions,
            phase=Phase.OPERATING,
            revision=REVISIONS[version],
            peer_capabilities=peer,
            back_channel=False,
        )

    @property
    def peer_role(self) -> Role:
        return "client" if self.role == "server" else "server"

    # -- handshake ---------------------------------------------------------------

    def receive_initialize(self, params: t.InitializeParams) -> Revision:
        """Server side: record the client's ``initialize`` and negotiate the revision."""
        if self.phase is not Phase.NEW:
            raise McpError(INVALID_REQUEST, "initialize may be sent only once per session")
        self.revision = negotiate(params.protocol_version, self.supported_versions)
        self.peer_capabilities = params.capabilities
        self.peer_info = params.client_info
        self.phase = Phase.INITIALIZING
        return self.revision

    def receive_initialize_result(self, result: t.InitializeResult) -> Revision:
        """Client side: check the server's answer; raises if we do not speak its revision."""
        self.revision = accept(result.protocol_version, self.supported_versions)
        self.peer_capabilities = result.capabilities
        self.peer_info = result.server_info
        self.phase = Phase.OPERATING
        return self.revision

    def receive_initialized(self) -> None:
        """Server side: the client's ``notifications/initialized`` arrived."""
        if self.phase is Phase.INITIALIZING:
            self.phase = Phase.OPERATING

    def close(self) -> None:
        self.phase = Phase.CLOSED

    # -- gating ------------------------------------------------------------------

    def check_inbound(self, method: str) -> MethodSpec:
        """The row for an inbound ``method``, or the :class:`McpError` to answer with."""
        spec = METHODS.get(method)
        if (
            spec is None
            or spec.sender == self.role
            or not spec.available_in(self.revision)
            or (spec.is_request and not self._declared(self.local_capabilities, spec))
        ):
            raise method_not_found(method)
        if self.phase is Phase.NEW and method not in _ALWAYS_ALLOWED:
            raise McpError(
                INVALID_REQUEST,
                f"{method} before initialize: the session is not initialized yet",
            )
        return spec

    def check_outbound(self, method: str) -> MethodSpec | None:
        """Check that we may send ``method`` now; returns its row (None for a custom method)."""
        spec = METHODS.get(method)
        if spec is None:
            return None
        if spec.sender == self.peer_role:
            raise ProtocolViolation(
                INVALID_REQUEST, f"{method} is sent by the {self.peer_role}, not the {self.role}"
            )
        if not spec.available_in(self.revision):
            raise ProtocolViolation(
                INVALID_REQUEST,
                f"{method} does not exist in protocol revision {self.revision.name}",
            )
        if spec.is_request and not self.back_channel:
            raise ProtocolViolation(
                INVALID_REQUEST,
                f"{method} cannot be sent: this session is stateless (such as stateless"
                f" HTTP) and has no channel for {self.role}-to-{self.peer_role} requests",
            )
        # A request needs the peer to have declared the capability; a notification, us.
        holder = self.peer_capabilities if spec.is_request else self.local_capabilities
        if not self._declared(holder, spec):
            path = ".".join(spec.capability)
            peer = self.peer_role
            needs = (
                f"the {peer} capability {path!r}, which the {peer} did not declare"
                if spec.is_request
                else f"our own capability {path!r} to be declared"
            )
            raise ProtocolViolation(INVALID_REQUEST, f"{method} needs {needs}")
        return spec

    def _declared(self, capabilities: object, spec: MethodSpec) -> bool:
        path = spec.capability_required(self.revision)
        return not path or (capabilities is not None and has_capability(capabilities, path))


@attrs.frozen
class ServerDescription:
    """What a server tells a client about itself, for one revision (``initialize``'s result)."""

    capabilities: t.ServerCapabilities
    server_info: t.Implementation
    instructions: str | None = None


class DescribeServer(Protocol):
    """The server's side of the handshake: what it tells a client of ``revision``
    (``stateless``: the exchange has no back channel). Also what a modern request,
    which has no handshake, is served with."""

    def __call__(self, revision: Revision, *, stateless: bool) -> ServerDescription: ...
