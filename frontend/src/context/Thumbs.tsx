// Thumbs up / down on an answer (POST …/feedback). A thumbs down asks why (the server's reasons)
// and for an optional comment; pressing a chosen thumb again takes the rating back.
import { useState } from "react";
import { ApiError } from "../api/client";
import { lib } from "../api/library";
import type { Message, Schemas } from "../api/types";
import { errorText, useT } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { Dialog } from "../ui/Dialog";
import { Icon } from "../ui/Icon";
import { toast } from "../ui/toast";

type Reason = NonNullable<Schemas["FeedbackIn"]["reasons"]>[number];
export const REASONS: Reason[] = [
  "incorrect_fact",
  "outdated",
  "unhelpful",
  "ignored_instructions",
  "too_long",
  "too_short",
  "wrong_language",
  "bad_formatting",
  "unsafe",
  "other",
];
const COMMENT_MAX = 500;

export function Thumbs({ m }: { m: Message }) {
  const t = useT();
  const [rating, setRating] = useState<string>(m.feedback || "");
  const [asking, setAsking] = useState(false);
  const [reasons, setReasons] = useState<Reason[]>([]);
  const [comment, setComment] = useState("");
  const send = async (feedback: "like" | "dislike" | "", rs: Reason[] = [], c = "") => {
    try {
      await lib.rate(m.conversation_id, m.id, { feedback, reasons: rs, comment: c });
      setRating(feedback);
      if (feedback) toast(t("fbThanks"));
    } catch (e) {
      toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
    }
  };
  return (
    <>
      <button
        type="button"
        className="act thumb"
        aria-pressed={rating === "like"}
        aria-label={t("fbGood")}
        title={t("fbGood")}
        onClick={() => send(rating === "like" ? "" : "like")}
      >
        <Icon name="thumbUp" />
      </button>
      <button
        type="button"
        className="act thumb"
        aria-pressed={rating === "dislike"}
        aria-label={t("fbBad")}
        title={t("fbBad")}
        onClick={() => (rating === "dislike" ? send("") : setAsking(true))}
      >
        <Icon name="thumbDown" />
      </button>
      {asking && (
        <Dialog open onClose={() => setAsking(false)} title={t("fbWhy")} className="feedback-dialog">
          <form
            className="stack-form"
            onSubmit={async (e) => {
              e.preventDefault();
              await send("dislike", reasons, comment.trim());
              setAsking(false);
            }}
          >
            <fieldset className="fb-reasons">
              <legend className="sr-only">{t("fbWhy")}</legend>
              {REASONS.map((r) => (
                <label key={r} className="check">
                  <input
                    type="checkbox"
                    checked={reasons.includes(r)}
                    onChange={(e) => setReasons(e.target.checked ? [...reasons, r] : reasons.filter((x) => x !== r))}
                  />
                  {t(`fb_${r}` as MessageKey)}
                </label>
              ))}
            </fieldset>
            <label>
              <span>
                {t("fbComment")} <small className="muted">{t("charsLeft", { n: COMMENT_MAX - comment.length })}</small>
              </span>
              <textarea rows={3} maxLength={COMMENT_MAX} value={comment} onChange={(e) => setComment(e.target.value)} />
            </label>
            <div className="dialog-actions">
              <button type="button" onClick={() => setAsking(false)}>
                {t("cancel")}
              </button>
              <button type="submit" className="primary">
                {t("fbSend")}
              </button>
            </div>
          </form>
        </Dialog>
      )}
    </>
  );
}
