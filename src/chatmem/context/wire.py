"""Wire contracts of the context routes: the context report and the manual compaction result.

Why it exists: ``GET …/context`` and ``POST …/compact`` declare these as response models so the
OpenAPI document types them. The report is produced by assemble.py and grows with it (recall,
budgets): the fields listed here are the stable ones, further keys pass through unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from ..contracts.base import Output, when_present
from ..conversations.wire import SummaryBlock


class ReportSection(Output):
    model_config = ConfigDict(extra="allow")
    name: str = Field(description="system, persona, project, memories, summary, history, …")
    tokens: int


class ContextReport(Output):
    """What a turn's prompt was made of: sections with token counts, and which messages, memories
    and summary blocks went in."""

    model_config = ConfigDict(extra="allow")
    window: int | None = None
    reserved_output_tokens: int | None = None
    limit: int | None = None
    total_tokens: int | None = None
    sections: list[ReportSection] = Field(default_factory=list)
    message_ids: list[str] = Field(default_factory=list)
    memory_ids: list[str] = Field(default_factory=list)
    summary_block_ids: list[str] = Field(default_factory=list)
    dropped_message_count: int | None = None
    truncated: list[str] = Field(default_factory=list)


class PromptMessage(Output):
    role: str
    content: Any


class ContextOut(Output):
    conversation_id: str
    preview: bool = Field(description="true: what the next turn would get; false: a stored report")
    report: ContextReport
    leaf_id: str | None = when_present("the leaf a preview assembles for")
    model: str | None = when_present("the model a preview assembles for")
    message_id: str | None = when_present("the message a stored report is of")
    messages: list[PromptMessage] | None = when_present(
        "the assembled prompt, with include_messages=true"
    )


class CompactOut(Output):
    status: str
    reason: str | None = None
    blocks_added: int = 0
    merged_blocks: int = 0
    summarized_messages: int = 0
    compacted: bool
    summary_blocks: list[SummaryBlock]
    summary: str | None
