"""Recall benchmark: how much of what a question needs is in the prompt chatmem builds.

Builds long two-person conversations of its own (bench/recall_data.py: ≥ 300 turns, facts stated
once and asked later with paraphrased questions, facts that change, dates), ingests them into a
real ``chatmem serve`` through the public API in log mode (``generate: false`` with the turns'
original ``created_at``), lets the background jobs (compaction, memory, embeddings) catch up, then
for each question appends it as a new branch under the last turn and reads the context preview
(``GET …/context``) — exactly the prompt the next turn would send. It prints the **evidence
recall** (share of the labelled evidence turns present verbatim or recalled) next to two baselines
packed into the *same* number of tokens as chatmem's whole prompt: the newest turns that fit
(recency) and a plain BM25 search over all turns before the question (no stop words, no stemming).
"chatmem" counts the evidence turns that are in the prompt verbatim or recalled (by id);
"+summary" also counts those whose words survive in a summary (by text).

Then: recall's own latency inside the turn (``report.recall.ms``, measured by the server) on a
100-message vs a 10,000-message conversation, and ``/api/search`` latency with 10k vs 1M messages
in the database (``--search``; the big corpus is bulk-inserted with SQL, the query goes through the
API). Figures, not pass/fail.

Usage: ``.venv/bin/python bench/recall.py [--conversations 10] [--turns 400] [--window 8192]
[--postgres] [--latency [--baseline SRC]] [--search] [--embedder hashing]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from tests.servers import Server, create_user  # noqa: E402

from chatmem.context.tokens import MESSAGE_OVERHEAD, TokenCounter  # noqa: E402
from recall_data import Conversation, generate  # noqa: E402

COUNTER = TokenCounter("cl100k_base")
WORD = re.compile(r"[^\W_]+")


# ── baselines (deliberately independent of chatmem's own code) ──────────────────────────────────


def _tok(s: str) -> list[str]:
    return WORD.findall(s.lower())


def bm25_rank(turns: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[int]:
    docs = [Counter(_tok(t)) for t in turns]
    n = len(docs)
    avgdl = sum(sum(d.values()) for d in docs) / max(n, 1)
    df = Counter(w for d in docs for w in d)
    q = set(_tok(query))
    scores = []
    for d in docs:
        dl = sum(d.values())
        s = 0.0
        for w in q:
            if w in d:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * d[w] * (k1 + 1) / (d[w] + k1 * (1 - b + b * dl / avgdl))
        scores.append(s)
    return sorted(range(n), key=lambda i: -scores[i])


def pack(order: list[int], turns: list[str], budget: int) -> set[int]:
    used, out = 0, set()
    for i in order:
        cost = COUNTER.count(turns[i]) + MESSAGE_OVERHEAD
        if used + cost <= budget:
            used += cost
            out.add(i)
    return out


# ── talking to chatmem ───────────────────────────────────────────────────────────────────────────


def ingest(client: httpx.Client, conv: Conversation, model: str) -> tuple[str, list[str]]:
    r = client.post("/api/conversations", json={"title": "bench", "model": model})
    r.raise_for_status()
    cid = r.json()["id"]
    ids: list[str] = []
    dated = True
    for t in conv.turns:
        body = {"content": t.text, "role": t.role, "generate": False}
        if dated:
            body["created_at"] = t.created_at
        r = client.post(f"/api/conversations/{cid}/messages", json=body)
        if r.status_code == 422 and dated and "created_at" in r.text:
            dated = False  # a server without dated appends: ingest at today's time
            print("  (server does not accept created_at: turns get the ingestion time)")
            body.pop("created_at")
            r = client.post(f"/api/conversations/{cid}/messages", json=body)
        r.raise_for_status()
        ids.append(r.json()["id"])
    return cid, ids


def ingest_import(client: httpx.Client, conv: Conversation, title: str) -> tuple[str, str]:
    """(conversation id, its leaf): the turns as one Open WebUI export through ``/api/imports`` —
    the fast way to a 10,000-message history (log-mode appends over HTTP take minutes)."""
    msgs, prev = {}, None
    for i, t in enumerate(conv.turns):
        mid = f"m{i}"
        msgs[mid] = {
            "id": mid,
            "parentId": prev,
            "childrenIds": [],
            "role": t.role,
            "content": t.text,
            "timestamp": t.created_at // 1000,
        }
        if prev:
            msgs[prev]["childrenIds"].append(mid)
        prev = mid
    ts = conv.turns[0].created_at // 1000
    doc = [
        {
            "id": title,
            "title": title,
            "created_at": ts,
            "updated_at": ts,
            "chat": {"title": title, "history": {"currentId": prev, "messages": msgs}},
        }
    ]
    r = client.post(
        "/api/imports",
        files={"file": ("export.json", json.dumps(doc).encode(), "application/json")},
        data={"format": "openwebui"},
    )
    r.raise_for_status()
    iid = r.json()["id"]
    while (job := client.get(f"/api/imports/{iid}").json())["status"] in ("queued", "running"):
        time.sleep(0.5)
    if job["status"] != "done":
        raise SystemExit(f"import failed: {job['error']}")
    items = client.get("/api/conversations", params={"limit": 100}).json()["items"]
    cid = next(c["id"] for c in items if c["title"] == title)
    return cid, client.get(f"/api/conversations/{cid}").json()["active_leaf_id"]


def path_ids(client: httpx.Client, cid: str) -> list[str]:
    """The conversation's message ids, root first (the path read a page at a time)."""
    ids: list[str] = []
    params: dict = {"limit": 200}
    while True:
        r = client.get(f"/api/conversations/{cid}/messages", params=params)
        r.raise_for_status()
        page = r.json()
        ids[:0] = [m["id"] for m in page["items"]]
        if not page.get("next_cursor"):
            return ids
        params["before"] = page["next_cursor"]


