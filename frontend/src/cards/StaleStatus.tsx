import { staleStatusDate } from "./display";

/** Beside a trial's status and its snapshot date: a visible warning when that copy is over a year old and the
 * status one a trial moves on from. */
export function StaleStatus({ record }: { record: Record<string, unknown> }) {
  const date = staleStatusDate(record);
  if (!date) return null;
  return (
    <span className="stale-status" data-testid="stale-status" title={`This status is as ClinicalTrials.gov had it on ${date}, over a year ago.`}>
      status may be out of date
    </span>
  );
}
