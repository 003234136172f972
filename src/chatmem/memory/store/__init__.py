"""SQL for memories and their audit trail. Every function takes an open connection and the owner.

Why it exists: one import (``from . import store``) for every memory statement, split by what the
statements are for (it outgrew one readable module):

- ``owner``: whose rows (a user's personal scope or an :class:`InWorkspace`), the (user, agent)
  scope, row → ``policy.Mem``;
- ``rows``: read a scope for the policy, apply a Plan with its ``memory_events``, list, purge;
- ``fulltext``: full-text scores and the bounded reads of what a turn may see;
- ``extraction``: what the extraction job reads and the cursor it moves.

Personal reads never see a workspace row, and a workspace's reads see only its own rows.
"""

from .extraction import (
    CONV,
    agent_name,
    known_for_extractor,
    live_visible,
    memory_cursor,
    message_marker,
    owned_conversation,
    owns_agent,
    set_memory_cursor,
    user_settings,
)
from .fulltext import (
    INJECT_COLS,
    STOPWORDS,
    fts_scores,
    injectable_by_ids,
    injectable_top,
    query_tokens,
)
from .owner import (
    EV,
    IN_WORKSPACE,
    MEM,
    MSG,
    InWorkspace,
    Owner,
    owner_cond,
    owner_uid,
    scope_cond,
    to_mem,
)
from .rows import (
    ListFilters,
    add_event,
    apply_changes,
    apply_plan,
    events_for,
    get_owned,
    insert_mem,
    linked_rows,
    list_page,
    lock_user_memory,
    purge_row,
    related,
    rows_by_ids,
    slot_rows,
    source_messages,
)

__all__ = [
    "CONV",
    "EV",
    "INJECT_COLS",
    "IN_WORKSPACE",
    "MEM",
    "MSG",
    "STOPWORDS",
    "InWorkspace",
    "ListFilters",
    "Owner",
    "add_event",
    "agent_name",
    "apply_changes",
    "apply_plan",
    "events_for",
    "fts_scores",
    "get_owned",
    "injectable_by_ids",
    "injectable_top",
    "insert_mem",
    "known_for_extractor",
    "linked_rows",
    "list_page",
    "live_visible",
    "lock_user_memory",
    "memory_cursor",
    "message_marker",
    "owned_conversation",
    "owner_cond",
    "owner_uid",
    "owns_agent",
    "purge_row",
    "query_tokens",
    "related",
    "rows_by_ids",
    "scope_cond",
    "set_memory_cursor",
    "slot_rows",
    "source_messages",
    "to_mem",
    "user_settings",
]
