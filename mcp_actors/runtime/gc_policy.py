"""How a serving process uses CPython's cycle collector: start-up frozen, full collections rare.

CPython frees almost every object by reference counting, the moment its last
reference goes. The cycle collector is for the rest, objects that refer to each
other in a cycle, and it works by generations: new objects are in generation 0,
scanned every 700 net allocations; what survives moves to generation 1, scanned
every 10 of those; what survives that, to generation 2, scanned only by a *full*
collection, which visits every object the process tracks. A full collection runs
once 10 generation-1 collections have passed *and* the objects promoted since the
last one outnumber a quarter of those it then found alive.

A busy server fills generation 2 with objects that live for seconds, then die by
reference counting: a Streamable HTTP session keeps each finished response stream
``HttpConfig.finished_stream_retention`` seconds (5 s) so that a client can resume
it, which at 50 sessions and ~3,000 calls/s is tens of thousands of tracked
objects, renewed all the time. Each promotion counts toward the next full
collection, so one ran every second or two, scanning them all: 25-45 ms in the
middle of some request, which set the p99 of that load. And it found nothing to
free: a request makes no reference cycles (``tests/test_gc_policy.py`` holds that
over every transport), so what reaches generation 2 goes by reference counting.

The policy, :func:`apply_serving_gc_policy`, applied by the blocking entry points
(``run_stdio``, ``run_http``, ``run_websocket``, each worker of ``run_workers``)
once the server is set up and listening:

1. **Freeze what start-up left alive.** One collection, then :func:`gc.freeze`:
   modules, classes, the server's tools and schemas (tens of thousands of objects
   that live as long as the process) move to a permanent generation that no
   collection scans again. A frozen object that later becomes cyclic garbage is
   never freed (freed by reference counting, as most are, it is): hence only what
   exists at start, after the collection that freed start-up's garbage.
2. **A full collection at most once per** :data:`FULL_COLLECTION_EVERY`
   generation-1 collections (CPython's default: 10), about 7 million net
   allocations with CPython's young thresholds: minutes at 50 busy sessions
   instead of seconds. Young collections are unchanged, so a cycle that dies young
   (an exception and its traceback, a closed connection's parser) is still freed
   within milliseconds. Only cyclic garbage old enough to have reached generation
   2 waits for the next full collection: what the process leaves in cycles over
   that many allocations, at most. A session's parts refer to each other while it
   runs (``Session`` and its ``ServerSession``, callbacks bound to it) and let go
   of each other when it ends (``Session._shut_down``), so an ended session — a
   legacy HTTP session deleted, the session of each stateless or 2026-07-28 request
   — is freed by reference counting too (``tests/test_gc_policy.py``). A threshold
   set higher before is kept.

Neither changes what a server does, only when memory held in cycles is reclaimed
and how long a collection takes. The ``serve_*`` coroutines, which may run inside
another program, do not apply it: that program's collector is its own.
``benchmarks/http_latency.py`` measures it (every collection of a server under
load, with ``--no-gc-policy`` for the interpreter's defaults).
"""

from __future__ import annotations

import gc

#: Generation-1 collections between two full collections while serving (CPython: 10).
FULL_COLLECTION_EVERY = 1000


def apply_serving_gc_policy() -> None:
    """Freeze the objects alive now, then make full collections rare (see the module)."""
    gc.collect()
    gc.freeze()
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
