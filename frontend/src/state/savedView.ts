/**
 * A page's working state saved in the database as it changes (debounced), and restored on mount: a reload
 * or another device (a fresh browser, the same user) shows the same search, columns, filters, sort, charts
 * and selection. A URL that names a search of its own (a pasted link, Back/Forward) wins over the saved
 * state; the saved state is then overwritten by what the page shows.
 */
import { useEffect, useRef, useState } from "react";
import { viewsApi, type ViewApp, type ViewStateJson } from "../api/views";

export const SAVE_DELAY_MS = 700;

/** Calls `fn` once `delay` ms after the last `schedule`; `flush` runs a pending call at once. */
export function debouncer(fn: () => void, delay: number) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return {
    schedule() {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        fn();
      }, delay);
    },
    flush() {
      if (!timer) return;
      clearTimeout(timer);
      timer = null;
      fn();
    },
    get pending() {
      return timer !== null;
    },
  };
}

export type SaveStatus = "loading" | "saved" | "saving" | "error";

/**
 * `state`: the page's view as JSON (null while it has nothing to keep). `restore` gets the saved state on
 * mount unless `urlWins(saved)` (the URL names another search than the saved one); saving waits for the promise it returns. Returns the save status, for a quiet "Saved" note.
 */
export function useSavedView(app: ViewApp, state: ViewStateJson | null, restore: (state: ViewStateJson) => void | Promise<unknown>,
                             urlWins: (saved: ViewStateJson) => boolean): SaveStatus {
  const [status, setStatus] = useState<SaveStatus>("loading");
  const loaded = useRef(false);
  const encoded = state == null ? null : JSON.stringify(state);
  const lastSaved = useRef<string | null>(null);
  const latest = useRef(encoded);
  latest.current = encoded;
  const restoreRef = useRef(restore);
  restoreRef.current = restore;
  const urlWinsRef = useRef(urlWins);

  const saver = useRef(
    debouncer(() => {
      const body = latest.current;
      if (body == null || body === lastSaved.current) return;
      lastSaved.current = body;
      setStatus("saving");
      viewsApi.saveCurrent(app, JSON.parse(body) as ViewStateJson).then(
        () => setStatus(latest.current === body ? "saved" : "saving"),
        () => {
          lastSaved.current = null; // try again with the next change
          setStatus("error");
        },
      );
    }, SAVE_DELAY_MS),
  );

  useEffect(() => {
    let live = true;
    viewsApi.current(app).then(
      (view) => {
        if (!live) return;
        const done = () => {
          loaded.current = true; // saving starts once the page shows the restored view, not its steps there
          if (live) setStatus("saved");
        };
        if (view.state && !urlWinsRef.current(view.state)) {
          lastSaved.current = JSON.stringify(view.state);
          void Promise.resolve(restoreRef.current(view.state)).finally(done);
        } else done();
      },
      () => {
        if (!live) return;
        loaded.current = true;
        setStatus("error");
      },
    );
    const saverNow = saver.current;
    const flush = () => saverNow.flush();
    window.addEventListener("pagehide", flush);
    return () => {
      live = false;
      window.removeEventListener("pagehide", flush);
      saverNow.flush();
    };
  }, [app]);

  useEffect(() => {
    if (!loaded.current || encoded == null || encoded === lastSaved.current) return;
    saver.current.schedule();
  }, [encoded, status]);

  return status;
}
