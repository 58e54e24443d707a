"""The user agent of a command-line client: the browser, and a loopback redirect URI.

RFC 8252 §7.3: a native app receives the authorization response on
``http://127.0.0.1:PORT/callback``, a port it listens on itself. The
:class:`LoopbackUserAgent` binds that port (on first use of :attr:`redirect_uri`,
so registration and authorization agree on it; released after each authorization and
bound again on the same port for the next), prints the authorization URL and
opens the browser on it (unless told not to), then answers the one request the
browser makes to the callback path and returns its query parameters.

Bounds: it waits at most ``timeout`` seconds for the user (then raises
:class:`~.errors.AuthorizationNotCompleted`); each connection may send
at most 16 KiB of request head and has 10 seconds to do it; a request to another
path is answered ``404`` and the wait goes on. HTTP is parsed by ``h11``.
"""

from __future__ import annotations

import socket
import sys
import webbrowser
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, urlsplit

import h11
import trio

from .errors import AuthorizationNotCompleted

__all__ = ["LoopbackUserAgent"]

_PAGE = (
    b"<!doctype html><title>mcp-actors</title>"
    b"<p>Authorization received: you may close this window and go back to the terminal.</p>"
)
_MAX_HEAD = 16 * 1024
_PER_CONNECTION = 10.0


class LoopbackUserAgent:
    """Browser + loopback listener (see the module docstring)."""

    def __init__(
        self,
        *,
        open_browser: bool = True,
        timeout: float = 300.0,
        port: int = 0,
        path: str = "/callback",
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.open_browser = open_browser
        self.timeout = timeout
        self.path = path
        self._port = port
        self._socket: socket.socket | None = None
        self._announce = announce or _to_stderr

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._listening().getsockname()[1]}{self.path}"

    def _listening(self) -> socket.socket:
        if self._socket is None:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self._port))
            listener.listen(8)
            self._port = listener.getsockname()[1]  # the same port if listening again
            self._socket = listener
        return self._socket

    def close(self) -> None:
        """Stop listening (the port is released)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        """Wait for the browser's visit to the callback (the port is released after)."""
        try:
            return await self._authorize(authorization_url)
        finally:
            self.close()

    async def _authorize(self, authorization_url: str) -> Mapping[str, str]:
        listener = trio.socket.from_stdlib_socket(self._listening())
        self._announce(f"Open this URL to authorize mcp-actors:\n  {authorization_url}")
        if self.open_browser:
            await trio.to_thread.run_sync(webbrowser.open, authorization_url)
        with trio.move_on_after(self.timeout):
            while True:
                connection, _ = await listener.accept()
                async with trio.SocketStream(connection) as stream:
                    try:
                        answer = await self._serve(stream)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        continue  # the browser went away mid-request
                if answer is not None:
                    return answer
        raise AuthorizationNotCompleted(f"no authorization response within {self.timeout:g} s")

    async def _serve(self, stream: trio.SocketStream) -> dict[str, str] | None:
        """Answer one request; the callback's query parameters, if it was the callback."""
        protocol = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        with trio.move_on_after(_PER_CONNECTION):
            while True:
                try:
                    event = protocol.next_event()
                except h11.RemoteProtocolError:
                    return None
                if event is h11.NEED_DATA:
                    data = await stream.receive_some(4096)
                    protocol.receive_data(data)
                    if not data:
                        return None
                    continue
                if not isinstance(event, h11.Request):
                    return None
                target = urlsplit(event.target.decode("ascii", "replace"))
                found = target.path == self.path
                body = _PAGE if found else b"not found"
                for reply in (
                    h11.Response(
                        status_code=200 if found else 404,
                        headers=[
                            ("content-type", "text/html; charset=utf-8"),
                            ("content-length", str(len(body))),
                            ("connection", "close"),
                        ],
                    ),
                    h11.Data(data=body),
                    h11.EndOfMessage(),
                ):
                    await stream.send_all(protocol.send(reply) or b"")
                return dict(parse_qsl(target.query, keep_blank_values=True)) if found else None
        return None


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
