import { useCallback, useEffect, useState } from "react";
import { api } from "../api/client";
import type { App, ConversationSummary } from "../api/types";

/** The user's conversations in one app, newest first, with rename and delete. */
export function useConversations(app: App) {
  const [items, setItems] = useState<ConversationSummary[]>([]);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setItems(await api.listConversations(app));
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }, [app]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const rename = useCallback(
    async (id: number, title: string) => {
      setItems((list) => list.map((c) => (c.id === id ? { ...c, title } : c)));
      try {
        await api.renameConversation(id, title);
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
      }
      await refresh();
    },
    [refresh],
  );

  const remove = useCallback(
    async (id: number) => {
      try {
        await api.deleteConversation(id);
        setItems((list) => list.filter((c) => c.id !== id));
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
      }
    },
    [],
  );

  return { items, error, refresh, rename, remove };
}
