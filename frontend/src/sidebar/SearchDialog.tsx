// Search across conversation titles and messages; a message hit opens the conversation at that
// message (/c/{id}?m={message id}).
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useNavigate } from "react-router";
import { api } from "../api/endpoints";
import { useT } from "../i18n";
import { Dialog } from "../ui/Dialog";
import { Highlight } from "./highlight";

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const id = setTimeout(() => setV(value), ms);
    return () => clearTimeout(id);
  }, [value, ms]);
  return v;
}

export function SearchDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const t = useT();
  const navigate = useNavigate();
  const [q, setQ] = useState("");
  const query = useDebounced(q.trim(), 250);
  const enabled = open && query.length >= 2;
  const res = useQuery({ queryKey: ["search", query], queryFn: () => api.search(query), enabled });

  useEffect(() => {
    if (!open) setQ("");
  }, [open]);

  const go = (path: string) => {
    onClose();
    navigate(path);
  };
  const data = enabled ? res.data : undefined;

  return (
    <Dialog open={open} onClose={onClose} title={t("searchChats")} className="search-dialog">
      <input
        type="search"
        className="search-input"
        aria-label={t("searchPlaceholder")}
        placeholder={t("searchPlaceholder")}
        value={q}
        data-autofocus
        onChange={(e) => setQ(e.target.value)}
      />
      <div className="search-results" aria-live="polite">
        {q.trim().length < 2 && <p className="muted">{t("searchHint")}</p>}
        {data && data.conversations.length === 0 && data.messages.length === 0 && (
          <p className="muted">{t("noResults")}</p>
        )}
        {data && data.conversations.length > 0 && (
          <section>
            <h3>{t("titles")}</h3>
            <ul>
              {data.conversations.map((c) => (
                <li key={c.id}>
                  <button type="button" className="result" onClick={() => go(`/c/${c.id}`)}>
                    <Highlight text={c.title} query={data.query} />
                  </button>
                </li>
              ))}
            </ul>
          </section>
        )}
        {data && data.messages.length > 0 && (
          <section>
            <h3>{t("messages")}</h3>
            <ul>
              {data.messages.map((m) => (
                <li key={m.id}>
                  <button
                    type="button"
                    className="result"
                    onClick={() => go(`/c/${m.conversation_id}?m=${m.id}`)}
                  >
                    <span className="result-title">{m.conversation_title}</span>
                    <span className="result-snippet">
                      <Highlight text={m.snippet.text} query={data.query} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        )}
      </div>
    </Dialog>
  );
}
