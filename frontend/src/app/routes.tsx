// The app's browser routes. The server answers each of these paths with index.html
// (chatmem/web/routes.py SPA_PATHS); a test checks that the two lists agree. /share/:token is
// not in the list: chatmem/sharing/routes.py serves it (index.html with the share's title).
import { createBrowserRouter } from "react-router";
import { ArchiveView } from "../sidebar/ArchiveView";
import { ChatRoute, NewChatRoute } from "../chat/ChatRoute";
import { ProjectView } from "../sidebar/ProjectView";
import { SettingsPage } from "./SettingsPage";
import { LoginPage } from "./LoginPage";
import { MemoryLibrary } from "../memory/MemoryLibrary";
import { SharePage } from "../share/SharePage";
import { CompanionChat } from "../companions/CompanionChat";
import { CompanionInbox } from "../companions/CompanionInbox";
import { AdminPage } from "../admin/AdminPage";
import { Root, SignedIn } from "./Root";
import { WorkspacePage } from "../workspaces/WorkspacePage";

export const ROUTES = [
  "/",
  "/login",
  "/c/:conversationId",
  "/archive",
  "/projects/:projectId",
  "/settings",
  "/memories",
  "/companions",
  "/companions/:agentId",
  "/admin",
  "/admin/:section",
  "/workspaces/:workspaceId",
];

export const router = createBrowserRouter([
  {
    element: <Root />,
    children: [
      { path: "/login", element: <LoginPage /> },
      { path: "/share/:token", element: <SharePage /> },
      {
        element: <SignedIn />,
        children: [
          { path: "/", element: <NewChatRoute /> },
          { path: "/c/:conversationId", element: <ChatRoute /> },
          { path: "/archive", element: <ArchiveView /> },
          { path: "/projects/:projectId", element: <ProjectView /> },
          { path: "/settings", element: <SettingsPage /> },
          { path: "/memories", element: <MemoryLibrary /> },
          { path: "/workspaces/:workspaceId", element: <WorkspacePage /> },
          { path: "/companions", element: <CompanionInbox /> },
          { path: "/companions/:agentId", element: <CompanionChat /> },
          { path: "/admin", element: <AdminPage /> },
          { path: "/admin/:section", element: <AdminPage /> },
        ],
      },
    ],
  },
]);
