"""Opening an import file and streaming its conversations one at a time.

Why it exists: an export can be a gigabyte of JSON, inside a zip or not, written by software that
does not always write valid UTF-8. ``open_source`` picks the JSON inside a zip (the
``conversations.json`` nearest the top, else the only JSON file), repairs undecodable bytes on the
fly (each becomes U+FFFD, counted; a BOM is dropped) and ``conversations`` yields one parsed object
at a time from ``ijson`` — memory stays bounded by the largest single conversation, not the file.
``sniff`` reads just enough of the start to tell the format.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import ijson

from . import formats

SNIFF_EVENTS = 200_000


class SourceError(ValueError):
    """The file as a whole cannot be read (not JSON, no conversations file in the zip, …)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Utf8Repair(io.RawIOBase):
    """A byte stream whose output is valid UTF-8: invalid sequences become U+FFFD."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.dec = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = b""
        self.first = True
        self.consumed = 0  # raw bytes read
        self.replaced = 0  # invalid sequences replaced (approximate at chunk borders)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self.buf:
            chunk = self.raw.read(max(len(b), 1 << 16))
            if not chunk:
                tail = self.dec.decode(b"", final=True)
                if not tail:
                    return 0
                self.replaced += tail.count("\ufffd")
                self.buf = tail.encode()
                break
            self.consumed += len(chunk)
            s = self.dec.decode(chunk)
            if self.first and s:
                self.first = False
                s = s.removeprefix("\ufeff")
            self.replaced += max(0, s.count("\ufffd") - chunk.count(b"\xef\xbf\xbd"))
            self.buf = s.encode()
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        self.buf = self.buf[n:]
        return n


@dataclass
class Source:
    path: Path
    member: str | None  # the JSON inside a zip
    total: int  # bytes to read (uncompressed size of the member)
    files: frozenset[str] = field(default_factory=frozenset)  # other names in the zip

    @contextmanager
    def open(self) -> Iterator[Utf8Repair]:
        if self.member is None:
            with open(self.path, "rb") as f:
                yield Utf8Repair(f)
        else:
            with zipfile.ZipFile(self.path) as z, z.open(self.member) as f:
                yield Utf8Repair(f)


def _pick_member(z: zipfile.ZipFile) -> zipfile.ZipInfo:
    infos = [i for i in z.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")]
    named = [i for i in infos if i.filename.rsplit("/", 1)[-1] == "conversations.json"]
    if named:
        return min(named, key=lambda i: i.filename.count("/"))
    jsons = [i for i in infos if i.filename.lower().endswith(".json")]
    if len(jsons) == 1:
        return jsons[0]
    raise SourceError("no_conversations", "the zip holds no conversations.json")


def open_source(path: str | Path) -> Source:
    path = Path(path)
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as z:
                info = _pick_member(z)
                names = frozenset(i.filename.rsplit("/", 1)[-1] for i in z.infolist())
        except zipfile.BadZipFile as e:
            raise SourceError("bad_zip", f"the zip cannot be read: {e}") from None
        return Source(path, info.filename, info.file_size, names - {info.filename})
    return Source(path, None, path.stat().st_size)


def sniff(src: Source) -> tuple[str, str]:
    """(format, item prefix) from the start of the document; SourceError when unknown."""
    top = None
    keys: set[str] = set()
    inner: set[str] = set()
    format_value = None
    with src.open() as f:
        try:
            for n, (prefix, event, value) in enumerate(ijson.parse(f, use_float=True)):
                if top is None:
                    if event not in ("start_array", "start_map"):
                        raise SourceError("not_an_export", "the file is JSON but not an export")
                    top = "array" if event == "start_array" else "map"
                    continue
                if event == "map_key":
                    if (top == "array" and prefix == "item") or (top == "map" and prefix == ""):
                        keys.add(value)
                    elif top == "map" and prefix == "conversations.item":
                        inner.add(value)
                elif prefix == "format" and event == "string":
                    format_value = value
                found = formats.detect(top, keys, inner, format_value)
                if found and (
                    top == "array" or format_value or inner or "conversations" not in keys
                ):
                    return found
                if n > SNIFF_EVENTS or (top == "array" and event == "end_map" and prefix == "item"):
                    break
        except ijson.JSONError as e:
            raise SourceError("not_json", f"the file is not valid JSON: {e}") from None
    found = formats.detect(top or "map", keys, inner, format_value)
    if found:
        return found
    if top == "array" and not keys:
        return "chatgpt", "item"  # an empty list: nothing to import in any format
    raise SourceError(
        "unknown_format",
        "the format could not be recognised (expected ChatGPT, Claude, Open WebUI, LibreChat "
        "or chatmem JSON); name it: chatgpt, claude, openwebui, librechat or chatmem (the "
        "API's format field, the CLI's --format)",
    )


def default_prefix(fmt: str, src: Source) -> str:
    """The item prefix for a format named by the caller (sniffed when it has a container)."""
    try:
        found_fmt, prefix = sniff(src)
    except SourceError:
        found_fmt, prefix = None, None
    if found_fmt == fmt and prefix is not None:
        return prefix
    return {"chatmem": "conversations.item", "librechat": ""}.get(fmt, "item")


def items(stream, prefix: str) -> Iterator:
    """The objects at ``prefix`` (one at a time); a single object when ``prefix`` is ""."""
    return ijson.items(stream, prefix, use_float=True)
