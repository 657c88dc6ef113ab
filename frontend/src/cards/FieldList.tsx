import type { ReactNode } from "react";

/** A record's fields as (name, value) rows of a definition list. */
export function FieldList({ rows, testId }: { rows: ReadonlyArray<readonly [string, ReactNode]>; testId?: string }) {
  return (
    <dl className="fields" data-testid={testId}>
      {rows.map(([name, value]) => (
        <div key={name} className="field-row">
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
