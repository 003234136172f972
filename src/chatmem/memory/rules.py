"""When a pattern match in a sentence is really a fact the user states about themselves (pure).

Why it exists: a regex such as ``i love <value>`` also fires inside "The music I love makes writing
fun", "If I lived in Tokyo …", "She said I love hiking", "Don't give up on your dreams" — and a
wrong memory is worse than a missing one (a wrong *constraint* is injected first into every
prompt). The patterns in ``patterns.py`` say what a statement looks like; this module decides,
from the words around a match, whether it counts:

- **questions** and **hypotheticals / role-play** ("if", "suppose", "imagine", "what if", 如果,
  假如 …) before the match, and **reported speech** ("she said", "my friend told me", 他说 …);
- **clause start**: a first-person match must begin a clause — after nothing, punctuation, a
  conjunction, a discourse word ("honestly", "by the way", 其实) or a time phrase — so a relative
  clause ("the city I live in is …") or a hedge ("I think I …") is not a statement;
- **values**: deictic or about the assistant ("that", "this bug", "you"), a verb where a noun
  should be (the relative-clause symptom: "… I love makes …"), one-off choices ("the second
  option"), and instructions that are not addressed to the assistant's behaviour (encouragement
  such as "don't give up on your dreams", 不要放弃你的梦想);
- **ellipsis**: "I am vegetarian and allergic to peanuts", "我吃素，而且对花生过敏" — the second half
  shares the first half's subject (and verb), so it is matched again with them restored.
"""

from __future__ import annotations

import re

from . import when

# ── sentence-level gates ────────────────────────────────────────────────────────────────────────

_Q_START_EN = re.compile(
    r"^\s*(?:do|does|did|can|could|would|will|is|are|am|was|were|should|shall|may|have|has|"
    r"what|where|who|whom|when|why|how|which)\b",
    re.I,
)
_HYPO_EN = re.compile(
    r"\b(?:if|suppose|supposing|imagine|pretend|assuming|assume|hypothetically|wish|"
    r"what if|let's say|lets say|say|in a world where|in my dreams?|dreamt|dreamed|role-?play|"
    r"play a game|unless|would|could|might|maybe|perhaps|in the story|in my novel|my character)\b",
    re.I,
)
_REPORTED_EN = re.compile(
    r"\b(?:said|says|say|told|tells|tell|asked|asks|wrote|writes|thinks|think|thought|believes|"
    r"believe|claims|claimed|according to|heard|guess|wonder|wondering|hope|feel like)\b",
    re.I,
)
_HYPO_ZH = re.compile(
    r"如果|假如|假设|要是|万一|倘若|想象|假装|梦见|梦到|设想|假定|小说|故事里|角色|的话"
)
_REPORTED_ZH = re.compile(r"说|告诉|问|认为|觉得|以为|听说|猜")
_QUOTES = ('"', "“", "「", "『")


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    if s.endswith(("?", "？")) or re.search(r"[吗呢][\s。？?]*$", s):
        return True
    return bool(_Q_START_EN.match(s))


def _lang(text: str) -> str:
    return "zh" if re.search(r"[\u3400-\u9fff]", text) else "en"


def blocked_by_prefix(prefix: str, lang: str) -> bool:
    """Words before a match that make it not a statement about the user: a hypothetical, reported
    speech, or an open quotation."""
    if sum(prefix.count(q) for q in _QUOTES) % 2 == 1 or prefix.count("”") < prefix.count("“"):
        return True
    if lang == "zh":
        return bool(_HYPO_ZH.search(prefix) or _REPORTED_ZH.search(prefix))
    return bool(_HYPO_EN.search(prefix) or _REPORTED_EN.search(prefix))


# ── clause start ────────────────────────────────────────────────────────────────────────────────

_LEAD_EN = frozenset(
    "and but so also because since though although well oh yes yeah yep actually honestly btw "
    "anyway now then currently basically ok okay hi hello hey plus fyi still lol haha just "
    "nowadays finally fact really that".split()
)
_LEAD_EN_PHRASES = re.compile(
    r"\b(?:by the way|in fact|for the record|for context|just so you know|these days|"
    r"right now|at the moment|as of|now that|as you know|to be honest|oh and)\b",
    re.I,
)
_LEAD_ZH = re.compile(
    r"(?:而且|并且|但是|不过|所以|因为|其实|现在|目前|对了|哦|嗯|另外|还有|然后|顺便说一下|顺便|说实话|老实说|"
    r"告诉你|跟你说|好的|好吧|是的|对|嗨|你好|哈哈|本人|平时|一般|也|都|还|已经|那|啊|呃|就是)"
)
SEP = re.compile(r"[,;:—–(\n，；：、。！？!?.]")
_CLAUSE_SEP = re.compile(
    r"[,;:—–(\n，；：、。！？!?.]|\b(?:and|but|or|because|while|whereas|so)\b|而且|并且|但是|所以|因为",
    re.I,
)


def clause_start_ok(prefix: str, lang: str) -> bool:
    """Whether the text before a first-person match (within its sentence) leaves the match at the
    start of a clause."""
    seg = _CLAUSE_SEP.split(prefix)[-1].strip()
    if not seg:
        return True
    for start, end, _ in reversed(when.find(seg)):  # "Last month I moved …", "我上个月搬到…"
        seg = (seg[:start] + " " + seg[end:]).strip()
    if lang == "zh":
        return not _LEAD_ZH.sub("", seg).strip()
    seg = _LEAD_EN_PHRASES.sub(" ", seg.lower())
    words = re.findall(r"[a-z']+", seg)
    return all(w in _LEAD_EN for w in words)


