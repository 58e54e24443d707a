"""What server authors touch: ``Server``, its decorators, ``Context``, and ways to serve."""
