"""Example servers that ship with the package."""
