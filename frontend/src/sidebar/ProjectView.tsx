// A project: its instructions, its conversations, and a new chat inside it.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate, useParams } from "react-router";
import { api } from "../api/endpoints";
import { TopBar } from "../chat/TopBar";
import { useT } from "../i18n";
import { keys, refreshLists, useProjects } from "../queries";
import { ConfirmDialog } from "../ui/Dialog";
import { ConversationList } from "./ConversationList";
import { ProjectDialog } from "./ProjectDialog";
import { Icon } from "../ui/Icon";

export function ProjectView() {
  const t = useT();
  const { projectId } = useParams();
  const projects = useProjects();
  const project = projects.data?.items.find((p) => p.id === projectId);
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);

  if (projects.isSuccess && !project) {
    return (
      <div className="page">
        <TopBar title={t("projects")} />
        <p className="page-body muted">{t("err_not_found")}</p>
      </div>
    );
  }
  if (!project) return <div className="page" aria-busy="true" />;
  return (
    <div className="page">
      <TopBar title={project.name} icon={project.emoji || <Icon name="folder" />} />
      <div className="page-body">
        {project.instructions && <p className="project-instructions">{project.instructions}</p>}
        {/* in the page, not the top bar: at 390 px the bar had no room for them and the title */}
        <div className="project-actions">
          <button type="button" className="primary" onClick={() => navigate(`/?project=${project.id}`)}>
            + {t("newChat")}
          </button>
          <button type="button" onClick={() => setEditing(true)}>
            {t("editProject")}
          </button>
          <button type="button" className="danger" onClick={() => setDeleting(true)}>
            {t("deleteProject")}
          </button>
        </div>
        <ConversationList
          filter={{ project_id: project.id }}
          projects={projects.data?.items ?? []}
          empty={t("projectEmpty")}
          label={project.name}
        />
      </div>
      <ProjectDialog open={editing} onClose={() => setEditing(false)} project={project} />
      <ConfirmDialog
        open={deleting}
        title={t("deleteProjectTitle")}
        body={t("deleteProjectBody")}
        confirm={t("deleteProject")}
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await api.deleteProject(project.id);
          qc.invalidateQueries({ queryKey: keys.projects });
          refreshLists(qc);
          navigate("/");
        }}
      />
    </div>
  );
}
