/** Tablizer's PubMed search form: query, dates, the server's sort and the page size. */
import type { FormEvent } from "react";
import { LabeledSelect } from "../common/LabeledSelect";
import type { ArticleSort } from "./tablizerContext";
import { PAGE_SIZES } from "./tablizerUrl";

interface Form {
  query: string;
  dateStart: string;
  dateEnd: string;
}

export function TablizerSearchForm({ form, sort, pageSize, loading, onForm, onSort, onPageSize, onSubmit }: {
  form: Form;
  sort: ArticleSort;
  pageSize: number;
  loading: boolean;
  onForm: (form: Form) => void;
  onSort: (sort: ArticleSort) => void;
  onPageSize: (size: number) => void;
  onSubmit: (e?: FormEvent) => void;
}) {
  return (
      <form className="search-form tablizer-form" onSubmit={onSubmit} role="search" aria-label="PubMed search">
        <label className="grow">
          Query
          <input
            data-testid="tablizer-query"
            type="search"
            value={form.query}
            placeholder='e.g. EGFR[MeSH] AND "drug resistance"'
            onChange={(e) => onForm({ ...form, query: e.target.value })}
          />
        </label>
        <label>
          From
          <input data-testid="tablizer-date-start" type="date" value={form.dateStart} onChange={(e) => onForm({ ...form, dateStart: e.target.value })} />
        </label>
        <label>
          To
          <input data-testid="tablizer-date-end" type="date" value={form.dateEnd} onChange={(e) => onForm({ ...form, dateEnd: e.target.value })} />
        </label>
        <label>
          Sort
          <select data-testid="tablizer-sort" value={sort} onChange={(e) => onSort(e.target.value as ArticleSort)}>
            <option value="relevance">Relevance</option>
            <option value="date">Date</option>
          </select>
        </label>
        <LabeledSelect label="Rows" testId="tablizer-page-size" value={pageSize} choices={PAGE_SIZES} onChange={(value) => onPageSize(Number(value))} />
        <button type="submit" className="primary" data-testid="tablizer-search" disabled={loading}>
          {loading ? "Searching…" : "Search"}
        </button>
      </form>
  );
}
