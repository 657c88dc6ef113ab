import type { Article } from "../../api/types";
import { AICell, AIColumnHeader } from "../common/AIColumnCell";
import type { AIColumns } from "../common/aiColumns";

interface Props {
  rows: Article[];
  ai: AIColumns;
  selected: Set<string>;
  highlighted: string | null;
  onToggle: (pmid: string) => void;
  onToggleAll: (select: boolean) => void;
  onOpen: (pmid: string) => void;
}

export function ArticleTable({ rows, ai, selected, highlighted, onToggle, onToggleAll, onOpen }: Props) {
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.pmid));
  return (
    <div className="table-wrap">
      <table className="results" data-testid="results-table">
        <thead>
          <tr>
            <th scope="col" className="col-select">
              <input type="checkbox" aria-label="Select all rows" checked={allSelected} onChange={(e) => onToggleAll(e.target.checked)} />
            </th>
            <th scope="col">PMID</th>
            <th scope="col">Title</th>
            <th scope="col">Journal</th>
            <th scope="col">Year</th>
            {ai.columns.map((c) => (
              <th scope="col" key={c.id} className="ai-col" title={c.criteria}>
                <AIColumnHeader column={c} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((a) => (
            <tr
              key={a.pmid}
              id={`row-pmid-${a.pmid}`}
              data-testid="result-row"
              data-id={a.pmid}
              className={highlighted === a.pmid ? "highlighted" : undefined}
              aria-selected={selected.has(a.pmid)}
            >
              <td className="col-select">
                <input type="checkbox" aria-label={`Select PMID ${a.pmid}`} checked={selected.has(a.pmid)} onChange={() => onToggle(a.pmid)} />
              </td>
              <td className="mono">{a.pmid}</td>
              <td>
                <button type="button" className="link-button row-open" data-testid="row-open" onClick={() => onOpen(a.pmid)}>
                  {a.title || "(untitled)"}
                </button>
              </td>
              <td>{a.journal}</td>
              <td>{a.year}</td>
              {ai.columns.map((c) => (
                <td key={c.id}>
                  <AICell ai={ai} column={c} rowId={a.pmid} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
