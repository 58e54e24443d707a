"""What client authors touch: ``open_client`` and the ``Client`` it yields."""
