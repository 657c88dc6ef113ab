/**
 * The fields of a ClinicalTrials.gov search, in three rows: condition, intervention, sponsor; phase and
 * status; location, sex, study type, ages and eligibility keywords. TrialScout's search form and a stream's default trial
 * search (Streams admin) both edit a `TrialForm` with them; only their test ids and placeholders differ.
 */
import { PHASES, SEXES, STATUSES, STUDY_TYPES, phaseLabel, statusLabel, studyTypeLabel } from "../../api/trialVocabulary";
import type { TrialForm } from "../trialscout/trialscoutContext";

type TextKey = "condition" | "intervention" | "sponsor" | "location" | "min_age" | "max_age" | "eligibility_keywords";

interface Props {
  form: TrialForm;
  onChange: (form: TrialForm) => void;
  /** Test ids are `${testIdPrefix}-condition`, `${testIdPrefix}-phase-PHASE3`, … */
  testIdPrefix: string;
  placeholders?: Partial<Record<TextKey, string>>;
}

function CheckGroup({
  legend,
  name,
  testId,
  options,
  values,
  label,
  onChange,
}: {
  legend: string;
  name: string;
  testId: string;
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
            name={name}
            value={opt}
            data-testid={`${testId}-${opt}`}
            checked={values.includes(opt)}
            onChange={(e) => onChange(e.target.checked ? [...values, opt] : values.filter((v) => v !== opt))}
          />
          {label(opt)}
        </label>
      ))}
    </fieldset>
  );
}

export function TrialFilterFields({ form, onChange, testIdPrefix, placeholders = {} }: Props) {
  const set = <K extends keyof TrialForm>(key: K, value: TrialForm[K]) => onChange({ ...form, [key]: value });
  const field = (key: TextKey, label: string) => {
    const age = key === "min_age" || key === "max_age";
    return (
      <label className={age ? "narrow" : undefined}>
        {label}
        <input
          data-testid={`${testIdPrefix}-${key.replace(/_/g, "-")}`}
          {...(age ? { type: "number", min: 0, max: 120, inputMode: "numeric" as const } : {})}
          value={form[key]}
          placeholder={placeholders[key]}
          onChange={(e) => set(key, e.target.value)}
        />
      </label>
    );
  };
  return (
    <>
      <div className="form-row">
        {field("condition", "Condition")}
        {field("intervention", "Intervention")}
        {field("sponsor", "Sponsor")}
      </div>
      <div className="form-row">
        <CheckGroup legend="Phase" name="phase" testId={`${testIdPrefix}-phase`} options={PHASES} values={form.phase} label={phaseLabel} onChange={(v) => set("phase", v)} />
        <CheckGroup legend="Status" name="status" testId={`${testIdPrefix}-status`} options={STATUSES} values={form.status} label={statusLabel} onChange={(v) => set("status", v)} />
      </div>
      <div className="form-row">
        {field("location", "Location")}
        <label className="narrow">
          Sex
          <select data-testid={`${testIdPrefix}-sex`} value={form.sex} onChange={(e) => set("sex", e.target.value)}>
            {SEXES.map((s) => (
              <option key={s} value={s}>
                {s === "ALL" ? "All" : s[0] + s.slice(1).toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label className="narrow">
          Study type
          <select data-testid={`${testIdPrefix}-study-type`} value={form.study_type} onChange={(e) => set("study_type", e.target.value)}>
            <option value="">Any</option>
            {STUDY_TYPES.map((t) => (
              <option key={t} value={t}>
                {studyTypeLabel(t)}
              </option>
            ))}
          </select>
        </label>
        {field("min_age", "Min age (years)")}
        {field("max_age", "Max age (years)")}
        {field("eligibility_keywords", "Eligibility keywords")}
      </div>
    </>
  );
}
