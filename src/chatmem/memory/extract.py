"""Memory extractors: one interface, an offline rule-based one and an LLM one (no DB access).

Why it exists: extraction turns new user text into :class:`~chatmem.memory.policy.Candidate` facts;
what those facts then do to stored memories is the policy's job, not the extractor's. Both
extractors only ever turn **user-authored** text into facts about the user — assistant text is at
most context for the model, and an LLM item that cites an assistant message is rejected.

- :class:`RuleExtractor` — English and Chinese first-person patterns (``patterns.py``); the default
  with the demo provider and whenever no extraction model is configured.
- :class:`LLMExtractor` — asks a provider for structured JSON. Existing memories are shown under
  small integer ids (``[1]``, ``[2]`` …) and messages under ``m1``, ``m2`` …, so the model cannot
  invent a database id; every id it returns is validated and an item with an unknown id is dropped.

``parse_command`` recognises "remember …" / "记住…" and "forget …" / "忘记…" for the chat hook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from ..providers.base import ChatMessage, ModelInfo, Provider, complete
from . import patterns as pt
from . import rules, when
from .policy import ACTIVE, LIVE, QUERY_DEPENDENT, Candidate, normalize_text, normalize_value

NATIVE_TYPES = ("location", "preference", "identity", "schedule", "habit", "goal", "constraint")
AGENT_TYPES = ("偏好", "边界", "关系目标", "对话风格", "重要事实")
MAX_TEXT = 500


@dataclass(frozen=True)
class SourceMessage:
    id: str
    role: str  # user | assistant
    text: str
    created_at: int = 0


@dataclass(frozen=True)
class Known:
    """An existing memory as shown to an extractor (no database id)."""

    memory_text: str
    slot: str = ""
    value: str = ""
    memory_type: str = ""


@dataclass(frozen=True)
class ExtractionInput:
    messages: list[SourceMessage]
    existing: list[Known] = field(default_factory=list)
    agent: bool = False  # agent conversation: seed-000 (docs/specs.md) types
    agent_name: str = ""
    cap: int = 5  # candidates in all
    turn_cap: int = 0  # candidates per user message (0 = only ``cap``): a batch of many turns
    now: int = 0


@dataclass
class ExtractionResult:
    candidates: list[Candidate]
    rejected: list[dict] = field(default_factory=list)  # dropped LLM items and why


class Extractor(Protocol):
    name: str

    async def extract(self, inp: ExtractionInput) -> ExtractionResult: ...


# ── sentences and commands ──────────────────────────────────────────────────────────────────────

_SENT = re.compile(r"[^.!?。！？\n]+(?:[.!?]+(?=\s|$)|[。！？]+|\n|$)|[^\n]+?$")
_REMEMBER = re.compile(
    r"^\s*(?:please\s+|hey,?\s+)?(?:remember|don't forget|do not forget|keep in mind|note)"
    r"(?:\s+that)?[\s:,，]+(?P<body>.+)$|^\s*(?:请|你)?(?:记住|记得|帮我记住|帮我记一下)[\s:：,，]*(?P<zbody>.+)$",
    re.I | re.S,
)
_FORGET = re.compile(
    r"^\s*(?:please\s+)?forget(?:\s+that|\s+about|\s+what i said about)?[\s:,，]+(?P<body>.+)$"
    r"|^\s*(?:请|你)?(?:忘记|忘掉|忘了|别再记得)[\s:：,，]*(?P<zbody>.+)$",
    re.I | re.S,
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text or "") if s.strip()]


def parse_command(text: str) -> tuple[str, str] | None:
    """``("remember", body)`` / ``("forget", body)`` when the message is such a command."""
    t = (text or "").strip()
    for kind, rx in (("forget", _FORGET), ("remember", _REMEMBER)):
        m = rx.match(t)
        if m:
            body = (m.group("body") or m.group("zbody") or "").strip().rstrip(".!。！")
            if body:
                return kind, body
    return None


# ── the rule-based extractor ────────────────────────────────────────────────────────────────────


def _bad_value(p: pt.Pattern, v: str) -> bool:
    if not v or len(v) > 120:
        return True
    low = v.lower()
    if p.lang == "en":
        first = low.split()[0] if low.split() else ""
        if first in pt.QUESTION_WORDS_EN or any(
            low == w or low.startswith(w + " ") for w in pt.VAGUE_EN
        ):
            return True
    else:
        if any(w in v for w in pt.QUESTION_WORDS_ZH):
            return True
    if p.memory_type in rules.SOFT_TYPES and rules.bad_soft_value(v, p.lang):
        return True
    return low in p.stop or any(low == s.lower() for s in p.stop)


def _slot_key(k: str) -> str:
    k = k.strip().lower().replace("colour", "color").replace("favourite", "favorite")
    return re.sub(r"[^\w]+", "_", k).strip("_")


def _clean_value(v: str) -> str:
    v = v.strip().strip("\"'“”‘’").strip()
    return re.sub(r"\s+", " ", v)


@dataclass(frozen=True)
class Hit:
    """One accepted pattern match: its groups and where it sits in its sentence."""

    pattern: pt.Pattern
    groups: dict
    sentence: str
    start: int
    value_start: int
    value_end: int
    end: int


def _instruction(p: pt.Pattern) -> bool:
    return p.memory_type == "constraint" and p.template.startswith(("Don't", "Stop", "不要"))


def _hits(sentence: str, lang: str | None = None, depth: int = 0) -> list[Hit]:
    if rules.is_question(sentence):
        return []
    out: list[Hit] = []
    for p in pt.ALL:
        if lang and p.lang != lang:
            continue
        for m in p.compiled().finditer(sentence):
            g = {k: (v or "") for k, v in m.groupdict().items()}
            g["v"] = _clean_value(g.get("v", ""))
            if p.lang == "en":
                g["v"] = re.sub(r"\s+(?:now|too|as well|also)$", "", g["v"], flags=re.I)
            if _bad_value(p, g["v"]):
                continue
            prefix = sentence[: m.start()]
            if rules.blocked_by_prefix(prefix, p.lang):
                continue
            if not p.regex.startswith("^") and not rules.clause_start_ok(prefix, p.lang):
                continue
            if _instruction(p) and not rules.is_instruction(g["v"], p.lang):
                continue
            out.append(Hit(p, g, sentence, m.start(), m.start("v"), m.end("v"), m.end()))
    if depth < 3:  # "I am vegetarian and allergic to peanuts": restore the shared subject/verb
        for h in list(out):
            for tail in rules.ellipsis_tails(sentence, h.end, h.pattern.lang):
                subject = "我" if h.pattern.lang == "zh" else "I "
                head = sentence[h.start : h.value_start]
                for text in (subject + re.sub(r"^[也还都]", "", tail), head + tail):
                    more = [
                        x
                        for x in _hits(text, h.pattern.lang, depth + 1)
                        if not (x.pattern.slot and x.pattern.name == h.pattern.name)
                    ]  # "fish and chips" is one favourite food, not two
                    if more:
                        out.extend(more)
                        break
    return out


def match_sentence(sentence: str, *, lang: str | None = None) -> list[tuple[pt.Pattern, dict]]:
    """Every accepted pattern match in one sentence, with its groups (value cleaned)."""
    return [(h.pattern, h.groups) for h in _hits(sentence, lang)]


_CLAUSE_END = re.compile(r"[,;.!?，。！？；\n]|\s+(?:and|but)\s+|而且|但是")


def _when(h: Hit, at: int) -> when.Span | None:
    """The period the statement is dated to: its own time group, else a time phrase in its
    clause ("Last month I moved to Munich", "I moved to Munich last month", 我上个月搬到…)."""
    if h.groups.get("t"):
        return when.resolve(h.groups["t"], at)
    pre = rules.SEP.split(h.sentence[: h.start])[-1]
    post = h.sentence[h.value_end :]
    cut = _CLAUSE_END.search(post)
    region = f"{pre} {h.sentence[h.start : h.value_start]} {post[: cut.start()] if cut else post}"
    return when.first(region, at)


def _candidate(
    h: Hit, msg: SourceMessage, *, agent: bool, now: int, origin: str = "extracted"
) -> Candidate:
    p, g = h.pattern, h.groups
    k = g.get("k", "")
    if p.lang == "zh" and p.slot == "{k}_name" and k in pt.ZH_RELATIONS:
        slot = f"{pt.ZH_RELATIONS[k]}_name"
    else:
        slot = p.slot.replace("{k}", _slot_key(k)) if p.slot else ""
    text = p.template.format(v=g["v"], k=k.lower() if p.lang == "en" else k, t=g.get("t", ""))
    mtype = p.memory_type
    if agent:
        mtype = p.agent_type or pt.AGENT_TYPES.get(p.memory_type, "重要事实")
    observed = msg.created_at or now
    span = _when(h, observed)
    time_bound = bool(p.ttl_ms or g.get("t"))
    if span is not None and time_bound:  # "in Tokyo next week": holds for that period only
        valid_from, valid_until = span.start, span.end
    elif span is not None:  # "moved to Munich last month": true since then
        valid_from, valid_until = span.start, None
    elif time_bound:
        valid_from = observed
        valid_until = observed + (pt.duration_ms(g.get("t", ""), p.ttl_ms) or pt.DAY)
    else:
        valid_from, valid_until = observed, None
    return Candidate(
        memory_text=text[:MAX_TEXT],
        memory_type=mtype,
        slot=slot,
        value=g["v"],
        importance=p.importance,
        confidence=p.confidence,
        status=QUERY_DEPENDENT if time_bound else ACTIVE,
        valid_from=valid_from,
        valid_until=valid_until,
        source_message_ids=(msg.id,),
        origin=origin,
        observed_at=observed,
        affected_domains=(slot,) if slot else (),
    )


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for c in cands:
        key = (c.slot, c.value.lower()) if c.slot else ("", c.memory_text.lower())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def rule_candidates(
    msg: SourceMessage, *, agent: bool = False, now: int = 0, origin: str = "extracted"
) -> list[Candidate]:
    """Candidates from one user message (commands included: 'remember X' yields X's facts)."""
    if msg.role != "user":
        return []
    cmd = parse_command(msg.text)
    text = msg.text
    if cmd is not None:
        if cmd[0] == "forget":
            return []  # handled (and only handled) by the chat hook
        text = cmd[1]
    hits = [h for s in sentences(text) for h in _hits(s)]
    return _dedupe([_candidate(h, msg, agent=agent, now=now, origin=origin) for h in hits])


class RuleExtractor:
    """Offline, deterministic: English and Chinese first-person patterns."""

    name = "rules"

    async def extract(self, inp: ExtractionInput) -> ExtractionResult:
        out: list[Candidate] = []
        for msg in inp.messages:
            got = rule_candidates(msg, agent=inp.agent, now=inp.now)
            if inp.turn_cap:  # constraints and important facts first when a cap bites
                got = sorted(got, key=lambda c: -c.importance)[: inp.turn_cap]
            out.extend(got)
        out = _dedupe(out)
        out.sort(key=lambda c: -c.importance)
        return ExtractionResult(out[: inp.cap])


# ── the LLM extractor ───────────────────────────────────────────────────────────────────────────

_INSTRUCTIONS = """You extract long-term memories about the USER from a chat.
Record only stable, explicit information the user stated about themselves in their own messages
(identity, location, preferences, habits, schedule, goals, constraints such as allergies or things
the assistant must not do). Skip greetings, questions, hypotheticals ("if I lived in …"),
encouragement ("don't give up"), anything the assistant said or invented, facts about other people,
and memories that already exist unchanged. A "don't …" or "stop …" is a constraint only when it
instructs the assistant about its replies ("don't use emojis"), never advice or encouragement
("don't give up on your dreams"). Split "X and Y" into one memory each.
Each message shows its date: resolve relative times ("last month", "next week", 上个月, 明天)
against that date into valid_from/valid_until; never leave them in memory_text.
If a message updates an existing memory (same subject, new value), reuse that memory's slot and set
"same_as" to its number. Use short stable snake_case slot keys (home_location, name, employer,
favorite_color …) or "" when the fact has no single current value.
Time-bound facts ("I'm in Tokyo this week") get status QUERY_DEPENDENT and valid_until.
Answer with JSON only, no prose:
{"memories": [{"memory_text": str, "memory_type": one of TYPES, "slot": str, "value": str,
  "importance": 1-5, "confidence": 0-1, "status": "ACTIVE" | "QUERY_DEPENDENT",
  "valid_from": "YYYY-MM-DD" | null, "valid_until": "YYYY-MM-DD" | null,
  "source": "m<N>" (the user message it comes from), "same_as": <existing memory number> | null}]}
At most CAP items; memory_text is one short sentence (at most 80 Chinese characters or 25 words)."""


def _date(ms: int) -> str:
    if not ms:
        return ""
    return " [" + datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %a") + "]"


