/** The Definition tab (name, description, archive) and the Retrieval defaults tab (PubMed query, trial search). */
import { TrialFilterFields } from "../common/TrialFilterFields";
import type { DetailsForm } from "./streamsContext";
import { TextField } from "./TextField";

interface Props {
  form: DetailsForm;
  onChange: (form: DetailsForm) => void;
}

export function DefinitionFields({ form, onChange }: Props) {
  return (
    <>
      <TextField label="Name" form={form} field="name" onChange={onChange} testId="stream-name" required maxLength={200} />
      <TextField label="Description" form={form} field="description" onChange={onChange} testId="stream-description" rows={3} />
    </>
  );
}

export function RetrievalFields({ form, onChange }: Props) {
  return (
    <>
      <TextField label="Default PubMed query (Tablizer)" form={form} field="pubmedQuery" onChange={onChange} testId="stream-pubmed-query" rows={2} />
      <fieldset className="trial-defaults">
        <legend>Default trial search (TrialScout)</legend>
        <TrialFilterFields form={form.trial} onChange={(trial) => onChange({ ...form, trial })} testIdPrefix="stream-trial" />
      </fieldset>
    </>
  );
}
