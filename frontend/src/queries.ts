// Server state shared by several screens (TanStack Query): the user, conversation lists,
// projects and models, with the invalidations that keep them fresh.
import {
  useInfiniteQuery,
  useQuery,
  useQueryClient,
  type QueryClient,
} from "@tanstack/react-query";
import { api } from "./api/endpoints";
import type { Conversation } from "./api/types";

export const PAGE = 50;

export const keys = {
  me: ["me"] as const,
  conversations: (filter: Record<string, unknown>) => ["conversations", filter] as const,
  allConversations: ["conversations"] as const,
  conversation: (id: string) => ["conversation", id] as const,
  projects: ["projects"] as const,
  models: ["models"] as const,
};

/** The signed-in user, or null for a logged-out visitor. */
export function useMe() {
  return useQuery({
    queryKey: keys.me,
    queryFn: async () => (await api.session()).user,
    retry: false,
    staleTime: 60_000,
  });
}

export function useConversationList(filter: { archived?: boolean; project_id?: string }) {
  return useInfiniteQuery({
    queryKey: keys.conversations(filter),
    queryFn: ({ pageParam }) =>
      api.conversations({ ...filter, limit: PAGE, cursor: pageParam ?? undefined }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
}

export function useConversation(id: string | undefined) {
  return useQuery({
    queryKey: keys.conversation(id || ""),
    queryFn: () => api.conversation(id!),
    enabled: !!id,
    retry: false,
  });
}

export function useProjects() {
  return useQuery({ queryKey: keys.projects, queryFn: api.projects, staleTime: 30_000 });
}

export function useModels() {
  return useQuery({ queryKey: keys.models, queryFn: api.models, staleTime: 5 * 60_000 });
}

export function useInvalidate() {
  const qc = useQueryClient();
  return () => refreshLists(qc);
}

export function refreshLists(qc: QueryClient, id?: string) {
  qc.invalidateQueries({ queryKey: keys.allConversations });
  if (id) qc.invalidateQueries({ queryKey: keys.conversation(id) });
}

/** Put a changed conversation into every cached copy, then refetch the lists. */
export function conversationChanged(qc: QueryClient, c: Conversation) {
  qc.setQueryData(keys.conversation(c.id), c);
  refreshLists(qc);
}

/**
 * After a turn ends the server names the conversation in a background job: refetch a few times
 * until the title changes from the default, so the sidebar shows it as soon as it exists.
 */
export function watchTitle(qc: QueryClient, id: string, defaults: string[]) {
  let tries = 0;
  const tick = async () => {
    tries += 1;
    try {
      const c = await api.conversation(id);
      if (!defaults.includes(c.title)) {
        conversationChanged(qc, c);
        return;
      }
    } catch {
      return;
    }
    if (tries < 8) setTimeout(tick, 400 * tries);
  };
  setTimeout(tick, 300);
}
