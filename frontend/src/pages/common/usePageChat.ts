/**
 * What Tablizer and TrialScout share in their chat binding. `useResultsUndo`: Accept snapshots the page and
 * its AI columns, so Undo puts both back (an accepted column is removed again). `usePageChat`: the context
 * the tray sends (with the last accepted search), Accept for the page's own cards, the AI column card and
 * the insights' chart and filter cards.
 */
import { useRef } from "react";
import type { App } from "../../api/types";
import type { PageChatBinding } from "../../chat/ChatTray";
import { columnAccepted, useAcceptUndo, type AcceptUndo } from "../../state/undo";
import { columnFromPayload, type AIColumns } from "./aiColumns";

type Handlers = PageChatBinding["payloadHandlers"];

export function useResultsUndo<S>(ai: AIColumns, capture: () => S, restore: (snapshot: S) => void): AcceptUndo {
  return useAcceptUndo(
    () => ({ page: capture(), columnIds: ai.columns.map((c) => c.id) }),
    (s) => {
      restore(s.page);
      for (const c of ai.columns) if (!s.columnIds.includes(c.id)) ai.remove(c.id);
    },
  );
}

export function usePageChat({ app, context, undo, ai, handlers, insights, clientActions, onEntity }: {
  app: App;
  /** The page context as the page builds it; `last_accepted` is added here. */
  context: Record<string, unknown>;
  undo: AcceptUndo;
  ai: AIColumns;
  /** Accept for the page's own suggestion cards (its search). */
  handlers: Handlers;
  /** Accept for the insights' cards (chart, filter_suggestion). */
  insights: Handlers;
  clientActions: PageChatBinding["clientActions"];
  onEntity: PageChatBinding["onEntity"];
}): PageChatBinding {
  const contextRef = useRef(context);
  contextRef.current = undo.lastAccepted ? { ...context, last_accepted: undo.lastAccepted } : context;
  return {
    app,
    getContext: () => contextRef.current,
    payloadHandlers: {
      ...handlers,
      ai_column_suggestion: (data, options) =>
        undo.accept(async () => {
          ai.addSuggestion(data, options?.filter ?? null);
          const accepted = columnAccepted(columnFromPayload(data).name);
          return options?.filter ? { ...accepted, summary: `${accepted.summary}, filtered to Yes` } : accepted;
        }),
      ...insights,
    },
    clientActions,
    onEntity,
  };
}
