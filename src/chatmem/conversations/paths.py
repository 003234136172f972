"""Which messages are on a path, without walking 10,000 parents every turn.

Recall must only bring back messages of the branch being answered — not a rejected regeneration,
an edited-away question or another branch's thread — and needs each hit's neighbour on that path.
Walking from the leaf to the root costs O(depth) per turn; instead each process keeps the last path
it saw per conversation and, for the next turn, walks up from the new leaf only until it meets that
path (normally two messages: the last answer and the new question). A branch switch walks up to the
fork point; a new process walks once.

Correct by construction under every tree operation: a path only ever loses ancestors (deleting a
round re-parents later messages onto the deleted round's parent), so a cached path can at worst
contain ids that no longer exist — and those are never returned by the index. Bounded: at most
``max_ids`` ids in all, least recently used conversations first out.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from . import tree_store

#: Walk lengths tried in turn: a normal turn meets the cached path within a few messages, a branch
#: switch within a few hundred; re-walking the short prefix costs at most the sum of the steps.
STEPS = (8, 256, 8192, 1 << 22)


#: A path is a shared, flat base plus a short tail of its own: the next turn's path reuses the
#: base (no copy of 10,000 ids per turn) and is flattened once its tail reaches this length.
TAIL_MAX = 512


@dataclass(frozen=True)
class _Base:
    ids: tuple[str, ...]
    pos: dict[str, int]


@dataclass(frozen=True)
class Path:
    """The ids of a path from the root to its leaf: the first ``base_len`` ids of a shared base,
    then a tail of its own. Immutable, so a turn holding an older path is never disturbed."""

    base: _Base
    base_len: int
    tail: tuple[str, ...] = ()
    tail_pos: dict[str, int] = field(default_factory=dict)  # id → position on the whole path

    def __len__(self) -> int:
        return self.base_len + len(self.tail)

    def index(self, mid: str) -> int | None:
        i = self.tail_pos.get(mid)
        if i is not None:
            return i
        j = self.base.pos.get(mid)
        return j if j is not None and j < self.base_len else None

    def __contains__(self, mid: str) -> bool:
        return self.index(mid) is not None

    def at(self, i: int) -> str:
        return self.base.ids[i] if i < self.base_len else self.tail[i - self.base_len]

    @property
    def ids(self) -> tuple[str, ...]:
        return self.base.ids[: self.base_len] + self.tail

    @property
    def leaf(self) -> str | None:
        return self.at(len(self) - 1) if len(self) else None

    def neighbour(self, mid: str, role: str) -> str | None:
        """A user message's answer (the next message), an answer's question (the previous)."""
        i = self.index(mid)
        if i is None:
            return None
        j = i + 1 if role == "user" else i - 1
        return self.at(j) if 0 <= j < len(self) else None

    def extended(self, keep: int, more: list[str]) -> Path:
        """This path's first ``keep`` ids followed by ``more``: the base is shared while the new
        tail stays short, else everything is flattened into a new base."""
        if keep <= self.base_len and len(more) <= TAIL_MAX:
            return _with_tail(self.base, keep, more)
        mine = list(self.tail[: keep - self.base_len])
        if len(mine) + len(more) <= TAIL_MAX:
            return _with_tail(self.base, self.base_len, [*mine, *more])
        return flat([*self.ids[:keep], *more])


def _with_tail(base: _Base, base_len: int, tail: list[str]) -> Path:
    return Path(base, base_len, tuple(tail), {m: base_len + i for i, m in enumerate(tail)})


def flat(ids: list[str]) -> Path:
    """A path of its own (a new base)."""
    return Path(_Base(tuple(ids), {m: i for i, m in enumerate(ids)}), len(ids))


class PathCache:
    """Per-process memo of the latest path of each conversation (see the module docstring)."""

    def __init__(self, max_ids: int = 1_000_000) -> None:
        self.max_ids = max_ids
        self._paths: OrderedDict[str, Path] = OrderedDict()
        self._size = 0

    async def get(self, c: AsyncConnection, conversation_id: str, leaf_id: str) -> Path:
        known = self._paths.get(conversation_id)
        if known is not None and known.leaf == leaf_id:
            self._paths.move_to_end(conversation_id)
            return known
        for limit in STEPS:
            ids = await tree_store.path_ids(c, conversation_id, leaf_id, limit)  # oldest first
            junction = self._junction(known, ids)
            if junction is not None or len(ids) < limit:
                break
        if known is None or junction is None:
            path = flat(ids)
        else:
            at, i = junction
            path = known.extended(at + 1, ids[i + 1 :])
        self._store(conversation_id, path)
        return path

    @staticmethod
    def _junction(known: Path | None, ids: list[str]) -> tuple[int, int] | None:
        """(position in ``known``, index in ``ids``) of the deepest id both share, if any."""
        if known is None:
            return None
        for i in range(len(ids) - 1, -1, -1):
            at = known.index(ids[i])
            if at is not None:
                return at, i
        return None

    def _store(self, conversation_id: str, path: Path) -> None:
        old = self._paths.pop(conversation_id, None)
        self._size -= len(old) if old else 0
        self._paths[conversation_id] = path
        self._size += len(path)
        while self._size > self.max_ids and len(self._paths) > 1:
            _, gone = self._paths.popitem(last=False)
            self._size -= len(gone)
