import type { Article } from "../../api/types";
import { RecordDate } from "../common/RecordDate";
import { ResultsTable, type ResultColumn, type ResultRowsProps } from "../common/ResultsTable";

const COLUMNS: Array<ResultColumn<Article>> = [
  { key: "pmid", label: "PMID", className: "mono", cell: (a) => a.pmid },
  { key: "title", label: "Title", opens: true, cell: (a) => a.title || "(untitled)" },
  { key: "journal", label: "Journal", cell: (a) => a.journal },
  { key: "year", label: "Year", cell: (a) => <RecordDate text={a.year} record={a} /> },
];

/** The table row's element id, which opening an article scrolls into view. */
export const articleRowId = (pmid: string) => `row-pmid-${pmid}`;

export function ArticleTable(props: ResultRowsProps<Article>) {
  return (
    <ResultsTable {...props} columns={COLUMNS} rowId={(a) => a.pmid} rowDomId={articleRowId} selectLabel={(pmid) => `Select PMID ${pmid}`} />
  );
}
