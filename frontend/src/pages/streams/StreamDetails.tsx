/** The Definition tab (name, description, archive) and the Retrieval defaults tab (PubMed query, trial search). */
import { TrialFilterFields } from "../common/TrialFilterFields";
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

export function RetrievalFields({ form, onChange }: Props) {
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
        <TrialFilterFields form={form.trial} onChange={(trial) => onChange({ ...form, trial })} testIdPrefix="stream-trial" />
      </fieldset>
    </>
  );
}
