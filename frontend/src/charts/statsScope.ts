/**
 * The result set charts are drawn over: the page's submitted search, and how to fetch its figures.
 * Pages provide it around their content and tray, so a chart card in the conversation draws the same
 * figures as the charts panel beside the table.
 */
import { createContext, useContext } from "react";
import { api } from "../api/client";
import type { StatsResponse } from "../api/types";
import type { StatsApp } from "./chartSpec";

export interface StatsScope {
  app: StatsApp;
  /** The search as the stats route takes it (TrialSearchFields / ArticleSearchFields); null: no search yet. */
  search: Record<string, unknown> | null;
  /** Pin a chart to the page's panel (Accept on a chart card). */
  pin?: (data: Record<string, unknown>) => void;
}

export const StatsScopeContext = createContext<StatsScope | null>(null);

export function useStatsScope(): StatsScope | null {
  return useContext(StatsScopeContext);
}

export function fetchStats(scope: StatsScope, facets: string[], filters: Record<string, string[]>, limit: number,
                           signal?: AbortSignal): Promise<StatsResponse> {
  const body = { search: scope.search ?? {}, facets, filters, limit } as never;
  return scope.app === "trialscout" ? api.trialStats(body, signal) : api.articleStats(body, signal);
}
