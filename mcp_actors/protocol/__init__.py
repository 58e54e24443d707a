"""The sans-IO protocol core: wire types, JSON-RPC, versions and lifecycle. No trio, no I/O."""
