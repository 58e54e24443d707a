"""Several worker processes serving one HTTP port: ``--workers N``.

A Python process runs one Trio loop on one core. To use more cores, the
*supervising* process (the one you start) forks ``N`` workers; each runs its own
:func:`~mcp_actors.server.serve_http.serve_http` with its own supervisor of sessions,
and accepts on its own socket bound to the same ``host:port`` with ``SO_REUSEPORT``
(:mod:`~mcp_actors.transports.http.listen_socket`): the kernel spreads connections over
the workers, whichever HTTP front end serves. The supervisor itself serves nothing:

- it opens the N listening sockets first (so ``port=0`` picks one port for all),
  refusing a port something already listens on (another deployment: ``EADDRINUSE``,
  as for one worker), starts the workers, and announces the URL once every worker
  listens; a worker started again accepts on the socket its predecessor had;
- a worker that dies is started again (at most ``max_restarts`` times in
  ``restart_window`` seconds; beyond that the supervisor stops everything and
  exits with an error rather than crash-loop);
- SIGTERM or SIGINT stops it gracefully: each worker gets SIGTERM, stops accepting,
  lets its requests in progress finish (``HttpConfig.graceful_timeout``), and exits;
  a worker still alive ``stop_timeout`` seconds later is killed.

Workers share nothing in memory. What a client may reach on any worker — task
records, listen notifications, ``requestState`` keys, stored SSE events — must be
shared through Redis (:mod:`mcp_actors.shared`, ``--redis-url``); legacy sessions
stay on the worker that made them (route them there with the nginx configuration in
``deploy/nginx.conf``, or let the client re-initialize on 404).

Workers are forked (``os.fork``), so the server object built in the supervising
process is the one each worker serves; nothing of it needs pickling. POSIX only.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from functools import partial
from typing import Any, Literal, Protocol

import attrs
import trio

from ..runtime.gc_policy import apply_serving_gc_policy
from ..transports.http.listen_socket import claim_shared_port
from .protocols import HostedServer
from .serve import check_port

log = logging.getLogger("mcp_actors.workers")

#: Seconds to wait for every worker to listen.
START_TIMEOUT = 30.0


class WorkersFailed(Exception):
    """The workers could not start, or kept dying."""


@attrs.frozen
class WorkerPolicy:
    """How the supervising process treats its workers (see the module docstring)."""

    workers: int = attrs.field(validator=attrs.validators.ge(1))
    #: Seconds a stopping worker gets before it is killed.
    stop_timeout: float = 10.0
    #: At most this many restarts within ``restart_window`` seconds.
    max_restarts: int = 5
    restart_window: float = 60.0


class Stoppable(Protocol):
    """What a worker's server routine hands back once listening: how to stop it."""

    def shutdown(self) -> None: ...


#: A worker's server routine: ``serve(server, host=, port=, sock=, **options)``, started
#: with ``nursery.start`` and handing back a :class:`Stoppable` (``serve_http`` is one).
ServeRoutine = Callable[..., Awaitable[None]]


def run_workers(
    server: HostedServer,
    policy: WorkerPolicy,
    serve: ServeRoutine,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    announce: Literal["http", "sse"] | None = None,
    **options: Any,
) -> None:
    """Serve ``server`` over HTTP from ``policy.workers`` processes on one port until
    SIGTERM/SIGINT; blocking: each worker runs ``serve`` (:func:`~.serve_http.serve_http`)
    with ``options``. Raises ValueError
    for a ``port`` out of range (:func:`~.serve.check_port`), OSError
    (``EADDRINUSE``) when something already listens on ``host:port``, and
    :class:`WorkersFailed` when the workers cannot start or keep dying."""
    sockets = claim_shared_port(host, check_port(port), policy.workers)
    try:
        bound_port = sockets[0].getsockname()[1]
        worker = partial(_worker_main, server, serve, host=host, port=bound_port, **options)
        announcement = _announcement(server, host, bound_port, announce, options)
        _Supervisor(policy, worker, sockets).run(announcement)
    finally:
        for sock in sockets:
            sock.close()


def _announcement(
    server: HostedServer, host: str, port: int, announce: str | None, options: dict[str, Any]
) -> str | None:
    if announce is None:
        return None
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    config = options.get("config")
    path = options.get("path", "/mcp") if config is None else config.path
    if announce == "sse":
        path = "/sse" if config is None else config.sse_path
    return f"mcp-actors: serving {server.name} at {base}{path}"


