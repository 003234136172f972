"""Shared base classes for wire models: strict input (unknown fields rejected), plain output."""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    model_validator,
)

from .. import unicode

T = TypeVar("T")


#: JSON Schema for "no NUL character" (the lone surrogates JSON cannot carry as text anyway)
NO_NUL = r"^[^\u0000]*$"


def say_no_nul(schema: dict) -> None:
    """Add ``NO_NUL`` to a property's free-text strings (enums, consts, formats and patterns
    already say what they take), through ``anyOf``/``oneOf`` and array items."""
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, ()):
            say_no_nul(sub)
    if isinstance(schema.get("items"), dict):
        say_no_nul(schema["items"])
    if schema.get("type") == "string" and not {"enum", "const", "format", "pattern"} & set(schema):
        schema["pattern"] = NO_NUL


class RejectNul(BaseModel):
    """Mixin: a request body holding a NUL character or a lone UTF-16 surrogate anywhere (keys
    included, any depth) is a validation error — neither database can store them (unicode.py).
    The schema says so too: every free-text string property carries ``NO_NUL``."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        for prop in target.get("properties", {}).values():
            say_no_nul(prop)
        return schema

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        bad = unicode.problem(data)
        if bad:
            raise ValueError(f"text must not contain {bad}")
        return data


def _is(annotation: Any, kind: type) -> bool:
    """``kind`` or ``kind | None``."""
    if annotation is kind:
        return True
    args = typing.get_args(annotation)
    return (
        typing.get_origin(annotation) in (typing.Union, types.UnionType)
        and kind in args
        and all(a in (kind, type(None)) for a in args)
    )


def _not_a_bool(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("Input should be a valid integer, not a boolean")
    return v


_NOT_A_BOOL = BeforeValidator(_not_a_bool)


class Input(RejectNul):
    """Request bodies: unknown fields are an error, not silently dropped; storable text only.
    Boolean fields are strict: ``true``/``false`` only — pydantic's lax mode also took ``0``,
    ``1``, ``"yes"`` and ``"off"``, which the schema (``type: boolean``) says are invalid; and an
    integer field refuses ``true``/``false`` (lax mode read them as 1 and 0)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        changed = False
        for f in cls.model_fields.values():
            if _is(f.annotation, bool) and not any(isinstance(m, Strict) for m in f.metadata):
                f.metadata.append(Strict())
                changed = True
            elif _is(f.annotation, int) and _NOT_A_BOOL not in f.metadata:
                f.metadata.append(_NOT_A_BOOL)
                changed = True
        if changed:
            cls.model_rebuild(force=True, raise_errors=False)


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


#: What chatmem takes for an email address (one ``@``, no spaces; auth.service checks it too).
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")


def _email(v: str) -> str:
    v = v.strip().lower()
    if not EMAIL_RE.match(v):
        raise ValueError("not an email address")
    return v


#: An email address in a request: the schema says what ``_email`` accepts, in terms every regex
#: engine reads alike (``\s`` differs: Python's has \x1c-\x1f and \x85, ECMAScript's \ufeff): ASCII
#: spaces around (stripped), and parts free of ``@``, spaces and control characters.
_EMAIL_PART = r"[^@\s\u0000-\u001f\u007f-\u009f\ufeff]+"
_SPACES = r"[\t\n\u000b\f\r ]*"
Email = Annotated[
    str,
    Field(min_length=3, max_length=320, pattern=f"^{_SPACES}{_EMAIL_PART}@{_EMAIL_PART}{_SPACES}$"),
    AfterValidator(_email),
]


#: A display name: 1–120 characters, surrounding spaces stripped, never blank (seed 000's (docs/specs.md) limit).
Name = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_not_blank)]

#: A conversation's title: at most 200 characters, surrounding spaces stripped. ``Title`` where
#: it may be left out (a blank one then reads as left out: the default title); ``NewTitle`` where
#: it is set (never blank, as ``Name``).
Title = Annotated[str, Field(max_length=200), AfterValidator(str.strip)]
NewTitle = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_not_blank)]
