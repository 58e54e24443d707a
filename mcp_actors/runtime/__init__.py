"""The actors: supervisor, sessions, inbound requests, outbound calls, progress streams."""
