"""File checks and removals for the async use-cases, off the event loop (uploads and archives
live on disk under ``transfer_dir``; a slow disk must not stall other requests)."""

from __future__ import annotations

import asyncio
import contextlib
import os


def _remove(paths) -> None:
    for p in paths:
        if p:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p)


async def is_file(path) -> bool:
    return bool(path) and await asyncio.to_thread(os.path.isfile, path)


async def size(path) -> int:
    return await asyncio.to_thread(os.path.getsize, path)


async def remove(*paths) -> None:
    await asyncio.to_thread(_remove, paths)
