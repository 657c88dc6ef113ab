/** Tablizer's table filters: the article fields a chart click or a `filter_suggestion` narrows the loaded rows by. */
import type { Article } from "../../api/types";
import type { RowFields } from "../common/tableFilters";

export const ARTICLE_ROW_FIELDS: RowFields<Article> = {
  year: (a) => a.year,
  journal: (a) => a.journal,
  publication_type: (a) => a.publication_types ?? [],
  mesh: (a) => a.mesh_terms ?? [],
  author: (a) => a.authors ?? [],
  title: (a) => a.title,
};

export const ARTICLE_FIELD_LABELS: Readonly<Record<string, string>> = {
  year: "Year", journal: "Journal", publication_type: "Publication type", mesh: "MeSH", author: "Author", title: "Title",
};
