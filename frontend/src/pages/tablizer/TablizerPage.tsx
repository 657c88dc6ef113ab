/** Tablizer: PubMed search, a results table with AI columns, snapshots and compare mode, and the chat tray. */
import { useCallback, useMemo, useRef, useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { Article, ArticleSearchResponse } from "../../api/types";
import type { PageChatBinding } from "../../chat/ChatTray";
import { WithChat } from "../../chat/WithChat";
import { navigate } from "../../router";
import { applyAIFilters, useAIColumns } from "../common/aiColumns";
import { AIColumnsBar } from "../common/AIColumnsBar";
import { ExportMenu } from "../common/ExportMenu";
import { DetailPanel } from "../common/DetailPanel";
import { Pager } from "../common/Pager";
import { useDeepLink, useLatestSearch, useRowViewer, type RowSource } from "../common/resultsPage";
import { StatsScopeContext } from "../common/charts/statsScope";
import { StreamSelector, useStreamSelection } from "../common/streamSelection";
import { ArticleDetail } from "./ArticleDetail";
import { ARTICLE_EXPORT, ArticleTable, articleRowId } from "./ArticleTable";
import { SnapshotBar } from "./SnapshotBar";
import { tablizerActions } from "./tablizerActions";
import { useArticleInsights } from "./useArticleInsights";
import { buildTablizerContext, compareSnapshots, dateInputValue, type ArticleSort, type CompareGroup, type Snapshot } from "./tablizerContext";

interface SearchRequest {
  query: string;
  dateStart: string;
  dateEnd: string;
  sort: ArticleSort;
  page: number;
  pageSize: number;
}

const PAGE_SIZES = [25, 50, 100];

const ARTICLES: RowSource<Article> = {
  fetch: (pmid) => api.getArticle(pmid),
  notFound: (pmid) => `PMID ${pmid} was not found.`,
  rowDomId: articleRowId,
};

export function TablizerPage() {
  const [form, setForm] = useState({ query: "", dateStart: "", dateEnd: "" });
  const [sort, setSort] = useState<ArticleSort>("relevance");
  const [pageSize, setPageSize] = useState(PAGE_SIZES[0]);
  const [search, setSearch] = useState<SearchRequest | null>(null);
  const [results, setResults] = useState<ArticleSearchResponse | null>(null);
  const { loading, error, setError, run } = useLatestSearch();
  const [snapshots, setSnapshots] = useState<Snapshot[]>([]);
  const [selectedSnapshotId, setSelectedSnapshotId] = useState<string | null>(null);
  const [compare, setCompare] = useState<[string, string] | null>(null);
  const [compareGroup, setCompareGroup] = useState<CompareGroup>("onlyA");
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const { viewer, highlighted, open, close } = useRowViewer(ARTICLES);
  const streams = useStreamSelection("tablizer");
  const nextSnapshot = useRef(1);

  const runSearch = useCallback(async (req: SearchRequest) => {
    if (!req.query.trim()) {
      setError("Enter a query to search PubMed.");
      return;
    }
    if (req.dateStart && req.dateEnd && req.dateStart > req.dateEnd) {
      setError("The start date is after the end date.");
      return;
    }
    setSearch(req);
    setSelectedSnapshotId(null);
    setCompare(null);
    await run(async (signal) => {
      const response = await api.searchArticles(
        { q: req.query, date_start: req.dateStart, date_end: req.dateEnd, sort: req.sort, page: req.page, page_size: req.pageSize },
        signal,
      );
      setResults({ ...response, articles: Array.isArray(response.articles) ? response.articles : [] });
      setSelected(new Set());
    });
  }, [run, setError]);

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    void runSearch({ ...form, sort, page: 1, pageSize });
  };

  const goToPage = (page: number) => search && void runSearch({ ...search, page });

  const openArticle = useCallback(
    (pmid: string) => open(pmid, [...(results?.articles ?? []), ...snapshots.flatMap((s) => s.articles)].find((a) => a.pmid === pmid) ?? null),
    [open, results, snapshots],
  );
  useDeepLink("pmid", "/tablizer", openArticle);

  const saveSnapshot = useCallback(() => {
    if (!search || !results) return;
    const id = String(nextSnapshot.current++);
    setSnapshots((list) => [
      ...list,
      {
        id,
        label: `#${id} ${search.query}`.slice(0, 60),
        query: search.query,
        dateStart: search.dateStart,
        dateEnd: search.dateEnd,
        totalCount: results.total_count ?? results.articles.length,
        articles: results.articles,
      },
    ]);
  }, [search, results]);

  // What the table shows: a comparison group, a snapshot, or the live page.
  const snapshotById = (id: string | null) => snapshots.find((s) => s.id === id) ?? null;
  const comparison = useMemo(() => {
    const a = compare && snapshots.find((s) => s.id === compare[0]);
    const b = compare && snapshots.find((s) => s.id === compare[1]);
    return a && b ? compareSnapshots(a, b) : null;
  }, [compare, snapshots]);
  const viewedSnapshot = comparison ? null : snapshotById(selectedSnapshotId);
  const baseRows = comparison ? comparison[compareGroup] : viewedSnapshot ? viewedSnapshot.articles : results?.articles ?? [];
  // AI columns evaluate the rows the table is showing (before their own filters).
  const ai = useAIColumns("tablizer", baseRows);
  const insights = useArticleInsights(search);
  const rows = insights.narrow(applyAIFilters(baseRows, ai.columns, (a) => a.pmid));
  const totalMatched = comparison ? baseRows.length : viewedSnapshot ? viewedSnapshot.totalCount : results?.total_count ?? 0;
  const live = !comparison && !viewedSnapshot;

  const contextRef = useRef<Record<string, unknown>>({});
  contextRef.current = buildTablizerContext({
    query: form.query,
    dateStart: form.dateStart,
    dateEnd: form.dateEnd,
    totalMatched,
    rows,
    snapshots,
    selectedSnapshotId,
    compare,
    aiColumns: ai.columns,
    selectedPmids: [...selected],
    sort,
    page: search?.page ?? 1,
    pageSize: search?.pageSize ?? pageSize,
    viewerPmid: viewer?.id ?? null,
    streamId: streams.selectedId,
  });

  const formRef = useRef(form);
  formRef.current = form;
  const binding: PageChatBinding = {
    app: "tablizer",
    getContext: () => contextRef.current,
    payloadHandlers: {
      pubmed_query_suggestion: async (data) => {
        const query = typeof data.query === "string" ? data.query.trim() : "";
        if (!query) throw new Error("The suggestion has no query.");
        // Dates the suggestion names replace the form's; dates it leaves out stay as they are.
        const next = {
          query,
          dateStart: data.date_start ? dateInputValue(data.date_start, false) : formRef.current.dateStart,
          dateEnd: data.date_end ? dateInputValue(data.date_end, true) : formRef.current.dateEnd,
        };
        setForm(next);
        await runSearch({ ...next, sort, page: 1, pageSize });
      },
      ai_column_suggestion: ai.addSuggestion,
      ...insights.payloadHandlers,
    },
    clientActions: tablizerActions({
      runQuery: (query) => {
        const next = query ? { ...formRef.current, query } : formRef.current;
        setForm(next);
        return runSearch({ ...next, sort, page: 1, pageSize });
      },
      openArticle,
      saveSnapshot,
      canSaveSnapshot: Boolean(search && results?.articles.length),
      nextPage: search && results && search.page * search.pageSize < (results.total_count ?? 0) ? () => goToPage(search.page + 1) : undefined,
      previousPage: search && search.page > 1 ? () => goToPage(search.page - 1) : undefined,
    }),
    onEntity: (kind, id) => (kind === "pmid" ? void openArticle(id) : navigate(`/trialscout?nct=${encodeURIComponent(id)}`)),
  };

  const total = results?.total_count ?? 0;
  const page = search?.page ?? 1;
  const size = search?.pageSize ?? pageSize;
  const first = total ? (page - 1) * size + 1 : 0;

  return (
    <StatsScopeContext.Provider value={insights.scope}>
    <WithChat binding={binding}>
      <div className="page-columns">
        <div className="page-content" data-testid="tablizer-page">
          <h1 className="page-title">Tablizer</h1>
          <StreamSelector
            selection={streams}
            loadLabel="Use its PubMed query"
            canLoad={(s) => Boolean(s.settings?.pubmed_query)}
            onLoad={(s) => setForm((f) => ({ ...f, query: s.settings.pubmed_query ?? f.query }))}
          />
          <form className="search-form tablizer-form" onSubmit={submit} role="search" aria-label="PubMed search">
            <label className="grow">
              Query
              <input
                data-testid="tablizer-query"
                type="search"
                value={form.query}
                placeholder='e.g. EGFR[MeSH] AND "drug resistance"'
                onChange={(e) => setForm({ ...form, query: e.target.value })}
              />
            </label>
            <label>
              From
              <input data-testid="tablizer-date-start" type="date" value={form.dateStart} onChange={(e) => setForm({ ...form, dateStart: e.target.value })} />
            </label>
            <label>
              To
              <input data-testid="tablizer-date-end" type="date" value={form.dateEnd} onChange={(e) => setForm({ ...form, dateEnd: e.target.value })} />
            </label>
            <label>
              Sort
              <select data-testid="tablizer-sort" value={sort} onChange={(e) => setSort(e.target.value as ArticleSort)}>
                <option value="relevance">Relevance</option>
                <option value="date">Date</option>
              </select>
            </label>
            <label>
              Rows
              <select data-testid="tablizer-page-size" value={pageSize} onChange={(e) => setPageSize(Number(e.target.value))}>
                {PAGE_SIZES.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="primary" data-testid="tablizer-search" disabled={loading}>
              {loading ? "Searching…" : "Search"}
            </button>
          </form>
          {error && (
            <p className="error-text" role="alert" data-testid="search-error">
              {error}
            </p>
          )}
          <SnapshotBar
            snapshots={snapshots}
            selectedId={selectedSnapshotId}
            compare={compare}
            comparison={comparison}
            compareGroup={compareGroup}
            canSave={Boolean(results && results.articles.length)}
            onSave={saveSnapshot}
            onSelect={(id) => {
              setCompare(null);
              setSelectedSnapshotId(id);
            }}
            onRelabel={(id, label) => setSnapshots((list) => list.map((s) => (s.id === id ? { ...s, label } : s)))}
            onCompare={setCompare}
            onCompareGroup={setCompareGroup}
          />
          <AIColumnsBar ai={ai} visible={rows.length} loaded={baseRows.length} />
          {rows.length > 0 && (
            <ExportMenu app="tablizer" rows={rows} rowId={(a) => a.pmid} columns={ARTICLE_EXPORT} ai={ai} selected={selected} query={viewedSnapshot?.query ?? form.query} charts={insights.chartFigures} />
          )}
          <p className="results-summary" data-testid="results-summary" aria-live="polite">
            {comparison
              ? `Comparing snapshots: ${rows.length} articles in this group`
              : viewedSnapshot
                ? `Snapshot “${viewedSnapshot.label}”: ${viewedSnapshot.articles.length} articles (query: ${viewedSnapshot.query})`
                : results
                  ? `${total.toLocaleString("en-US")} results${total ? ` · showing ${first}–${first + results.articles.length - 1}` : ""}`
                  : "Search PubMed to fill the table."}
          </p>
          {live && results?.query_translation && (
            <details className="small">
              <summary>How PubMed read the query</summary>
              <code>{results.query_translation}</code>
            </details>
          )}
          {results && insights.panel}
          {baseRows.length > 0 && (
            <ArticleTable
              rows={rows}
              ai={ai}
              selected={selected}
              highlighted={highlighted}
              onSelect={setSelected}
              onOpen={(pmid) => void openArticle(pmid)}
            />
          )}
          {live && results && total > size && (
            <Pager
              page={page}
              total={total}
              pageSize={size}
              hasNext={page * size < total}
              loading={loading}
              onPrev={() => goToPage(page - 1)}
              onNext={() => goToPage(page + 1)}
            />
          )}
        </div>
        {viewer && (
          <DetailPanel title={`PMID ${viewer.id}`} onClose={close}>
            <ArticleDetail article={viewer.item} loading={viewer.loading} error={viewer.error} />
          </DetailPanel>
        )}
      </div>
    </WithChat>
    </StatsScopeContext.Provider>
  );
}
