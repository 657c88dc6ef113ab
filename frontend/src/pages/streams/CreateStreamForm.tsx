/** The form that creates a research stream, with optional first chat instructions (the chat can fill them). */
import type { FormEvent } from "react";
import { Link } from "../../router";
import { MAX_INSTRUCTIONS } from "./InstructionsEditor";
import { OutcomeText, type Outcome } from "./Outcome";
import { TextField } from "./TextField";

export interface CreateForm {
  name: string;
  description: string;
  instructions: string;
  note: string;
}
export const emptyCreate: CreateForm = { name: "", description: "", instructions: "", note: "" };

interface Props {
  form: CreateForm;
  outcome: Outcome;
  onChange: (form: CreateForm) => void;
  onSubmit: (e: FormEvent) => void;
}

export function CreateStreamForm({ form, outcome, onChange, onSubmit }: Props) {
  return (
    <form className="stream-form" data-testid="stream-create-form" onSubmit={onSubmit} aria-labelledby="create-heading">
      <h2 id="create-heading">New research stream</h2>
      <TextField label="Name" form={form} field="name" onChange={onChange} testId="create-name" required maxLength={200} />
      <TextField label="Description" form={form} field="description" onChange={onChange} testId="create-description" rows={3} />
      <TextField label="Chat instructions (optional)" form={form} field="instructions" onChange={onChange} testId="create-instructions" rows={6} maxLength={MAX_INSTRUCTIONS} />
      <TextField label="Note for the first version (optional)" form={form} field="note" onChange={onChange} testId="create-note" maxLength={500} />
      <div className="row-gap">
        <button type="submit" className="primary" data-testid="create-submit" disabled={outcome.busy}>
          Create stream
        </button>
        <Link to="/streams">Cancel</Link>
        <OutcomeText outcome={outcome} testid="create" />
      </div>
    </form>
  );
}