def build_prompt(inp: ExtractionInput) -> list[ChatMessage]:
    types = AGENT_TYPES if inp.agent else NATIVE_TYPES
    system = _INSTRUCTIONS.replace("TYPES", " | ".join(types)).replace("CAP", str(inp.cap))
    lines = []
    if inp.agent_name:
        lines.append(f"Agent: {inp.agent_name}")
    lines.append("Existing memories:")
    if inp.existing:
        for i, k in enumerate(inp.existing, 1):
            slot = f" (slot={k.slot}, value={k.value})" if k.slot else ""
            lines.append(f"[{i}] {k.memory_text}{slot}")
    else:
        lines.append("(none)")
    lines.append("")
    lines.append("New messages:")
    for i, m in enumerate(inp.messages, 1):
        text = m.text if m.role == "user" else m.text[:4000]
        lines.append(f"m{i} {m.role}{_date(m.created_at)}: {text}")
    return [ChatMessage("system", system), ChatMessage("user", "\n".join(lines))]


def _json_object(text: str) -> dict | None:
    text = (text or "").strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _to_ms(v) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v) if v > 10_000_000_000 else int(v * 1000)
    if isinstance(v, str):
        try:
            d = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if d.tzinfo is None:
            d = d.replace(tzinfo=UTC)
        return int(d.timestamp() * 1000)
    return None


