/** What a tray keeps in the browser between mounts: the app's open conversation and an unsent first send. */
import type { App, ChatRequest } from "../api/types";

const storageKey = (app: App) => `colleague.conversation.${app}`;

export function rememberConversation(app: App, id: number | null): void {
  try {
    if (id == null) localStorage.removeItem(storageKey(app));
    else localStorage.setItem(storageKey(app), String(id));
  } catch {
    // storage unavailable (private mode): nothing to remember
  }
}

export function rememberedConversation(app: App): number | null {
  try {
    const raw = localStorage.getItem(storageKey(app));
    const id = raw ? Number(raw) : NaN;
    return Number.isFinite(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * A send that starts a new conversation, kept for this tab until its first event names the conversation.
 * The tray may unmount before then (switching app, a reload): the next tray of the app sends it again under
 * the same Idempotency-Key, which attaches to the turn the server started (or starts it, if the first never
 * arrived), so the answer is never orphaned in a conversation the tray does not know.
 */
export interface PendingSend {
  body: ChatRequest;
  key: string;
}

const pendingKey = (app: App) => `colleague.pending-send.${app}`;
const pendingInMemory = new Map<App, PendingSend>(); // when sessionStorage is unavailable

export function keepPendingSend(app: App, pending: PendingSend | null): void {
  if (pending) pendingInMemory.set(app, pending);
  else pendingInMemory.delete(app);
  try {
    if (pending) sessionStorage.setItem(pendingKey(app), JSON.stringify(pending));
    else sessionStorage.removeItem(pendingKey(app));
  } catch {
    // storage unavailable or full: the in-memory copy still covers switching app
  }
}

export function pendingSend(app: App): PendingSend | null {
  try {
    const raw = sessionStorage.getItem(pendingKey(app));
    if (raw) {
      const parsed = JSON.parse(raw) as Partial<PendingSend>;
      if (parsed && typeof parsed.key === "string" && parsed.body && typeof parsed.body.message === "string") {
        return { body: parsed.body, key: parsed.key };
      }
    }
  } catch {
    // fall back to memory
  }
  return pendingInMemory.get(app) ?? null;
}
