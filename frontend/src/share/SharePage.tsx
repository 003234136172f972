// The public page of a shared conversation (/share/{token}): no login, the snapshot's messages
// with sanitised Markdown (the same renderer as the app: no HTML from a message runs), the
// authors' display names, and "Continue this chat" — a copy in the visitor's own account.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { ApiError, http, unwrap } from "../api/client";
import { Markdown } from "../chat/Markdown";
import { useT } from "../i18n";
import { useMe } from "../queries";

type Block = { kind?: string; text?: string };

function textOf(blocks: unknown[]): string {
  return (blocks as Block[])
    .filter((b) => b && b.kind === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("\n\n");
}

export function SharePage() {
  const t = useT();
  const { token = "" } = useParams();
  const me = useMe();
  const navigate = useNavigate();
  const [error, setError] = useState("");
  const q = useQuery({
    queryKey: ["shared", token],
    queryFn: () => unwrap(http.GET("/api/public/shared/{token}", { params: { path: { token } } })),
    retry: false,
  });
  useEffect(() => {
    if (q.data) document.title = `${q.data.title} · chatmem`;
  }, [q.data]);
  const clone = async () => {
    try {
      const c = await unwrap(http.POST("/api/public/shared/{token}/clone", { params: { path: { token } } }));
      navigate(`/c/${c.id}`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  };
  const missing = q.error instanceof ApiError && q.error.status === 404;
  return (
    <div className="share-page">
      <header className="share-head">
        <Link to="/" className="brand">
          ◆ chatmem
        </Link>
      </header>
      <main className="share-body">
        {q.isPending && <p className="muted">…</p>}
        {missing && (
          <div className="center" role="alert">
            <h1>{t("shareGoneTitle")}</h1>
            <p>{t("shareGoneBody")}</p>
          </div>
        )}
        {q.isError && !missing && <p role="alert">{t("serverUnreachable")}</p>}
        {q.data && (
          <>
            <h1>{q.data.title}</h1>
            <p className="muted small">{t("shareSharedOn", { date: new Date(q.data.created_at).toLocaleDateString() })}</p>
            <ol className="message-list share-messages">
              {q.data.messages.map((m, i) => (
                <li key={i} className={`msg ${m.role} done`}>
                  <div className="msg-main">
                    <div className="msg-who muted small">
                      {m.role === "user" ? m.author_name || t("you") : m.model_label || t("assistant")}
                    </div>
                    <div className="msg-body">
                      {m.role === "assistant" ? (
                        <Markdown text={textOf(m.blocks)} />
                      ) : (
                        <div className="user-text">{textOf(m.blocks)}</div>
                      )}
                    </div>
                  </div>
                </li>
              ))}
            </ol>
            <div className="share-continue">
              {me.data ? (
                <button type="button" className="primary" onClick={clone}>
                  {t("shareContinue")}
                </button>
              ) : (
                <Link to={`/login?next=${encodeURIComponent(`/share/${token}`)}`} className="button primary">
                  {t("shareLoginToContinue")}
                </Link>
              )}
              {error && (
                <p role="alert" className="form-error">
                  {error}
                </p>
              )}
            </div>
          </>
        )}
      </main>
    </div>
  );
}
