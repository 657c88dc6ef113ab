/** The assistant's screening cards: a profile edit (Accept saves a new profile version), a new screening
 * (Accept starts it in the patient panel), and a built report (links to its HTML and PDF). */
import { CardShell } from "./CardShell";
import { asList, asText, displayValue } from "./display";
import type { PayloadCardProps } from "./types";

export function ProfileEditCard(props: PayloadCardProps<"patient_profile_edit">) {
  const { changes, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested profile edit" suggestion>
      <ul className="profile-changes" data-testid="card-profile-changes">
        {asList(changes).map((c, i) => {
          const change = (c ?? {}) as Record<string, unknown>;
          return (
            <li key={i}>
              <strong>{asText(change.field).replace(/_/g, " ").replace(/\./g, " › ")}</strong>: <span>{displayValue(change.before) || "—"}</span>
              {" → "}
              <span>{displayValue(change.after) || "—"}</span>
            </li>
          );
        })}
      </ul>
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}

export function ScreeningProposalCard(props: PayloadCardProps<"screening_proposal">) {
  const { request, trials, explanation } = props.payload.data;
  const list = asList(trials) as Array<Record<string, unknown>>;
  const fromProfile = !request || asList(request.nct_ids).length === 0;
  return (
    <CardShell {...props} title="Suggested screening" suggestion>
      {fromProfile ? (
        <p>Search for trials from the patient&apos;s profile and screen them.</p>
      ) : (
        <ul className="card-trials" data-testid="card-screening-trials">
          {list.map((t) => (
            <li key={asText(t.nct_id)}>
              <span className="mono">{asText(t.nct_id)}</span> {asText(t.title)}
              {t.status ? <span className="muted small"> · {asText(t.status).replace(/_/g, " ").toLowerCase()}</span> : null}
            </li>
          ))}
        </ul>
      )}
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}

export function ScreeningReportCard(props: PayloadCardProps<"screening_report">) {
  const { report, explanation } = props.payload.data;
  return (
    <CardShell {...props} title={report?.title ? asText(report.title) : "Screening report"}>
      {report ? (
        <p data-testid="card-report-links">
          <a href={report.html_url} target="_blank" rel="noreferrer">Open report (HTML)</a>
          {" · "}
          <a href={report.pdf_url} target="_blank" rel="noreferrer">PDF</a>
          <span className="muted small"> · {report.trial_count} trials</span>
        </p>
      ) : null}
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}
