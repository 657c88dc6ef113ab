/** The form that creates a research stream, with optional first chat instructions (the chat can fill them). */
import type { FormEvent } from "react";
import { Link } from "../../router";
import { MAX_INSTRUCTIONS } from "./InstructionsEditor";
import { OutcomeText, type Outcome } from "./Outcome";

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
      <label>
        Name
        <input data-testid="create-name" required maxLength={200} value={form.name} onChange={(e) => onChange({ ...form, name: e.target.value })} />
      </label>
      <label>
        Description
        <textarea data-testid="create-description" rows={3} value={form.description} onChange={(e) => onChange({ ...form, description: e.target.value })} />
      </label>
      <label>
        Chat instructions (optional)
        <textarea
          data-testid="create-instructions"
          rows={6}
          maxLength={MAX_INSTRUCTIONS}
          value={form.instructions}
          onChange={(e) => onChange({ ...form, instructions: e.target.value })}
        />
      </label>
      <label>
        Note for the first version (optional)
        <input data-testid="create-note" maxLength={500} value={form.note} onChange={(e) => onChange({ ...form, note: e.target.value })} />
      </label>
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
