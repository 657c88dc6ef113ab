import { phaseLabel, sexLabel, statusLabel, studyTypeLabel } from "../api/trialVocabulary";
import { CardShell } from "./CardShell";
import { displayValue, explanationText } from "./display";
import type { PayloadData } from "../api/types";
import type { PayloadCardProps } from "./types";

type Field = Exclude<keyof PayloadData<"trial_search_suggestion">, "explanation">;

const FIELDS: Array<[key: Field, label: string, format?: (v: unknown) => string]> = [
  ["condition", "Condition"],
  ["intervention", "Intervention"],
  ["sponsor", "Sponsor"],
  ["phase", "Phase", phaseLabel],
  ["status", "Status", statusLabel],
  ["location", "Location"],
  ["sex", "Sex", sexLabel],
  ["study_type", "Study type", studyTypeLabel],
  ["min_age", "Min age", (v) => `${displayValue(v)} years`],
  ["max_age", "Max age", (v) => `${displayValue(v)} years`],
  ["eligibility_keywords", "Eligibility keywords"],
];

function isEmpty(value: unknown): boolean {
  return value == null || value === "" || (Array.isArray(value) && value.length === 0);
}

/** `trial_search_suggestion`: the filled form. Accept fills TrialScout's form and runs the search. */
export function TrialSearchCard(props: PayloadCardProps<"trial_search_suggestion">) {
  const data = props.payload.data;
  const shown = FIELDS.filter(([key]) => !isEmpty(data[key]));
  return (
    <CardShell {...props} title="Suggested trial search" suggestion>
      <dl className="fields">
        {shown.map(([key, label, format]) => (
          <div key={key} className="field-row" data-testid={`card-field-${key}`}>
            <dt>{label}</dt>
            <dd>{(format ?? displayValue)(data[key])}</dd>
          </div>
        ))}
      </dl>
      {shown.length === 0 && <p className="muted">No search fields were suggested.</p>}
      {data.explanation ? <p className="card-explanation">{explanationText(data.explanation)}</p> : null}
    </CardShell>
  );
}
