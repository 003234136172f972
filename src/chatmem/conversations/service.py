"""Conversation and message use-cases: each one transaction, scoped to the calling Principal.

Routes call exactly one function here. Anything owned by another user is reported as not found.
"""

from __future__ import annotations

import json
from typing import Any

from ..agents import store as agents_store
from ..auth.models import Principal
from ..contracts.cursor import decode_cursor, encode_cursor
from ..db import schema as t
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..embeddings import embeddings_on, schedule_embedding
from ..errors import BadRequest, Conflict, Forbidden, TooLarge, Unprocessable
from ..i18n import default_title, pick_language
from ..projects import store as projects_store
from ..workspaces import store as workspaces_store
from . import append_store, dag, followups, fork_store, forks, store, tree_store
from .wire import (
    ConversationIn,
    ConversationPatch,
    ForkIn,
    MessageIn,
    conversation_out,
    message_out,
)

C = t.conversations.c
M = t.messages.c


def check_size(blocks: list[dict], limit: int, metadata: dict | None = None) -> None:
    """413 when the stored content (blocks plus caller metadata) exceeds ``limit`` bytes."""
    size = len(json.dumps(blocks, ensure_ascii=False).encode())
    if metadata:
        size += len(json.dumps(metadata, ensure_ascii=False).encode())
    if size > limit:
        raise TooLarge(
            f"message content is {size} bytes; the limit is {limit}",
            details={"limit": limit, "size": size},
        )


async def _check_project(c, p: Principal, project_id: str, workspace_id: str) -> None:
    """A conversation's project must be one the caller sees, in the conversation's own space."""
    project = await projects_store.get_owned(c, p.id, project_id)
    if project.workspace_id != workspace_id:
        raise Unprocessable(
            "the project belongs to another space than the conversation",
            code="project_space_mismatch",
            details={"project_id": project_id},
        )


async def require_manager(c, p: Principal, conv) -> None:
    """403 unless the caller may change the conversation itself (title, project, visibility,
    deletion, sharing): its creator, or an owner/admin of its workspace."""
    if not await workspaces_store.may_manage(c, p.id, conv):
        raise Forbidden(
            "only the conversation's creator or a workspace admin may do this",
            code="workspace_role",
        )


async def require_author(c, p: Principal, conv, message) -> None:
    """403 unless the caller may edit or delete ``message`` (workspaces/store.may_act_on)."""
    if not await workspaces_store.may_act_on(c, p.id, conv, message):
        raise Forbidden(
            "only the message's author or a workspace admin may do this", code="workspace_role"
        )


async def _space(c, p: Principal, body: ConversationIn) -> dict:
    if not body.workspace_id:
        return {}
    await workspaces_store.get_for_member(c, p.id, body.workspace_id)
    if body.agent_id:
        raise Unprocessable(
            "agents are personal: an agent conversation cannot be created in a workspace",
            code="agent_in_workspace",
        )
    return {"workspace_id": body.workspace_id, "is_public": int(body.is_public)}


async def create_conversation(
    db: Database, p: Principal, body: ConversationIn, *, accept_language: str | None = None, **extra
) -> dict:
    # nothing to check first (no workspace, project or agent): the INSERT is the whole write
    lone = not (body.workspace_id or body.project_id or body.agent_id)
    async with db.write_once() if lone else db.write() as c:
        space = await _space(c, p, body)
        if body.project_id:
            await _check_project(c, p, body.project_id, body.workspace_id or "")
        if body.agent_id:
            await agents_store.get_owned(c, p.id, body.agent_id)
        extra = {**extra, **space}
        values = dict(
            project_id=body.project_id,
            agent_id=body.agent_id,
            pinned=int(body.pinned),
            starred=int(body.starred),
            **extra,
        )
        values["title"] = body.title or default_title(
            pick_language(p.settings.get("language"), accept_language)
        )
        if body.model:
            values["model_id"] = body.model
        row = await store.insert_conversation_row(c, p.id, **values)
    return conversation_out(row)


async def list_conversations(
    db: Database,
    p: Principal,
    *,
    archived: bool = False,
    starred: bool | None = None,
    project_id: str | None = None,
    agent_id: str | None = None,
    cursor: str | None = None,
    limit: int = 30,
    workspace_id: str = "",
) -> dict:
    cur = decode_cursor(cursor, (int, int, str)) if cursor else None
    q = store.list_query(
        p.id,
        archived=archived,
        starred=starred,
        project_id=project_id,
        agent_id=agent_id,
        cursor=cur,
        limit=limit,
        workspace_id=workspace_id,
    )
    async with db.read() as c:
        if workspace_id:
            await workspaces_store.get_for_member(c, p.id, workspace_id)
        rows = await store.rows_of(c, q)
    more = len(rows) > limit
    rows = rows[:limit]
    nxt = encode_cursor(rows[-1].pinned, rows[-1].updated_at, rows[-1].id) if more else None
    return {"items": [conversation_out(r) for r in rows], "next_cursor": nxt}


