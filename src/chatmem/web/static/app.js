// chatmem web UI: vanilla JS over the native API (session cookie + X-CSRF-Token on writes).
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { conv: null, items: [], nextCursor: null, streaming: null, abort: null };

function csrf() {
  const m = document.cookie.match(/(?:^|; )chatmem_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(method, path, body, extra = {}) {
  const headers = { ...(extra.headers || {}) };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                                  credentials: "same-origin", signal: extra.signal });
  if (extra.raw) return res;
  if (res.status === 401) { showLogin(); throw new Error("unauthorized"); }
  if (res.status === 204) return null;
  const data = await res.json();
  if (!res.ok) throw new Error((data.error && data.error.message) || res.statusText);
  return data;
}

// ── SSE over fetch (so we can POST and send headers) ──────────────────────────────────────────
async function* sse(res) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i).replace(/^\r?\n\r?\n/, "");
      const ev = { id: null, event: "message", data: "" };
      for (const line of frame.split(/\r?\n/)) {
        if (!line || line.startsWith(":")) continue;
        const k = line.indexOf(":");
        const field = k < 0 ? line : line.slice(0, k);
        const val = k < 0 ? "" : line.slice(k + 1).replace(/^ /, "");
        if (field === "data") ev.data += (ev.data ? "\n" : "") + val;
        else if (field === "event") ev.event = val;
        else if (field === "id") ev.id = val;
      }
      if (ev.data) { try { ev.data = JSON.parse(ev.data); } catch (_) { /* keep text */ } }
      yield ev;
    }
  }
}

// ── rendering ─────────────────────────────────────────────────────────────────────────────────
function messageText(m) { return m.text != null ? m.text : (m.blocks || []).filter(b => b.kind === "text").map(b => b.text).join(""); }

function renderMessage(m) {
  const li = document.createElement("li");
  li.className = `msg ${m.role} ${m.status || ""}`;
  li.dataset.id = m.id;
  const text = document.createElement("div");
  text.className = "text";
  text.textContent = messageText(m);
  li.appendChild(text);
  const meta = document.createElement("div");
  meta.className = "meta";
  if ((m.branch_count || 1) > 1) {
    const prev = button("‹", () => switchTo(m.sibling_ids[m.branch_index - 1]));
    prev.disabled = m.branch_index === 0;
    prev.className = "branch-prev";
    const next = button("›", () => switchTo(m.sibling_ids[m.branch_index + 1]));
    next.disabled = m.branch_index >= m.branch_count - 1;
    next.className = "branch-next";
    const pos = document.createElement("span");
    pos.className = "branch-pos";
    pos.textContent = `${m.branch_index + 1}/${m.branch_count}`;
    meta.append(prev, pos, next);
  }
  if (m.role === "assistant" && m.status !== "streaming") meta.append(button("Regenerate", () => regenerate(m)));
  if (m.role === "user") meta.append(button("Edit", () => editAndResend(m)));
  if (m.status === "error") { const e = document.createElement("span"); e.className = "error"; e.textContent = m.error || "failed"; meta.append(e); }
  li.appendChild(meta);
  return li;
}

function button(label, onclick) {
  const b = document.createElement("button");
  b.type = "button"; b.textContent = label; b.onclick = onclick;
  return b;
}

function renderThread() {
  const ol = $("#messages");
  ol.replaceChildren(...state.items.map(renderMessage));
  $("#load-older").hidden = !state.nextCursor;
}

async function loadConversations() {
  const data = await api("GET", "/api/conversations?limit=100");
  const ul = $("#conversations");
  ul.replaceChildren(...data.items.map((c) => {
    const li = document.createElement("li");
    li.textContent = c.title;
    li.dataset.id = c.id;
    if (state.conv && c.id === state.conv.id) li.className = "active";
    li.onclick = () => openConversation(c.id);
    return li;
  }));
}

async function openConversation(id) {
  state.conv = await api("GET", `/api/conversations/${id}`);
  $("#title").textContent = state.conv.title;
  const page = await api("GET", `/api/conversations/${id}/messages?limit=50`);
  state.items = page.items;
  state.nextCursor = page.next_cursor;
  renderThread();
  await loadConversations();
  const live = state.items.find((m) => m.status === "streaming");
  if (live) follow(live.id, 0);
  $("#thread").scrollTop = $("#thread").scrollHeight;
}

async function loadOlder() {
  if (!state.nextCursor) return;
  const page = await api("GET", `/api/conversations/${state.conv.id}/messages?limit=50&before=${state.nextCursor}`);
  state.items = page.items.concat(state.items);
  state.nextCursor = page.next_cursor;
  renderThread();
}

async function switchTo(id) {
  await api("PATCH", `/api/conversations/${state.conv.id}/active-leaf`, { leaf_id: id });
  await openConversation(state.conv.id);
}

// ── turns ─────────────────────────────────────────────────────────────────────────────────────
function setBusy(busy) { $("#stop").hidden = !busy; $("#send").disabled = busy; }

