// The archive: archived conversations (unarchive or delete them from their menus).
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import { useProjects } from "../queries";
import { ConversationList } from "./ConversationList";

export function ArchiveView() {
  const t = useT();
  const projects = useProjects().data?.items ?? [];
  return (
    <div className="page">
      <TopBar title={t("archived")} />
      <div className="page-body">
        <ConversationList filter={{ archived: true }} projects={projects} empty={t("noArchived")} label={t("archived")} />
      </div>
    </div>
  );
}
