"""The ``termgrade`` command: thin commands over the library, one module per group."""

from termgrade.cli.app import app, main

__all__ = ["app", "main"]