async function consume(res) {
  let assistantId = null;
  let lastSeq = 0;
  for await (const ev of sse(res)) {
    if (ev.id) lastSeq = Number(ev.id);
    const d = ev.data || {};
    if (ev.event === "message_start") {
      assistantId = d.assistant_message_id || (d.assistant_message && d.assistant_message.id) || d.message_id;
      await refreshPage();
    } else if (ev.event === "text_delta") {
      const li = document.querySelector(`li[data-id="${assistantId}"] .text`);
      if (li) li.textContent += d.text || d.delta || "";
    } else if (ev.event === "done" || ev.event === "error" || ev.event === "snapshot") {
      await refreshPage();
    }
  }
  return { assistantId, lastSeq };
}

async function refreshPage() {
  const page = await api("GET", `/api/conversations/${state.conv.id}/messages?limit=50`);
  state.items = page.items; state.nextCursor = page.next_cursor;
  renderThread();
  $("#thread").scrollTop = $("#thread").scrollHeight;
}

async function startTurn(path, body) {
  setBusy(true);
  state.abort = new AbortController();
  try {
    const res = await api("POST", path, body, { raw: true, signal: state.abort.signal,
                                                 headers: { Accept: "text/event-stream" } });
    if (!res.ok) { const e = await res.json().catch(() => ({})); alert((e.error && e.error.message) || res.statusText); return; }
    if ((res.headers.get("content-type") || "").includes("text/event-stream")) await consume(res);
    else await refreshPage();
  } catch (e) {
    if (e.name !== "AbortError") console.error(e);
  } finally {
    setBusy(false);
    await refreshPage();
    await loadConversations();
  }
}

async function follow(messageId, after) {
  setBusy(true);
  try {
    const res = await api("GET", `/api/conversations/${state.conv.id}/messages/${messageId}/stream`, undefined,
                          { raw: true, headers: { "Last-Event-ID": String(after) } });
    if (res.ok) await consume(res);
  } finally { setBusy(false); await refreshPage(); }
}

async function send(content, parentId) {
  if (!state.conv) {
    state.conv = await api("POST", "/api/conversations", {});
  }
  const body = { content };
  // an edit: a sibling under the edited message's parent (a new root when it had none)
  if (parentId !== undefined) { body.parent_id = parentId; body.branch = true; }
  await startTurn(`/api/conversations/${state.conv.id}/messages`, body);
}

async function regenerate(m) {
  await startTurn(`/api/conversations/${state.conv.id}/regenerate`, { message_id: m.id });
}

async function editAndResend(m) {
  const text = prompt("Edit message", messageText(m));
  if (text == null || !text.trim()) return;
  await send(text, m.parent_id);
}

async function stop() {
  if (state.conv) await api("POST", `/api/conversations/${state.conv.id}/stop`, {});
}

// ── memories ──────────────────────────────────────────────────────────────────────────────────
async function openMemories() {
  const data = await api("GET", "/api/me/memories?limit=100");
  const ul = $("#memory-list");
  ul.replaceChildren(...data.items.map((mem) => {
    const li = document.createElement("li");
    li.className = mem.status;
    const span = document.createElement("span");
    span.textContent = `${mem.memory_text} (${mem.status})`;
    const toggle = button(mem.status === "DISABLED" ? "Enable" : "Disable", async () => {
      await api("PATCH", `/api/me/memories/${mem.id}`, { status: mem.status === "DISABLED" ? "ACTIVE" : "DISABLED" });
      openMemories();
    });
    const del = button("Delete", async () => { await api("DELETE", `/api/me/memories/${mem.id}`); openMemories(); });
    li.append(span, toggle, del);
    return li;
  }));
  if (!$("#memories").open) $("#memories").showModal();
}

// ── session ───────────────────────────────────────────────────────────────────────────────────
function showLogin() { $("#app").hidden = true; $("#login").hidden = false; }

async function boot() {
  try {
    const me = await api("GET", "/api/me");
    $("#me").textContent = me.email;
    $("#login").hidden = true; $("#app").hidden = false;
    await loadConversations();
  } catch (e) {
    showLogin();
    return;
  }
  const first = document.querySelector("#conversations li");
  if (first) await openConversation(first.dataset.id).catch((e) => console.error(e));
}

$("#login-form").onsubmit = async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const res = await fetch("/api/auth/login", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: f.get("email"), password: f.get("password") }) });
  if (!res.ok) { $("#login-error").textContent = "Wrong email or password"; return; }
  $("#login-error").textContent = "";
  boot();
};
$("#composer").onsubmit = (e) => {
  e.preventDefault();
  const ta = e.target.elements.content;
  const text = ta.value.trim();
  if (!text) return;
  ta.value = "";
  send(text);
};
$("#new-chat").onclick = () => { state.conv = null; state.items = []; state.nextCursor = null; $("#title").textContent = "New chat"; renderThread(); };
$("#stop").onclick = stop;
$("#load-older").onclick = loadOlder;
$("#logout").onclick = async () => { await api("POST", "/api/auth/logout"); showLogin(); };
$("#open-memories").onclick = openMemories;
$("#close-memories").onclick = () => $("#memories").close();
boot();
