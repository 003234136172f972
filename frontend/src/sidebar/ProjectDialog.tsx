// Create or edit a project (a folder of conversations with shared instructions).
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useNavigate } from "react-router";
import { ApiError } from "../api/client";
import { api } from "../api/endpoints";
import type { Project } from "../api/types";
import { errorText, useT } from "../i18n";
import { keys } from "../queries";
import { Dialog, FormActions } from "../ui/Dialog";

export function ProjectDialog({
  open,
  onClose,
  project,
}: {
  open: boolean;
  onClose: () => void;
  project?: Project;
}) {
  const t = useT();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [instructions, setInstructions] = useState("");
  const [error, setError] = useState("");

  useEffect(() => {
    if (open) {
      setName(project?.name ?? "");
      setInstructions(project?.instructions ?? "");
      setError("");
    }
  }, [open, project]);

  const onSubmit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      const saved = project
        ? await api.patchProject(project.id, { name: name.trim(), instructions })
        : await api.createProject({ name: name.trim(), instructions });
      qc.invalidateQueries({ queryKey: keys.projects });
      onClose();
      if (!project) navigate(`/projects/${saved.id}`);
    } catch (err) {
      setError(err instanceof ApiError ? errorText(t, err.code, err.message) : String(err));
    }
  };

  return (
    <Dialog open={open} onClose={onClose} title={project ? t("editProject") : t("newProject")}>
      <form className="stack-form" onSubmit={onSubmit}>
        <label>
          <span>{t("projectName")}</span>
          <input value={name} required maxLength={120} data-autofocus onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          <span>{t("projectInstructions")}</span>
          <textarea rows={5} maxLength={20000} value={instructions} onChange={(e) => setInstructions(e.target.value)} />
        </label>
        <FormActions
          error={error}
          onCancel={onClose}
          submit={project ? t("save") : t("createProject")}
        />
      </form>
    </Dialog>
  );
}
