"""The format parsers alone (pure, no database): ChatGPT's multimodal parts beyond the fixture —
voice messages (transcript and audio reference), an image a tool generated, a code step, an
unknown part type counted — and the zip's files marking a reference as present in the archive."""

from __future__ import annotations

from chatmem.portability import tree
from chatmem.portability.formats import chatgpt


def _node(nid, parent, role, content, **msg):
    return {
        "id": nid,
        "parent": parent,
        "children": [],
        "message": {
            "id": nid,
            "author": {"role": role, **msg.pop("author", {})},
            "create_time": 1_700_000_000,
            "content": content,
            **msg,
        },
    }


def _conv():
    audio = "sediment://file_00000000aud"
    return {
        "id": "mm",
        "title": "Multimodal",
        "current_node": "a3",
        "mapping": {
            "u1": _node(
                "u1",
                None,
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {"content_type": "audio_transcription", "text": "Draw a cat"},
                        {
                            "content_type": "audio_asset_pointer",
                            "asset_pointer": audio,
                            "format": "wav",
                            "size_bytes": 1234,
                        },
                        {"content_type": "hologram", "data": 1},
                    ],
                },
            ),
            "a1": _node(
                "a1",
                "u1",
                "assistant",
                {"content_type": "code", "language": "json", "text": '{"prompt": "cat"}'},
                recipient="dalle.text2im",
            ),
            "t1": _node(
                "t1",
                "a1",
                "tool",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://file-gen1",
                            "width": 1024,
                            "height": 1024,
                            "size_bytes": 99,
                        }
                    ],
                },
                author={"name": "dalle.text2im"},
            ),
            "a3": _node("a3", "t1", "assistant", {"content_type": "text", "parts": ["Here."]}),
        },
    }


def test_chatgpt_voice_generated_image_and_unknown_parts():
    sc = chatgpt.parse(_conv(), frozenset({"file-gen1-cat.webp"}))
    assert sc.skipped["unsupported_content:part:hologram"] == 1
    p = tree.plan(sc, now=0)
    by_src = {m.source_id: m for m in p.messages}
    assert set(by_src) == {"u1", "a1"}  # the tool steps and the answer fold into one turn
    said, voice = by_src["u1"].blocks
    assert said == {"kind": "text", "text": "Draw a cat"}
    assert voice["kind"] == "document" and voice["mime_type"] == "audio/wav"
    assert voice["size"] == 1234 and voice["source_ref"] == "file_00000000aud"
    assert "not in it" in voice["note"]  # the zip does not hold it
    call, image, answer = by_src["a1"].blocks
    assert call["kind"] == "tool_call" and call["name"] == "dalle.text2im"
    assert call["arguments"] == '{"prompt": "cat"}'
    assert image["kind"] == "image" and (image["width"], image["height"]) == (1024, 1024)
    assert "original export archive" in image["note"]  # its file is in the zip
    assert answer == {"kind": "text", "text": "Here."}
    assert p.leaf_source_id == "a1"
