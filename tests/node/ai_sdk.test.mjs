// The Vercel AI SDK's TextStreamChatTransport (what seed 000's web client and `useChat` use)
// against a live chatmem: three turns resending the whole UI history the way useChat keeps it
// (assistant messages carry a `step-start` part), then a reload mid-answer resumed through the
// SDK's reconnect convention (GET {api}/{chatId}/stream → the running reply, or 204).
// Run by tests/test_ai_sdk_node.py, which starts the server and passes CHATMEM_URL / _KEY / _AGENT.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readUIMessageStream, TextStreamChatTransport } from "ai";

const { CHATMEM_URL: url, CHATMEM_KEY: key, CHATMEM_AGENT: agent } = process.env;
const auth = { Authorization: `Bearer ${key}` };
const persona = {
  id: agent,
  name: "Lin",
  handle: "lin",
  headline: "a friend",
  lastActive: "now",
  status: "online",
  relationship: "friend",
  topic: "cats",
  chemistry: "92",
  chemistryLabel: "close",
  rhythm: "daily",
  profileNote: "likes quiet chats",
};

function transport() {
  return new TextStreamChatTransport({
    api: `${url}/rpc/chat/inbox`,
    headers: auth,
    body: { conversation: persona },
  });
}

async function lastMessage(stream) {
  let last;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last;
}

const textOf = (m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
const user = (id, text) => ({ id, role: "user", parts: [{ type: "text", text }] });

async function history() {
  const r = await fetch(`${url}/rpc/chat/inbox/${agent}/conversation`, { headers: auth });
  assert.equal(r.status, 200);
  return (await r.json()).data.messages;
}

test("three turns with the whole history resent, then a resumed reload", async () => {
  const chat = transport();
  const messages = [];
  for (const [i, text] of ["Hi, I am Sam.", "I live in Porto.", "What do you know?"].entries()) {
    messages.push(user(`u${i}`, text));
    const stream = await chat.sendMessages({
      chatId: agent,
      messages,
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const reply = await lastMessage(stream);
    assert.equal(reply.role, "assistant");
    assert.ok(reply.parts.some((p) => p.type === "step-start"), "useChat keeps step-start parts");
    assert.match(textOf(reply), new RegExp(text.replace(/[?.]/g, ".")));
    messages.push(reply);
  }
  const stored = await history();
  assert.deepEqual(
    stored.map((m) => m.role),
    ["user", "assistant", "user", "assistant", "user", "assistant"],
  );
  assert.equal(stored[5].content, textOf(messages[5]));

  // a reload while the fourth answer is being written: the request is gone, the turn is not
  const abort = new AbortController();
  messages.push(user("u3", "Tell me a long story."));
  const stream = await chat.sendMessages({
    chatId: agent,
    messages,
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: abort.signal,
  });
  const reader = stream.getReader();
  let seen = "";
  while (!seen.trim()) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the reply started");
    if (value.type === "text-delta") seen += value.delta;
  }
  abort.abort();
  await reader.cancel().catch(() => {});

  const fresh = transport(); // a new page: useChat({ resume: true }) reconnects by chat id
  const resumed = await fresh.reconnectToStream({ chatId: agent });
  assert.ok(resumed, "a running reply is resumed, not 204");
  const reply = await lastMessage(resumed);
  assert.ok(textOf(reply).startsWith(seen), "resumed from the first character");
  const after = await history();
  assert.equal(after.length, 8);
  assert.equal(after[7].content, textOf(reply));
  assert.equal(after[7].status, "completed");
  // nothing running any more: 204, which the SDK reports as no stream
  assert.equal(await fresh.reconnectToStream({ chatId: agent }), null);
});