def _small_int(v) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"\[?m?\d+\]?", v.strip()):
        return int(re.sub(r"\D", "", v))
    return None


def validate_items(obj: dict | None, inp: ExtractionInput) -> ExtractionResult:
    """Turn the model's JSON into candidates, dropping every item whose ids do not check out."""
    if obj is None or not isinstance(obj.get("memories"), list):
        return ExtractionResult([], [{"reason": "not a JSON object with a 'memories' list"}])
    out, rejected = [], []
    for item in obj["memories"]:
        ids = _item_ids(item, inp)
        got = ids if isinstance(ids, str) else _item_candidate(item, *ids, inp)
        if isinstance(got, str):
            rejected.append({"item": item, "reason": got})
        else:
            out.append(got)
    return ExtractionResult(_dedupe(out)[: inp.cap], rejected)


def _item_ids(item: object, inp: ExtractionInput) -> tuple[SourceMessage, Known | None] | str:
    """The item's source message and the existing memory it restates (or None), or why not."""
    if not isinstance(item, dict):
        return "not an object"
    src = _small_int(item.get("source"))
    if src is None or not 1 <= src <= len(inp.messages):
        return "unknown source message"
    msg = inp.messages[src - 1]
    if msg.role != "user":
        return "source is not a user message"
    known = None
    if item.get("same_as") not in (None, "", 0, "0"):
        ref = _small_int(item.get("same_as"))
        if ref is None or not 1 <= ref <= len(inp.existing):
            return "unknown existing memory id"
        known = inp.existing[ref - 1]
    return msg, known


