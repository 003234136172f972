"""The embedders themselves: vector arithmetic (NumPy and pure Python agree), the registry and the
settings checks at start, the ``openai`` embedder through the real SDK against respx-mocked HTTP
(alone and driving the whole job → search path), and the ``local`` embedder on the real packaged
all-MiniLM-L6-v2 model (paraphrases with no shared word are found)."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest
import respx
from pydantic import ValidationError

from chatmem.app import create_app
from chatmem.config import Settings
from chatmem.embeddings import embed_query, registry, vectors
from chatmem.embeddings import service as esvc
from chatmem.embeddings.base import EmbedderError
from chatmem.embeddings.hashing import HashingEmbedder, hashed_vector
from chatmem.embeddings.local import LocalEmbedder
from chatmem.embeddings.openai import OpenAIEmbedder

from .conftest import make_settings
from .embed_support import drain, new_conv, running_app, say, search
from .embed_support import vectors as stored

BASE = "http://embed.test/v1"

# ── vectors ─────────────────────────────────────────────────────────────────────────────────────


def test_pack_unpack_and_normalise():
    v = vectors.normalise([3.0, 4.0])
    assert v == [0.6, 0.8]
    blob = vectors.pack(v)
    assert len(blob) == 8 and list(vectors.unpack(blob)) == pytest.approx(v)
    assert vectors.normalise([0.0, 0.0]) is None and vectors.normalise([]) is None
    assert vectors.normalise([float("nan"), 1.0]) is None


def test_numpy_and_pure_python_scores_agree():
    rnd = random.Random(7)
    dims = 64
    rows = [vectors.normalise([rnd.gauss(0, 1) for _ in range(dims)]) for _ in range(300)]
    blobs = [vectors.pack(r) for r in rows]
    q = vectors.normalise([rnd.gauss(0, 1) for _ in range(dims)])
    fast = vectors.scores(q, blobs, dims, use_numpy=True)
    slow = vectors.scores(q, blobs, dims, use_numpy=False)
    assert fast == pytest.approx(slow, abs=1e-5)
    ids = [f"m{i:03d}" for i in range(300)]
    assert [i for i, _ in vectors.top_k(ids, fast, 10)] == [
        i for i, _ in vectors.top_k(ids, slow, 10)
    ]
    with pytest.raises(ValueError, match="dimensions"):
        vectors.scores(q[:10], blobs, dims)


def test_text_hash_and_clip():
    assert vectors.text_hash("a") != vectors.text_hash("b")
    assert vectors.clip("a  b\n\nc" + "x" * 50, 10) == "a b cxxxxx"


def test_hashing_embedder_is_deterministic_and_lexical():
    a, b = hashed_vector("grey cat called Pixel", 256), hashed_vector("Pixel the grey cat", 256)
    c = hashed_vector("quarterly budget review", 256)
    assert a == hashed_vector("grey cat called Pixel", 256)
    dot = lambda x, y: sum(i * j for i, j in zip(x, y, strict=True))  # noqa: E731
    assert dot(a, b) > 0.6 > dot(a, c)
    zh = hashed_vector("我喜欢吃火锅", 1024)  # CJK runs are split into character bigrams
    assert (
        dot(zh, hashed_vector("火锅很好吃", 1024)) > 0.2 > dot(zh, hashed_vector("明天下雨", 1024))
    )


# ── registry and settings, checked at start ─────────────────────────────────────────────────────


def test_builtins_are_entry_points():
    assert {"openai", "local", "hashing"} <= set(registry.available())
    e = registry.load(Settings(embedder="hashing", embedding_dimensions=32))
    assert isinstance(e, HashingEmbedder) and e.dimensions == 32
    assert registry.model_key(Settings(embedding_dimensions=32), e) == "hashing:bow-32@32"
    assert registry.load(Settings()) is None and registry.load(Settings(embedder="off")) is None


def test_bad_configuration_fails_at_start(tmp_path):
    url = f"sqlite:///{tmp_path}/x.db"
    with pytest.raises(ValueError, match="no such embedder"):
        create_app(Settings(database_url=url, embedder="nope"))
    with pytest.raises(ValueError, match="EMBEDDING_API_KEY"):
        create_app(Settings(database_url=url, embedder="openai"))
    for bad in (
        dict(embedding_batch_size=0),
        dict(embedding_dimensions=-1),
        dict(embedding_query_timeout_s=0),
        dict(embedding_max_candidates=10),
    ):
        with pytest.raises(ValidationError):
            Settings(database_url=url, embedder="hashing", **bad)
    # a self-hosted server needs no key; the chat provider's base URL is reused
    app = create_app(
        Settings(database_url=url, embedder="openai", openai_base_url="http://ollama:11434/v1")
    )
    s = esvc.get(app.state.runtime)
    assert s.model_key == "openai:text-embedding-3-small"
    assert str(s.embedder._sdk().base_url).startswith("http://ollama:11434/v1")


# ── openai (real SDK, respx-mocked HTTP) ────────────────────────────────────────────────────────


def _answer(request: httpx.Request, dims: int = 16) -> httpx.Response:
    body = json.loads(request.content)
    texts = body["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": hashed_vector(t, dims)}
        for i, t in enumerate(texts)
    ]
    data.reverse()  # servers may answer out of order: the SDK's index decides
    return httpx.Response(
        200,
        json={
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 3, "total_tokens": 3},
        },
    )


@respx.mock(assert_all_mocked=True)
async def test_openai_embedder_request_and_order(respx_mock):
    route = respx_mock.post(f"{BASE}/embeddings").mock(side_effect=_answer)
    e = OpenAIEmbedder(
        Settings(
            embedding_base_url=BASE,
            embedding_api_key="sk-emb",
            embedding_model="nomic-embed-text",
            embedding_dimensions=16,
        )
    )
    try:
        got = await e.embed(["alpha", "beta gamma"])
    finally:
        await e.aclose()
    assert got[0] == pytest.approx(hashed_vector("alpha", 16))
    assert got[1] == pytest.approx(hashed_vector("beta gamma", 16))
    req = route.calls.last.request
    assert req.headers["authorization"] == "Bearer sk-emb"
    sent = json.loads(req.content)
    assert sent == {
        "model": "nomic-embed-text",
        "input": ["alpha", "beta gamma"],
        "encoding_format": "float",
        "dimensions": 16,
    }


@respx.mock
async def test_openai_embedder_errors(respx_mock):
    e = OpenAIEmbedder(Settings(embedding_base_url=BASE))
    route = respx_mock.post(f"{BASE}/embeddings")
    route.mock(return_value=httpx.Response(401, json={"error": {"message": "bad key"}}))
    with pytest.raises(EmbedderError) as err:
        await e.embed(["x"])
    assert err.value.permanent and "401" in str(err.value)
    route.mock(return_value=httpx.Response(503, json={"error": {"message": "busy"}}))
    with pytest.raises(EmbedderError) as err:
        await e.embed(["x"])
    assert not err.value.permanent
    route.mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(EmbedderError) as err:
        await e.embed(["x"])
    assert not err.value.permanent
    route.mock(side_effect=lambda r: _answer(r, dims=8))
    e.dimensions = 16  # asked for 16, the server ignored it
    with pytest.raises(EmbedderError, match="ignored dimensions") as err:
        await e.embed(["x"])
    assert err.value.permanent
    await e.aclose()


@respx.mock(assert_all_mocked=True)
async def test_openai_embedder_drives_the_whole_path(respx_mock, db_url):
    route = respx_mock.post(f"{BASE}/embeddings").mock(side_effect=_answer)
    settings = make_settings(
        db_url,
        embedder="openai",
        embedding_base_url=BASE,
        embedding_model="bge-small",
        embedding_debounce_ms=0,
        embedding_query_timeout_s=60,
        run_worker=False,
    )
    async with running_app(settings, "oa@example.com") as (rt, u):
        cid = await new_conv(u)
        target = await say(u, cid, "the grey cat called Pixel")
        await say(u, cid, "quarterly budget review")
        await drain(rt)
        assert {v["model"] for v in await stored(rt.db)} == {"openai:bge-small"}
        hits = await search(rt, u.id, "Pixel grey cat", conversation_ids=[cid], limit=1)
        assert hits[0][0] == target
        assert route.call_count == 2  # one batch for the messages, one for the query


# ── local (sentence-transformers on the packaged all-MiniLM-L6-v2) ─────────────────────────────

DOCS = [
    "My sister Alice lives in Lisbon and teaches piano",
    "We adopted a grey cat called Pixel last spring",
    "The quarterly budget review moved to Thursday afternoon",
    "I am allergic to peanuts and shellfish",
    "Our team ships the mobile release every second Monday",
]
PARAPHRASES = [
    "which city is my sibling based in?",
    "what pet do we have?",
    "when is the finance meeting?",
    "which foods make me sick?",
    "how often do we publish the app?",
]


async def test_local_model_finds_paraphrases_through_the_whole_path(db_url):
    """The real model, offline (local_files_only), loaded and run in worker threads."""
    LocalEmbedder.check(Settings(embedder="local"))  # the extra is installed by `make test`
    settings = make_settings(
        db_url,
        embedder="local",
        embedding_debounce_ms=0,
        embedding_query_timeout_s=60,  # CPU inference on a loaded 2-core machine
        run_worker=False,
    )
    async with running_app(settings, "local@example.com") as (rt, u):
        [life] = [x for x in rt.services if isinstance(x, esvc.Lifecycle)]
        warming = life.warming
        await warming  # started with the runtime, in the background
        assert warming.exception() is None and esvc.get(rt).embedder._st is not None
        cid = await new_conv(u)
        ids = [await say(u, cid, d) for d in DOCS]
        await drain(rt)
        got = await stored(rt.db, conversation_id=cid)
        assert {v["model"] for v in got} == {"local:all-MiniLM-L6-v2"}
        assert {v["dimensions"] for v in got} == {384}
        for i, q in enumerate(PARAPHRASES):  # no word in common with its answer
            hits = await search(rt, u.id, q, conversation_ids=[cid], limit=1)
            assert hits[0][0] == ids[i], q
        qv = await embed_query(rt, PARAPHRASES[0])
        assert qv.model == "local:all-MiniLM-L6-v2" and len(qv.vector) == 384


def test_local_embedder_refuses_a_missing_model_clearly():
    e = LocalEmbedder(Settings(embedder="local", embedding_model="/nonexistent/model-dir"))
    with pytest.raises(EmbedderError) as err:
        e._encode(["x"])
    assert err.value.permanent and "cannot load" in str(err.value)


async def test_local_embedder_leaves_the_event_loop_free():
    """Loading and encoding run in threads: a ticker on the loop keeps running meanwhile."""
    e = LocalEmbedder(Settings(embedder="local"))
    ticks = 0
    done = asyncio.Event()

    async def ticker():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    try:
        got = await e.embed([f"sentence number {i} about the weather" for i in range(64)])
    finally:
        done.set()
        await task
    assert len(got) == 64 and len(got[0]) == 384
    assert ticks > 3  # a blocking encode would have let it run at most once
