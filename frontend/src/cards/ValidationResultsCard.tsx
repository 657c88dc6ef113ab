import { CardShell } from "./CardShell";
import { asList, asText } from "./display";
import type { PayloadCardProps } from "./types";

const GROUPS = [
  ["errors", "Errors"],
  ["warnings", "Warnings"],
  ["suggestions", "Suggestions"],
] as const;

/** `validation_results`: a check of the stream's definition, to read: nothing to accept. */
export function ValidationResultsCard(props: PayloadCardProps<"validation_results">) {
  const groups = GROUPS.map(([key, label]) => [key, label, asList(props.payload.data[key]).map(asText).filter(Boolean)] as const);
  const empty = groups.every(([, , items]) => items.length === 0);
  return (
    <CardShell {...props} title="Definition check">
      {empty ? (
        <p data-testid="card-validation-clean">No problems found.</p>
      ) : (
        groups.map(([key, label, items]) =>
          items.length ? (
            <div key={key} className={`validation-${key}`} data-testid={`card-validation-${key}`}>
              <p className="small">
                <strong>{label}</strong> ({items.length})
              </p>
              <ul>
                {items.map((item, i) => (
                  <li key={i}>{item}</li>
                ))}
              </ul>
            </div>
          ) : null,
        )
      )}
    </CardShell>
  );
}