def wait_jobs(admin: httpx.Client, timeout: float = 600) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        busy = 0
        for status in ("queued", "running"):
            r = admin.get("/api/admin/jobs", params={"status": status, "limit": 500})
            r.raise_for_status()
            busy += len(r.json()["items"])
        if not busy:
            break
        time.sleep(0.5)
    return time.monotonic() - t0


def ask(client: httpx.Client, cid: str, leaf: str, question: str) -> dict:
    r = client.post(
        f"/api/conversations/{cid}/messages",
        json={"content": question, "role": "user", "generate": False, "parent_id": leaf},
    )
    r.raise_for_status()
    r = client.get(f"/api/conversations/{cid}/context", params={"include_messages": True})
    r.raise_for_status()
    body = r.json()
    report = body["report"]
    report["prompt_text"] = " ".join(" ".join(m["content"].split()) for m in body["messages"])
    return report


def in_text(turn: str, prompt: str) -> bool:
    """The turn's words are in the prompt (verbatim, recalled, or kept by an extractive summary:
    its first 60 characters, whitespace normalised)."""
    return " ".join(turn.split())[:60] in prompt


def evaluate(
    client, admin, conversations: list[Conversation], model: str, fast: bool = False
) -> dict:
    rows = defaultdict(lambda: defaultdict(list))
    tokens, recall_ms = [], []
    for ci, conv in enumerate(conversations):
        if fast:
            cid, _ = ingest_import(client, conv, f"bench {model} {ci}")
            client.patch(f"/api/conversations/{cid}", json={"model": model}).raise_for_status()
            ids = path_ids(client, cid)
            assert len(ids) == len(conv.turns), (len(ids), len(conv.turns))
        else:
            cid, ids = ingest(client, conv, model)
        waited = wait_jobs(admin)
        texts = [t.text for t in conv.turns]
        print(f"  conversation {ci + 1}: {len(ids)} turns ingested, jobs settled in {waited:.1f}s")
        for q in conv.questions:
            if not q.evidence:
                continue
            rep = ask(client, cid, ids[-1], q.text)
            seen = set(rep["message_ids"]) | set(rep.get("recall_message_ids") or [])
            budget = rep["total_tokens"]
            tokens.append(budget)
            if (rep.get("recall") or {}).get("ms") is not None:
                recall_ms.append(rep["recall"]["ms"])
            ev = q.evidence
            got = {
                "chatmem": sum(ids[i] in seen for i in ev) / len(ev),
                "text": sum(in_text(texts[i], rep["prompt_text"]) for i in ev) / len(ev),
                "recency": len(set(ev) & pack(list(range(len(texts)))[::-1], texts, budget))
                / len(ev),
                "bm25": len(set(ev) & pack(bm25_rank(texts, q.text), texts, budget)) / len(ev),
            }
            for name, v in got.items():
                rows[q.kind][name].append(v)
                rows["all"][name].append(v)
    return {"rows": rows, "tokens": tokens, "recall_ms": recall_ms}