def _item_candidate(
    item: dict, msg: SourceMessage, known: Known | None, inp: ExtractionInput
) -> Candidate | str:
    """One item as a candidate, its fields clamped to what the policy accepts (or why not)."""
    text = str(item.get("memory_text") or "").strip()
    if not text:
        return "empty memory_text"
    types = AGENT_TYPES if inp.agent else NATIVE_TYPES
    default_type = "重要事实" if inp.agent else ""
    slot = re.sub(r"[^a-z0-9_]+", "_", str(item.get("slot") or "").lower()).strip("_")[:64]
    mtype = str(item.get("memory_type") or "").strip()
    if known is not None:
        slot = slot or known.slot
        mtype = mtype or known.memory_type
    if mtype not in types:
        mtype = pt.AGENT_TYPES.get(mtype, default_type) if inp.agent else default_type
    status: str = ACTIVE if item.get("status") not in (ACTIVE, QUERY_DEPENDENT) else item["status"]
    try:
        importance = min(5, max(1, int(item.get("importance", 3))))
    except (TypeError, ValueError):
        importance = 3
    try:
        confidence = min(1.0, max(0.0, float(item.get("confidence", 0.7))))
    except (TypeError, ValueError):
        confidence = 0.7
    valid_from = _to_ms(item.get("valid_from"))
    valid_until = _to_ms(item.get("valid_until"))
    if valid_until is not None and status == ACTIVE:
        status = QUERY_DEPENDENT
    observed = msg.created_at or inp.now
    return Candidate(
        memory_text=text[:MAX_TEXT],
        memory_type=mtype,
        slot=slot,
        value=str(item.get("value") or "").strip()[:MAX_TEXT],
        importance=importance,
        confidence=confidence,
        status=status,
        valid_from=valid_from if valid_from is not None else observed,
        valid_until=valid_until,
        source_message_ids=(msg.id,),
        observed_at=observed,
        affected_domains=tuple(
            str(d) for d in item.get("affected_domains", ()) or () if isinstance(d, str)
        )[:8]
        or ((slot,) if slot else ()),
    )


