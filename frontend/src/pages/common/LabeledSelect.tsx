/** A labelled select of plain choices: each a value shown as itself, or a value with its label. */
export type Choice = string | number | { value: string; label: string };

const valueOf = (c: Choice) => (typeof c === "object" ? c.value : c);
const labelOf = (c: Choice) => (typeof c === "object" ? c.label : c);

export function LabeledSelect({
  label,
  testId,
  value,
  choices,
  onChange,
  none,
}: {
  label: string;
  testId: string;
  value: string | number;
  choices: readonly Choice[];
  onChange: (value: string) => void;
  /** The label of an empty first choice, when nothing is a valid answer. */
  none?: string;
}) {
  return (
    <label>
      {label}
      <select data-testid={testId} value={value} onChange={(e) => onChange(e.target.value)}>
        {none !== undefined && <option value="">{none}</option>}
        {choices.map((c) => (
          <option key={valueOf(c)} value={valueOf(c)}>
            {labelOf(c)}
          </option>
        ))}
      </select>
    </label>
  );
}