async def get_conversation(db: Database, p: Principal, cid: str) -> dict:
    async with db.read() as c:  # a pending fork's row already says what it will hold
        return conversation_out(await store.get_conversation(c, p.id, cid, pending_ok=True))


async def patch_conversation(db: Database, p: Principal, cid: str, body: ConversationPatch) -> dict:
    changes = body.model_dump(exclude_unset=True)
    async with db.write() as c:
        conv = await store.get_conversation(c, p.id, cid)
        await require_manager(c, p, conv)
        if conv.workspace_id and changes.get("archived"):
            raise Unprocessable(
                "workspace conversations have no archive (seed 001)", code="no_workspace_archive"
            )
        values: dict = {}
        if "project_id" in changes:
            if changes["project_id"]:
                await _check_project(c, p, changes["project_id"], conv.workspace_id)
            values["project_id"] = changes["project_id"] or None
        if changes.get("title") is not None:
            values["title"] = changes["title"]
        if changes.get("model") is not None:
            values["model_id"] = changes["model"]
        for k in ("pinned", "starred", "archived", "is_public"):
            if changes.get(k) is not None:
                values[k] = int(changes[k])
        if values:
            values["updated_at"] = now_ms()
            await store.update_conversation(c, cid, **values)
        row = await store.get_conversation(c, p.id, cid)
    return conversation_out(row)


async def delete_conversation(db: Database, p: Principal, cid: str) -> None:
    async with db.write() as c:
        conv = await store.get_conversation(c, p.id, cid, for_change=True)
        await require_manager(c, p, conv)
        # Inline threads anchored here go with their source (they are not listed on their own).
        ids = [cid, *await store.inline_thread_ids(c, cid)]
        await store.detach_messages(c, ids)
        await store.delete_conversations(c, ids)


async def _with_branches(c, conv_id: str, rows: list, p: Principal) -> list[dict]:
    info = await tree_store.branch_info_for(c, conv_id, rows)
    return [message_out(r, info.get(r.id), is_admin=p.is_admin) for r in rows]


async def append_message(
    db: Database,
    p: Principal,
    cid: str,
    body: MessageIn,
    max_bytes: int,
    *,
    max_clock_skew_ms: int = 300_000,
    followup_delay_ms: int = 2_000,
) -> dict:
    """Log mode: store a caller-supplied message under ``parent_id`` (default: the active leaf;
    ``branch`` with no parent: a new root), dated ``body.created_at`` when given, and schedule the
    derived work (memory, compaction …) through one debounced job per conversation.

    ``_append_at_once`` does it in one statement (PostgreSQL) or three (SQLite); when that
    writes nothing — not the user's conversation, a parent not in it, a dangling active leaf,
    or (PostgreSQL) a concurrent append moved the leaf — ``_append_by_steps`` runs the steps one
    by one and answers 404 / 422 or repairs the leaf."""
    check_size(body.content, max_bytes, body.metadata)
    now = now_ms()
    check_created_at(body.created_at, now, max_clock_skew_ms)
    done = await _append_at_once(db, p, cid, body, now, followup_delay_ms)
    if done is not None:
        return done
    return await _append_by_steps(db, p, cid, body, followup_delay_ms)


async def _append_by_steps(
    db: Database, p: Principal, cid: str, body: MessageIn, delay_ms: int
) -> dict:
    """``append_message`` a statement per step: the conversation under lock (404), the parent's
    place (422 for a parent not in it), the INSERT, the counters, the jobs."""
    async with db.write() as c:
        conv = await store.get_conversation(c, p.id, cid, for_update=True)
        # no parent → under the active leaf, unless ``branch`` asks for a new root (edit-and-resend
        # of the first message)
        from_leaf = body.parent_id is None and not body.branch
        parent = conv.active_leaf_id if from_leaf else body.parent_id
        extra: dict[str, Any] = {"metadata": body.metadata} if body.metadata is not None else {}
        if body.model:
            extra["model_id"] = body.model

        async def insert(parent_id):
            return await store.insert_message(
                c,
                conv,
                parent_id=parent_id,
                role=body.role,
                blocks=body.content,
                user_id=p.id,
                created_at=body.created_at,
                siblings=True,
                **extra,
            )

        try:
            row = await insert(parent)
        except Unprocessable:  # raised before anything is written
            if not from_leaf:
                raise
            row = await insert(
                await tree_store.newest_leaf(c, cid)
            )  # a dangling pointer: repair it
        await followups.after_append(
            c, conversation_id=cid, user_id=p.id, message_id=row.id, delay_ms=delay_ms
        )
        info = tree_store.returned_branch_info(row)  # with the INSERT; a root's are read
        if info is None:
            [out] = await _with_branches(c, cid, [row], p)
            return out
    return message_out(row, info, is_admin=p.is_admin)


