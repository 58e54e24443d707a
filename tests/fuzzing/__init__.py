"""A protocol fuzzer for MCP servers: what a hostile peer sends, and what must still hold.

* :mod:`.schema_values` draws JSON values from the official schema of a revision;
* :mod:`.cases` turns them into wire messages (valid-shaped requests and
  notifications of every client method, mutated fields, odd ids, batches) and
  byte-level abuse (invalid UTF-8, lone surrogates, deep nesting, huge numbers,
  duplicate keys, truncation, oversized lines, random bytes), each a labelled
  :class:`~.cases.Case`, deterministic by seed;
* :mod:`.checks` judges every reply: JSON-RPC only, valid against the negotiated
  revision's schema (:func:`wire.validate_message`), no Python traceback text;
* :mod:`.targets` drives a server process over stdio, Streamable HTTP or WebSocket;
* :mod:`.run` sends cases in windows, proves the server alive with a ``ping``
  after each window, replays a failing window message by message to name the
  culprit, and tallies a :class:`~.checks.Report`.

``benchmarks/fuzz.py`` is the long run as a command; ``tests/test_fuzz.py`` a
short fixed-seed run in CI. Both import this package from ``tests/``.
"""
