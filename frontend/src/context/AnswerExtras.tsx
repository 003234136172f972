// Beside an answer's actions: how many memories it used (from the context report stored with
// it), which opens "What the model saw".
import type { Message } from "../api/types";
import { useT } from "../i18n";
import { ContextPanel } from "./ContextPanel";
import { reportOf } from "./report";
import { Thumbs } from "./Thumbs";
import { Icon } from "../ui/Icon";

export function AnswerExtras({
  m,
  showContext,
  setShowContext,
}: {
  m: Message;
  showContext: boolean;
  setShowContext: (open: boolean) => void;
}) {
  const t = useT();
  const report = reportOf(m.metadata);
  const n = report?.memory_ids?.length ?? 0;
  return (
    <>
      {m.status === "complete" && <Thumbs m={m} />}
      {report && (
        <button
          type="button"
          className="act mem-used"
          onClick={() => setShowContext(true)}
          aria-label={t("ctxUsedMemoriesLabel", { n })}
        >
          <Icon name="memory" /> {n}
        </button>
      )}
      {showContext && (
        <ContextPanel open cid={m.conversation_id} messageId={m.id} onClose={() => setShowContext(false)} />
      )}
    </>
  );
}
