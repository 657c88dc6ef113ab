import type { FormEvent } from "react";
import { TrialFilterFields } from "../common/TrialFilterFields";
import type { TrialForm } from "./trialscoutContext";

interface Props {
  form: TrialForm;
  loading: boolean;
  onChange: (form: TrialForm) => void;
  onSubmit: () => void;
  onClear: () => void;
}

const PLACEHOLDERS = {
  condition: "e.g. non-small cell lung cancer",
  intervention: "e.g. pembrolizumab",
  location: "city, state or country",
  min_age: "e.g. 18",
  max_age: "e.g. 75",
  eligibility_keywords: "e.g. brain metastases",
};

export function TrialSearchForm({ form, loading, onChange, onSubmit, onClear }: Props) {
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
      <TrialFilterFields form={form} onChange={onChange} testIdPrefix="trial" placeholders={PLACEHOLDERS} />
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
