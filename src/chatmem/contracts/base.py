"""Shared base classes for wire models: strict input (unknown fields rejected), plain output."""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from .. import unicode

T = TypeVar("T")


class RejectNul(BaseModel):
    """Mixin: a request body holding a NUL character or a lone UTF-16 surrogate anywhere (keys
    included, any depth) is a validation error — neither database can store them (unicode.py)."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        bad = unicode.problem(data)
        if bad:
            raise ValueError(f"text must not contain {bad}")
        return data


class Input(RejectNul):
    """Request bodies: unknown fields are an error, not silently dropped; storable text only."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Output(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _is_none(v: Any) -> bool:
    return v is None


def when_present(description: str) -> Any:
    """A field that only some answers carry (admin-only, or asked for): absent, not null, when
    there is no value — its schema says it may be missing."""
    return Field(default=None, exclude_if=_is_none, description=description)


class Page(Output, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


def _not_blank(v: str) -> str:
    v = v.strip()
    if not v:
        raise ValueError("must not be blank")
    return v


#: A display name: 1–120 characters, surrounding spaces stripped, never blank (seed 000's (docs/specs.md) limit).
Name = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_not_blank)]
