/** The Definition tab (name, description, archive) and the Retrieval defaults tab (PubMed query, trial search). */
import { PHASES, SEXES, STATUSES, phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialForm } from "../trialscout/trialscoutContext";
import type { DetailsForm } from "./streamsContext";

interface Props {
  form: DetailsForm;
  onChange: (form: DetailsForm) => void;
}

export function DefinitionFields({ form, onChange }: Props) {
  return (
    <>
      <label>
        Name
        <input data-testid="stream-name" required maxLength={200} value={form.name} onChange={(e) => onChange({ ...form, name: e.target.value })} />
      </label>
      <label>
        Description
        <textarea
          data-testid="stream-description"
          rows={3}
          value={form.description}
          onChange={(e) => onChange({ ...form, description: e.target.value })}
        />
      </label>
    </>
  );
}

function Checks({ legend, name, options, values, label, onChange }: {
  legend: string;
  name: string;
  options: readonly string[];
  values: string[];
  label: (v: string) => string;
  onChange: (values: string[]) => void;
}) {
  return (
    <fieldset className="check-group">
      <legend>{legend}</legend>
      {options.map((opt) => (
        <label key={opt} className="inline">
          <input
            type="checkbox"
            data-testid={`stream-trial-${name}-${opt}`}
            checked={values.includes(opt)}
            onChange={(e) => onChange(e.target.checked ? [...values, opt] : values.filter((v) => v !== opt))}
          />
          {label(opt)}
        </label>
      ))}
    </fieldset>
  );
}

export function RetrievalFields({ form, onChange }: Props) {
  const trial = form.trial;
  const setTrial = <K extends keyof TrialForm>(key: K, value: TrialForm[K]) => onChange({ ...form, trial: { ...trial, [key]: value } });
  const text = (key: "condition" | "intervention" | "sponsor" | "location" | "eligibility_keywords", label: string) => (
    <label>
      {label}
      <input data-testid={`stream-trial-${key.replace(/_/g, "-")}`} value={trial[key]} onChange={(e) => setTrial(key, e.target.value)} />
    </label>
  );
  const age = (key: "min_age" | "max_age", label: string) => (
    <label className="narrow">
      {label}
      <input
        data-testid={`stream-trial-${key.replace(/_/g, "-")}`}
        type="number"
        min={0}
        max={120}
        inputMode="numeric"
        value={trial[key]}
        onChange={(e) => setTrial(key, e.target.value)}
      />
    </label>
  );
  return (
    <>
      <label>
        Default PubMed query (Tablizer)
        <textarea
          data-testid="stream-pubmed-query"
          rows={2}
          value={form.pubmedQuery}
          onChange={(e) => onChange({ ...form, pubmedQuery: e.target.value })}
        />
      </label>
      <fieldset className="trial-defaults">
        <legend>Default trial search (TrialScout)</legend>
        <div className="form-row">
          {text("condition", "Condition")}
          {text("intervention", "Intervention")}
          {text("sponsor", "Sponsor")}
        </div>
        <div className="form-row">
          <Checks legend="Phase" name="phase" options={PHASES} values={trial.phase} label={phaseLabel} onChange={(v) => setTrial("phase", v)} />
          <Checks legend="Status" name="status" options={STATUSES} values={trial.status} label={statusLabel} onChange={(v) => setTrial("status", v)} />
        </div>
        <div className="form-row">
          {text("location", "Location")}
          <label className="narrow">
            Sex
            <select data-testid="stream-trial-sex" value={trial.sex} onChange={(e) => setTrial("sex", e.target.value)}>
              {SEXES.map((s) => (
                <option key={s} value={s}>
                  {s === "ALL" ? "All" : s[0] + s.slice(1).toLowerCase()}
                </option>
              ))}
            </select>
          </label>
          {age("min_age", "Min age (years)")}
          {age("max_age", "Max age (years)")}
          {text("eligibility_keywords", "Eligibility keywords")}
        </div>
      </fieldset>
    </>
  );
}