def print_table(title: str, res: dict) -> None:
    print(
        f"\n{title}: mean prompt {statistics.mean(res['tokens']):.0f} tokens "
        f"(same budget for the baselines)"
    )
    print(f"  {'questions':<12}{'n':>5}{'chatmem':>10}{'+summary':>10}{'recency':>10}{'bm25':>10}")
    for kind in ["plain", "paraphrase", "update", "temporal", "all"]:
        r = res["rows"].get(kind)
        if not r:
            continue
        n = len(r["chatmem"])
        line = "".join(
            f"{100 * statistics.mean(r[k]):>9.1f}%" for k in ("chatmem", "text", "recency", "bm25")
        )
        print(f"  {kind:<12}{n:>5}{line}")
    if res["recall_ms"]:
        ms = sorted(res["recall_ms"])
        print(f"  recall step: p50 {ms[len(ms) // 2]:.1f} ms, p95 {ms[int(len(ms) * 0.95)]:.1f} ms")


# ── latency of recall at 100 vs 10,000 messages ─────────────────────────────────────────────────


def _latency_convs(client, admin) -> dict:
    """{size: (conversation, id, leaf)}: a 100- and a 10,000-message conversation, imported."""
    convs = {}
    for n in (100, 10_000):
        conv = generate(seed=900 + n, turns=n, n_facts=30)
        conv.turns = conv.turns[:n]
        # long enough turns that even 100 messages overflow the window: recall runs at both sizes
        for t in conv.turns:
            t.text = t.text + " " + " ".join(["(and so on, as one does in long chats)"] * 12)
        convs[n] = (conv, *ingest_import(client, conv, f"latency {n}"))
    wait_jobs(admin)
    return convs


def latency(clients: dict[str, httpx.Client], admin, questions: int = 30) -> None:
    """Recall's own time inside the turn (measured by the server, ``report.recall.ms``) on a
    100- and a 10,000-message conversation, questions alternating between the two so load hits
    both alike; the first question of each (a cold path cache: one walk to the root) apart.
    ``clients``: label → a client of a server on the same database (``--baseline``: the same
    questions asked of another code tree's server in the same loop, one after the other)."""
    convs = _latency_convs(admin, admin)
    keys = [(label, n) for label in clients for n in convs]
    ms: dict = {k: [] for k in keys}
    cold: dict = {}
    found: dict = {k: [] for k in keys}
    for k in range(questions):
        # each server asks the same question in turn: the first one warms the database's cache
        # for the next, so who goes first rotates
        for label, n in keys[k % len(keys) :] + keys[: k % len(keys)]:
            conv, cid, leaf = convs[n]
            q = conv.questions[k % len(conv.questions)]
            info = ask(clients[label], cid, leaf, q.text).get("recall") or {}
            got = info.get("ms")
            if got is None:
                continue
            found[label, n].append(info.get("candidates", 0))
            if (label, n) not in cold:
                cold[label, n] = got
            else:
                ms[label, n].append(got)
    for label in clients:
        p50 = {n: statistics.median(ms[label, n]) for n in convs}
        print(f"  {label}:")
        for n in convs:
            v = sorted(ms[label, n])
            print(
                f"  {n:>6} messages: recall p50 {p50[n]:.2f} ms, p95 {v[int(len(v) * 0.95)]:.2f} "
                f"ms ({len(v)} questions; cold first question {cold[label, n]:.1f} ms; "
                f"{statistics.median(found[label, n]):.0f} candidate rows)"
            )
        print(f"  ratio 10,000 / 100 = {p50[10_000] / p50[100]:.2f} (target ≤ 2)")


