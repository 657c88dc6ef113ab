/**
 * What Tablizer and TrialScout share around their results: one search in flight at a time, and the row
 * open in the detail panel (from the table, a chat entity link, or a deep link such as /tablizer?pmid=123).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../../api/client";
import { navigate, useLocation } from "../../router";
import { patchUrl } from "../../state/urlState";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * `run` aborts the search in flight and starts another; only the latest one clears `loading`, and an
 * aborted one sets no `error`. Unmounting aborts the search in flight.
 */
export function useLatestSearch() {
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const abortRef = useRef<AbortController | null>(null);

  useEffect(() => () => abortRef.current?.abort(), []);

  const run = useCallback(async (search: (signal: AbortSignal) => Promise<void>) => {
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    setLoading(true);
    setError(null);
    try {
      await search(controller.signal);
    } catch (err) {
      if (!controller.signal.aborted) setError(message(err));
    } finally {
      if (abortRef.current === controller) {
        abortRef.current = null;
        setLoading(false);
      }
    }
  }, []);

  return { loading, error, setError, run };
}

export interface Viewer<T> {
  id: string;
  /** What the page knew of the row at once, then the full record. */
  item: T | null;
  loading: boolean;
  error: string | null;
}

/** Where a page's detail panel gets a full record; a module-level constant, so `open` stays the same function. */
export interface RowSource<T> {
  fetch: (id: string) => Promise<T>;
  notFound: (id: string) => string;
  /** The table row's element id, scrolled into view when the row opens. */
  rowDomId: (id: string) => string;
}

/** The row open in the detail panel and the row highlighted in the table. */
export function useRowViewer<T extends object>(source: RowSource<T>) {
  const [viewer, setViewer] = useState<Viewer<T> | null>(null);
  const [highlighted, setHighlighted] = useState<string | null>(null);

  /** Shows `known` (what the page already has) at once, scrolls to the row, and fetches the full record. */
  const open = useCallback(
    async (id: string, known: T | null) => {
      setViewer({ id, item: known, loading: true, error: null });
      setHighlighted(id);
      requestAnimationFrame(() => document.getElementById(source.rowDomId(id))?.scrollIntoView?.({ block: "center", behavior: "smooth" }));
      try {
        const item = await source.fetch(id);
        setViewer((v) => (v?.id === id ? { ...v, item: { ...known, ...item }, loading: false } : v));
      } catch (err) {
        const text = err instanceof ApiError && err.status === 404 ? source.notFound(id) : message(err);
        setViewer((v) => (v?.id === id ? { ...v, loading: false, error: text } : v));
      }
    },
    [source],
  );
  const close = useCallback(() => setViewer(null), []);

  return { viewer, highlighted, open, close };
}

/** Opens the row a deep link names (`path?param=id`, an entity link opened in a new tab), then drops the parameter. */
export function useDeepLink(param: string, path: string, open: (id: string) => unknown) {
  const { params } = useLocation();
  const linked = params.get(param);
  useEffect(() => {
    if (!linked) return;
    void open(linked);
    // The link becomes the page's own `open` (so the URL state keeps the row open); the rest of the URL stays.
    if (window.location.pathname === path) patchUrl({ [param]: null, open: linked });
    else navigate(path, { replace: true });
  }, [linked, open, path, param]);
}
