/** The AI column run's events as the tests send them. */
import type { AIColumnEvent } from "../api/types";

export type RowEvent = Extract<AIColumnEvent, { type: "row" }>;

const DISPLAY: Record<string, string> = { MET: "Yes", NOT_MET: "No", UNKNOWN: "Unknown" };

/** A row's verdict, with a reasoning and a quote named after the row. */
export const row = (
  id: string,
  value: string | null,
  display = value === null ? "Unknown" : DISPLAY[value] ?? value,
  extra: Partial<RowEvent> = {},
): RowEvent => ({
  type: "row",
  id,
  value,
  display,
  reasoning: `why ${id}`,
  evidence: [`quote ${id}`],
  cached: false,
  model: "m",
  parse_error: null,
  ...extra,
});
