"""Shared base classes for wire models: strict input (unknown fields rejected), plain output."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")


class Input(BaseModel):
    """Request bodies: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Output(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Page(Output, Generic[T]):
    items: list[T]
    next_cursor: str | None = None
