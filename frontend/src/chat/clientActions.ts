/**
 * A page's client actions: what it does when the user clicks a suggested action with handler "client".
 * Each page implements exactly the actions its page config declares (backend/pages/*.py, served by
 * `GET /api/pages`); `pages/clientActions.test.ts` holds every page to that list. The action's `data`
 * (e.g. `{nct_id}`) reaches the handler as the assistant wrote it.
 */
export type ActionData = Readonly<Record<string, unknown>>;

export interface ClientActionHandler {
  run: (data: ActionData) => unknown;
  /** Whether it can run now with this data (a next page exists, an id was given); the button is greyed otherwise. */
  canRun?: (data: ActionData) => boolean;
}

export type ClientActions = Readonly<Record<string, ClientActionHandler>>;

/** A text field of the action's data, trimmed ("" when absent or not text). */
export function dataText(data: ActionData, key: string): string {
  const value = data[key];
  return typeof value === "string" || typeof value === "number" ? String(value).trim() : "";
}

/** `canRun` for an action that needs `key` in its data. */
export const needs = (key: string) => (data: ActionData) => dataText(data, key) !== "";

/** Whether `action` can run on a page with these handlers (declared, implemented, possible now). */
export function canRunAction(actions: ClientActions, action: string, data: ActionData): boolean {
  if (!Object.prototype.hasOwnProperty.call(actions, action)) return false;
  const handler = actions[action];
  return handler.canRun ? handler.canRun(data) : true;
}
