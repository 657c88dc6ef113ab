/** Counts in words: "1 trial", "24 trials", "24 results · showing 1–24", "3 of 24 match the AI column filters". */

const NUMBER = (n: number) => n.toLocaleString("en-US");

/** "1 trial" / "2 trials" ("1 study" / "2 studies" with `many`). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${NUMBER(n)} ${n === 1 ? one : many}`;
}

/**
 * The results line of a live page: the total, the rows of this page, and — when AI column filters hide some
 * of them — how many of those are shown: "24 results · showing 1–24", "24 results · page rows 1–24 · 3 match
 * the AI column filters".
 */
export function resultsSummary(opts: {
  total: number | null;
  first: number;
  loaded: number;
  visible: number;
  filtering: boolean;
  one: string;
  many?: string;
  /** What filters the rows, when not only AI columns ("the verdict filter"). */
  filters?: string;
}): string {
  const { total, first, loaded, visible, filtering, one, many, filters = "the AI column filters" } = opts;
  const head = total != null ? plural(total, one, many) : (many ?? `${one}s`).replace(/^./, (c) => c.toUpperCase());
  if (!loaded) return head;
  const range = `${NUMBER(first)}–${NUMBER(first + loaded - 1)}`;
  if (!filtering) return `${head} · showing ${range}`;
  return `${head} · ${range} loaded · ${visible === loaded ? "all" : NUMBER(visible)} of ${NUMBER(loaded)} match ${filters}`;
}
