--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: chatmem_cjk_terms(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.chatmem_cjk_terms(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
SELECT coalesce(string_agg(substr(r.run, g.pos, l.len), ' ' ORDER BY r.n, g.pos, l.len), '')
FROM (
    SELECT m.a[1] AS run, row_number() OVER () AS n
    FROM regexp_matches(t, '[々぀-ヿ㐀-䶿一-鿿豈-﫿]+', 'g') AS m(a)
) r
CROSS JOIN LATERAL generate_series(1, char_length(r.run)) AS g(pos)
CROSS JOIN (VALUES (1), (2)) AS l(len)
WHERE l.len = 1 OR g.pos < char_length(r.run)
$$;


--
-- Name: embeddings_forget_memory(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.embeddings_forget_memory() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM embeddings WHERE memory_id = NEW.id; RETURN NULL; END $$;


--
-- Name: embeddings_forget_message(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.embeddings_forget_message() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM embeddings WHERE message_id = NEW.id; RETURN NULL; END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: account_deletions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_deletions (
    id text NOT NULL,
    actor text NOT NULL,
    actor_id text DEFAULT ''::text NOT NULL,
    counts jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: agents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agents (
    id text NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    handle text NOT NULL,
    headline text DEFAULT ''::text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    story_background text DEFAULT ''::text NOT NULL,
    personality_prompt text DEFAULT ''::text NOT NULL,
    tone_prompt text DEFAULT ''::text NOT NULL,
    guardrails_prompt text DEFAULT ''::text NOT NULL,
    opening_message text,
    default_prompt text DEFAULT ''::text NOT NULL,
    image_key text,
    visibility text DEFAULT 'private'::text NOT NULL,
    status text DEFAULT 'published'::text NOT NULL,
    last_assistant_message text,
    last_assistant_message_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id text NOT NULL,
    user_id text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    prefix text NOT NULL,
    key_hash text NOT NULL,
    created_at bigint NOT NULL,
    last_used_at bigint,
    revoked_at bigint
);


--
-- Name: conversation_compaction_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conversation_compaction_leases (
    conversation_id text NOT NULL,
    owner_token text NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: conversation_generation_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conversation_generation_leases (
    conversation_id text NOT NULL,
    branch_key text NOT NULL,
    principal_id text NOT NULL,
    owner_token text NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: conversation_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conversation_shares (
    id text NOT NULL,
    conversation_id text NOT NULL,
    user_id text NOT NULL,
    title text DEFAULT ''::text NOT NULL,
    snapshot jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: conversations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conversations (
    id text NOT NULL,
    user_id text NOT NULL,
    project_id text,
    title text DEFAULT '新对话'::text NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    model_id text DEFAULT ''::text NOT NULL,
    fast integer DEFAULT 0 NOT NULL,
    kb_ids jsonb DEFAULT '[]'::jsonb NOT NULL,
    rag_mode text DEFAULT 'auto'::text NOT NULL,
    summary_blocks jsonb DEFAULT '[]'::jsonb NOT NULL,
    active_leaf_id text,
    provider_state jsonb DEFAULT '{}'::jsonb NOT NULL,
    pinned integer DEFAULT 0 NOT NULL,
    archived integer DEFAULT 0 NOT NULL,
    starred integer DEFAULT 0 NOT NULL,
    inline_source_conv text DEFAULT ''::text NOT NULL,
    inline_parent_id text DEFAULT ''::text NOT NULL,
    inline_quote text DEFAULT ''::text NOT NULL,
    is_public integer DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    agent_id text,
    summary text,
    message_count bigint DEFAULT 0 NOT NULL,
    last_message_at bigint,
    memory_cursor text,
    is_agent_default integer DEFAULT 0 NOT NULL
);


--
-- Name: embeddings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.embeddings (
    id text NOT NULL,
    user_id text NOT NULL,
    owner_kind text NOT NULL,
    message_id text,
    memory_id text,
    conversation_id text,
    model text NOT NULL,
    dimensions integer NOT NULL,
    text_hash text NOT NULL,
    vector bytea NOT NULL,
    created_at bigint NOT NULL,
    CONSTRAINT ck_embeddings_owner CHECK ((((owner_kind = 'message'::text) AND (message_id IS NOT NULL) AND (memory_id IS NULL)) OR ((owner_kind = 'memory'::text) AND (memory_id IS NOT NULL) AND (message_id IS NULL))))
);


--
-- Name: exports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.exports (
    id text NOT NULL,
    user_id text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    path text DEFAULT ''::text NOT NULL,
    size_bytes bigint DEFAULT 0 NOT NULL,
    counts jsonb DEFAULT '{}'::jsonb NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    expires_at bigint
);


--
-- Name: import_sources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.import_sources (
    user_id text NOT NULL,
    source text NOT NULL,
    source_id text NOT NULL,
    conversation_id text NOT NULL,
    import_id text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: imports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.imports (
    id text NOT NULL,
    user_id text NOT NULL,
    format text DEFAULT ''::text NOT NULL,
    requested_format text DEFAULT 'auto'::text NOT NULL,
    filename text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    dry_run integer DEFAULT 0 NOT NULL,
    path text DEFAULT ''::text NOT NULL,
    owns_file integer DEFAULT 1 NOT NULL,
    bytes_total bigint DEFAULT 0 NOT NULL,
    bytes_read bigint DEFAULT 0 NOT NULL,
    items_done bigint DEFAULT 0 NOT NULL,
    report jsonb DEFAULT '{}'::jsonb NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    finished_at bigint
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id text NOT NULL,
    kind text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    dedupe_key text,
    status text DEFAULT 'queued'::text NOT NULL,
    run_after bigint NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 5 NOT NULL,
    locked_by text DEFAULT ''::text NOT NULL,
    locked_until bigint,
    last_error text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: knowledge_bases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.knowledge_bases (
    id text NOT NULL,
    user_id text NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: memories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memories (
    id text NOT NULL,
    user_id text NOT NULL,
    memory_text text NOT NULL,
    memory_type text DEFAULT ''::text NOT NULL,
    slot text DEFAULT ''::text NOT NULL,
    value text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'ACTIVE'::text NOT NULL,
    confidence double precision DEFAULT 0.8 NOT NULL,
    source_message_ids jsonb DEFAULT '[]'::jsonb NOT NULL,
    supersedes jsonb DEFAULT '[]'::jsonb NOT NULL,
    superseded_by jsonb DEFAULT '[]'::jsonb NOT NULL,
    affected_domains jsonb DEFAULT '[]'::jsonb NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    valid_from bigint,
    valid_until bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    agent_id text,
    importance integer DEFAULT 3 NOT NULL,
    source_message_id text,
    origin text DEFAULT 'extracted'::text NOT NULL
);


--
-- Name: memory_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_events (
    id text NOT NULL,
    memory_id text NOT NULL,
    user_id text NOT NULL,
    event text NOT NULL,
    actor text DEFAULT ''::text NOT NULL,
    before jsonb,
    after jsonb,
    reason text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: message_feedback; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.message_feedback (
    id text NOT NULL,
    message_id text NOT NULL,
    conversation_id text NOT NULL,
    user_id text NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    model_id text DEFAULT ''::text NOT NULL,
    channel_id text DEFAULT ''::text NOT NULL,
    rating text NOT NULL,
    reasons jsonb DEFAULT '[]'::jsonb NOT NULL,
    comment text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    CONSTRAINT ck_message_feedback_rating CHECK ((rating = ANY (ARRAY['like'::text, 'dislike'::text])))
);


--
-- Name: messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.messages (
    id text NOT NULL,
    conversation_id text NOT NULL,
    parent_id text,
    role text NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    model_id text DEFAULT ''::text NOT NULL,
    model_label text DEFAULT ''::text NOT NULL,
    fast integer DEFAULT 0 NOT NULL,
    blocks jsonb DEFAULT '[]'::jsonb NOT NULL,
    raw text,
    stop_reason text,
    attachments jsonb DEFAULT '[]'::jsonb NOT NULL,
    selected_user_skill_ids jsonb DEFAULT '[]'::jsonb NOT NULL,
    citations jsonb DEFAULT '[]'::jsonb NOT NULL,
    input_tokens bigint DEFAULT 0 NOT NULL,
    context_tokens bigint DEFAULT 0 NOT NULL,
    output_tokens bigint DEFAULT 0 NOT NULL,
    cache_read_tokens bigint DEFAULT 0 NOT NULL,
    cache_write_tokens bigint DEFAULT 0 NOT NULL,
    cost double precision DEFAULT 0 NOT NULL,
    currency text DEFAULT 'USD'::text NOT NULL,
    credits double precision DEFAULT 0 NOT NULL,
    status text DEFAULT 'complete'::text NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    gen_ms bigint DEFAULT 0 NOT NULL,
    search_text text DEFAULT ''::text NOT NULL,
    verify text DEFAULT ''::text NOT NULL,
    created_at bigint NOT NULL,
    feedback text DEFAULT ''::text NOT NULL,
    author_id text DEFAULT ''::text NOT NULL,
    user_id text NOT NULL,
    agent_id text,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    depth bigint DEFAULT 0 NOT NULL,
    search_tsv tsvector GENERATED ALWAYS AS (
CASE
    WHEN ((search_text = ''::text) OR (status = 'streaming'::text)) THEN NULL::tsvector
    ELSE ((to_tsvector('simple'::regconfig, search_text) || to_tsvector('simple'::regconfig, public.chatmem_cjk_terms(search_text))) || array_to_tsvector(ARRAY[lower(replace(user_id, '_'::text, ''::text)), lower(replace(conversation_id, '_'::text, ''::text)), COALESCE(lower(replace(agent_id, '_'::text, ''::text)), 'noagent'::text)]))
END) STORED
);


--
-- Name: projects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projects (
    id text NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    instructions text DEFAULT ''::text NOT NULL,
    accent text DEFAULT 'violet'::text NOT NULL,
    emoji text DEFAULT ''::text NOT NULL,
    pinned integer DEFAULT 0 NOT NULL,
    kb_id text,
    auto_add_uploads integer DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    is_public integer DEFAULT 1 NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL
);


--
-- Name: service_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_leases (
    name text NOT NULL,
    holder text NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: stream_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stream_events (
    message_id text NOT NULL,
    seq bigint NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: user_feedback; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_feedback (
    id text NOT NULL,
    user_id text NOT NULL,
    message_id text,
    conversation_id text,
    conversation_title text DEFAULT ''::text NOT NULL,
    description text NOT NULL,
    page_path text DEFAULT ''::text NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    viewport_width integer DEFAULT 0 NOT NULL,
    viewport_height integer DEFAULT 0 NOT NULL,
    screenshot bytea,
    screenshot_mime text DEFAULT ''::text NOT NULL,
    screenshot_width integer DEFAULT 0 NOT NULL,
    screenshot_height integer DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    email text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    password_hash text DEFAULT ''::text NOT NULL,
    role text DEFAULT 'user'::text NOT NULL,
    settings jsonb DEFAULT '{}'::jsonb NOT NULL,
    disabled integer DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: v1_prefixes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.v1_prefixes (
    user_id text NOT NULL,
    prefix_hash text NOT NULL,
    conversation_id text NOT NULL,
    message_id text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: web_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.web_sessions (
    id text NOT NULL,
    user_id text NOT NULL,
    csrf_token text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: workers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workers (
    id text NOT NULL,
    host text NOT NULL,
    pid integer DEFAULT 0 NOT NULL,
    kinds jsonb DEFAULT '[]'::jsonb NOT NULL,
    started_at bigint NOT NULL,
    seen_at bigint NOT NULL
);


--
-- Name: workspace_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workspace_members (
    workspace_id text NOT NULL,
    user_id text NOT NULL,
    role text DEFAULT 'member'::text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: workspaces; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workspaces (
    id text NOT NULL,
    name text NOT NULL,
    owner_id text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Data for Name: account_deletions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: agents; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: alembic_version; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.alembic_version VALUES ('0011');


--
-- Data for Name: api_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.api_keys VALUES ('key_01a231dd39855837c640050fce4b53e3', 'u_01a231dd2f6d367ab3311785f32ae59a', 'default', 'cm_Ep2uM1D', 'c70b513be66369c4663a2c39d14949084c4b61d36580885f29c8d8cd10908983', 1796132911493, 1796132911959, NULL);


--
-- Data for Name: conversation_compaction_leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: conversation_generation_leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: conversation_shares; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: conversations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.conversations VALUES ('c_01a231dd3ba122e13c8aa20e0f0e5b48', 'u_01a231dd2f6d367ab3311785f32ae59a', NULL, 'Lighthouses', '', '', 0, '[]', 'auto', '[]', 'msg_01a231dd3fc2739eac938d4a91fb62ac', '{}', 0, 0, 0, '', '', '', 0, 1796132912033, 1796132913078, '', NULL, NULL, 4, 1796132913078, 'msg_01a231dd3fc2739eac938d4a91fb62ac', 0);


--
-- Data for Name: embeddings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: exports; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: import_sources; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: imports; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.jobs VALUES ('job_01a231dd3ef00c399d3585f75f5c434a', 'memory.extract', '{"user_id": "u_01a231dd2f6d367ab3311785f32ae59a", "message_id": "msg_01a231dd3c4d0dea1196ad0c5cf20b81", "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48"}', 'memory:c_01a231dd3ba122e13c8aa20e0f0e5b48', 'done', 1796132912880, 1, 5, 'vm:20631:de3a0e2b', NULL, '', 1796132912880, 1796132914857);
INSERT INTO public.jobs VALUES ('job_01a231dd3f10553d5e3049a0af7af919', 'compaction', '{"conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48"}', 'compact:c_01a231dd3ba122e13c8aa20e0f0e5b48', 'done', 1796132912912, 1, 5, 'vm:20631:de3a0e2b', NULL, '', 1796132912912, 1796132916638);
INSERT INTO public.jobs VALUES ('job_01a231dd3f20285fba5dd664c55aa71f', 'title', '{"conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48"}', 'title:c_01a231dd3ba122e13c8aa20e0f0e5b48', 'done', 1796132912928, 1, 5, 'vm:20631:de3a0e2b', NULL, '', 1796132912928, 1796132916783);
INSERT INTO public.jobs VALUES ('job_01a231dd424b2878cbc9e75a6dd4b146', 'memory.extract', '{"user_id": "u_01a231dd2f6d367ab3311785f32ae59a", "message_id": "msg_01a231dd3fc2739eac938d4a91fb62ac", "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48"}', 'memory:c_01a231dd3ba122e13c8aa20e0f0e5b48', 'done', 1796132913739, 1, 5, 'vm:20631:de3a0e2b', NULL, '', 1796132913739, 1796132917155);


--
-- Data for Name: knowledge_bases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: memories; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memories VALUES ('mem_01a231dd4c8058c33673e695f404c1da', 'u_01a231dd2f6d367ab3311785f32ae59a', 'The user''s cat is called Orzo and is afraid of the vacuum cleaner.', '', '', '', 'ACTIVE', 0.95, '[]', '[]', '[]', '[]', '', 1796132914897, NULL, 1796132914897, 1796132914897, NULL, 3, NULL, 'user');


--
-- Data for Name: memory_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_events VALUES ('mev_01a231dd4ca74a37b94244ab921bf274', 'mem_01a231dd4c8058c33673e695f404c1da', 'u_01a231dd2f6d367ab3311785f32ae59a', 'created', 'u_01a231dd2f6d367ab3311785f32ae59a', 'null', '{"slot": "", "value": "", "origin": "user", "status": "ACTIVE", "confidence": 0.95, "importance": 3, "supersedes": [], "valid_from": 1796132914897, "memory_text": "The user''s cat is called Orzo and is afraid of the vacuum cleaner.", "memory_type": "", "valid_until": null, "superseded_by": [], "source_message_ids": []}', '', 1796132914897);


--
-- Data for Name: message_feedback; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: messages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.messages VALUES ('msg_01a231dd3c6c6484a5049b56b09e4699', 'c_01a231dd3ba122e13c8aa20e0f0e5b48', NULL, 'user', '', '', '', 0, '[{"kind": "text", "text": "Tell me about lighthouses on the Baltic coast."}]', NULL, NULL, '[]', '[]', '[]', 0, 0, 0, 0, 0, 0, 'USD', 0, 'complete', '', 0, 'Tell me about lighthouses on the Baltic coast.', '', 1796132912158, '', '', 'u_01a231dd2f6d367ab3311785f32ae59a', NULL, '{}', 0, DEFAULT);
INSERT INTO public.messages VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 'c_01a231dd3ba122e13c8aa20e0f0e5b48', 'msg_01a231dd3c6c6484a5049b56b09e4699', 'assistant', 'demo', 'demo', 'Demo (offline)', 0, '[{"kind": "text", "text": "You asked: \"Tell me about lighthouses on the Baltic coast.\". This is message 1 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model."}]', NULL, 'end_turn', '[]', '[]', '[]', 19, 28, 44, 0, 0, 0, 'USD', 0, 'complete', '', 523, 'You asked: "Tell me about lighthouses on the Baltic coast.". This is message 1 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model.', '', 1796132912158, '', '', 'u_01a231dd2f6d367ab3311785f32ae59a', NULL, '{"context": {"limit": 7168, "model": "demo", "recall": {"skipped": "whole_path_fits"}, "window": 8192, "leaf_id": "msg_01a231dd3c6c6484a5049b56b09e4699", "encoding": "cl100k_base", "sections": [{"name": "system", "tokens": 6}, {"name": "history", "tokens": 15, "dropped": 0, "message_ids": ["msg_01a231dd3c6c6484a5049b56b09e4699"]}, {"name": "overhead", "tokens": 7}], "estimated": true, "truncated": [], "compaction": {"ran": false, "inline": false, "needed": false, "reason": "below_trigger"}, "memory_ids": [], "message_ids": ["msg_01a231dd3c6c6484a5049b56b09e4699"], "total_tokens": 28, "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "summary_block_ids": [], "recall_message_ids": [], "dropped_message_count": 0, "reserved_output_tokens": 1024}}', 1, DEFAULT);
INSERT INTO public.messages VALUES ('msg_01a231dd3fda5ee145c4c3d5064c1c56', 'c_01a231dd3ba122e13c8aa20e0f0e5b48', 'msg_01a231dd3c4d0dea1196ad0c5cf20b81', 'user', '', '', '', 0, '[{"kind": "text", "text": "And which one is the oldest?"}]', NULL, NULL, '[]', '[]', '[]', 0, 0, 0, 0, 0, 0, 'USD', 0, 'complete', '', 0, 'And which one is the oldest?', '', 1796132913078, '', '', 'u_01a231dd2f6d367ab3311785f32ae59a', NULL, '{}', 2, DEFAULT);
INSERT INTO public.messages VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 'c_01a231dd3ba122e13c8aa20e0f0e5b48', 'msg_01a231dd3fda5ee145c4c3d5064c1c56', 'assistant', 'demo', 'demo', 'Demo (offline)', 0, '[{"kind": "text", "text": "You asked: \"And which one is the oldest?\". This is message 2 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model."}]', NULL, 'end_turn', '[]', '[]', '[]', 90, 97, 42, 0, 0, 0, 'USD', 0, 'complete', '', 509, 'You asked: "And which one is the oldest?". This is message 2 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model.', '', 1796132913078, '', '', 'u_01a231dd2f6d367ab3311785f32ae59a', NULL, '{"context": {"limit": 7168, "model": "demo", "recall": {"skipped": "whole_path_fits"}, "window": 8192, "leaf_id": "msg_01a231dd3fda5ee145c4c3d5064c1c56", "encoding": "cl100k_base", "sections": [{"name": "system", "tokens": 6}, {"name": "history", "tokens": 84, "dropped": 0, "message_ids": ["msg_01a231dd3c6c6484a5049b56b09e4699", "msg_01a231dd3c4d0dea1196ad0c5cf20b81", "msg_01a231dd3fda5ee145c4c3d5064c1c56"]}, {"name": "overhead", "tokens": 7}], "estimated": true, "truncated": [], "compaction": {"ran": false, "inline": false, "needed": false, "reason": "below_trigger"}, "memory_ids": [], "message_ids": ["msg_01a231dd3c6c6484a5049b56b09e4699", "msg_01a231dd3c4d0dea1196ad0c5cf20b81", "msg_01a231dd3fda5ee145c4c3d5064c1c56"], "total_tokens": 97, "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "summary_block_ids": [], "recall_message_ids": [], "dropped_message_count": 0, "reserved_output_tokens": 1024}}', 3, DEFAULT);


--
-- Data for Name: projects; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: service_leases; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.service_leases VALUES ('reap-jobs', 'vm:20631:b2a8d3b9', 1796133509267);


--
-- Data for Name: stream_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 1, 'message_start', '{"model": "demo", "model_label": "Demo (offline)", "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "user_message_id": "msg_01a231dd3c6c6484a5049b56b09e4699", "assistant_message_id": "msg_01a231dd3c4d0dea1196ad0c5cf20b81"}', 1796132912350);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 2, 'text_delta', '{"text": "You"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 3, 'text_delta', '{"text": " asked:"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 4, 'text_delta', '{"text": " \"Tell"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 5, 'text_delta', '{"text": " me"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 6, 'text_delta', '{"text": " about"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 7, 'text_delta', '{"text": " lighthouses"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 8, 'text_delta', '{"text": " on"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 9, 'text_delta', '{"text": " the"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 10, 'text_delta', '{"text": " Baltic"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 11, 'text_delta', '{"text": " coast.\"."}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 12, 'text_delta', '{"text": " This"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 13, 'text_delta', '{"text": " is"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 14, 'text_delta', '{"text": " message"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 15, 'text_delta', '{"text": " 1"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 16, 'text_delta', '{"text": " from"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 17, 'text_delta', '{"text": " you"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 18, 'text_delta', '{"text": " in"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 19, 'text_delta', '{"text": " this"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 20, 'text_delta', '{"text": " conversation."}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 21, 'text_delta', '{"text": " This"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 22, 'text_delta', '{"text": " answer"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 23, 'text_delta', '{"text": " comes"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 24, 'text_delta', '{"text": " from"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 25, 'text_delta', '{"text": " the"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 26, 'text_delta', '{"text": " offline"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 27, 'text_delta', '{"text": " demo"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 28, 'text_delta', '{"text": " model"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 29, 'text_delta', '{"text": " of"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 30, 'text_delta', '{"text": " chatmem,"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 31, 'text_delta', '{"text": " which"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 32, 'text_delta', '{"text": " replies"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 33, 'text_delta', '{"text": " from"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 34, 'text_delta', '{"text": " the"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 35, 'text_delta', '{"text": " context"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 36, 'text_delta', '{"text": " it"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 37, 'text_delta', '{"text": " was"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 38, 'text_delta', '{"text": " given"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 39, 'text_delta', '{"text": " instead"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 40, 'text_delta', '{"text": " of"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 41, 'text_delta', '{"text": " calling"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 42, 'text_delta', '{"text": " a"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 43, 'text_delta', '{"text": " real"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 44, 'text_delta', '{"text": " language"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 45, 'text_delta', '{"text": " model."}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 46, 'usage', '{"credits": 0.0, "input_tokens": 19, "output_tokens": 44, "context_tokens": 28, "cache_read_tokens": 0, "cache_write_tokens": 0}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3c4d0dea1196ad0c5cf20b81', 47, 'done', '{"message": {"id": "msg_01a231dd3c4d0dea1196ad0c5cf20b81", "fast": false, "role": "assistant", "text": "You asked: \"Tell me about lighthouses on the Baltic coast.\". This is message 1 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model.", "depth": 1, "error": "", "usage": {"input_tokens": 19, "output_tokens": 44, "context_tokens": 28, "cache_read_tokens": 0, "cache_write_tokens": 0}, "blocks": [{"kind": "text", "text": "You asked: \"Tell me about lighthouses on the Baltic coast.\". This is message 1 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model."}], "gen_ms": 523, "status": "complete", "verify": null, "credits": 0.0, "user_id": "u_01a231dd2f6d367ab3311785f32ae59a", "agent_id": null, "currency": "USD", "feedback": "", "model_id": "demo", "provider": "demo", "author_id": "", "citations": [], "parent_id": "msg_01a231dd3c6c6484a5049b56b09e4699", "created_at": 1796132912158, "attachments": [], "model_label": "Demo (offline)", "sibling_ids": ["msg_01a231dd3c4d0dea1196ad0c5cf20b81"], "stop_reason": "end_turn", "branch_count": 1, "branch_index": 0, "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "selected_user_skill_ids": []}, "stop_reason": "end_turn"}', 1796132912799);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 1, 'message_start', '{"model": "demo", "model_label": "Demo (offline)", "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "user_message_id": "msg_01a231dd3fda5ee145c4c3d5064c1c56", "assistant_message_id": "msg_01a231dd3fc2739eac938d4a91fb62ac"}', 1796132913205);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 2, 'text_delta', '{"text": "You"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 3, 'text_delta', '{"text": " asked:"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 4, 'text_delta', '{"text": " \"And"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 5, 'text_delta', '{"text": " which"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 6, 'text_delta', '{"text": " one"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 7, 'text_delta', '{"text": " is"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 8, 'text_delta', '{"text": " the"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 9, 'text_delta', '{"text": " oldest?\"."}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 10, 'text_delta', '{"text": " This"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 11, 'text_delta', '{"text": " is"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 12, 'text_delta', '{"text": " message"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 13, 'text_delta', '{"text": " 2"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 14, 'text_delta', '{"text": " from"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 15, 'text_delta', '{"text": " you"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 16, 'text_delta', '{"text": " in"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 17, 'text_delta', '{"text": " this"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 18, 'text_delta', '{"text": " conversation."}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 19, 'text_delta', '{"text": " This"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 20, 'text_delta', '{"text": " answer"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 21, 'text_delta', '{"text": " comes"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 22, 'text_delta', '{"text": " from"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 23, 'text_delta', '{"text": " the"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 24, 'text_delta', '{"text": " offline"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 25, 'text_delta', '{"text": " demo"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 26, 'text_delta', '{"text": " model"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 27, 'text_delta', '{"text": " of"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 28, 'text_delta', '{"text": " chatmem,"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 29, 'text_delta', '{"text": " which"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 30, 'text_delta', '{"text": " replies"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 31, 'text_delta', '{"text": " from"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 32, 'text_delta', '{"text": " the"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 33, 'text_delta', '{"text": " context"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 34, 'text_delta', '{"text": " it"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 35, 'text_delta', '{"text": " was"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 36, 'text_delta', '{"text": " given"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 37, 'text_delta', '{"text": " instead"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 38, 'text_delta', '{"text": " of"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 39, 'text_delta', '{"text": " calling"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 40, 'text_delta', '{"text": " a"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 41, 'text_delta', '{"text": " real"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 42, 'text_delta', '{"text": " language"}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 43, 'text_delta', '{"text": " model."}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 44, 'usage', '{"credits": 0.0, "input_tokens": 90, "output_tokens": 42, "context_tokens": 97, "cache_read_tokens": 0, "cache_write_tokens": 0}', 1796132913685);
INSERT INTO public.stream_events VALUES ('msg_01a231dd3fc2739eac938d4a91fb62ac', 45, 'done', '{"message": {"id": "msg_01a231dd3fc2739eac938d4a91fb62ac", "fast": false, "role": "assistant", "text": "You asked: \"And which one is the oldest?\". This is message 2 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model.", "depth": 3, "error": "", "usage": {"input_tokens": 90, "output_tokens": 42, "context_tokens": 97, "cache_read_tokens": 0, "cache_write_tokens": 0}, "blocks": [{"kind": "text", "text": "You asked: \"And which one is the oldest?\". This is message 2 from you in this conversation. This answer comes from the offline demo model of chatmem, which replies from the context it was given instead of calling a real language model."}], "gen_ms": 509, "status": "complete", "verify": null, "credits": 0.0, "user_id": "u_01a231dd2f6d367ab3311785f32ae59a", "agent_id": null, "currency": "USD", "feedback": "", "model_id": "demo", "provider": "demo", "author_id": "", "citations": [], "parent_id": "msg_01a231dd3fda5ee145c4c3d5064c1c56", "created_at": 1796132913078, "attachments": [], "model_label": "Demo (offline)", "sibling_ids": ["msg_01a231dd3fc2739eac938d4a91fb62ac"], "stop_reason": "end_turn", "branch_count": 1, "branch_index": 0, "conversation_id": "c_01a231dd3ba122e13c8aa20e0f0e5b48", "selected_user_skill_ids": []}, "stop_reason": "end_turn"}', 1796132913685);


--
-- Data for Name: user_feedback; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('u_01a231dd2f6d367ab3311785f32ae59a', 'upgrade@example.com', 'Upgrade', '$argon2id$v=19$m=65536,t=3,p=4$c1jeOM4O86fi4QF27bN2rg$9nzXdE9f9HRAey9kWgZ2jF4s04W8GnJexpyFdu+x0Os', 'user', '{"memory_enabled": true}', 0, 1796132908909, 1796132908909);


--
-- Data for Name: v1_prefixes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: web_sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workspace_members; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workspaces; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: account_deletions pk_account_deletions; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_deletions
    ADD CONSTRAINT pk_account_deletions PRIMARY KEY (id);


--
-- Name: agents pk_agents; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT pk_agents PRIMARY KEY (id);


--
-- Name: api_keys pk_api_keys; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT pk_api_keys PRIMARY KEY (id);


--
-- Name: conversation_compaction_leases pk_conversation_compaction_leases; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_compaction_leases
    ADD CONSTRAINT pk_conversation_compaction_leases PRIMARY KEY (conversation_id);


--
-- Name: conversation_generation_leases pk_conversation_generation_leases; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_generation_leases
    ADD CONSTRAINT pk_conversation_generation_leases PRIMARY KEY (conversation_id, branch_key, principal_id);


--
-- Name: conversation_shares pk_conversation_shares; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_shares
    ADD CONSTRAINT pk_conversation_shares PRIMARY KEY (id);


--
-- Name: conversations pk_conversations; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT pk_conversations PRIMARY KEY (id);


--
-- Name: embeddings pk_embeddings; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embeddings
    ADD CONSTRAINT pk_embeddings PRIMARY KEY (id);


--
-- Name: exports pk_exports; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.exports
    ADD CONSTRAINT pk_exports PRIMARY KEY (id);


--
-- Name: import_sources pk_import_sources; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.import_sources
    ADD CONSTRAINT pk_import_sources PRIMARY KEY (user_id, source, source_id);


--
-- Name: imports pk_imports; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT pk_imports PRIMARY KEY (id);


--
-- Name: jobs pk_jobs; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT pk_jobs PRIMARY KEY (id);


--
-- Name: knowledge_bases pk_knowledge_bases; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.knowledge_bases
    ADD CONSTRAINT pk_knowledge_bases PRIMARY KEY (id);


--
-- Name: memories pk_memories; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT pk_memories PRIMARY KEY (id);


--
-- Name: memory_events pk_memory_events; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_events
    ADD CONSTRAINT pk_memory_events PRIMARY KEY (id);


--
-- Name: message_feedback pk_message_feedback; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.message_feedback
    ADD CONSTRAINT pk_message_feedback PRIMARY KEY (id);


--
-- Name: messages pk_messages; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT pk_messages PRIMARY KEY (id);


--
-- Name: projects pk_projects; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT pk_projects PRIMARY KEY (id);


--
-- Name: service_leases pk_service_leases; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_leases
    ADD CONSTRAINT pk_service_leases PRIMARY KEY (name);


--
-- Name: stream_events pk_stream_events; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stream_events
    ADD CONSTRAINT pk_stream_events PRIMARY KEY (message_id, seq);


--
-- Name: user_feedback pk_user_feedback; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_feedback
    ADD CONSTRAINT pk_user_feedback PRIMARY KEY (id);


--
-- Name: users pk_users; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT pk_users PRIMARY KEY (id);


--
-- Name: v1_prefixes pk_v1_prefixes; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.v1_prefixes
    ADD CONSTRAINT pk_v1_prefixes PRIMARY KEY (user_id, prefix_hash);


--
-- Name: web_sessions pk_web_sessions; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT pk_web_sessions PRIMARY KEY (id);


--
-- Name: workers pk_workers; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT pk_workers PRIMARY KEY (id);


--
-- Name: workspace_members pk_workspace_members; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT pk_workspace_members PRIMARY KEY (workspace_id, user_id);


--
-- Name: workspaces pk_workspaces; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT pk_workspaces PRIMARY KEY (id);


--
-- Name: api_keys uq_api_keys_key_hash; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash);


--
-- Name: users uq_users_email; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT uq_users_email UNIQUE (email);


--
-- Name: idx_account_deletions_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_account_deletions_created ON public.account_deletions USING btree (created_at);


--
-- Name: idx_conv_inline; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_inline ON public.conversations USING btree (inline_source_conv);


--
-- Name: idx_conv_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_project ON public.conversations USING btree (project_id);


--
-- Name: idx_conv_shares_conv; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_conv_shares_conv ON public.conversation_shares USING btree (conversation_id);


--
-- Name: idx_conv_shares_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_shares_user ON public.conversation_shares USING btree (user_id);


--
-- Name: idx_conv_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_user ON public.conversations USING btree (user_id);


--
-- Name: idx_conv_user_agent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_user_agent ON public.conversations USING btree (user_id, agent_id);


--
-- Name: idx_conv_user_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_user_updated ON public.conversations USING btree (user_id, archived, pinned DESC, updated_at DESC);


--
-- Name: idx_conv_workspace_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conv_workspace_updated ON public.conversations USING btree (workspace_id, archived, pinned DESC, updated_at DESC);


--
-- Name: idx_conversation_compaction_leases_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conversation_compaction_leases_expires ON public.conversation_compaction_leases USING btree (expires_at);


--
-- Name: idx_conversation_generation_leases_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_conversation_generation_leases_expires ON public.conversation_generation_leases USING btree (expires_at);


--
-- Name: idx_embeddings_user_scope; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_embeddings_user_scope ON public.embeddings USING btree (user_id, owner_kind, model, conversation_id, id);


--
-- Name: idx_exports_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_exports_user_created ON public.exports USING btree (user_id, created_at);


--
-- Name: idx_import_sources_conversation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_import_sources_conversation ON public.import_sources USING btree (conversation_id);


--
-- Name: idx_imports_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_imports_user_created ON public.imports USING btree (user_id, created_at);


--
-- Name: idx_memories_fts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_fts ON public.memories USING gin (to_tsvector('simple'::regconfig, memory_text));


--
-- Name: idx_memories_inject; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_inject ON public.memories USING btree (user_id, status, importance, updated_at);


--
-- Name: idx_memories_user_agent_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_user_agent_status ON public.memories USING btree (user_id, agent_id, status);


--
-- Name: idx_memories_user_slot; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_user_slot ON public.memories USING btree (user_id, slot);


--
-- Name: idx_memories_user_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_user_status ON public.memories USING btree (user_id, status);


--
-- Name: idx_memories_user_type_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_memories_user_type_status ON public.memories USING btree (user_id, memory_type, status);


--
-- Name: idx_message_feedback_conv; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_message_feedback_conv ON public.message_feedback USING btree (conversation_id);


--
-- Name: idx_message_feedback_model_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_message_feedback_model_updated ON public.message_feedback USING btree (model_id, updated_at);


--
-- Name: idx_message_feedback_rating_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_message_feedback_rating_updated ON public.message_feedback USING btree (rating, updated_at);


--
-- Name: idx_message_feedback_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_message_feedback_updated ON public.message_feedback USING btree (updated_at);


--
-- Name: idx_message_feedback_user_message; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_message_feedback_user_message ON public.message_feedback USING btree (user_id, message_id);


--
-- Name: idx_messages_conv; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_conv ON public.messages USING btree (conversation_id);


--
-- Name: idx_messages_conv_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_conv_created ON public.messages USING btree (conversation_id, created_at);


--
-- Name: idx_messages_conv_parent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_conv_parent ON public.messages USING btree (conversation_id, parent_id);


--
-- Name: idx_messages_fts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_fts ON public.messages USING gin (search_tsv);


--
-- Name: idx_messages_model_role_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_model_role_created ON public.messages USING btree (model_id, role, created_at);


--
-- Name: idx_messages_parent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_parent ON public.messages USING btree (parent_id);


--
-- Name: idx_messages_role_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_role_created ON public.messages USING btree (role, created_at);


--
-- Name: idx_messages_streaming; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_streaming ON public.messages USING btree (created_at) WHERE (status = 'streaming'::text);


--
-- Name: idx_messages_user_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_messages_user_status ON public.messages USING btree (user_id, status);


--
-- Name: idx_projects_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_projects_user ON public.projects USING btree (user_id);


--
-- Name: idx_projects_user_name_unique; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_projects_user_name_unique ON public.projects USING btree (user_id, COALESCE(workspace_id, ''::text), lower(TRIM(BOTH FROM name)));


--
-- Name: idx_user_feedback_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_user_feedback_created ON public.user_feedback USING btree (created_at DESC, id DESC);


--
-- Name: idx_user_feedback_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_user_feedback_user_created ON public.user_feedback USING btree (user_id, created_at DESC);


--
-- Name: idx_v1_prefixes_conversation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_v1_prefixes_conversation ON public.v1_prefixes USING btree (conversation_id);


--
-- Name: idx_v1_prefixes_message; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_v1_prefixes_message ON public.v1_prefixes USING btree (message_id);


--
-- Name: idx_workers_seen_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_workers_seen_at ON public.workers USING btree (seen_at);


--
-- Name: ix_agents_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_user ON public.agents USING btree (user_id);


--
-- Name: ix_api_keys_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_api_keys_user ON public.api_keys USING btree (user_id);


--
-- Name: ix_jobs_status_run_after; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_jobs_status_run_after ON public.jobs USING btree (status, run_after);


--
-- Name: ix_jobs_status_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_jobs_status_updated ON public.jobs USING btree (status, updated_at);


--
-- Name: ix_knowledge_bases_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_knowledge_bases_user ON public.knowledge_bases USING btree (user_id);


--
-- Name: ix_memory_events_memory; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_memory_events_memory ON public.memory_events USING btree (memory_id, created_at);


--
-- Name: ix_stream_events_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_stream_events_created ON public.stream_events USING btree (created_at, message_id, seq);


--
-- Name: ix_web_sessions_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_web_sessions_expires ON public.web_sessions USING btree (expires_at);


--
-- Name: ix_web_sessions_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_web_sessions_user ON public.web_sessions USING btree (user_id);


--
-- Name: ix_workspace_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_workspace_members_user ON public.workspace_members USING btree (user_id);


--
-- Name: uq_conv_agent_default; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX uq_conv_agent_default ON public.conversations USING btree (user_id, agent_id) WHERE (is_agent_default = 1);


--
-- Name: uq_embeddings_memory_model; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX uq_embeddings_memory_model ON public.embeddings USING btree (memory_id, model);


--
-- Name: uq_embeddings_message_model; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX uq_embeddings_message_model ON public.embeddings USING btree (message_id, model);


--
-- Name: uq_jobs_dedupe_queued; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX uq_jobs_dedupe_queued ON public.jobs USING btree (dedupe_key) WHERE (status = 'queued'::text);


--
-- Name: uq_message_feedback_message_user; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX uq_message_feedback_message_user ON public.message_feedback USING btree (message_id, user_id);


--
-- Name: memories embeddings_memory_text; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER embeddings_memory_text AFTER UPDATE OF memory_text, status ON public.memories FOR EACH ROW WHEN (((old.memory_text IS DISTINCT FROM new.memory_text) OR (new.status <> ALL (ARRAY['ACTIVE'::text, 'QUERY_DEPENDENT'::text])))) EXECUTE FUNCTION public.embeddings_forget_memory();


--
-- Name: messages embeddings_message_text; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER embeddings_message_text AFTER UPDATE OF search_text ON public.messages FOR EACH ROW WHEN ((old.search_text IS DISTINCT FROM new.search_text)) EXECUTE FUNCTION public.embeddings_forget_message();


--
-- Name: agents fk_agents_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT fk_agents_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: api_keys fk_api_keys_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT fk_api_keys_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: conversation_compaction_leases fk_conversation_compaction_leases_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_compaction_leases
    ADD CONSTRAINT fk_conversation_compaction_leases_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: conversation_generation_leases fk_conversation_generation_leases_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_generation_leases
    ADD CONSTRAINT fk_conversation_generation_leases_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: conversation_shares fk_conversation_shares_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_shares
    ADD CONSTRAINT fk_conversation_shares_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: conversation_shares fk_conversation_shares_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversation_shares
    ADD CONSTRAINT fk_conversation_shares_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: conversations fk_conversations_agent_id_agents; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT fk_conversations_agent_id_agents FOREIGN KEY (agent_id) REFERENCES public.agents(id) ON DELETE CASCADE;


--
-- Name: conversations fk_conversations_project_id_projects; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT fk_conversations_project_id_projects FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE SET NULL;


--
-- Name: conversations fk_conversations_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT fk_conversations_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: embeddings fk_embeddings_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embeddings
    ADD CONSTRAINT fk_embeddings_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: embeddings fk_embeddings_memory_id_memories; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embeddings
    ADD CONSTRAINT fk_embeddings_memory_id_memories FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: embeddings fk_embeddings_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embeddings
    ADD CONSTRAINT fk_embeddings_message_id_messages FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: embeddings fk_embeddings_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.embeddings
    ADD CONSTRAINT fk_embeddings_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: exports fk_exports_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.exports
    ADD CONSTRAINT fk_exports_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: import_sources fk_import_sources_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.import_sources
    ADD CONSTRAINT fk_import_sources_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: import_sources fk_import_sources_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.import_sources
    ADD CONSTRAINT fk_import_sources_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: imports fk_imports_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT fk_imports_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: knowledge_bases fk_knowledge_bases_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.knowledge_bases
    ADD CONSTRAINT fk_knowledge_bases_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: memories fk_memories_agent_id_agents; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT fk_memories_agent_id_agents FOREIGN KEY (agent_id) REFERENCES public.agents(id) ON DELETE CASCADE;


--
-- Name: memories fk_memories_source_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT fk_memories_source_message_id_messages FOREIGN KEY (source_message_id) REFERENCES public.messages(id) ON DELETE SET NULL;


--
-- Name: memories fk_memories_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT fk_memories_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: memory_events fk_memory_events_memory_id_memories; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_events
    ADD CONSTRAINT fk_memory_events_memory_id_memories FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;


--
-- Name: memory_events fk_memory_events_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_events
    ADD CONSTRAINT fk_memory_events_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: message_feedback fk_message_feedback_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.message_feedback
    ADD CONSTRAINT fk_message_feedback_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: message_feedback fk_message_feedback_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.message_feedback
    ADD CONSTRAINT fk_message_feedback_message_id_messages FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: message_feedback fk_message_feedback_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.message_feedback
    ADD CONSTRAINT fk_message_feedback_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: messages fk_messages_agent_id_agents; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT fk_messages_agent_id_agents FOREIGN KEY (agent_id) REFERENCES public.agents(id) ON DELETE CASCADE;


--
-- Name: messages fk_messages_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT fk_messages_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: messages fk_messages_parent_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT fk_messages_parent_id_messages FOREIGN KEY (parent_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: messages fk_messages_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT fk_messages_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: projects fk_projects_kb_id_knowledge_bases; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT fk_projects_kb_id_knowledge_bases FOREIGN KEY (kb_id) REFERENCES public.knowledge_bases(id) ON DELETE SET NULL;


--
-- Name: projects fk_projects_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT fk_projects_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: stream_events fk_stream_events_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stream_events
    ADD CONSTRAINT fk_stream_events_message_id_messages FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: user_feedback fk_user_feedback_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_feedback
    ADD CONSTRAINT fk_user_feedback_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE SET NULL;


--
-- Name: user_feedback fk_user_feedback_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_feedback
    ADD CONSTRAINT fk_user_feedback_message_id_messages FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE SET NULL;


--
-- Name: user_feedback fk_user_feedback_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_feedback
    ADD CONSTRAINT fk_user_feedback_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: v1_prefixes fk_v1_prefixes_conversation_id_conversations; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.v1_prefixes
    ADD CONSTRAINT fk_v1_prefixes_conversation_id_conversations FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: v1_prefixes fk_v1_prefixes_message_id_messages; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.v1_prefixes
    ADD CONSTRAINT fk_v1_prefixes_message_id_messages FOREIGN KEY (message_id) REFERENCES public.messages(id) ON DELETE CASCADE;


--
-- Name: v1_prefixes fk_v1_prefixes_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.v1_prefixes
    ADD CONSTRAINT fk_v1_prefixes_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: web_sessions fk_web_sessions_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT fk_web_sessions_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: workspace_members fk_workspace_members_user_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT fk_workspace_members_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: workspace_members fk_workspace_members_workspace_id_workspaces; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT fk_workspace_members_workspace_id_workspaces FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id) ON DELETE CASCADE;


--
-- Name: workspaces fk_workspaces_owner_id_users; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT fk_workspaces_owner_id_users FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


