/** The result of a save on the streams page (busy, saved or failed), and the line that reports it. */

export interface Outcome {
  busy: boolean;
  error: string | null;
  saved: string | null;
}
export const idle: Outcome = { busy: false, error: null, saved: null };

export const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** "Saved." as a status, or the error as an alert; `testid` names both (`${testid}-status`, `${testid}-error`). */
export function OutcomeText({ outcome, testid }: { outcome: Outcome; testid: string }) {
  return (
    <>
      {outcome.saved && (
        <span className="ok-text" role="status" data-testid={`${testid}-status`}>
          {outcome.saved}
        </span>
      )}
      {outcome.error && (
        <span className="error-text" role="alert" data-testid={`${testid}-error`}>
          {outcome.error}
        </span>
      )}
    </>
  );
}
