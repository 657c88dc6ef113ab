import { staleStatusDate } from "./display";

/** Beside a trial's status: a visible warning when the status was copied over a year ago and may have changed. */
export function StaleStatus({ record }: { record: Record<string, unknown> }) {
  const date = staleStatusDate(record);
  if (!date) return null;
  return (
    <span className="stale-status" data-testid="stale-status" title={`This status is as ClinicalTrials.gov had it on ${date}.`}>
      as of {date}: status may be out of date
    </span>
  );
}
