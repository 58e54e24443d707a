"""The in-memory transport: two connected message streams, for tests and embedding."""

from __future__ import annotations

from collections.abc import Sequence

import trio

from .abc import MessageStream, Outgoing, TransportClosed


class MemoryStream(MessageStream):
    """One end of an in-memory pair. Each direction is a bounded channel: a full one makes
    the sender wait, exactly as a pipe would."""

    def __init__(
        self, send: trio.MemorySendChannel[bytes], receive: trio.MemoryReceiveChannel[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def receive(self) -> bytes:
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the other end of the memory stream closed") from None

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        try:
            for message in messages:
                await self._send.send(message.payload)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed("the other end of the memory stream closed") from None

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair(capacity: int = 256) -> tuple[MemoryStream, MemoryStream]:
    """Two connected streams: what one sends, the other receives."""
    a_send, b_receive = trio.open_memory_channel[bytes](capacity)
    b_send, a_receive = trio.open_memory_channel[bytes](capacity)
    return MemoryStream(a_send, a_receive), MemoryStream(b_send, b_receive)
