/** Tablizer's looser searches when a query finds nothing: a term dropped, the date range dropped, the terms OR-ed. */
import { api } from "../../api/client";
import { LooserSearches, type LooserSearch } from "../common/LooserSearches";
import { queryTerms } from "../common/queryTerms";
import type { TablizerSearch } from "./tablizerUrl";

export function looserArticleSearches(search: TablizerSearch): Array<LooserSearch<TablizerSearch>> {
  const from = { ...search, page: 1 };
  const offers: Array<LooserSearch<TablizerSearch>> = [];
  const terms = queryTerms(search.query) ?? [];
  if (search.dateStart || search.dateEnd) offers.push({ label: "Any date", detail: search.query, search: { ...from, dateStart: "", dateEnd: "" } });
  if (terms.length >= 2) {
    for (const [i, term] of terms.entries()) {
      const query = terms.filter((_, j) => j !== i).join(" ");
      offers.push({ label: `Drop “${term}”`, detail: query, search: { ...from, query } });
    }
    const any = terms.join(" OR ");
    offers.push({ label: "Any of the terms", detail: any, search: { ...from, query: any } });
  }
  return offers;
}

const countArticles = (s: TablizerSearch, signal: AbortSignal) =>
  api.searchArticles({ q: s.query, date_start: s.dateStart, date_end: s.dateEnd, page: 1, page_size: 1 }, signal)
    .then((r) => (typeof r.total_count === "number" ? r.total_count : null));

export function ArticleZeroResults({ search, onRun }: { search: TablizerSearch; onRun: (next: TablizerSearch) => void }) {
  return (
    <LooserSearches searchKey={JSON.stringify([search.query, search.dateStart, search.dateEnd])} offers={looserArticleSearches(search)}
                    count={countArticles} onRun={onRun} one="article" hint="Try other words or synonyms, or a MeSH term." />
  );
}
