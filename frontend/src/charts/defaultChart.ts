/**
 * The chart a panel opens with: the candidate field that says the most about this result set, not always
 * the first one. A field whose records all share one value (Phase on a Phase-3-only search) is one bar and
 * says nothing; among the rest, the one whose counts are spread most evenly over the most values wins.
 */
import type { FacetStats } from "../api/types";
import type { StatsApp } from "./chartSpec";
import { fetchStats, type StatsScope } from "./statsScope";

/** Fields a first chart can show at a glance (a sponsor or MeSH term list is a long tail, not a picture). */
export const DEFAULT_CANDIDATES: Readonly<Record<StatsApp, readonly string[]>> = {
  trialscout: ["phase", "status", "start_year", "study_type", "sponsor_class", "intervention_type", "enrollment"],
  tablizer: ["year", "publication_type"],
};

// Past about eight values a chart does not read better for having more: the score stops growing there, so a
// long run of years does not beat a well-spread phase by its length alone.
const MAX_BITS = Math.log2(8);

/** How much a field's counts tell apart, in bits: their entropy (the values past the limit as one), capped,
 * scaled by the share of records that have a value at all. Zero for a field with a single value. */
export function informativeness(stats: FacetStats): number {
  const counts = [...stats.buckets.map((b) => b.count), stats.other ?? 0].filter((n) => n > 0);
  const total = counts.reduce((a, b) => a + b, 0);
  if (stats.distinct < 2 || counts.length < 2 || total === 0) return 0;
  const bits = -counts.reduce((sum, n) => sum + (n / total) * Math.log2(n / total), 0);
  const covered = stats.basis > 0 ? Math.max(0, stats.basis - stats.missing) / stats.basis : 1;
  return Math.min(bits, MAX_BITS) * covered;
}

/** The most informative of `candidates` (earlier ones win ties); the first when none tells anything apart. */
export function pickFacet(stats: readonly FacetStats[], candidates: readonly string[]): string {
  let best = candidates[0];
  let bestScore = 0;
  for (const facet of candidates) {
    const found = stats.find((s) => s.facet === facet);
    const score = found ? informativeness(found) : 0;
    if (score > bestScore + 1e-9) {
      best = facet;
      bestScore = score;
    }
  }
  return best;
}

/** The facet to open the panel with for the page's search (the first candidate without one, or on error). */
export async function defaultFacet(scope: StatsScope): Promise<string> {
  const candidates = DEFAULT_CANDIDATES[scope.app];
  if (!scope.search) return candidates[0];
  try {
    const response = await fetchStats(scope, [...candidates], {}, 12);
    return pickFacet(response.facets, candidates);
  } catch {
    return candidates[0];
  }
}
