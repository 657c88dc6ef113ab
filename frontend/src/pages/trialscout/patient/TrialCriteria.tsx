/** One screened trial in the detail panel: its verdict, then each criterion with its label, the reasoning
 * and the note's sentences that are its evidence, highlighted in the note. */
import type { CriterionResult, NoteSentence, ScreenedTrial } from "../../../api/screening";
import { VerdictBadge } from "./fit";

const LABEL: Record<string, string> = { MET: "Met", NOT_MET: "Not met", UNKNOWN: "Unknown" };
const NO_TEXT = "This trial has no eligibility text in the offline data.";

function CriterionItem({ result, sentences }: { result: CriterionResult; sentences: Map<number, string> }) {
  const { criterion, label } = result;
  const evidence = (result.evidence ?? []).filter((i) => sentences.has(i));
  return (
    <li className={`criterion criterion-${label.toLowerCase()}`} data-testid="criterion" data-label={label} data-kind={criterion.kind}>
      <p className="criterion-text">
        <span className={`criterion-label label-${label.toLowerCase()}`}>{LABEL[label] ?? label}</span>{" "}
        <span className="muted small">{criterion.kind === "inclusion" ? "Inclusion" : "Exclusion"} {criterion.index + 1}:</span> {criterion.text}
      </p>
      {result.reasoning && <p className="criterion-reasoning small">{result.reasoning}</p>}
      {result.error && <p className="muted small">{result.error}</p>}
      {evidence.length > 0 && (
        <blockquote className="criterion-evidence small" data-testid="criterion-evidence" aria-label="Evidence from the note">
          {evidence.map((i) => (
            <mark key={i} data-sentence={i}>{sentences.get(i)} </mark>
          ))}
        </blockquote>
      )}
    </li>
  );
}

export function TrialCriteria({ trial, sentences }: { trial: ScreenedTrial; sentences: NoteSentence[] }) {
  const bySentence = new Map(sentences.map((s) => [s.index, s.text]));
  const cited = new Set((trial.criteria ?? []).flatMap((c) => c.evidence ?? []));
  const groups = (["exclusion", "inclusion"] as const).map((kind) => [kind, (trial.criteria ?? []).filter((c) => c.criterion.kind === kind)] as const);
  return (
    <section className="trial-criteria" data-testid="trial-criteria" aria-labelledby="trial-criteria-title">
      <h3 id="trial-criteria-title">
        For this patient: <VerdictBadge verdict={trial.verdict} />
      </h3>
      <p className="small">
        Score {trial.score.toFixed(2)} · {trial.met} met · {trial.not_met} not met · {trial.unknown} unknown
        {" · "}
        <span data-testid="snapshot-date">{trial.snapshot_date ? `Trial record as of ${trial.snapshot_date}` : "Trial record read live"}</span>
      </p>
      {trial.reason && <p className="muted" data-testid="criteria-reason">{trial.reason}</p>}
      {(trial.criteria ?? []).length === 0 ? (
        <p className="muted" data-testid="criteria-empty">{trial.reason ? null : NO_TEXT}</p>
      ) : (
        groups.map(([kind, items]) =>
          items.length ? (
            <div key={kind}>
              <h4>{kind === "inclusion" ? "Inclusion criteria" : "Exclusion criteria"}</h4>
              <ol className="criteria-list">
                {items.map((r) => <CriterionItem key={`${kind}-${r.criterion.index}`} result={r} sentences={bySentence} />)}
              </ol>
            </div>
          ) : null,
        )
      )}
      {sentences.length > 0 && (
        <details className="note-view">
          <summary>The note, evidence highlighted</summary>
          <p data-testid="note-sentences">
            {sentences.map((s) => (cited.has(s.index) ? <mark key={s.index} data-sentence={s.index}>{s.text} </mark> : <span key={s.index}>{s.text} </span>))}
          </p>
        </details>
      )}
    </section>
  );
}
