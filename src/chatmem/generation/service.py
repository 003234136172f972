"""Generation use-cases, and the Python API other features call to run and follow turns.

Public API (used by the routes here and by the seed-000 (docs/specs.md) compat layer):

- ``await start_turn(rt, principal, conv_id, blocks, *, parent_id=None, model=None, metadata=None)``
  → ``TurnIds(user_message_id, assistant_message_id)``: validates, takes the generation lease,
  writes the user message + assistant placeholder in one transaction (PostgreSQL, under the
  active leaf: a read and one statement, ``_start_unlocked``) and starts the turn detached
  from the caller (its ``message_start`` event is stored by the first flush: ``_opened``). ``parent_id`` given = an explicit parent (edit-and-resend
  when it already has a user child); omitted = the active leaf. Raises ApiError (404 conversation,
  422 invalid parent / unknown model, 409 parent streaming or double submit, 429 too many turns).
- ``await regenerate(rt, principal, conv_id, *, message_id=None, model=None)`` → TurnIds: a new
  assistant sibling under the user message (of ``message_id``, default: the active leaf).
- ``follow(rt, message_id, after_seq=0)`` → async iterator of ``{"seq", "type", "data"}``: replays
  the log after ``after_seq`` and follows it live (from memory when this process runs the turn,
  else by polling the database), ending after ``done`` or ``error``. Pruned logs, and a client
  that saw events a crashed process never saved, get ``snapshot`` then ``done``/``error`` (seq
  None). The caller must check ownership first (``check_message``).
- ``await stop(rt, principal, conv_id, message_id=None)`` → ``{"stopped": [...], "messages": [...]}``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..auth.models import Principal
from ..context.gather import PathRow
from ..conversations import blocks as blk
from ..conversations import dag, store, tree_store
from ..conversations.wire import message_out
from ..db.clock import now_ms
from ..db.ids import new_id, secret_token
from ..errors import Conflict, Forbidden, TooManyRequests, Unprocessable
from ..providers.base import ModelInfo
from ..workspaces import store as workspaces_store
from . import events as ev
from . import leases, start_store
from . import store as gstore
from .finalize import end_orphan
from .follow import check_message as check_message  # the public API (module docstring)
from .follow import follow as follow
from .follow import follow_batches as follow_batches
from .follow import fully_delivered as fully_delivered
from .turns import TurnRequest, TurnRunner, TurnSpec


@dataclass(frozen=True)
class TurnIds:
    conversation_id: str
    user_message_id: str
    assistant_message_id: str

    def __iter__(self):  # allows ``user_id, assistant_id = await start_turn(...)``
        return iter((self.user_message_id, self.assistant_message_id))

    def as_dict(self) -> dict:
        return {
            "conversation_id": self.conversation_id,
            "user_message_id": self.user_message_id,
            "assistant_message_id": self.assistant_message_id,
        }


async def _message_in(c, conv_id: str, mid: str, what: str = "parent"):
    return _found(await gstore.message_in(c, conv_id, mid), mid, what)


def _found(row, mid: str, what: str = "parent"):
    if row is None:
        noun = "message" if what == "message" else f"{what} message"
        raise Unprocessable(
            f"{noun} not found in this conversation",
            code=f"invalid_{what}",
            details={f"{what}_id": mid},
        )
    return row


async def _take_lease(c, rt, p: Principal, conv_id: str, key: str, token: str, now: int):
    """The generation lease of ``key`` for ``token`` (None), or the live holder's token; 429
    when the caller already runs ``max_concurrent_turns`` answers (the cap is checked inside
    the lease's INSERT: leases.acquire; under races it holds because the transaction began by
    locking the user's row: gstore.conversation_for_turn)."""
    cap = rt.settings.max_concurrent_turns
    ttl = leases.Timing.of(rt.settings).hold_ms
    holder = await leases.acquire(c, conv_id, key, p.id, token, ttl, now, cap=cap)
    if holder == leases.AT_CAP:
        raise TooManyRequests(
            f"at most {cap} answers may be generated at once; wait for one to finish or stop it",
            code="too_many_turns",
            details={"limit": cap},
        )
    return holder


def _assistant_columns(model: ModelInfo) -> dict:
    return {
        "provider": model.provider,
        "model_id": model.id,
        "model_label": model.label,
        "fast": int(model.fast),
    }


async def _placeholder(c, conv, parent, p: Principal, model: ModelInfo, mid: str, now: int):
    """A regenerated answer's assistant row (streaming) under ``parent`` (the user message's
    row), its first event and the conversation row as updated (``_opened``)."""
    await store.insert_message(
        c,
        conv,
        parent_id=parent.id,
        parent_depth=parent.depth,
        parent_jump=(parent.jump_id, parent.jump_depth),
        role="assistant",
        blocks=[],
        user_id=p.id,
        status="streaming",
        id=mid,
        now=now,
        touch=False,
        **_assistant_columns(model),
    )
    return await _opened(c, conv.id, parent.id, mid, model, now, added=1)


@dataclass(frozen=True)
class _Lease:
    """The generation lease a new turn takes (``_branch_lease``'s arguments)."""

    key: str
    token: str
    explicit: bool
    blocks: list


async def _question_and_placeholder(
    c,
    rt,
    conv,
    prow,
    p: Principal,
    model: ModelInfo,
    mid: str,
    now: int,
    extra: dict,
    lease: _Lease,
    lock: dict | None = None,
):
    """The turn's lease, then its user message under ``prow`` (None: a root) and its answer's
    placeholder, in one INSERT (their jump pointers from ``prow``'s: ``dag.chain_places``),
    then ``_opened``; on PostgreSQL all three in one statement when the lease is free
    (start_store.open_turn), else step by step (``_branch_lease`` says 409, 429, or an edit's
    own branch). Returns (user message id, conversation row, first event, the answer's row as
    inserted). With ``lock`` (``_start_unlocked``): that one statement also takes the locks
    (start_store.open_turn with its ``lock``), and None when it wrote nothing."""
    uid = new_id("msg")
    known: dict[str, dag.Jump] = {}
    if prow is not None:  # the parent's pointer, its jump's and that one's (message_in_with_jumps)
        known[prow.id] = (prow.jump_id, prow.jump_depth)
        if prow.jump_id is not None:
            known[prow.jump_id] = (prow.j1_jump_id, prow.j1_jump_depth)
        if prow.j1_jump_id is not None:
            known[prow.j1_jump_id] = (prow.j2_jump_id, prow.j2_jump_depth)
    parent = None if prow is None else prow.id
    uplace, aplace = dag.chain_places(parent, 0 if prow is None else prow.depth, known, [uid, mid])
    common = {"created_at": now, "user_id": p.id}
    question = {"id": uid, "parent_id": parent, "role": "user", "blocks": lease.blocks, **common}
    answer = {"id": mid, "parent_id": uid, "role": "assistant", "blocks": [], **common}
    answer.update(status="streaming", **_assistant_columns(model), **aplace)
    rows = [{**question, "status": "complete", **uplace, **extra}, answer]
    if start_store.opens_at_once(c):
        cap = rt.settings.max_concurrent_turns
        ttl = leases.Timing.of(rt.settings).hold_ms
        taking = leases.acquire_params(conv.id, lease.key, p.id, lease.token, ttl, now, cap=cap)
        touch = {"b_cid": conv.id, "b_added": 2, "b_created": now, "b_now": now, "b_leaf": mid}
        values = store.message_rows(conv, rows)
        opened = await start_store.open_turn(c, taking, values, touch, lock)
        if opened is not None:
            return uid, opened[0], _start_event(conv.id, uid, mid, model), opened[1]
        if lock is not None:
            return None
    await _branch_lease(
        c, rt, p, conv.id, lease.key, lease.token, now, lease.explicit, lease.blocks
    )
    inserted = await store.insert_messages(c, conv, rows)
    conv_row, start = await _opened(c, conv.id, uid, mid, model, now, added=2)
    return uid, conv_row, start, inserted[mid]


async def _opened(c, conv_id: str, user_mid: str, mid: str, model: ModelInfo, now: int, added: int):
    """After a turn's rows: the conversation counts ``added`` new messages with the answer as
    its active leaf (the row as updated: the turn's context starts from it instead of reading
    it again), and the answer's first event. Returns (conversation row, first event).

    The first event is not written here: the turn's log starts with it pending, and the first
    flush after the context is read (``flush_coalesce_ms`` after the model is called:
    ``TurnRunner._generate``; any flush before, at the latest ``flush_interval_ms``) or the
    turn's final write stores it with what follows — a turn that ends before its first flush
    stores its whole log in one INSERT. Like any event, it is shown only once stored; a process
    that dies before then leaves no event, and the sweeper's closing event is the log's
    first."""
    conv_row = await store.touch_conversation(
        c, conv_id, added=added, created_at=now, now=now, leaf=mid, returning=True
    )
    return conv_row, _start_event(conv_id, user_mid, mid, model)


def _start_event(conv_id: str, user_mid: str, mid: str, model: ModelInfo) -> dict:
    """The answer's first event (``_opened`` says when it is stored)."""
    return {
        "seq": 1,
        "type": "message_start",
        "data": {
            "conversation_id": conv_id,
            "user_message_id": user_mid,
            "assistant_message_id": mid,
            "model": "fast" if model.fast else model.id,
            "model_label": "Fast" if model.fast else model.label,
        },
    }


def _launch(
    rt,
    p: Principal,
    conv_id: str,
    user_mid: str,
    mid: str,
    model: ModelInfo,
    token: str,
    first_turn: bool,
    run_hook: bool,
    start_event: dict,
    now: int,
    request: TurnRequest | None = None,
    user_text: str | None = None,
    conv=None,
    path: list | None = None,
    no_memories: bool = False,
    placeholder=None,
) -> None:
    g = rt.generation
    spec = TurnSpec(
        request=request,
        principal=p,
        conv_id=conv_id,
        user_message_id=user_mid,
        assistant_message_id=mid,
        model=model,
        token=token,
        first_turn=first_turn,
        run_hook=run_hook,
        started_ms=now,
        user_text=user_text,
        conv=conv,
        path=path,
        no_memories=no_memories,
        placeholder=placeholder,
    )
    g.track(TurnRunner(rt, g, spec, ev.LiveLog(mid, [start_event], g.flusher.poke, durable=False)))


async def start_turn(
    rt,
    principal: Principal,
    conv_id: str,
    blocks: list[dict],
    *,
    parent_id: str | None = None,
    model: str | None = None,
    metadata: dict | None = None,
    branch: bool = False,
    request: TurnRequest | None = None,
) -> TurnIds:
    """``branch`` (edit-and-resend) takes ``parent_id`` literally: with no parent the new user
    message is a new root beside the first one instead of following the active leaf."""
    p = principal
    blocks = blk.normalize(blocks)
    now = now_ms()
    explicit = parent_id is not None or branch
    under: gstore.ParentOf = "given" if parent_id is not None else None if branch else "leaf"
    ask = _Ask(p, blocks, parent_id, explicit, model, metadata, now)
    started = None
    if under == "leaf" and rt.db.dialect == "postgresql":
        started = await _start_unlocked(rt, ask, conv_id)
    if started is None:
        async with rt.db.write() as c:
            conv = await gstore.conversation_for_turn(
                c, p.id, conv_id, parent=under, parent_id=parent_id
            )
            started = await _open_question(c, rt, ask, conv)
    assert started is not None  # the locked way writes or raises
    s = started
    text = blk.visible_text(blocks)
    # a root question is the whole path its answer's context needs (no read of it)
    path = [PathRow(s.uid, None, "user", "complete", text, 0, 0, 0, now)] if s.root else None
    _launch(
        rt,
        p,
        conv_id,
        s.uid,
        s.mid,
        s.info,
        s.token,
        s.first_turn,
        True,
        s.start,
        now,
        request,
        text,
        s.conv,
        path,
        s.no_memories,
        s.placeholder,
    )
    return TurnIds(conv_id, s.uid, s.mid)


@dataclass(frozen=True)
class _Ask:
    """A new question as sent (``start_turn``'s arguments)."""

    principal: Principal
    blocks: list[dict]
    parent_id: str | None
    explicit: bool
    model: str | None
    metadata: dict | None
    now: int


@dataclass(frozen=True)
class _Started:
    """What ``_open_question`` wrote, and what the turn it starts needs of it."""

    uid: str
    mid: str
    token: str
    info: ModelInfo
    first_turn: bool
    no_memories: bool
    root: bool
    conv: Any
    start: dict
    placeholder: Any


async def _start_unlocked(rt, ask: _Ask, conv_id: str) -> _Started | None:
    """PostgreSQL, a question under the active leaf: its start outside a transaction — the
    conversation read without a lock, then one statement that takes the locks, re-checks the
    leaf the rows were computed from and writes them (start_store.open_turn, locking): two round
    trips where the locked way takes four (BEGIN, the locking read, the writes, COMMIT). None
    when that statement wrote nothing — the leaf moved, the branch's lease is held, the cap
    reached, a pending fork —: the caller takes the locked way, which says which (or starts)."""
    async with rt.db.write_once() as c:
        conv = await gstore.conversation_seen(c, ask.principal.id, conv_id)
        if conv.fork_source_id is not None:
            return None
        return await _open_question(c, rt, ask, conv, locking=True)


async def _open_question(c, rt, ask: _Ask, conv, locking: bool = False) -> _Started | None:
    """The question's rows and its answer's placeholder under the lease (``_question_and_
    placeholder``), computed from ``conv`` (``conversation_for_turn``'s row, or with
    ``locking`` ``conversation_seen``'s: then None when nothing was written)."""
    p = ask.principal
    info = rt.providers.resolve(ask.model or conv.model_id or None)
    parent = ask.parent_id if ask.explicit else conv.active_leaf_id
    prow = None if parent is None else await _reply_parent(c, conv, parent, p, ask.explicit)
    mid = new_id("msg")
    token = f"{mid}:{secret_token(18)}"
    extra: dict[str, Any] = {"metadata": ask.metadata} if ask.metadata else {}
    lease = _Lease(parent or "root", token, ask.explicit, ask.blocks)
    lock = start_store.seen(p.id, conv) if locking else None
    opened = await _question_and_placeholder(
        c, rt, conv, prow, p, info, mid, ask.now, extra, lease, lock
    )
    if opened is None:
        return None
    uid, row, start, placeholder = opened
    first_turn = conv.message_count == 0
    no_memories = not conv.may_have_memories
    return _Started(
        uid, mid, token, info, first_turn, no_memories, prow is None, row, start, placeholder
    )


async def _branch_lease(c, rt, p: Principal, conv_id, key, token, now, explicit, blocks):
    """The generation lease of the branch under ``key`` (409 when an answer there is running,
    unless this send is an edit-and-resend of it: then a lease of its own branch)."""
    holder = await _take_lease(c, rt, p, conv_id, key, token, now)
    if holder is None:
        return
    running = leases.message_of(holder)
    if not (explicit and await _is_edit(c, running, blocks)):
        raise Conflict(
            "an answer on this branch is already being generated",
            code="generation_in_progress",
            details={"message_id": running},
        )
    # an edit-and-resend while the first version is still answering: its own branch
    ttl = leases.Timing.of(rt.settings).hold_ms
    await leases.acquire(c, conv_id, f"{key}/{leases.message_of(token)}", p.id, token, ttl, now)


async def _reply_parent(c, conv, parent: str, p: Principal, explicit: bool):
    """The row a new user message is written under: in the conversation, and not an answer of
    the caller's still streaming (409); with its jump pointers two levels up — as the turn's
    first statement joined it (gstore.conversation_for_turn), else read."""
    prow = gstore.joined_parent(conv, parent)
    if prow is None:
        prow = _found(await gstore.message_in_with_jumps(c, conv.id, parent), parent)
    # another member's answer still streaming does not block a shared conversation: the new
    # question follows it (the context has the answer as far as it got)
    others = bool(prow.author_id) and prow.author_id != p.id and not explicit
    if prow.role == "assistant" and prow.status == "streaming" and not others:
        raise Conflict(
            "the message you are replying to is still being generated",
            code="parent_streaming",
            details={"message_id": prow.id},
        )
    return prow


async def _is_edit(c, running_mid: str, blocks: list[dict]) -> bool:
    """A send under a busy parent is an edit (not a double submit) when its text differs."""
    arow = await gstore.parent_of(c, running_mid)
    if arow is None or arow.parent_id is None:
        return True
    urow = await gstore.blocks_of(c, arow.parent_id)
    return urow is None or blk.visible_text(urow.blocks) != blk.visible_text(blocks)


async def regenerate(
    rt,
    principal: Principal,
    conv_id: str,
    *,
    message_id: str | None = None,
    model: str | None = None,
) -> TurnIds:
    p = principal
    now = now_ms()
    async with rt.db.write() as c:
        conv = await gstore.conversation_for_turn(c, p.id, conv_id)
        target_id = message_id or conv.active_leaf_id
        if target_id is None:
            raise Unprocessable("there is nothing to regenerate", code="nothing_to_regenerate")
        target = await _message_in(c, conv_id, target_id, "message")
        user = target
        if target.role == "assistant":
            if target.parent_id is None:
                raise Unprocessable(
                    "this answer has no question to answer again", code="nothing_to_regenerate"
                )
            user = await _message_in(c, conv_id, target.parent_id, "message")
        if user.role != "user":
            raise Unprocessable(
                "regenerate needs a user message or an answer to one",
                code="nothing_to_regenerate",
                details={"message_id": target_id},
            )
        no_memories = not conv.may_have_memories
        default_model = target.model_id if target.role == "assistant" and not target.fast else None
        info = rt.providers.resolve(model or default_model or conv.model_id or None)
        mid = new_id("msg")
        token = f"{mid}:{secret_token(18)}"
        holder = await _take_lease(c, rt, p, conv_id, user.id, token, now)
        if holder is not None:
            raise Conflict(
                "an answer to this message is already being generated",
                code="generation_in_progress",
                details={"message_id": leases.message_of(holder)},
            )
        conv, start = await _placeholder(c, conv, user, p, info, mid, now)
    _launch(
        rt,
        p,
        conv_id,
        user.id,
        mid,
        info,
        token,
        False,
        False,
        start,
        now,
        conv=conv,
        no_memories=no_memories,
    )
    return TurnIds(conv_id, user.id, mid)


async def stop(
    rt, principal: Principal, conv_id: str, message_id: str | None = None, *, wait_s: float = 10.0
) -> dict:
    g = rt.generation
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, principal.id, conv_id)
        if message_id is not None:
            row = await store.get_message(c, conv_id, message_id)
            if not await workspaces_store.may_act_on(c, principal.id, conv, row):
                raise Forbidden(
                    "only the member who asked for this answer or a workspace admin may stop it",
                    code="workspace_role",
                )
            targets = [row.id] if row.status == "streaming" else []
        else:
            # every answer the caller asked for here (in a shared conversation: theirs only)
            targets = await gstore.streaming_ids(
                c, conv_id, principal.id, shared=bool(conv.workspace_id)
            )
    for mid in targets:
        runner = g.runners.get(mid)
        if runner is not None:
            runner.request_stop("stopped")
            continue
        async with rt.db.write() as c:
            if not await leases.request_stop(c, mid, now_ms()):
                await end_orphan(c, mid, stopped=True)
    deadline = asyncio.get_running_loop().time() + wait_s
    while targets:
        async with rt.db.read() as c:
            busy = await gstore.still_streaming(c, targets)
        if not busy or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    async with rt.db.read() as c:
        rows = await store.rows_by_ids(c, targets)
        info = await tree_store.branch_info_for(c, conv_id, rows)
    return {
        "stopped": targets,
        "messages": [message_out(r, info.get(r.id), is_admin=principal.is_admin) for r in rows],
    }
