"""Wire contract of ``GET /api/search``: matching conversation titles and message snippets.

Why it exists: the route declares it as its response model, so the OpenAPI document types the
answer and a new column never leaks into it.
"""

from __future__ import annotations

from pydantic import Field

from ..contracts.base import Output


class ConversationHit(Output):
    id: str
    title: str
    project_id: str | None
    agent_id: str | None
    updated_at: int


class Snippet(Output):
    text: str = Field(description="the text around the first match (… where cut)")
    match_start: int = Field(description="offset of the match in ``text``")
    match_end: int


class MessageHit(Output):
    id: str
    conversation_id: str
    conversation_title: str
    role: str
    created_at: int
    snippet: Snippet


class SearchResults(Output):
    query: str = Field(description="the query as searched (cleaned)")
    conversations: list[ConversationHit]
    messages: list[MessageHit]
