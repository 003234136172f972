"""events.LiveLog: a flush's text is one event — consecutive pending deltas of a kind merge, and
an event handed to a writer (``pending()``) or shown never changes again (exact resume)."""

from __future__ import annotations

from chatmem.generation.events import LiveLog


def _log() -> tuple[LiveLog, list[int]]:
    pokes: list[int] = []
    log = LiveLog(
        "msg_1", [{"seq": 1, "type": "message_start", "data": {}}], lambda: pokes.append(1)
    )
    return log, pokes


def test_pending_deltas_of_a_kind_are_one_event():
    log, pokes = _log()
    for t in ("Hel", "lo", ", world"):
        log.add("text_delta", {"text": t})
    assert log.pending() == [{"seq": 2, "type": "text_delta", "data": {"text": "Hello, world"}}]
    assert log.last_seq == 2 and len(pokes) == 1  # the flusher is told once


def test_an_event_taken_by_a_writer_never_grows():
    log, _ = _log()
    log.add("text_delta", {"text": "a"})
    taken = log.pending()  # a flush is writing it
    log.add("text_delta", {"text": "b"})
    assert taken == [{"seq": 2, "type": "text_delta", "data": {"text": "a"}}]
    log.mark_flushed(2)
    log.add("text_delta", {"text": "c"})
    assert log.pending() == [{"seq": 3, "type": "text_delta", "data": {"text": "bc"}}]
    assert [e["seq"] for e in log.events] == [1, 2, 3]
    assert log.events[1]["data"] == {"text": "a"}


def test_kinds_and_other_events_break_a_run():
    log, _ = _log()
    log.add("thinking_delta", {"text": "hm"})
    log.add("thinking_delta", {"text": "m"})
    log.add("text_delta", {"text": "x"})
    log.add("tool_call", {"id": "t1", "name": "f", "arguments": "{}"})
    log.add("text_delta", {"text": "y"})
    log.add("text_delta", {"text": "z"})
    log.add("usage", {"output_tokens": 3}, durable=True)  # durable: shown at once
    got = [(e["seq"], e["type"], e["data"].get("text")) for e in log.events[1:]]
    assert got == [
        (2, "thinking_delta", "hmm"),
        (3, "text_delta", "x"),
        (4, "tool_call", None),
        (5, "text_delta", "yz"),
        (6, "usage", None),
    ]
    assert log.flushed == 6


async def test_subscribers_see_the_merged_event_once_durable():
    log, _ = _log()
    log.add("text_delta", {"text": "a"})
    log.add("text_delta", {"text": "b"})
    log.mark_flushed(log.last_seq)
    log.close()
    seen = [e async for batch in log.batches(after=1) for e in batch]
    assert seen == [{"seq": 2, "type": "text_delta", "data": {"text": "ab"}}]


def test_add_text_is_add_of_a_text_delta():
    log, pokes = _log()
    for t in ("Hel", "lo"):
        log.add_text("text_delta", t)
    log.add("thinking_delta", {"text": "hm"})
    log.add_text("text_delta", "!")
    assert log.pending() == [
        {"seq": 2, "type": "text_delta", "data": {"text": "Hello"}},
        {"seq": 3, "type": "thinking_delta", "data": {"text": "hm"}},
        {"seq": 4, "type": "text_delta", "data": {"text": "!"}},
    ]
    assert len(pokes) == 3


def test_first_events_not_yet_stored_wait_for_a_nudge():
    pokes: list[int] = []
    start = {"seq": 1, "type": "message_start", "data": {}}
    log = LiveLog("msg_1", [start], lambda: pokes.append(1), durable=False)
    assert log.flushed == 0 and log.pending() == [start] and pokes == []  # not shown yet
    log.nudge()  # the turn calls its model: the next flush takes it
    assert pokes == [1]
    log.mark_flushed(1)
    log.nudge()  # nothing pending: the flusher is not told
    assert pokes == [1]


def test_first_events_are_held_until_a_nudge_or_another_event():
    start = {"seq": 1, "type": "message_start", "data": {}}
    log = LiveLog("msg_1", [start], None, durable=False)
    assert log.held
    log.nudge()
    assert not log.held
    log = LiveLog("msg_1", [start], None, durable=False)
    log.add("compaction", {"mode": "inline"})  # shown with what comes before it
    assert not log.held and [e["seq"] for e in log.pending()] == [1, 2]
    assert not LiveLog("msg_1", [start], None).held  # already stored
