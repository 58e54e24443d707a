"""Subscriptions as actors: one small task per (subscriber, topic), fed without ever blocking.

A *topic* is a string (for MCP, a resource URI). A publisher calls
:meth:`SubscriptionHub.publish` from anywhere in the Trio thread; it is synchronous
and never waits: it drops the update into each subscriber's :class:`Subscription`
mailbox and returns. Each subscription is an actor — a task, started in its
subscriber's session nursery — that takes the update out of its mailbox and
delivers it (for a server: writes ``notifications/resources/updated``).

The mailbox is a bounded buffer of **one** update with a written-down overflow
policy: *latest wins*. A subscriber that cannot keep up (its peer reads slowly, its
writer queue is full) is coalesced: while one delivery is in progress, any number
of new updates collapse into one pending update holding the newest value. So

- the publisher and every other subscriber are never slowed by a slow one;
- memory per subscriber is constant, whatever the publication rate;
- the *last* update is never lost: a subscriber always ends up seeing it;
- ``coalesced`` counts what was merged, so a slow subscriber is visible.

Ending a subscription is cancelling its actor (:meth:`Subscription.cancel`, or its
session ending); the actor's ``finally`` takes it out of the hub, so nothing is
left behind by a subscriber that goes away.

>>> hub = SubscriptionHub()
>>> # in a task:  sub = await hub.subscribe("file:///a", deliver, start=session.start_actor)
>>> hub.publish("file:///a", value)       # never blocks
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import attrs
import trio

log = logging.getLogger("mcp_actors.subscription")

T = TypeVar("T")

#: Delivers one update to the subscriber; may wait (e.g. on the session's writer).
Deliver = Callable[[T], Awaitable[None]]
#: Starts an actor task somewhere (e.g. ``Session.start_actor``): ``start(async_fn)``.
Starter = Callable[[Callable[[], Awaitable[None]]], None]


@attrs.frozen
class HubStatistics:
    """A snapshot of a hub: how many topics and subscriptions, and the traffic so far."""

    topics: int
    subscriptions: int
    published: int
    delivered: int
    coalesced: int


@attrs.define(eq=False)
class Subscription(Generic[T]):
    """One subscriber's interest in one topic: a one-slot, latest-wins mailbox and its actor.

    Create it through :meth:`SubscriptionHub.subscribe`. ``offer`` never blocks;
    :meth:`run` is the actor body.
    """

    topic: str
    _deliver: Deliver[T]
    _hub: SubscriptionHub[T]
    _pending: T | None = attrs.field(init=False, default=None)
    _has_pending: bool = attrs.field(init=False, default=False)
    _wakeup: trio.Event = attrs.field(init=False, factory=trio.Event)
    _scope: trio.CancelScope = attrs.field(init=False, factory=trio.CancelScope)
    _running: bool = attrs.field(init=False, default=False)
    #: Updates handed to ``deliver``.
    delivered: int = attrs.field(init=False, default=0)
    #: Updates that replaced a pending one (the subscriber was behind).
    coalesced: int = attrs.field(init=False, default=0)

    def offer(self, value: T) -> bool:
        """Put ``value`` in the mailbox, replacing a pending update (latest wins). Never
        blocks. Whether it replaced one (the subscriber is behind: counted in ``coalesced``)."""
        replaced = self._has_pending
        if replaced:
            self.coalesced += 1
        self._pending = value
        self._has_pending = True
        self._wakeup.set()
        return replaced

    def cancel(self) -> None:
        """End the subscription: the actor stops and leaves the hub."""
        self._scope.cancel()
        if not self._running:
            self._hub.remove(self)

    @property
    def active(self) -> bool:
        return not self._scope.cancel_called

    async def run(self) -> None:
        """The actor: wait for an update, deliver it, repeat; leave the hub when done."""
        self._running = True
        try:
            with self._scope:
                while True:
                    await self._wakeup.wait()
                    self._wakeup = trio.Event()
                    value = self._pending
                    self._pending = None
                    self._has_pending = False
                    self.delivered += 1
                    try:
                        await self._deliver(value)  # type: ignore[arg-type]
                    except Exception:
                        log.exception("delivery of %s failed; unsubscribed", self.topic)
                        return
        finally:
            self._running = False
            self._hub.remove(self)


@attrs.define(eq=False)
class SubscriptionHub(Generic[T]):
    """Topic -> subscriptions. ``publish`` fans an update out without blocking."""

    _topics: dict[str, dict[Subscription[T], None]] = attrs.field(init=False, factory=dict)
    _published: int = attrs.field(init=False, default=0)
    #: Deliveries made by subscriptions that have left the hub (the live ones count their own).
    _delivered_by_gone: int = attrs.field(init=False, default=0)
    _coalesced: int = attrs.field(init=False, default=0)

    def subscribe(self, topic: str, deliver: Deliver[T], start: Starter) -> Subscription[T]:
        """Add a subscription to ``topic`` and start its actor with ``start``.

        ``start`` decides where the actor lives (a session's nursery, so that it
        ends with the session). The subscription receives updates published from
        now on.
        """
        subscription = Subscription(topic, deliver, self)
        self._topics.setdefault(topic, {})[subscription] = None
        try:
            start(subscription.run)
        except BaseException:
            self.remove(subscription)
            raise
        return subscription

    def publish(self, topic: str, value: T) -> int:
        """Offer ``value`` to every subscriber of ``topic``; returns how many. Never blocks."""
        subscribers = self._topics.get(topic)
        if not subscribers:
            return 0
        self._published += 1
        for subscription in subscribers:
            self._coalesced += subscription.offer(value)
        return len(subscribers)

    def topics(self) -> list[str]:
        """Every topic with at least one subscription now."""
        return list(self._topics)

    def subscribers(self, topic: str) -> int:
        """How many subscriptions ``topic`` has."""
        return len(self._topics.get(topic, ()))

    def statistics(self) -> HubStatistics:
        live = [subscription for s in self._topics.values() for subscription in s]
        return HubStatistics(
            topics=len(self._topics),
            subscriptions=len(live),
            published=self._published,
            delivered=self._delivered_by_gone + sum(s.delivered for s in live),
            coalesced=self._coalesced,
        )

    def remove(self, subscription: Subscription[Any]) -> None:
        """Take ``subscription`` out of the hub (idempotent); its actor ending or being
        cancelled calls this, so a caller need not. Its deliveries stay counted."""
        subscribers = self._topics.get(subscription.topic)
        if subscribers is None or subscription not in subscribers:
            return
        del subscribers[subscription]
        self._delivered_by_gone += subscription.delivered
        if not subscribers:
            del self._topics[subscription.topic]
