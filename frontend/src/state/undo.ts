/**
 * Undo for an accepted card. Applying a card (a PubMed query, a trial search, an AI column) replaces what the
 * page shows, so the page snapshots its state first; the change is described on the card and in the results
 * summary ("Replaced 'lung cancer' (24) → 'EGFR…' (2) · Undo"), and Undo puts the snapshot back. A search's
 * outcome also travels to the assistant with the next turn as the page context's `last_accepted`.
 */
import { useCallback, useRef, useState } from "react";

/** What the page context carries about the last accepted search (read by the backend and the demo model). */
export interface LastAccepted {
  type: string;
  query: string;
  result_count: number | null;
  previous_query: string | null;
  previous_result_count: number | null;
}

/** What a payload handler reports back to the tray: the change in words, and how to undo it. */
export interface AcceptOutcome {
  summary: string;
  undo: () => void;
  /** "undone" (from the card or from the page), "final" (the page changed by hand since), or "active". */
  state: () => AcceptState;
}

export type AcceptState = "active" | "undone" | "final";

/** One accepted card the page can still undo. */
export interface AcceptRecord {
  id: number;
  summary: string;
  /** For searches: what reaches the assistant; null for changes that are not a search (an AI column). */
  accepted: LastAccepted | null;
  undone: boolean;
}

const QUOTE_MAX = 40;

/** "lung cancer" → "'lung cancer'"; long queries are cut with an ellipsis. */
export function quoteQuery(query: string): string {
  const q = query.replace(/\s+/g, " ").trim();
  return `'${q.length > QUOTE_MAX ? `${q.slice(0, QUOTE_MAX - 1)}…` : q}'`;
}

const countText = (n: number | null) => (n == null ? "?" : n.toLocaleString("en-US"));

/** "Replaced 'lung cancer' (24) → 'EGFR…' (2)", or "Searched 'EGFR…' (2)" when there was no search before. */
export function describeAccepted(a: LastAccepted): string {
  const now = `${quoteQuery(a.query)} (${countText(a.result_count)})`;
  if (a.previous_query == null || a.previous_query.trim() === "") return `Searched ${now}`;
  return `Replaced ${quoteQuery(a.previous_query)} (${countText(a.previous_result_count)}) → ${now}`;
}

/** What accepting a search card reports: the change in words, and the search as the assistant is told it. */
export function searchAccepted(
  type: string,
  query: string,
  count: number | null,
  previous: { query: string; count: number | null } | null,
): { summary: string; accepted: LastAccepted } {
  const accepted: LastAccepted = {
    type,
    query,
    result_count: count,
    previous_query: previous?.query ?? null,
    previous_result_count: previous?.count ?? null,
  };
  return { summary: describeAccepted(accepted), accepted };
}

/** What accepting an AI column card reports (not a search: nothing for the assistant). */
export function columnAccepted(name: string): { summary: string; accepted: null } {
  return { summary: `Added AI column ${quoteQuery(name)}`, accepted: null };
}

/**
 * The page's undo stack for accepted cards (newest last). `accept` takes the snapshot, applies the card and
 * records what changed; `undo` restores the snapshot of that record and of every later one (undoing an older
 * accept puts the page back as it was before it).
 */
export function useAcceptUndo<S>(capture: () => S, restore: (snapshot: S) => void) {
  const [records, setRecords] = useState<AcceptRecord[]>([]);
  const snapshots = useRef(new Map<number, S>());
  const undoneIds = useRef(new Set<number>());
  const nextId = useRef(1);
  const captureRef = useRef(capture);
  captureRef.current = capture;
  const restoreRef = useRef(restore);
  restoreRef.current = restore;

  const stateOf = useCallback(
    (id: number): AcceptState => (undoneIds.current.has(id) ? "undone" : snapshots.current.has(id) ? "active" : "final"),
    [],
  );

  const undo = useCallback((id: number) => {
    const snapshot = snapshots.current.get(id);
    if (snapshot === undefined) return;
    restoreRef.current(snapshot);
    for (const key of [...snapshots.current.keys()]) {
      if (key < id) continue;
      snapshots.current.delete(key);
      undoneIds.current.add(key);
    }
    setRecords((list) => list.map((r) => (r.id >= id ? { ...r, undone: true } : r)));
  }, []);

  /** Snapshot, apply (which reports what it did), record. A handler that throws changes nothing here. */
  const accept = useCallback(
    async (apply: () => Promise<{ summary: string; accepted: LastAccepted | null }>): Promise<AcceptOutcome> => {
      const snapshot = captureRef.current();
      const { summary, accepted } = await apply();
      const id = nextId.current++;
      snapshots.current.set(id, snapshot);
      setRecords((list) => [...list, { id, summary, accepted, undone: false }]);
      return { summary, undo: () => undo(id), state: () => stateOf(id) };
    },
    [undo, stateOf],
  );

  /** The user changed the page by hand: earlier accepts can no longer be undone without losing that. */
  const forget = useCallback(() => {
    snapshots.current.clear();
    setRecords([]);
  }, []);

  const latest = [...records].reverse().find((r) => !r.undone) ?? null;
  const lastAccepted = [...records].reverse().find((r) => !r.undone && r.accepted)?.accepted ?? null;
  return { records, latest, lastAccepted, accept, undo, forget };
}

export type AcceptUndo = ReturnType<typeof useAcceptUndo>;
