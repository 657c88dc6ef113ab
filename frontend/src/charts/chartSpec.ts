/**
 * What a chart shows: a facet of the page's result set, drawn as one kind of chart, optionally
 * narrowed by facet filters and split by a second facet (stacked bars). The chat's `chart` payload
 * carries the same fields (backend/payloads/charts.py), so an accepted card is pinned as it is.
 */
import {
  interventionTypeLabel,
  phaseLabel,
  sponsorClassLabel,
  statusLabel,
  studyTypeLabel,
} from "../api/trialVocabulary";

export type ChartKind = "bar" | "stacked_bar" | "pie" | "donut" | "histogram" | "timeline" | "map";
export type StatsApp = "trialscout" | "tablizer";

export interface ChartSpec {
  id: string;
  kind: ChartKind;
  facet: string;
  /** stacked_bar: the facet each bar is split by. */
  stackBy?: string;
  filters: Record<string, string[]>;
  title?: string;
}

export const CHART_KINDS: ReadonlyArray<{ kind: ChartKind; label: string }> = [
  { kind: "bar", label: "Bar" },
  { kind: "stacked_bar", label: "Stacked bar" },
  { kind: "pie", label: "Pie" },
  { kind: "donut", label: "Donut" },
  { kind: "histogram", label: "Histogram" },
  { kind: "timeline", label: "Timeline" },
  { kind: "map", label: "World map" },
];

export const FACETS: Readonly<Record<StatsApp, ReadonlyArray<{ facet: string; label: string; kind: ChartKind }>>> = {
  trialscout: [
    { facet: "phase", label: "Phase", kind: "bar" },
    { facet: "status", label: "Status", kind: "bar" },
    { facet: "study_type", label: "Study type", kind: "donut" },
    { facet: "sponsor_class", label: "Sponsor class", kind: "pie" },
    { facet: "sponsor", label: "Lead sponsor", kind: "bar" },
    { facet: "enrollment", label: "Enrollment", kind: "histogram" },
    { facet: "start_year", label: "Start year", kind: "timeline" },
    { facet: "condition", label: "Condition", kind: "bar" },
    { facet: "intervention_type", label: "Intervention type", kind: "bar" },
    { facet: "country", label: "Country", kind: "map" },
  ],
  tablizer: [
    { facet: "year", label: "Publication year", kind: "timeline" },
    { facet: "journal", label: "Journal", kind: "bar" },
    { facet: "publication_type", label: "Publication type", kind: "bar" },
    { facet: "mesh", label: "MeSH term", kind: "bar" },
  ],
};

/**
 * Facets a page counts itself, from what it holds rather than from its search's statistics
 * (`StatsScope.local` carries their counts while it holds some): TrialScout's fit column, the verdicts of
 * the loaded screening. `absent` says what to do when a chart of one has nothing to count.
 */
export const LOCAL_FACETS: Readonly<Record<StatsApp, ReadonlyArray<{ facet: string; label: string; kind: ChartKind; absent: string }>>> = {
  trialscout: [{ facet: "fit", label: "Fit", kind: "bar", absent: "Load a screened patient to chart the verdicts of its screening." }],
  tablizer: [],
};

/** Chart kinds that draw a local facet's categories (it has no filters to stack by, no bins, no places). */
export const LOCAL_KINDS: ReadonlySet<ChartKind> = new Set(["bar", "pie", "donut"]);

export function localFacet(app: StatsApp, facet: string) {
  return LOCAL_FACETS[app].find((f) => f.facet === facet);
}

export function facetLabel(app: StatsApp, facet: string): string {
  return (FACETS[app].find((f) => f.facet === facet) ?? localFacet(app, facet))?.label ?? facet.replace(/_/g, " ");
}

const VALUE_LABELS: Readonly<Record<string, (value: string) => string>> = {
  phase: phaseLabel,
  status: statusLabel,
  study_type: studyTypeLabel,
  sponsor_class: sponsorClassLabel,
  intervention_type: interventionTypeLabel,
  enrollment: (v) => `${v.replace("-", "–")} participants`,
  fit: (v) => v.charAt(0) + v.slice(1).toLowerCase().replace(/_/g, " "), // NOT_RELEVANT → Not relevant
};

/** A bucket's readable name: "Phase 3", not PHASE3. */
export function valueLabel(facet: string, value: string): string {
  return (VALUE_LABELS[facet] ?? String)(value) || value;
}

let nextId = 1;

function stringLists(value: unknown): Record<string, string[]> {
  if (!value || typeof value !== "object" || Array.isArray(value)) return {};
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const list = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string" && x !== "");
    if (list.length) out[k] = list;
  }
  return out;
}

/** A `chart` payload's data as a spec for this page, or an Error saying why it cannot be drawn here. */
export function chartFromPayload(app: StatsApp, data: Record<string, unknown>): ChartSpec {
  const facet = typeof data.facet === "string" ? data.facet : "";
  const known = FACETS[app].find((f) => f.facet === facet);
  if (!known) throw new Error(`This page has no "${facet}" chart; it charts ${FACETS[app].map((f) => f.facet).join(", ")}.`);
  const kind = CHART_KINDS.some((k) => k.kind === data.kind) ? (data.kind as ChartKind) : known.kind;
  const stackBy = typeof data.stack_by === "string" && FACETS[app].some((f) => f.facet === data.stack_by)
    ? data.stack_by : undefined;
  return {
    id: `chart-${nextId++}`,
    kind: kind === "stacked_bar" && !stackBy ? "bar" : kind,
    facet,
    stackBy,
    filters: stringLists(data.filters),
    title: typeof data.title === "string" && data.title.trim() ? data.title.trim() : undefined,
  };
}

export function newChart(app: StatsApp, facet: string, kind?: ChartKind): ChartSpec {
  const known = FACETS[app].find((f) => f.facet === facet) ?? localFacet(app, facet);
  return { id: `chart-${nextId++}`, kind: kind ?? known?.kind ?? "bar", facet, filters: {} };
}

export function chartTitle(app: StatsApp, spec: ChartSpec): string {
  if (spec.title) return spec.title;
  const base = `${facetLabel(app, spec.facet)}${spec.stackBy ? ` by ${facetLabel(app, spec.stackBy).toLowerCase()}` : ""}`;
  const narrowed = Object.entries(spec.filters).map(([f, vs]) => `${facetLabel(app, f)}: ${vs.map((v) => valueLabel(f, v)).join(", ")}`);
  return narrowed.length ? `${base} (${narrowed.join("; ")})` : base;
}
