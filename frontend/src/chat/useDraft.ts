/**
 * The message being typed, kept per app and conversation (localStorage), so closing the tray, switching
 * conversation or page, or a reload never throws a draft away. Sending clears it.
 */
import { useCallback, useEffect, useState } from "react";
import type { App } from "../api/types";

export const draftKey = (app: App, conversationId: number | null) =>
  `colleague.draft.${app}.${conversationId ?? "new"}`;

function read(key: string): string {
  try {
    return localStorage.getItem(key) ?? "";
  } catch {
    return "";
  }
}

function write(key: string, text: string): void {
  try {
    if (text) localStorage.setItem(key, text);
    else localStorage.removeItem(key);
  } catch {
    // storage unavailable: the draft lives as long as the tray
  }
}

export function useDraft(app: App, conversationId: number | null): [string, (text: string) => void] {
  const key = draftKey(app, conversationId);
  const [state, setState] = useState(() => ({ key, text: read(key) }));
  // Another conversation: its own draft (derived during render, so the box never shows the old one). A new
  // conversation that just got its id keeps what was typed meanwhile.
  const current = state.key === key ? state : { key, text: read(key) || (state.key.endsWith(".new") ? state.text : "") };
  useEffect(() => {
    if (state.key === key) return;
    if (current.text && !read(key)) {
      write(key, current.text);
      if (state.key.endsWith(".new")) write(state.key, "");
    }
    setState(current);
  }, [key, state.key, current]);
  const setDraft = useCallback(
    (text: string) => {
      write(key, text);
      setState({ key, text });
    },
    [key],
  );
  return [current.text, setDraft];
}
