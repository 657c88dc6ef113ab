import { phaseLabel, statusLabel } from "../api/trialVocabulary";
import { EntityLink } from "../entities/EntityLink";
import { CardShell } from "./CardShell";
import { asList, asText, displayValue, formatCount, snapshotLabel } from "./display";
import type { CardProps } from "./types";

const SHOWN = 10;

/** `trial_search_results`: a page of ClinicalTrials.gov results (tool payload from search_trials). */
export function TrialSearchResultsCard(props: CardProps) {
  const trials = asList(props.payload.data.trials) as Array<Record<string, unknown>>;
  const total = props.payload.data.total_count ?? trials.length;
  return (
    <CardShell {...props} title="Trial search results">
      <p>
        {formatCount(total)} {total === 1 ? "trial" : "trials"}
      </p>
      <ol className="result-list">
        {trials.slice(0, SHOWN).map((t, i) => (
          <li key={asText(t.nct_id) || i}>
            <EntityLink kind="nct" id={asText(t.nct_id)} onEntity={props.onEntity} /> {asText(t.title)}
            <span className="muted">
              {" "}
              {[phaseLabel(t.phase), statusLabel(t.status), t.enrollment != null ? `n=${formatCount(t.enrollment)}` : "", displayValue(t.sponsor), snapshotLabel(t)]
                .filter(Boolean)
                .join(" · ")}
            </span>
          </li>
        ))}
      </ol>
      {trials.length > SHOWN && <p className="muted">…and {trials.length - SHOWN} more in this result</p>}
    </CardShell>
  );
}
