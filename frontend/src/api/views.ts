/** Saved views (`/api/views/...`): each page's working state per user, and the views saved by name. */
import { request } from "./client";
import type { components } from "./schema";

export type ViewApp = "tablizer" | "trialscout";
export type SavedView = components["schemas"]["SavedViewRead"];
export type CurrentView = components["schemas"]["CurrentView"];
export type ViewStateJson = Record<string, unknown>;

export const viewsApi = {
  current: (app: ViewApp) => request<CurrentView>("GET", `/api/views/${app}/current`),
  // keepalive: the save flushed on pagehide still reaches the server after the tab closed (a browser's 64 KB cap).
  saveCurrent: (app: ViewApp, state: ViewStateJson) =>
    request<CurrentView>("PUT", `/api/views/${app}/current`, { body: { state }, keepalive: JSON.stringify(state).length < 60_000 }),
  list: (app: ViewApp) => request<SavedView[]>("GET", `/api/views/${app}`).then((r) => (Array.isArray(r) ? r : [])),
  create: (app: ViewApp, name: string, state: ViewStateJson) => request<SavedView>("POST", `/api/views/${app}`, { body: { name, state } }),
  update: (app: ViewApp, id: number, body: { name?: string; state?: ViewStateJson }) =>
    request<SavedView>("PATCH", `/api/views/${app}/${id}`, { body }),
  remove: (app: ViewApp, id: number) => request<void>("DELETE", `/api/views/${app}/${id}`),
};
