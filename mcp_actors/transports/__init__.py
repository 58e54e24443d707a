"""Transports move encoded JSON-RPC messages between peers; they never interpret them."""
