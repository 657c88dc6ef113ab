import { CardShell } from "./CardShell";
import { asText, displayValue } from "./display";
import type { PayloadCardProps } from "./types";

/** `retrieval_proposal`. Accept fills the stream's retrieval defaults (unsaved). */
export function RetrievalProposalCard(props: PayloadCardProps<"retrieval_proposal">) {
  const { pubmed_query, trial_search, reasoning } = props.payload.data;
  const trial =
    trial_search && typeof trial_search === "object" && !Array.isArray(trial_search)
      ? Object.entries(trial_search).filter(([, v]) => v != null && v !== "" && !(Array.isArray(v) && v.length === 0))
      : [];
  return (
    <CardShell {...props} title="Proposed retrieval setup" suggestion>
      {pubmed_query ? (
        <>
          <p className="small">PubMed query (Tablizer)</p>
          <pre className="code-block">
            <code data-testid="card-query">{asText(pubmed_query)}</code>
          </pre>
        </>
      ) : null}
      {trial.length > 0 && (
        <>
          <p className="small">Trial search (TrialScout)</p>
          <dl className="fields" data-testid="card-trial-search">
            {trial.map(([key, value]) => (
              <div key={key} className="field-row">
                <dt>{key.replace(/_/g, " ")}</dt>
                <dd>{displayValue(value)}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      {reasoning ? <p className="card-explanation">{asText(reasoning)}</p> : null}
    </CardShell>
  );
}
