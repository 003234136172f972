// The two chat screens: /c/{id} (a conversation, with its inline-thread side panel) and / (a new
// chat, created on the first send, optionally inside a project: /?project={id}).
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useNavigate, useParams, useSearchParams } from "react-router";
import { api } from "../api/endpoints";
import { useApp } from "../app/context";
import { useT } from "../i18n";
import { conversationChanged, useConversation, useProjects } from "../queries";
import { toast } from "../ui/toast";
import { ChatView } from "./ChatView";
import { ModelPicker } from "./ModelPicker";
import { ThreadPanel } from "./ThreadPanel";
import { useInlineThreads, type ThreadRef } from "./threads";
import { ChatTools } from "./ChatTools";
import { TopBar } from "./TopBar";
import { useAuthors } from "../workspaces/api";
import { Icon } from "../ui/Icon";

function HelpButton() {
  const t = useT();
  const { openHelp } = useApp();
  return (
    <button type="button" className="icon-btn help-btn" aria-label={t("keyboardShortcuts")} onClick={openHelp}>
      ?
    </button>
  );
}

export function ChatRoute() {
  const { conversationId } = useParams();
  const [params] = useSearchParams();
  const conv = useConversation(conversationId);
  const qc = useQueryClient();
  const t = useT();
  const [thread, setThread] = useState<ThreadRef | null>(null);
  const threads = useInlineThreads(conversationId);
  const title = conv.data?.title ?? "";
  const authors = useAuthors(conv.data?.workspace_id || undefined);

  useEffect(() => setThread(null), [conversationId]);
  useEffect(() => {
    document.title = title ? `${title} · chatmem` : "chatmem";
  }, [title]);

  const setModel = async (model: string) => {
    if (!conversationId) return;
    try {
      conversationChanged(qc, await api.patchConversation(conversationId, { model }));
    } catch (e) {
      toast(String(e), "error");
    }
  };

  return (
    <div className={`chat-page ${thread ? "with-thread" : ""}`}>
      <div className="chat-column">
        <TopBar title={title || (conv.isError ? t("err_not_found") : "")}>
          {conv.data && <ModelPicker value={conv.data.model_id} onChange={setModel} />}
          {conv.data && conversationId && <ChatTools cid={conversationId} />}
          <HelpButton />
        </TopBar>
        <ChatView
          cid={conversationId}
          model={conv.data?.model_id || undefined}
          target={params.get("m")}
          onThread={setThread}
          threads={threads.data}
          openThread={thread?.id}
          authors={authors}
        />
      </div>
      {thread && conversationId && (
        <ThreadPanel id={thread.id} quote={thread.quote} model={conv.data?.model_id} onClose={() => setThread(null)} />
      )}
    </div>
  );
}

export function NewChatRoute() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const projectId = params.get("project") || undefined;
  const project = useProjects().data?.items.find((p) => p.id === projectId);
  const [model, setModel] = useState("");

  useEffect(() => {
    document.title = "chatmem";
  }, []);

  return (
    <div className="chat-page">
      <div className="chat-column">
        <TopBar title={project ? project.name : t("newChat")} icon={project && (project.emoji || <Icon name="folder" />)}>
          <ModelPicker value={model} onChange={setModel} />
          <HelpButton />
        </TopBar>
        <ChatView
          create={async () =>
            (await api.createConversation({ ...(model ? { model } : {}), ...(projectId ? { project_id: projectId } : {}) })).id
          }
          onCreated={(id) => navigate(`/c/${id}`)}
          model={model || undefined}
          empty={
            <div className="empty-state">
              <div className="brand big" aria-hidden="true">◆</div>
              <h2>{t("emptyChatTitle")}</h2>
            </div>
          }
        />
      </div>
    </div>
  );
}
