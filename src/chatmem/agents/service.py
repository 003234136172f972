"""Agent use-cases: CRUD scoped to the owner; the list is ordered by each agent's latest message.

Field limits follow seed 000's (docs/specs.md) persona contract where it states them (name/handle 120, headline 200,
profile text 2,000); the prompt fields, which the seed stores but does not bound, are capped at
4,000 characters so one agent cannot eat a model's context window.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..auth.models import Principal
from ..contracts.base import Input, Name, Output
from ..conversations.store import detach_messages
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from . import store

PROMPT_MAX = 4000


class AgentIn(Input):
    name: Name
    handle: Name
    headline: str = Field(default="", max_length=200)
    description: str = Field(default="", max_length=2000)
    story_background: str = Field(default="", max_length=PROMPT_MAX)
    personality_prompt: str = Field(default="", max_length=PROMPT_MAX)
    tone_prompt: str = Field(default="", max_length=PROMPT_MAX)
    guardrails_prompt: str = Field(default="", max_length=PROMPT_MAX)
    opening_message: str | None = Field(default=None, max_length=2000)
    default_prompt: str = Field(default="", max_length=PROMPT_MAX)
    image_key: str | None = Field(default=None, max_length=500)
    visibility: Literal["private", "public"] = "private"
    status: Literal["draft", "published", "archived"] = "published"


class AgentPatch(Input):
    name: Name | None = None
    handle: Name | None = None
    headline: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=2000)
    story_background: str | None = Field(default=None, max_length=PROMPT_MAX)
    personality_prompt: str | None = Field(default=None, max_length=PROMPT_MAX)
    tone_prompt: str | None = Field(default=None, max_length=PROMPT_MAX)
    guardrails_prompt: str | None = Field(default=None, max_length=PROMPT_MAX)
    opening_message: str | None = Field(default=None, max_length=2000)
    default_prompt: str | None = Field(default=None, max_length=PROMPT_MAX)
    image_key: str | None = Field(default=None, max_length=500)
    visibility: Literal["private", "public"] | None = None
    status: Literal["draft", "published", "archived"] | None = None


class AgentOut(Output):
    id: str
    name: str
    handle: str
    headline: str
    description: str
    story_background: str
    personality_prompt: str
    tone_prompt: str
    guardrails_prompt: str
    opening_message: str | None
    default_prompt: str
    image_key: str | None
    visibility: str
    status: str
    last_assistant_message: str | None
    last_assistant_message_at: int | None
    last_message_at: int | None = Field(description="the newest message of its conversations")
    created_at: int
    updated_at: int


#: Columns that may be NULL; ``null`` for any other field in a PATCH leaves it unchanged.
NULLABLE = frozenset({"opening_message", "image_key"})


def agent_out(row) -> dict:
    m = dict(row._mapping)
    m.pop("user_id", None)
    m.setdefault("last_message_at", None)
    return m


async def get_owned(c, p: Principal, agent_id: str):
    return await store.get_owned(c, p.id, agent_id)


async def create(db: Database, p: Principal, body: AgentIn) -> dict:
    now = now_ms()
    aid = new_id("agt")
    async with db.write() as c:
        await store.insert_agent(
            c, id=aid, user_id=p.id, created_at=now, updated_at=now, **body.model_dump()
        )
        row = await get_owned(c, p, aid)
    return agent_out(row)


async def list_(db: Database, p: Principal) -> dict:
    """The caller's agents, the one with the most recent conversation message first."""
    async with db.read() as c:
        rows = await store.list_by_last_message(c, p.id)
    return {"items": [agent_out(r) for r in rows], "next_cursor": None}


async def get(db: Database, p: Principal, agent_id: str) -> dict:
    async with db.read() as c:
        return agent_out(await get_owned(c, p, agent_id))


async def patch(db: Database, p: Principal, agent_id: str, body: AgentPatch) -> dict:
    changes = {
        k: v
        for k, v in body.model_dump(exclude_unset=True).items()
        if v is not None or k in NULLABLE
    }
    async with db.write() as c:
        await get_owned(c, p, agent_id)
        if changes:
            await store.update_agent(c, agent_id, updated_at=now_ms(), **changes)
        row = await get_owned(c, p, agent_id)
    return agent_out(row)


#: Characters of the last reply kept as the agent's preview (seed 000's list shows a short line).
PREVIEW_CHARS = 500


async def record_reply(c, agent_id: str, text: str, at: int) -> None:
    """Set the agent's last-assistant-message preview inside the caller's transaction; a turn that
    finishes late never overwrites a newer reply's preview."""
    await store.record_reply(c, agent_id, text[:PREVIEW_CHARS], at)


async def remove(db: Database, p: Principal, agent_id: str) -> None:
    """Delete an agent with its conversations, messages and memories (seed 000's CASCADE rules)."""
    async with db.write() as c:
        await get_owned(c, p, agent_id)
        conv_ids = await store.conversation_ids(c, p.id, agent_id)
        if conv_ids:  # flat cascade: deep chains would exceed SQLite's trigger depth
            await detach_messages(c, conv_ids)
        await store.delete_agent(c, agent_id)
