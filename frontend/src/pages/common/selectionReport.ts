/**
 * A report of the selected rows says what those rows are, never what the chat said last: a title that fits
 * (cut at a word, not mid-word), a summary computed from the rows themselves (counts by facet, AI verdicts)
 * and charts that count only the selected rows. Each page says which facets its rows have.
 */
import type { ReportChart } from "../../api/types";
import { DEFAULT_CANDIDATES, informativeness } from "../../charts/defaultChart";
import { cellCategory, type AIColumn } from "./aiColumnState";

export const TITLE_MAX = 200;

/** `text` cut to at most `max` characters at a word boundary, with "…" when it was cut. */
export function fitWords(text: string, max: number): string {
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 3 ? cut.slice(0, space) : cut).replace(/[\s,;:·-]+$/, "")}…`;
}

/** "Shortlist: 3 trials · melanoma · Phase 3" within the report's title limit. */
export function reportTitle(count: number, one: string, query: string): string {
  const head = `Shortlist: ${count} ${count === 1 ? one : `${one}s`}`;
  const q = query.trim();
  return q ? fitWords(`${head} · ${q}`, TITLE_MAX) : head;
}

export interface Facet<Row> {
  label: string;
  /** The charts panel's facet it matches ("phase"): a pinned chart of it is redrawn over the selected rows. */
  chart?: string;
  /** The row's values for this facet (a trial can have two phases). */
  values: (row: Row) => string[];
}

/** Counts of each value over the rows, most frequent first (ties by label). */
export function countBy<Row>(rows: readonly Row[], facet: Facet<Row>): Array<{ label: string; value: number }> {
  const counts = new Map<string, number>();
  for (const row of rows) for (const v of new Set(facet.values(row).filter(Boolean))) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
}

// The fields the charts panel opens with (a short, readable picture), whichever page's they are.
const DEFAULTABLE: ReadonlySet<string> = new Set(Object.values(DEFAULT_CANDIDATES).flat());

/** The one facet worth a chart when none of the pinned ones is known: the most informative over the rows, by
 * the charts panel's own measure, among the facets it would open with (all of them when it would open none). */
function defaultFacet<Row>(rows: readonly Row[], facets: ReadonlyArray<Facet<Row>>): Facet<Row> | undefined {
  const usual = facets.filter((f) => f.chart && DEFAULTABLE.has(f.chart));
  let best: Facet<Row> | undefined;
  let bestScore = -1;
  for (const facet of usual.length ? usual : facets) {
    const points = countBy(rows, facet);
    if (!points.length) continue;
    const missing = rows.filter((r) => !facet.values(r).some(Boolean)).length;
    const score = informativeness({ facet: facet.chart ?? facet.label, label: facet.label, kind: "categorical", multi_valued: false,
      buckets: points.map((p) => ({ value: p.label, count: p.value })), distinct: points.length, basis: rows.length, missing });
    if (score > bestScore + 1e-9) {
      best = facet;
      bestScore = score;
    }
  }
  return best;
}

const list = (points: Array<{ label: string; value: number }>) => points.slice(0, 5).map((p) => `${p.label} ${p.value}`).join(", ");

/** The selected rows' own summary (Markdown) and charts: with charts pinned, those of their facets the rows have
 * (each redrawn over the selected rows), or when the rows have none of them (a pinned Sponsor class chart), the
 * one most informative facet; with none pinned, every facet. */
export function describeSelection<Row>(rows: readonly Row[], rowId: (row: Row) => string, one: string,
                                       facets: ReadonlyArray<Facet<Row>>, aiColumns: readonly AIColumn[],
                                       pinned: readonly string[] = []): { summary: string; charts: ReportChart[] } {
  const known = facets.filter((f) => f.chart && pinned.includes(f.chart));
  const charted = !pinned.length ? null : new Set(known.length ? known : [defaultFacet(rows, facets)]);
  const n = rows.length;
  const lines = [`${n} selected ${n === 1 ? one : `${one}s`}.`];
  const charts: ReportChart[] = [];
  for (const facet of facets) {
    const points = countBy(rows, facet);
    if (!points.length) continue;
    lines.push(`- **${facet.label}**: ${list(points)}${points.length > 5 ? `, and ${points.length - 5} more` : ""}`);
    if (!charted || charted.has(facet)) {
      charts.push({ title: `${facet.label} (${n} selected)`, kind: "bar", points: points.slice(0, 20) });
    }
  }
  for (const column of aiColumns) {
    const counts = new Map<string, number>();
    for (const row of rows) {
      const c = cellCategory(column.type, column.run?.cells[rowId(row)]);
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    const parts = ["yes", "no", "conditional", "needs_review", "unknown", "answered", "pending", "error"].filter((k) => counts.get(k)).map((k) => `${k} ${counts.get(k)}`);
    lines.push(`- **AI column “${column.name}”**: ${parts.join(", ")}`);
  }
  return { summary: lines.join("\n"), charts };
}
