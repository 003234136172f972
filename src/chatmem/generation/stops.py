"""Stop sequences applied to a streamed answer (pure): the text up to the first stop sequence.

Why it exists: an OpenAI-compatible request may carry ``stop``. Providers that support it get it
too (fewer tokens generated), but the turn applies it itself so every provider — the demo one, a
plugin — honours it, and what is stored, streamed and billed is exactly what the client sees. A
sequence can straddle two deltas, so up to ``longest - 1`` characters are held back until the
next delta (or the end) shows they are not the start of one.
"""

from __future__ import annotations


class StopScanner:
    def __init__(self, stops: tuple[str, ...] | list[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.hold = max((len(s) for s in self.stops), default=1) - 1
        self.buffer = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """Text that can be emitted now; sets ``stopped`` once a stop sequence was seen."""
        if self.stopped or not text:
            return ""
        if not self.stops:
            return text
        self.buffer += text
        hits = [i for i in (self.buffer.find(s) for s in self.stops) if i >= 0]
        if hits:
            out = self.buffer[: min(hits)]
            self.buffer, self.stopped = "", True
            return out
        cut = max(0, len(self.buffer) - self.hold)
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return out

    def flush(self) -> str:
        """The held-back tail at the end of the stream (it was no stop sequence)."""
        out, self.buffer = ("" if self.stopped else self.buffer), ""
        return out
