/**
 * The result set charts are drawn over: the page's submitted search, and how to fetch its figures.
 * Pages provide it around their content and tray, so a chart card in the conversation draws the same
 * figures as the charts panel beside the table.
 */
import { createContext, useContext } from "react";
import { api } from "../api/client";
import type { FacetStats, StatsResponse } from "../api/types";
import { localFacet, type StatsApp } from "./chartSpec";

export interface StatsScope {
  app: StatsApp;
  /** The search as the stats route takes it (TrialSearchFields / ArticleSearchFields); null: no search yet. */
  search: Record<string, unknown> | null;
  /** Pin a chart to the page's panel (Accept on a chart card). */
  pin?: (data: Record<string, unknown>) => void;
  /** The counts of the page's own facets (`LOCAL_FACETS`) while it holds some, by facet. */
  local?: Readonly<Record<string, LocalCounts>>;
}

export interface LocalCounts {
  stats: FacetStats;
  /** A click on a value (a bar, a slice, a table row) narrows the table to it the page's own way. */
  select?: (value: string) => void;
}

export const StatsScopeContext = createContext<StatsScope | null>(null);

export function useStatsScope(): StatsScope | null {
  return useContext(StatsScopeContext);
}

/** The figures of `facets` over the scope's search; a local facet's are the page's own counts, drawn alone. */
export function fetchStats(scope: StatsScope, facets: string[], filters: Record<string, string[]>, limit: number,
                           signal?: AbortSignal): Promise<StatsResponse> {
  const own = localFacet(scope.app, facets[0]);
  if (own) {
    const counts = scope.local?.[own.facet];
    if (!counts) return Promise.reject(new Error(own.absent));
    const stats = { ...counts.stats, buckets: counts.stats.buckets.slice(0, limit) };
    return Promise.resolve({ facets: [stats], filters: {}, sampled: false, source: "offline", total: stats.basis });
  }
  const body = { search: scope.search ?? {}, facets, filters, limit } as never;
  return scope.app === "trialscout" ? api.trialStats(body, signal) : api.articleStats(body, signal);
}
