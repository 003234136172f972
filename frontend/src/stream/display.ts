// What a message shows (pure): its stored row, or the live stream of it when this tab is reading
// one. One place decides the visible state — writing, reconnecting, stopped, interrupted, error.
import type { Block, Message } from "../api/types";
import type { Phase, TurnState } from "./turn";

export interface Display {
  text: string;
  thinking: string;
  phase: Phase;
  error: { code: string; message: string } | null;
}

const join = (blocks: Block[] | undefined, kind: string) =>
  (blocks || [])
    .filter((b) => b.kind === kind)
    .map((b) => b.text || "")
    .join("");

export function rowPhase(m: Message): Phase {
  if (m.status === "streaming") return "connecting";
  if (m.status === "error") return m.error === "generation_interrupted" ? "interrupted" : "error";
  if (m.stop_reason === "stopped") return "stopped";
  return "done";
}

function rowError(m: Message): Display["error"] {
  if (m.status !== "error") return null;
  const b = (m.blocks || []).find((x) => x.kind === "error");
  const code = (b?.code as string) || m.error || "error";
  return { code, message: b?.text || m.error || code };
}

export function displayOf(m: Message, live?: TurnState): Display {
  const stored: Display = {
    text: m.text ?? join(m.blocks, "text"),
    thinking: join(m.blocks, "thinking"),
    phase: rowPhase(m),
    error: rowError(m),
  };
  // an ended row is the final word; a stream that has delivered nothing yet shows the stored
  // partial text meanwhile
  if (!live || m.status !== "streaming") return stored;
  if (live.lastEventId === 0 && !live.text && live.phase === "connecting") return stored;
  return { text: live.text, thinking: live.thinking, phase: live.phase, error: live.error };
}