async def _append_at_once(
    db: Database, p: Principal, cid: str, body: MessageIn, now: int, delay_ms: int
) -> dict | None:
    """``append_message`` through ``append_store.append_logged``: the message, its counters and
    its jobs in one statement on PostgreSQL, its own transaction unless an embedding job joins
    it; None when it wrote nothing."""
    given, root = body.parent_id is not None, body.branch and body.parent_id is None
    under: append_store.Under = "given" if given else "root" if root else "leaf"
    created_at = now if body.created_at is None else body.created_at
    mid = new_id("msg")
    values = {"id": mid, "role": body.role, "blocks": body.content, "created_at": created_at}
    values.update(metadata=body.metadata or {}, model_id=body.model or "")
    payload = {"conversation_id": cid, "user_id": p.id, "message_id": mid}
    jobs = followups.jobs_for(payload, delay_ms)
    alone = not db.sqlite and not embeddings_on(db)
    async with db.write_once() if alone else db.write() as c:
        row = await append_store.append_logged(
            c, cid, p.id, under, body.parent_id, values=values, jobs=jobs, now=now
        )
        if row is None:
            return None
        await schedule_embedding(c, cid)  # (followups.after_append's other half)
        info = tree_store.returned_branch_info(row)  # with the INSERT; a root's are read
        if info is None:
            [out] = await _with_branches(c, cid, [row], p)
            return out
    return message_out(row, info, is_admin=p.is_admin)


def check_created_at(created_at: int | None, now: int, max_skew_ms: int) -> None:
    """A caller-supplied message time may lie in the past (imported history), not in the future
    beyond the clock skew we tolerate between the caller and us."""
    if created_at is not None and created_at > now + max_skew_ms:
        raise Unprocessable(
            "created_at lies in the future",
            code="invalid_created_at",
            details={"created_at": created_at, "now": now, "max_clock_skew_ms": max_skew_ms},
        )


async def read_path(
    db: Database, p: Principal, cid: str, *, before: str | None, limit: int
) -> dict:
    """One page of the active path, oldest → newest; ``next_cursor`` pages further back. The
    newest page of a fork still to be copied is read from its source (``forks.first_page``): a
    copy is a chain, so each of its messages is its parent's only child."""
    async with db.read() as c:
        conv = await store.get_conversation(c, p.id, cid, pending_ok=not before)
        if conv.fork_source_id:
            rows: list = await forks.first_page(c, conv, limit)  # only children: no branch info
            items = [message_out(r, is_admin=p.is_admin) for r in rows]
        else:
            start = await _page_start(c, conv, before)
            rows = await tree_store.path_rows(c, cid, start, limit)
            items = await _with_branches(c, cid, rows, p)
    more = bool(rows) and rows[0].parent_id is not None
    return {
        "items": items,
        "next_cursor": rows[0].id if more else None,
        "active_leaf_id": conv.active_leaf_id,
    }


async def _page_start(c, conv, before: str | None) -> str | None:
    """Where a page of the path starts: above the cursor ``before``, else the active leaf."""
    if not before:
        return conv.active_leaf_id
    anchor = await store.find_message(c, conv.id, before)
    if anchor is None:
        raise BadRequest(
            "invalid cursor: 'before' is not a message of this conversation",
            code="invalid_cursor",
            details={"before": before},
        )
    return anchor.parent_id


async def read_tree(db: Database, p: Principal, cid: str) -> dict:
    async with db.read() as c:
        conv = await store.get_conversation(c, p.id, cid)
        rows = await store.all_messages(c, cid)
    children: dict = {}
    for r in rows:
        children.setdefault(r.parent_id, []).append(r.id)
    info = dag.branch_info([r.id for r in rows], {r.id: r.parent_id for r in rows}, children)
    return {
        "items": [message_out(r, info[r.id], is_admin=p.is_admin) for r in rows],
        "next_cursor": None,
        "active_leaf_id": conv.active_leaf_id,
    }


async def get_message(db: Database, p: Principal, cid: str, mid: str) -> dict:
    async with db.read() as c:
        await store.get_conversation(c, p.id, cid)
        row = await store.get_message(c, cid, mid)
        [out] = await _with_branches(c, cid, [row], p)
    return out


async def switch_leaf(db: Database, p: Principal, cid: str, leaf_id: str) -> dict:
    async with db.write() as c:
        await store.get_conversation(c, p.id, cid, for_update=True)
        await store.get_message(c, cid, leaf_id)
        leaf = await tree_store.newest_descendant(c, cid, leaf_id)
        await store.set_leaf(c, cid, leaf)
        conv = await store.get_conversation(c, p.id, cid)
    return conversation_out(conv)