# ── values ──────────────────────────────────────────────────────────────────────────────────────

_DEICTIC_EN = re.compile(r"\b(?:this|that|these|those|it|you|your|yours|yourself|u)\b", re.I)
_VERB_START_EN = re.compile(
    r"^(?:makes?|made|is|are|was|were|has|have|had|does|did|do|can|will|would|should|could|"
    r"helps?|gets?|got|keeps?|goes|went|seems?|looks?|feels?|sounds?|means?|costs?|takes?|want|"
    r"wants|need|needs|to be|being|been|am)\b",
    re.I,
)
_ONE_OFF_EN = re.compile(
    r"^(?:the )?(?:first|second|third|fourth|last|other|previous|former|latter|next|same|"
    r"original|new|old|shorter|longer)\b(?: (?:one|option|version|answer|draft|idea|approach))?",
    re.I,
)
#: Value checks apply to these types (a preference or a goal is where noise lands).
SOFT_TYPES = frozenset({"preference", "goal", "habit"})


def bad_soft_value(v: str, lang: str) -> bool:
    """A preference/goal/habit value that is deictic, about the assistant, a verb phrase left over
    from a relative clause, or a one-off choice."""
    if lang == "zh":
        return v.startswith(("的", "你", "他", "她", "它", "这", "那")) or "你" in v
    return bool(_DEICTIC_EN.search(v) or _VERB_START_EN.match(v) or _ONE_OFF_EN.match(v))


# Instructions: a "don't …" counts as a constraint only when it governs what the assistant does
# in its replies — never encouragement or advice to the reader.
_ENCOURAGE_EN = re.compile(
    r"\b(?:your|yours|yourself|yourselves|give up|worry|stress|panic|lose hope|lose heart|quit|"
    r"settle|stop believing|afraid|scared|sad|never)\b",
    re.I,
)
_NEEDS_ME_EN = re.compile(r"^(?:give|tell|ask|show|remind|send|call)\b", re.I)
_ME_EN = re.compile(r"\b(?:me|us|my)\b", re.I)
_ENCOURAGE_ZH = re.compile(
    r"你的|自己|放弃|担心|灰心|难过|害怕|着急|生气|紧张|客气|伤心|哭|怕|梦想|太累|忘了|忘记|熬夜|失望|泄气"
)
_OUTPUT_ZH = re.compile(
    r"我|回复|回答|用|说|提|发|写|推荐|建议|表情|英文|中文|废话|解释|道歉|称呼|叫|问|讲|列|格式|代码|emoji|给|markdown",
    re.I,
)


def is_instruction(v: str, lang: str) -> bool:
    """Whether the body of a "don't …"/"stop …"/"不要…" is an instruction about the assistant's
    replies (``v`` starts with the verb: "use emojis", "give me medical advice", "叫我小名")."""
    v = v.strip()
    if lang == "zh":
        return bool(_OUTPUT_ZH.search(v)) and not _ENCOURAGE_ZH.search(v) and len(v) >= 2
    words = v.split()
    if len(words) < 2 or _ENCOURAGE_EN.search(v):
        return False
    if _NEEDS_ME_EN.match(v) and not _ME_EN.search(" ".join(words[1:3])):
        return False  # "give up", "tell anyone", "call it a day"
    first_obj = re.sub(r"[^a-z']", "", words[1].lower())
    if len(words) == 2 and first_obj == "so":  # "say so"
        return False
    return first_obj not in {"that", "it", "this", "anyone", "anything", "back", "down"}


# ── ellipsis ("… and allergic to peanuts") ──────────────────────────────────────────────────────

_AND_EN = re.compile(r"^\s*(?:,\s*)?(?:and|&|as well as|plus)\s+|^\s*,\s*(?=[^,]*\band\b)", re.I)
_AND_ZH = re.compile(r"^\s*(?:和|以及|及|、|，\s*(?:而且|并且|还|也|同时)?|,\s*)\s*(?:也|还|都)?")
_SUBJECT_EN = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|you|he|she|they|it)\b", re.I)
_SUBJECT_ZH = re.compile(r"^(?:我|你|他|她|它|我们|你们|他们)")
_TAIL_END = re.compile(r"[.;!?。！？；\n]|\s+but\s+|，\s*但")


def ellipsis_tails(sentence: str, value_end: int, lang: str) -> list[str]:
    """The subject-less half right after a value ("… vegetarian| and allergic to peanuts"), cut
    at the end of its clause; empty when the sentence goes on otherwise."""
    rest = sentence[value_end:]
    m = (_AND_ZH if lang == "zh" else _AND_EN).match(rest)
    if not m:
        return []
    tail = rest[m.end() :]
    cut = _TAIL_END.search(tail)
    tail = tail[: cut.start()] if cut else tail
    tail = tail.strip()
    if not tail or (_SUBJECT_ZH if lang == "zh" else _SUBJECT_EN).match(tail):
        return []  # a clause with its own subject is matched on its own
    return [tail]
