/**
 * The view in the URL, so a reload, Back/Forward and a pasted link show the same thing: each page's search
 * (query, filters, sort, page), the row open in the detail panel, and the shell's chat tray (open, and which
 * conversation). Every part owns its own parameters and patches only those, keeping the others: the pages'
 * parts live with each page (`pages/tablizer/tablizerUrl.ts`, `pages/trialscout/trialscoutUrl.ts`).
 */
import { useEffect, useRef } from "react";
import { navigate, useLocation } from "../router";

export type UrlPatch = Record<string, string | null>;

/** The current URL with `patch` applied (null removes a parameter); pushes a history entry when `push`. */
export function patchUrl(patch: UrlPatch, { push = false } = {}): void {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(patch)) {
    if (value == null || value === "") params.delete(key);
    else params.set(key, value);
  }
  const query = params.toString();
  navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, { replace: !push });
}

// -- The chat tray ---------------------------------------------------------------------------------------

/** `chat=1` keeps the tray open; `c=<id>` names its conversation. */
export function chatFromUrl(params: URLSearchParams): { open: boolean; conversation: number | null } {
  const id = Number(params.get("c"));
  return { open: params.get("chat") === "1", conversation: Number.isInteger(id) && id >= 1 && id < 2 ** 31 ? id : null };
}

export function encodeChat(open: boolean, conversation: number | null): UrlPatch {
  return { chat: open ? "1" : null, c: open && conversation != null ? String(conversation) : null };
}

// -- Keeping a page and its URL in step -------------------------------------------------------------------

/**
 * Keeps a page's view and its URL parameters in step. On mount and on Back/Forward (any change to the page's
 * parameters this hook did not write) the page `apply`s what the URL says; when the page's `current` view changes
 * the URL follows, as a new history entry when `entry` (e.g. the search and its page) changed, replacing the current
 * one otherwise (the row open in the panel). `current` null: the page has nothing to say yet (the URL is left as it is).
 */
export function useUrlSync<T>(opts: {
  encode: (view: T) => UrlPatch;
  decode: (params: URLSearchParams) => T;
  current: T | null;
  apply: (view: T) => void;
  entry: (view: T) => string;
}) {
  const { search } = useLocation();
  const optsRef = useRef(opts);
  optsRef.current = opts;
  /** The page's own parameters as it last wrote or applied them: another part's parameters are not the page's. */
  const written = useRef<string | null>(null);
  const lastEntry = useRef<string | null>(null);

  // The page's parameters changed under it (mount, Back/Forward, a pasted link): show what they say. A change to
  // another part's parameters only (the chat tray's `chat`/`c`) is not applied: it says nothing about the page, and
  // may land in the same render as a page change not written yet (a trial opened from a chat answer), which
  // applying the older URL would undo.
  useEffect(() => {
    const view = optsRef.current.decode(new URLSearchParams(search));
    const own = JSON.stringify(view);
    if (written.current === own) return;
    written.current = own;
    lastEntry.current = optsRef.current.entry(view);
    optsRef.current.apply(view);
  }, [search]);

  // The page changed: the URL follows.
  const encoded = opts.current == null ? null : JSON.stringify(opts.encode(opts.current));
  useEffect(() => {
    const { current, encode, entry } = optsRef.current;
    if (current == null || encoded == null) return;
    const key = entry(current);
    patchUrl(encode(current), { push: lastEntry.current != null && key !== lastEntry.current });
    lastEntry.current = key;
    written.current = JSON.stringify(optsRef.current.decode(new URLSearchParams(window.location.search)));
  }, [encoded]);
}
