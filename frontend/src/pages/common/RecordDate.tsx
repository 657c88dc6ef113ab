import type { ReactNode } from "react";
import { snapshotLabel } from "../../cards/display";

/** A cell's value with the offline corpus's snapshot date under it: a status is only true as of that date. */
export function RecordDate({ text, record }: { text: ReactNode; record: Record<string, unknown> }) {
  const snapshot = snapshotLabel(record);
  return (
    <>
      {text}
      {snapshot && <span className="muted small snapshot-date">{snapshot}</span>}
    </>
  );
}
