import type { ChangeEvent } from "react";

type TextKey<F> = { [K in keyof F]: F[K] extends string ? K : never }[keyof F];

interface Props<F> {
  label: string;
  form: F;
  field: TextKey<F>;
  onChange: (form: F) => void;
  testId: string;
  /** A textarea of this many rows; an input without. */
  rows?: number;
  maxLength?: number;
  required?: boolean;
}

/** A labelled text box bound to one text field of a stream form. */
export function TextField<F>({ label, form, field, onChange, testId, rows, maxLength, required }: Props<F>) {
  const value = form[field] as string;
  const change = (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => onChange({ ...form, [field]: e.target.value });
  return (
    <label>
      {label}
      {rows ? (
        <textarea data-testid={testId} rows={rows} maxLength={maxLength} value={value} onChange={change} />
      ) : (
        <input data-testid={testId} required={required} maxLength={maxLength} value={value} onChange={change} />
      )}
    </label>
  );
}