class LLMExtractor:
    """Structured-JSON extraction through any :class:`~chatmem.providers.base.Provider`."""

    name = "llm"

    def __init__(self, provider: Provider, model: ModelInfo, *, max_tokens: int = 800) -> None:
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens

    async def extract(self, inp: ExtractionInput) -> ExtractionResult:
        if not any(m.role == "user" for m in inp.messages):
            return ExtractionResult([])
        text = await complete(
            self.provider, self.model, build_prompt(inp), max_tokens=self.max_tokens
        )
        return validate_items(_json_object(text), inp)


# ── "forget …": which memories a request names ──────────────────────────────────────────────────

#: Words that name a slot without stating its value ("forget where I live", "忘记我的名字").
SLOT_WORDS: dict[str, tuple[str, ...]] = {
    "home_location": (
        "where i live",
        "my address",
        "my home",
        "my location",
        "where i'm based",
        "住在哪",
        "住址",
        "地址",
        "住哪",
        "我住的地方",
    ),
    "name": ("my name", "what i'm called", "名字"),
    "preferred_name": ("what to call me", "my nickname", "怎么称呼我", "昵称", "小名"),
    "employer": ("where i work", "my employer", "my company", "在哪工作", "我的公司"),
    "occupation": ("my job", "what i do for a living", "my profession", "我的职业", "我的工作"),
    "age": ("my age", "how old i am", "年龄", "几岁"),
    "birthday": ("my birthday", "生日"),
    "current_location": ("where i am this week", "my trip", "出差"),
}
_FILLER_EN = frozenset(
    "that i my me the a an about what said is am was were to of in on at it "
    "everything thing things please you said".split()
)
_FILLER_ZH = (
    "我说过的",
    "我说的",
    "关于",
    "那件事",
    "这件事",
    "的事",
    "我的",
    "我",
    "的",
    "那个",
    "这个",
    "吧",
    "了",
)


def forget_matches(body: str, rows: list, *, now: int = 0) -> list[str]:
    """Ids of the live memories (``policy.Mem``-like rows) that a "forget <body>" request names:
    a fact restated (slot + value), a slot named by words, or text that contains the request."""
    live = [r for r in rows if r.status in LIVE]
    hit: set[str] = set()
    for c in rule_candidates(SourceMessage("", "user", body, now), now=now):
        for r in live:
            if (
                c.slot and r.slot == c.slot and normalize_value(r.value) == normalize_value(c.value)
            ) or normalize_text(r.memory_text) == normalize_text(c.memory_text):
                hit.add(r.id)
    low = body.lower()
    for slot, words in SLOT_WORDS.items():
        if any(w in low for w in words):
            hit.update(r.id for r in live if r.slot == slot)
    body_words = [w for w in re.findall(r"\w+", low) if w not in _FILLER_EN and w.isascii()]
    if body_words:
        for r in live:
            have = set(re.findall(r"\w+", (r.memory_text + " " + r.value).lower()))
            if all(w in have for w in body_words):
                hit.add(r.id)
    core = body
    for f in _FILLER_ZH:
        core = core.replace(f, "")
    core = re.sub(r"[\s，。！？,.!?]", "", core)
    if core and re.search(r"[\u3400-\u9fff]", core):
        for r in live:
            if (
                core in r.memory_text
                or (r.value and core in r.value)
                or (r.value and r.value in core and len(r.value) >= 2)
            ):
                hit.add(r.id)
    return sorted(hit)
