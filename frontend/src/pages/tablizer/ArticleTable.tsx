import type { Article } from "../../api/types";
import type { ExportColumn } from "../common/ExportMenu";
import type { GridColumn } from "../common/gridModel";
import { RecordDate } from "../common/RecordDate";
import type { Facet } from "../common/selectionReport";

const authors = (a: Article) => (a.authors ?? []).join(", ");

/** Tablizer's grid columns (Authors, DOI and MeSH terms in the column chooser). */
export const ARTICLE_COLUMNS: Array<GridColumn<Article>> = [
  { id: "pmid", label: "PMID", className: "mono", required: true, cell: (a) => a.pmid, value: (a) => Number(a.pmid) || a.pmid },
  { id: "title", label: "Title", title: true, cell: (a) => a.title || "(untitled)", value: (a) => a.title },
  { id: "authors", label: "Authors", hiddenByDefault: true, cell: authors, value: authors },
  { id: "journal", label: "Journal", cell: (a) => a.journal, value: (a) => a.journal },
  { id: "year", label: "Year", cell: (a) => <RecordDate text={a.year} record={a} />, value: (a) => (a.year == null ? undefined : Number(a.year)) },
  { id: "doi", label: "DOI", hiddenByDefault: true, cell: (a) => a.doi ?? "", value: (a) => a.doi },
  { id: "mesh_terms", label: "MeSH terms", hiddenByDefault: true, cell: (a) => (a.mesh_terms ?? []).join(", "), value: (a) => (a.mesh_terms ?? []).join(", ") },
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
/** The row's link: Tablizer with the article open (what a new tab shows). */
export const articleHref = (pmid: string) => `/tablizer?open=${encodeURIComponent(pmid)}`;

/** What a report counts over the selected articles. */
export const ARTICLE_FACETS: Array<Facet<Article>> = [
  { label: "Year", chart: "year", values: (a) => (a.year == null ? [] : [String(a.year)]) },
  { label: "Journal", chart: "journal", values: (a) => (a.journal ? [a.journal] : []) },
];
