"""The ``chatmem`` command line (Typer)."""

from .main import main

__all__ = ["main"]