@attrs.define(eq=False)
class _Supervisor:
    policy: WorkerPolicy
    #: What a worker process runs; given a connection to report "listening" on, and
    #: the listening socket to accept on.
    worker: Callable[[multiprocessing.connection.Connection, socket.socket], None]
    #: Worker ``i``'s listening socket, kept open here (until stopping) for the worker
    #: started again.
    sockets: list[socket.socket]
    _processes: dict[int, Any] = attrs.field(init=False, factory=dict)
    _ready: dict[int, multiprocessing.connection.Connection] = attrs.field(init=False, factory=dict)
    _restarts: list[float] = attrs.field(init=False, factory=list)
    _stopping: bool = attrs.field(init=False, default=False)

    def run(self, announcement: str | None) -> None:
        previous = {
            number: signal.signal(number, self._stop) for number in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            for index in range(self.policy.workers):
                self._start(index)
            self._wait_listening()
            if announcement is not None and not self._stopping:
                workers = self.policy.workers
                print(f"{announcement} ({workers} workers)", file=sys.stderr, flush=True)
            self._watch()
        finally:
            self._stop_all()
            for number, handler in previous.items():
                signal.signal(number, handler)

    def _stop(self, signum: int, frame: object) -> None:
        self._stopping = True

    def _start(self, index: int) -> None:
        context = multiprocessing.get_context("fork")
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=self._run_worker,
            args=(sender, index),
            name=f"mcp-actors worker {index}",
            daemon=False,
        )
        process.start()
        sender.close()
        self._processes[index] = process
        self._ready[index] = receiver

    def _run_worker(self, ready: multiprocessing.connection.Connection, index: int) -> None:
        """In the forked worker: keep only its own socket open (when it stops accepting
        and closes it, the kernel stops sending it connections), and serve."""
        for other, sock in enumerate(self.sockets):
            if other != index:
                sock.close()
        self.worker(ready, self.sockets[index])

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        waiting = dict(self._ready)
        while waiting and not self._stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkersFailed(f"{len(waiting)} worker(s) did not listen in {START_TIMEOUT}s")
            ready = multiprocessing.connection.wait(list(waiting.values()), timeout=left)
            for index, receiver in list(waiting.items()):
                if receiver not in ready:
                    continue
                try:
                    receiver.recv()
                except EOFError:
                    code = self._processes[index].exitcode
                    raise WorkersFailed(
                        f"worker {index} exited before listening ({code})"
                    ) from None
                del waiting[index]

    def _watch(self) -> None:
        while not self._stopping:
            sentinels = {process.sentinel: index for index, process in self._processes.items()}
            for sentinel in multiprocessing.connection.wait(list(sentinels), timeout=0.2):
                if self._stopping:
                    break
                index = sentinels[sentinel]
                gone = self._processes[index]
                log.error(
                    "worker %d (pid %s) exited (%s): restarting it", index, gone.pid, gone.exitcode
                )
                self._note_restart()
                self._start(index)

    def _note_restart(self) -> None:
        now = time.monotonic()
        window = self.policy.restart_window
        self._restarts = [moment for moment in self._restarts if now - moment < window]
        if len(self._restarts) >= self.policy.max_restarts:
            raise WorkersFailed(
                f"workers died {len(self._restarts) + 1} times in {window:g}s: stopping"
            )
        self._restarts.append(now)

    def _stop_all(self) -> None:
        for sock in self.sockets:  # the workers hold their own; closed as each one stops
            sock.close()
        processes = [process for process in self._processes.values() if process.is_alive()]
        for process in processes:
            with suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.policy.stop_timeout
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.warning("worker pid %d did not stop in time: killing it", process.pid)
                process.kill()
                process.join()
        for receiver in self._ready.values():
            receiver.close()


def _worker_main(
    server: HostedServer,
    serve: ServeRoutine,
    ready: multiprocessing.connection.Connection,
    sock: socket.socket,
    *,
    host: str,
    port: int,
    **options: Any,
) -> None:
    """One worker: serve on ``sock`` until SIGTERM/SIGINT, then shut down gracefully."""
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                started = partial(serve, server, host=host, port=port, sock=sock, **options)
                handle: Stoppable = await nursery.start(started)
                apply_serving_gc_policy()
                ready.send(os.getpid())
                ready.close()
                async for _ in signals:
                    handle.shutdown()  # serve_http returns once its requests are done
                    break

    trio.run(main)
