"""CLI entry point: serve, worker, migrate, users, keys."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)


def main() -> None:
    app()
