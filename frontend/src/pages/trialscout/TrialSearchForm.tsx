import type { FormEvent } from "react";
import { PHASES, SEXES, STATUSES, phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialForm } from "./trialscoutContext";

interface Props {
  form: TrialForm;
  loading: boolean;
  onChange: (form: TrialForm) => void;
  onSubmit: () => void;
  onClear: () => void;
}

function CheckGroup({
  legend,
  name,
  options,
  values,
  label,
  onChange,
}: {
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
            name={name}
            value={opt}
            data-testid={`trial-${name}-${opt}`}
            checked={values.includes(opt)}
            onChange={(e) => onChange(e.target.checked ? [...values, opt] : values.filter((v) => v !== opt))}
          />
          {label(opt)}
        </label>
      ))}
    </fieldset>
  );
}

export function TrialSearchForm({ form, loading, onChange, onSubmit, onClear }: Props) {
  const set = <K extends keyof TrialForm>(key: K, value: TrialForm[K]) => onChange({ ...form, [key]: value });
  const field = (key: "condition" | "intervention" | "sponsor" | "location" | "min_age" | "max_age" | "eligibility_keywords", label: string, placeholder?: string) => (
    <label className={key === "min_age" || key === "max_age" ? "narrow" : undefined}>
      {label}
      <input
        data-testid={`trial-${key.replace(/_/g, "-")}`}
        {...(key === "min_age" || key === "max_age" ? { type: "number", min: 0, max: 120, inputMode: "numeric" as const } : {})}
        value={form[key]}
        placeholder={placeholder}
        onChange={(e) => set(key, e.target.value)}
      />
    </label>
  );
  return (
    <form
      className="search-form trial-form"
      role="search"
      aria-label="Trial search"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <div className="form-row">
        {field("condition", "Condition", "e.g. non-small cell lung cancer")}
        {field("intervention", "Intervention", "e.g. pembrolizumab")}
        {field("sponsor", "Sponsor")}
      </div>
      <div className="form-row">
        <CheckGroup legend="Phase" name="phase" options={PHASES} values={form.phase} label={phaseLabel} onChange={(v) => set("phase", v)} />
        <CheckGroup legend="Status" name="status" options={STATUSES} values={form.status} label={statusLabel} onChange={(v) => set("status", v)} />
      </div>
      <div className="form-row">
        {field("location", "Location", "city, state or country")}
        <label className="narrow">
          Sex
          <select data-testid="trial-sex" value={form.sex} onChange={(e) => set("sex", e.target.value)}>
            {SEXES.map((s) => (
              <option key={s} value={s}>
                {s === "ALL" ? "All" : s[0] + s.slice(1).toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        {field("min_age", "Min age (years)", "e.g. 18")}
        {field("max_age", "Max age (years)", "e.g. 75")}
        {field("eligibility_keywords", "Eligibility keywords", "e.g. brain metastases")}
      </div>
      <div className="row-gap">
        <button type="submit" className="primary" data-testid="trial-search" disabled={loading}>
          {loading ? "Searching…" : "Search trials"}
        </button>
        <button type="button" data-testid="trial-clear" onClick={onClear}>
          Clear
        </button>
      </div>
    </form>
  );
}
