"""Servers the test suite runs in-process and as stdio child processes."""
