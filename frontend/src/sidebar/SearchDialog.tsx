// Search across conversation titles and messages; a message hit opens the conversation at that
// message (/c/{id}?m={message id}). The field is a combobox over the results' listbox: the arrow
// keys move the highlight (the first hit is highlighted as results arrive), Enter opens it.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState } from "react";
import { useNavigate } from "react-router";
import { api } from "../api/endpoints";
import { useT } from "../i18n";
import { Dialog } from "../ui/Dialog";
import { Highlight } from "./highlight";
import { moveActive, searchOptions } from "./searchNav";

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
  const uid = useId();
  const [q, setQ] = useState("");
  const query = useDebounced(q.trim(), 250);
  const enabled = open && query.length >= 2;
  const res = useQuery({ queryKey: ["search", query], queryFn: () => api.search(query), enabled });
  const [active, setActive] = useState(-1);

  useEffect(() => {
    if (!open) setQ("");
  }, [open]);

  const go = (path: string) => {
    onClose();
    navigate(path);
  };
  const data = enabled ? res.data : undefined;
  const options = useMemo(() => searchOptions(data, `${uid}-opt`), [data, uid]);
  // new results: the first one is highlighted (Enter opens it)
  useEffect(() => setActive(options.length ? 0 : -1), [options]);
  const activeId = active >= 0 ? options[active]?.id : undefined;
  useEffect(() => {
    if (activeId) document.getElementById(activeId)?.scrollIntoView({ block: "nearest" });
  }, [activeId]);

  const onKeyDown = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.nativeEvent.isComposing) return; // an input method is still composing
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setActive((i) => moveActive(i, options.length, e.key as "ArrowDown" | "ArrowUp"));
    } else if (e.key === "Enter") {
      const o = options[active];
      if (o) {
        e.preventDefault();
        go(o.path);
      }
    }
  };

  const listId = `${uid}-results`;
  let n = 0; // the running index of the options, in the order searchOptions lists them
  const option = (path: string, children: React.ReactNode, key: string) => {
    const i = n++;
    const o = options[i];
    return (
      <li
        key={key}
        id={o?.id}
        role="option"
        aria-selected={i === active}
        className={`result ${i === active ? "active" : ""}`}
        onMouseMove={() => i !== active && setActive(i)}
        onClick={() => go(path)}
      >
        {children}
      </li>
    );
  };
  const empty = data && options.length === 0;

  return (
    <Dialog open={open} onClose={onClose} title={t("searchChats")} className="search-dialog">
      <input
        type="search"
        className="search-input"
        role="combobox"
        aria-label={t("searchPlaceholder")}
        aria-autocomplete="list"
        aria-expanded={options.length > 0}
        aria-controls={listId}
        aria-activedescendant={activeId}
        placeholder={t("searchPlaceholder")}
        value={q}
        data-autofocus
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="search-results">
        <div aria-live="polite">
          {q.trim().length < 2 && <p className="muted">{t("searchHint")}</p>}
          {empty && <p className="muted">{t("noResults")}</p>}
        </div>
        <div id={listId} role="listbox" aria-label={t("searchChats")}>
          {data && data.conversations.length > 0 && (
            <section role="group" aria-labelledby={`${uid}-titles`}>
              <h3 id={`${uid}-titles`}>{t("titles")}</h3>
              <ul role="none">
                {data.conversations.map((c) =>
                  option(
                    `/c/${c.id}`,
                    // one flex item: the hits and the text between them stay on one line
                    <span className="result-title">
                      <Highlight text={c.title} query={data.query} />
                    </span>,
                    c.id,
                  ),
                )}
              </ul>
            </section>
          )}
          {data && data.messages.length > 0 && (
            <section role="group" aria-labelledby={`${uid}-messages`}>
              <h3 id={`${uid}-messages`}>{t("messages")}</h3>
              <ul role="none">
                {data.messages.map((m) =>
                  option(
                    `/c/${m.conversation_id}?m=${m.id}`,
                    <>
                      <span className="result-title">{m.conversation_title}</span>
                      <span className="result-snippet">
                        <Highlight text={m.snippet.text} query={data.query} />
                      </span>
                    </>,
                    m.id,
                  ),
                )}
              </ul>
            </section>
          )}
        </div>
      </div>
    </Dialog>
  );
}