async def edit_message(
    db: Database, p: Principal, cid: str, mid: str, blocks: list[dict], max_bytes: int
) -> dict:
    check_size(blocks, max_bytes)
    async with db.write() as c:
        conv = await store.get_conversation(c, p.id, cid, for_change=True)
        row = await store.get_message(c, cid, mid)
        await require_author(c, p, conv, row)
        if row.status == "streaming":
            raise Conflict(
                "the message is still streaming",
                code="message_streaming",
                details={"message_id": mid},
            )
        await store.update_content(c, mid, blocks)  # a trigger drops the old text's vector
        await schedule_embedding(c, cid)
        await store.update_conversation(c, cid, updated_at=now_ms())
        row = await store.get_message(c, cid, mid)
        [out] = await _with_branches(c, cid, [row], p)
    return out


async def delete_round(db: Database, p: Principal, cid: str, mid: str) -> dict:
    """Delete ``mid``'s round (question + every answer variant); later turns are reattached."""
    async with db.write() as c:
        conv = await store.get_conversation(c, p.id, cid, for_change=True)
        target = await store.get_message(c, cid, mid)
        parent = await store.get_message(c, cid, target.parent_id) if target.parent_id else None
        tnode = dag.Node(target.id, target.parent_id, target.role, target.status)
        pnode = (
            dag.Node(parent.id, parent.parent_id, parent.role, parent.status) if parent else None
        )
        question = (
            pnode if (tnode.role == "assistant" and pnode and pnode.role == "user") else tnode
        )
        await require_author(c, p, conv, parent if question is pnode else target)
        kids = await tree_store.children_nodes(c, cid, [question.id])
        members = [question] + [k for k in kids.get(question.id, []) if k.role == "assistant"]
        kids.update(await tree_store.children_nodes(c, cid, [m.id for m in members[1:]]))
        plan = dag.plan_round_delete(tnode, pnode, kids)
        all_nodes = [tnode, question] + [
            n for ns in kids.values() for n in ns if n.id in plan.delete_ids
        ]
        busy = dag.streaming_in(all_nodes)
        if busy:
            raise Conflict(
                "a message of this round is still streaming",
                code="message_streaming",
                details={"message_id": busy[0]},
            )
        leaf = conv.active_leaf_id
        leaf_gone = leaf in plan.delete_ids
        deleted = await tree_store.apply_round_delete(c, cid, plan)
        if leaf_gone:
            if plan.new_parent:
                leaf = await tree_store.newest_descendant(c, cid, plan.new_parent)
            else:
                leaf = await tree_store.newest_leaf(c, cid)
            await store.set_leaf(c, cid, leaf)
        pruned = store.prune_summary_blocks(conv.summary_blocks, plan.delete_ids)
        if pruned is not None:
            await store.update_conversation(c, cid, summary_blocks=pruned)
        conv = await store.get_conversation(c, p.id, cid)
    return {
        "deleted_ids": sorted(plan.delete_ids),
        "deleted": deleted,
        "conversation": conversation_out(conv),
    }


async def fork(db: Database, p: Principal, cid: str, body: ForkIn, limit: int = 1_000_000) -> dict:
    """Copy the active path (or the path up to ``message_id``) into a new conversation: planned
    and answered here, the rows copied right after the commit (``forks.py``)."""
    async with db.write() as c:
        # a source that is itself a fork still being copied is copied first, before the lock
        # below (two forks of it at once would each wait for the other's share to copy it)
        await store.get_conversation(c, p.id, cid)
        # shared lock: a change of the source's messages waits for the fork to commit, then
        # copies it first (store.get_conversation); one running now, the fork waits for
        conv = await store.get_conversation(c, p.id, cid, for_share=True, pending_ok=True)
        start = conv.active_leaf_id
        if body.message_id:
            start = (await store.get_message(c, cid, body.message_id)).id
        new_id_ = await store.insert_conversation(
            c,
            p.id,
            title=body.title or conv.title,
            project_id=conv.project_id,
            agent_id=conv.agent_id,
            model_id=conv.model_id,
            provider=conv.provider,
            # a fork of a workspace conversation stays in the workspace (with its visibility)
            workspace_id=conv.workspace_id,
            is_public=conv.is_public,
        )
        plan, busy = await fork_store.plan_copy(c, cid, start, limit) if start else (None, 0)
        if busy:  # raised before the commit: the conversation is rolled back
            raise Conflict(
                "cannot fork while a message on the path is streaming", code="message_streaming"
            )
        if plan is not None:
            await forks.begin(c, new_id_, cid, plan)
        new_conv = await store.get_conversation(c, p.id, new_id_, pending_ok=True)
    if plan is not None:
        forks.kick(db, new_id_)
    return conversation_out(new_conv)
