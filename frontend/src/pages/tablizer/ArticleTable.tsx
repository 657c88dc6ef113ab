import type { Article } from "../../api/types";
import type { ExportColumn } from "../common/ExportMenu";
import { RecordDate } from "../common/RecordDate";
import { ResultsTable, type ResultColumn, type ResultRowsProps } from "../common/ResultsTable";

const COLUMNS: Array<ResultColumn<Article>> = [
  { key: "pmid", label: "PMID", className: "mono", cell: (a) => a.pmid },
  { key: "title", label: "Title", opens: true, cell: (a) => a.title || "(untitled)" },
  { key: "journal", label: "Journal", cell: (a) => a.journal },
  { key: "year", label: "Year", cell: (a) => <RecordDate text={a.year} record={a} /> },
];

/** The table as text for exports. */
export const ARTICLE_EXPORT: Array<ExportColumn<Article>> = [
  { key: "pmid", label: "PMID", text: (a) => a.pmid },
  { key: "title", label: "Title", text: (a) => a.title ?? "" },
  { key: "authors", label: "Authors", text: (a) => a.authors ?? [] },
  { key: "journal", label: "Journal", text: (a) => a.journal ?? null },
  { key: "year", label: "Year", text: (a) => (a.year == null ? null : String(a.year)) },
  { key: "doi", label: "DOI", text: (a) => a.doi ?? null },
];

/** The table row's element id, which opening an article scrolls into view. */
export const articleRowId = (pmid: string) => `row-pmid-${pmid}`;

export function ArticleTable(props: ResultRowsProps<Article>) {
  return (
    <ResultsTable {...props} columns={COLUMNS} rowId={(a) => a.pmid} rowDomId={articleRowId} selectLabel={(pmid) => `Select PMID ${pmid}`} />
  );
}
