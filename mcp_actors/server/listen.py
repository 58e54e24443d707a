"""``subscriptions/listen`` (2026-07-28): a long-lived notification stream, served as an actor.

A client opens a stream with a ``subscriptions/listen`` request whose
``notifications`` filter opts in to what it wants to hear:

=========================  ==============================================
filter key                 notification delivered
=========================  ==============================================
``toolsListChanged``       ``notifications/tools/list_changed``
``promptsListChanged``     ``notifications/prompts/list_changed``
``resourcesListChanged``   ``notifications/resources/list_changed``
``resourceSubscriptions``  ``notifications/resources/updated`` (those URIs)
=========================  ==============================================

The request's handler *is* the stream's actor (:meth:`ListenStreams.serve`): it
subscribes a receiver to the server's change bus (:mod:`~mcp_actors.runtime.bus`),
sends ``notifications/subscriptions/acknowledged`` with the subset of the filter the
server honours (a kind the server does not offer, a URI it does not know, a key it
does not understand are left out), then delivers each wanted change from its
mailbox, every notification tagged with ``_meta["io.modelcontextprotocol/subscriptionId"]``
= the listen request's id. Nothing is sent before the acknowledgement; changes
published meanwhile wait in the mailbox.

The stream ends when the client cancels the request (``notifications/cancelled`` on
stdio, closing the response stream on HTTP: the handler is cancelled and answers
nothing), when the connection goes, or when the server ends it
(:meth:`ListenStreams.end_all`, e.g. before shutting down): then the request is
answered ``{"resultType": "complete", "_meta": {subscriptionId}}``.

Bounds: at most ``max_streams`` streams per server, and ``max_streams_per_client`` of
them from one client (see :func:`~.authorization.client_identity`), so that one client
cannot take every stream from the others; one more is refused with -32000 and
``data.limit`` (the bound it hit). Listen streams are a pool of their own: over HTTP they
do not count against the requests in progress (``HttpConfig.max_modern_requests``), nor
those against them. Each stream's mailbox holds at most ``mailbox_size``
distinct pending changes — a pending list change absorbs the next one (coalesced),
a resource update beyond the bound is dropped; both are counted in
:meth:`ListenStreams.statistics`. A slow client therefore never slows the
publisher nor any other listener.

**Missed changes.** A bus spanning workers that may have lost changes on their way
to this one publishes :data:`~mcp_actors.runtime.bus.CHANGES_MISSED`. The spec's
stream carries notifications only, none of which says "you missed some"; what it
can say is what a client does about it: each stream is sent a ``list_changed`` for
every list it follows and a ``resources/updated`` for every resource it follows
(:func:`missed`), the notifications that make a client re-list and re-read. They
may be spurious (nothing changed), never wrong: both say only "it may have changed".
The ``taskIds`` key sends nothing then: a task's state is its record (``tasks/get``).

Extensions add filter keys with :func:`register_filter_key` (the tasks extension's
``taskIds`` delivers ``notifications/tasks``): a :class:`FilterKey` says how to
honour the requested value and which changes it selects. A change addressed to one
requestor (``Change.audience``: a task's new state) reaches only the streams of that
requestor (``ListenOffer.audience``), whatever their filter asked for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Final

import attrs
import msgspec

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.jsonrpc import RequestId
from ..protocol.modern import SUBSCRIPTION_ID_KEY
from ..runtime.bus import CHANGES_MISSED, Bus, Change, Mailbox

#: Sends one notification on the listen request's stream.
Notify = Callable[[str, Any], Awaitable[None]]


@attrs.frozen
class ListenOffer:
    """What honouring a filter may look at: the capabilities the server declares to the
    listener's revision, which resource URIs it knows, the capabilities the listen
    request declares (an extension's key may need one: then its ``honour`` raises -32021),
    and who listens (``audience``: a change addressed to someone else is not delivered,
    see :attr:`~mcp_actors.runtime.bus.Change.audience`)."""

    capabilities: t.ServerCapabilities
    knows_resource: Callable[[str], bool]
    client_capabilities: t.ClientCapabilities | None = None
    audience: str = ""


@attrs.frozen
class FilterKey:
    """One key of the ``notifications`` filter.

    ``honour(value, offer)`` returns the value the server agrees to (what the
    acknowledgement carries), or None to leave the key out; it raises McpError
    (-32602) for a value of the wrong shape. ``selects(honoured, change)`` says
    whether a change goes to a stream that honoured ``honoured``. ``missed(honoured)``
    is what such a stream is sent in place of changes that may have been lost (see
    the module docstring; none by default).
    """

    name: str
    honour: Callable[[Any, ListenOffer], Any]
    selects: Callable[[Any, Change], bool]
    missed: Callable[[Any], list[Change]] = attrs.field(default=lambda honoured: [])


def _flag(name: str) -> Callable[[Any, ListenOffer], Any]:
    def honour(value: Any, offer: ListenOffer) -> Any:
        if not isinstance(value, bool):
            raise errors.invalid_params(f"notifications.{name} must be a boolean")
        kind = _LIST_KINDS[name]
        capability = getattr(offer.capabilities, kind)
        offered = capability is not msgspec.UNSET and capability.list_changed is True
        return True if value and offered else None

    return honour


def _resource_uris(value: Any, offer: ListenOffer) -> Any:
    if not isinstance(value, list) or not all(isinstance(uri, str) for uri in value):
        raise errors.invalid_params("notifications.resourceSubscriptions must be a list of strings")
    resources = offer.capabilities.resources
    if resources is msgspec.UNSET or resources.subscribe is not True:
        return None
    known = list(dict.fromkeys(uri for uri in value if offer.knows_resource(uri)))
    return known or None


_LIST_KINDS: Final = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}


def _list_change(kind: str) -> Callable[[Any, Change], bool]:
    method = f"notifications/{kind}/list_changed"
    return lambda honoured, change: change.method == method


def _list_missed(kind: str) -> Callable[[Any], list[Change]]:
    method = f"notifications/{kind}/list_changed"
    return lambda honoured: [Change(method)]


def _resource_update(honoured: Any, change: Change) -> bool:
    return change.method == "notifications/resources/updated" and change.subject in honoured


def _resources_missed(honoured: Any) -> list[Change]:
    method = "notifications/resources/updated"
    return [Change(method, uri, t.ResourceUpdatedParams(uri=uri)) for uri in honoured]


#: The filter keys the server understands, by name (see :func:`register_filter_key`).
FILTER_KEYS: Final[dict[str, FilterKey]] = {
    **{
        name: FilterKey(name, _flag(name), _list_change(kind), _list_missed(kind))
        for name, kind in _LIST_KINDS.items()
    },
    "resourceSubscriptions": FilterKey(
        "resourceSubscriptions", _resource_uris, _resource_update, _resources_missed
    ),
}


def register_filter_key(key: FilterKey) -> None:
    """Teach every server another filter key (an extension's); replaces one of that name."""
    FILTER_KEYS[key.name] = key


def honour(requested: Mapping[str, Any], offer: ListenOffer) -> dict[str, Any]:
    """The subset of ``requested`` the server honours (the acknowledgement's ``notifications``)."""
    honoured: dict[str, Any] = {}
    for name, value in requested.items():
        key = FILTER_KEYS.get(name)
        if key is None:
            continue
        agreed = key.honour(value, offer)
        if agreed is not None:
            honoured[name] = agreed
    return honoured


def selects(honoured: Mapping[str, Any], change: Change) -> bool:
    """Whether a stream that honoured ``honoured`` delivers ``change``."""
    for name, value in honoured.items():
        key = FILTER_KEYS.get(name)
        if key is not None and key.selects(value, change):
            return True
    return False


def missed(honoured: Mapping[str, Any]) -> list[Change]:
    """What a stream that honoured ``honoured`` is sent when changes may have been
    lost on their way to this worker (see the module docstring)."""
    changes: list[Change] = []
    for name, value in honoured.items():
        key = FILTER_KEYS.get(name)
        if key is not None:
            changes.extend(key.missed(value))
    return changes


def tagged(params: Any, subscription_id: RequestId) -> Any:
    """``params`` (a Struct with ``meta``, or None) with the subscription id in ``_meta``."""
    if params is None:
        return t.EmptyParams(meta={SUBSCRIPTION_ID_KEY: subscription_id})
    meta = params.meta if isinstance(params.meta, dict) else {}
    return msgspec.structs.replace(params, meta={**meta, SUBSCRIPTION_ID_KEY: subscription_id})


def _too_many(what: str, limit: int) -> McpError:
    return McpError(
        errors.REQUEST_REJECTED,
        f"too many subscriptions/listen streams {what} (limit {limit})",
        {"limit": limit},
    )


@attrs.frozen
class ListenStatistics:
    """A server's listen streams now, and what they did so far."""

    active: int
    opened: int
    refused: int
    delivered: int
    coalesced: int
    dropped: int


@attrs.define(eq=False)
class ListenStreams:
    """A server's listen streams: the bounds, the bus they hear from, their statistics."""

    bus: Bus
    #: At most this many streams at once (one more is refused, -32000).
    max_streams: int = attrs.field(default=1000, validator=attrs.validators.ge(0))
    #: Distinct changes waiting per stream (see :class:`~mcp_actors.runtime.bus.Mailbox`).
    mailbox_size: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    #: At most this many streams at once from one client (:func:`~.authorization.client_identity`).
    max_streams_per_client: int = attrs.field(default=100, validator=attrs.validators.ge(1))
    _active: dict[Mailbox, None] = attrs.field(init=False, factory=dict)
    #: Streams open now per client (a client with none is not kept).
    _per_client: dict[Hashable, int] = attrs.field(init=False, factory=dict)
    _opened: int = attrs.field(init=False, default=0)
    _refused: int = attrs.field(init=False, default=0)
    #: Counts of streams that ended (the live ones' are added in statistics()).
    _ended: tuple[int, int, int] = attrs.field(init=False, default=(0, 0, 0))

    async def serve(
        self,
        subscription_id: RequestId,
        requested: Mapping[str, Any],
        offer: ListenOffer,
        notify: Notify,
        client: Hashable,
    ) -> t.SubscriptionsListenResult:
        """Run one stream of ``client`` (see :func:`~.authorization.client_identity`)
        until it is cancelled or :meth:`end_all` (module docstring)."""
        honoured = honour(requested, offer)  # a bad filter: -32602 before anything is sent
        opened_by_client = self._per_client.get(client, 0)
        if len(self._active) >= self.max_streams:
            self._refused += 1
            raise _too_many("on this server", self.max_streams)
        if opened_by_client >= self.max_streams_per_client:
            self._refused += 1
            raise _too_many("from this client", self.max_streams_per_client)
        mailbox = Mailbox(self.mailbox_size)

        def receive(change: Change) -> int:
            if change.method == CHANGES_MISSED:
                for catch_up in missed(honoured):
                    mailbox.offer(catch_up)
                return 1
            addressed = change.audience is None or change.audience == offer.audience
            if not addressed or not selects(honoured, change):
                return 0
            mailbox.offer(change)
            return 1

        self._active[mailbox] = None
        self._per_client[client] = opened_by_client + 1
        self._opened += 1
        unsubscribe = self.bus.subscribe(receive)
        try:
            acknowledged = t.SubscriptionsAcknowledgedParams(
                notifications=honoured, meta={SUBSCRIPTION_ID_KEY: subscription_id}
            )
            await notify("notifications/subscriptions/acknowledged", acknowledged)
            while (change := await mailbox.get()) is not None:
                await notify(change.method, tagged(change.params, subscription_id))
        finally:
            unsubscribe()
            del self._active[mailbox]
            if (left := self._per_client[client] - 1) > 0:
                self._per_client[client] = left
            else:
                del self._per_client[client]
            delivered, coalesced, dropped = self._ended
            self._ended = (
                delivered + mailbox.delivered,
                coalesced + mailbox.coalesced,
                dropped + mailbox.dropped,
            )
        return t.SubscriptionsListenResult(meta={SUBSCRIPTION_ID_KEY: subscription_id})

    def end_all(self) -> int:
        """End every stream gracefully (each request is answered); returns how many."""
        mailboxes = list(self._active)
        for mailbox in mailboxes:
            mailbox.close()
        return len(mailboxes)

    def statistics(self) -> ListenStatistics:
        delivered, coalesced, dropped = self._ended
        live = list(self._active)
        return ListenStatistics(
            active=len(live),
            opened=self._opened,
            refused=self._refused,
            delivered=delivered + sum(m.delivered for m in live),
            coalesced=coalesced + sum(m.coalesced for m in live),
            dropped=dropped + sum(m.dropped for m in live),
        )
