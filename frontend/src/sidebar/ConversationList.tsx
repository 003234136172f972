// A paged conversation list (pinned first, as the server sorts it) that loads the next page
// when its end scrolls into view.
import { useEffect, useRef } from "react";
import type { Project } from "../api/types";
import { useT } from "../i18n";
import { useConversationList } from "../queries";
import { ConversationItem } from "./ConversationItem";

export function ConversationList({
  filter,
  projects,
  empty,
  label,
}: {
  filter: { archived?: boolean; project_id?: string };
  projects: Project[];
  empty: string;
  label: string;
}) {
  const t = useT();
  const q = useConversationList(filter);
  const sentinel = useRef<HTMLLIElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = q;

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !hasNextPage) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) fetchNextPage();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const items = q.data?.pages.flatMap((p) => p.items) ?? [];
  if (q.isSuccess && items.length === 0) return <p className="muted empty-list">{empty}</p>;
  return (
    <ul className="conv-list" aria-label={label}>
      {items.map((c) => (
        <ConversationItem key={c.id} c={c} projects={projects} />
      ))}
      {hasNextPage && (
        <li ref={sentinel} className="muted loading-more">
          {isFetchingNextPage ? t("loadingMore") : ""}
        </li>
      )}
    </ul>
  );
}