SERVERS: list[Server] = []  # baseline servers, stopped on exit


def _latency_clients(db_url: str, env: dict, baseline: str | None, headers) -> dict:
    """label → client of a server without a job worker (the main server ingests and runs the
    jobs; the questions' own jobs would otherwise run beside the measured turns, in one of the
    servers only): this code's and, with ``baseline``, one running that code."""
    envs = {"this tree": env}
    if baseline:
        envs[f"baseline {baseline}"] = {**env, "PYTHONPATH": str(Path(baseline).resolve())}
    out = {}
    for label, e in envs.items():
        srv = Server(db_url, env_extra=e, args=("--no-worker",)).start()
        SERVERS.append(srv)
        out[label] = httpx.Client(base_url=srv.base, headers=headers, timeout=120)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--turns", type=int, default=600)
    ap.add_argument("--window", type=int, default=8192)
    ap.add_argument("--big-window", type=int, default=131072)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--embedder", default="")
    ap.add_argument(
        "--baseline",
        metavar="SRC",
        help="--latency also asks a server running the code in SRC (another checkout's src/, "
        "e.g. `git archive main src`) on the same database, interleaved: before/after",
    )
    ap.add_argument(
        "--import",
        dest="fast",
        action="store_true",
        help="ingest through /api/imports (an Open WebUI export) instead of log-mode appends",
    )
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="chatmem-recall-")
    pg_admin = os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get(
        "CHATMEM_TEST_POSTGRES_URL"
    )
    pg_name = None
    if args.postgres:
        if not pg_admin:
            raise SystemExit("--postgres needs CHATMEM_TEST_POSTGRES_URL")
        pg_name = f"chatmem_bench_{uuid.uuid4().hex[:8]}"
        subprocess.run(["psql", pg_admin, "-qc", f'CREATE DATABASE "{pg_name}"'], check=True)
        db_url = pg_admin.rsplit("/", 1)[0] + "/" + pg_name
    else:
        db_url = f"sqlite:///{tmp}/bench.db"
    models = [
        {
            "id": "demo-big",
            "provider": "demo",
            "label": "Demo 128k",
            "context_window": args.big_window,
            "max_output": 1024,
        }
    ]
    env = {
        "CHATMEM_DEMO_CONTEXT_WINDOW": str(args.window),
        "CHATMEM_MODELS": json.dumps(models),
        "CHATMEM_DEMO_DELAY_MS": "0",
    }
    if args.embedder:
        env["CHATMEM_EMBEDDER"] = args.embedder
    subprocess.run(
        [str(Path(sys.executable).with_name("chatmem")), "migrate"],
        env={**os.environ, "CHATMEM_DATABASE_URL": db_url},
        check=True,
        capture_output=True,
    )
    key = create_user(db_url, "bench@example.com", admin=True)
    server = Server(db_url, env_extra=env, args=()).start()
    try:
        h = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=server.base, headers=h, timeout=120) as client:
            convs = [generate(seed=i, turns=args.turns) for i in range(args.conversations)]
            if not convs:
                if args.latency:
                    print("\nrecall latency inside the turn:")
                    latency(_latency_clients(db_url, env, args.baseline, h), client)
                return
            print(
                f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, "
                f"{sum(len(c.questions) for c in convs)} questions; "
                f"{'PostgreSQL' if args.postgres else 'SQLite'}"
            )
            res = evaluate(client, client, convs, "demo", args.fast)
            print_table(f"window {args.window} (prompt limit {args.window - 1024})", res)
            res = evaluate(client, client, convs[:3], "demo-big", args.fast)
            print_table(f"window {args.big_window}", res)
            if args.latency:
                print("\nrecall latency inside the turn:")
                latency(_latency_clients(db_url, env, args.baseline, h), client)
    finally:
        for srv in SERVERS:
            srv.stop()
        server.stop()
        if pg_name:
            subprocess.run(
                ["psql", pg_admin, "-qc", f'DROP DATABASE "{pg_name}" WITH (FORCE)'], check=False
            )


if __name__ == "__main__":
    main()
