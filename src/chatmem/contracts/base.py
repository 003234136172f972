"""Shared base classes for wire models: strict input (unknown fields rejected), plain output."""

from __future__ import annotations

from typing import Annotated, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

T = TypeVar("T")


class Input(BaseModel):
    """Request bodies: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Output(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Page(Output, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


def _not_blank(v: str) -> str:
    v = v.strip()
    if not v:
        raise ValueError("must not be blank")
    return v


#: A display name: 1–120 characters, surrounding spaces stripped, never blank (seed 000's limit).
Name = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_not_blank)]
