/**
 * The table's fit column, fed by the screening: one more `ResultColumn` (the table draws it like its own),
 * its sort key (score; unscreened rows last) and the verdict filter.
 */
import type { ScreenedTrial, TrialVerdict } from "../../../api/screening";
import type { FacetStats, TrialSummary } from "../../../api/types";
import type { GridColumn } from "../../common/gridModel";

export const VERDICTS: TrialVerdict[] = ["ELIGIBLE", "UNCERTAIN", "EXCLUDED", "NOT_RELEVANT"];
export const VERDICT_LABEL: Record<TrialVerdict, string> = {
  ELIGIBLE: "Eligible",
  EXCLUDED: "Excluded",
  UNCERTAIN: "Uncertain",
  NOT_RELEVANT: "Not relevant",
};

export function VerdictBadge({ verdict }: { verdict: TrialVerdict }) {
  return (
    <span className={`verdict verdict-${verdict.toLowerCase().replace("_", "-")}`} data-testid="verdict" data-verdict={verdict}>
      {VERDICT_LABEL[verdict]}
    </span>
  );
}

export function FitCell({ trial, pending }: { trial: ScreenedTrial | undefined; pending: boolean }) {
  if (!trial) {
    return pending ? <span className="muted small" aria-busy="true" data-testid="fit-cell" data-state="pending">screening…</span> : null;
  }
  return (
    <span className="fit-cell" data-testid="fit-cell" data-state="done" data-verdict={trial.verdict}>
      <VerdictBadge verdict={trial.verdict} /> <span className="fit-score">{trial.score.toFixed(2)}</span>
      <span className="fit-counts small">
        <span title="criteria met">✓{trial.met}</span> <span title="criteria not met">✗{trial.not_met}</span>{" "}
        <span title="criteria unknown">?{trial.unknown}</span>
        <span className="sr-only">{`: ${trial.met} met, ${trial.not_met} not met, ${trial.unknown} unknown`}</span>
      </span>
    </span>
  );
}

/** The grid's fit column: sorts by score, unscreened rows as blanks (last). */
export function fitColumn(byId: Map<string, ScreenedTrial>, pending: ReadonlySet<string>): GridColumn<TrialSummary> {
  return {
    id: "fit", label: "Fit", value: (t) => byId.get(t.nct_id)?.score ?? null,
    cell: (t) => <FitCell trial={byId.get(t.nct_id)} pending={pending.has(t.nct_id)} />,
  };
}


/** Rows whose verdict is one of `shown` (all rows when none is picked). */
export function filterByVerdict<T extends { nct_id: string }>(rows: T[], byId: Map<string, ScreenedTrial>, shown: ReadonlySet<TrialVerdict>): T[] {
  if (!shown.size) return rows;
  return rows.filter((r) => {
    const v = byId.get(r.nct_id)?.verdict;
    return v != null && shown.has(v);
  });
}

export function countVerdicts(trials: ScreenedTrial[]): Record<TrialVerdict, number> {
  const counts: Record<TrialVerdict, number> = { ELIGIBLE: 0, EXCLUDED: 0, UNCERTAIN: 0, NOT_RELEVANT: 0 };
  for (const t of trials) counts[t.verdict] += 1;
  return counts;
}

/** The fit column as the charts panel counts it (its local facet "fit"): the screening's verdicts, in the
 * column's order, those with none left out. */
export function fitStats(trials: ScreenedTrial[], screeningId: number | null, running: boolean): FacetStats {
  const counts = countVerdicts(trials);
  const buckets = VERDICTS.map((v) => ({ value: v, count: counts[v] })).filter((b) => b.count > 0);
  return { facet: "fit", label: "Fit", kind: "categorical", basis: trials.length, buckets, distinct: buckets.length,
           missing: 0, multi_valued: false, note: `the verdicts of ${screeningId == null ? "the screening" : `screening ${screeningId}`}${running ? " so far" : ""}` };
}

/** The verdict counts as toggle buttons: a count chart the table filters by. */
export function VerdictFilter({ trials, shown, onChange }: { trials: ScreenedTrial[]; shown: ReadonlySet<TrialVerdict>; onChange: (s: Set<TrialVerdict>) => void }) {
  const counts = countVerdicts(trials);
  const max = Math.max(1, ...Object.values(counts));
  return (
    <div className="verdict-filter" role="group" aria-label="Verdicts: show only" data-testid="verdict-filter">
      {VERDICTS.map((v) => (
        <button key={v} type="button" className="verdict-toggle" aria-pressed={shown.has(v)} data-testid={`verdict-filter-${v}`}
          onClick={() => {
            const next = new Set(shown);
            if (next.has(v)) next.delete(v);
            else next.add(v);
            onChange(next);
          }}>
          <VerdictBadge verdict={v} /> <strong data-testid="verdict-count">{counts[v]}</strong>
          <span className="verdict-bar" aria-hidden="true" style={{ width: `${(counts[v] / max) * 3}rem` }} />
        </button>
      ))}
    </div>
  );
}
