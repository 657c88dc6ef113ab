/** Statistics the chart tests draw. */
import type { FacetStats, StatsResponse } from "../api/types";

export const phases: FacetStats = {
  facet: "phase", label: "Phase", kind: "categorical", multi_valued: true, distinct: 3, missing: 4, basis: 40,
  other: 0, sampled: false, note: null,
  buckets: [{ value: "PHASE2", count: 20 }, { value: "PHASE3", count: 12 }, { value: "EARLY_PHASE1", count: 1 }],
};

export function stats(facet: FacetStats): StatsResponse {
  return { source: "offline", total: facet.basis, filters: {}, facets: [facet], sampled: false, note: null };
}
