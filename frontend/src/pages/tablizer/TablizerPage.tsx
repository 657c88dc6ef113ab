/** Tablizer: PubMed search, a results table with AI columns, snapshots and compare mode, and the chat tray. */
import { useCallback, useMemo, useRef, useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { Article, ArticleSearchResponse } from "../../api/types";
import { navigate } from "../../router";
import { AcceptedChange } from "../common/AcceptedChange";
import { plural, resultsSummary } from "../common/counts";
import { FilterNotice } from "../common/FilterNotice";
import { applyAIFilters, useAIColumns } from "../common/aiColumns";
import { AIColumnsBar } from "../common/AIColumnsBar";
import { ExportMenu } from "../common/ExportMenu";
import { DetailPanel } from "../common/DetailPanel";
import { Pager } from "../common/Pager";
import { useDeepLink, useLatestSearch, useRowViewer, type RowSource } from "../common/resultsPage";
import { ARTICLE_OPEN_FIELDS, openItemFields } from "../common/screenContext";
import { ResultsLayout } from "../common/ResultsLayout";
import { useStreamSelection } from "../common/streamSelection";
import { usePageChat, useResultsUndo } from "../common/usePageChat";
import { searchAccepted } from "../../state/undo";
import { useUrlSync } from "../../state/urlState";
import { decodeTablizer, encodeTablizer, PAGE_SIZES, type TablizerSearch, type TablizerUrl } from "./tablizerUrl";
import { ArticleDetail } from "./ArticleDetail";
import { ArticleZeroResults } from "./looserArticleSearches";
import { TablizerSearchForm } from "./TablizerSearchForm";
import { ARTICLE_COLUMNS, ARTICLE_EXPORT, ARTICLE_FACETS, articleHref, articleRowId } from "./ArticleTable";
import { withAIColumns } from "../common/DataGrid";
import { CollapsibleSearch } from "../common/GridControls";
import { ResultsGrid } from "../common/ResultsGrid";
import { defaultHidden, nextSort, NO_SORT, sortRows, type GridSort } from "../common/gridModel";
import { applyGridView, decodeGridView, gridViewOf, useAskAbout, useGridState } from "../common/gridView";
import { ViewsMenu } from "../common/ViewsMenu";
import { useSavedView } from "../../state/savedView";
import type { ViewStateJson } from "../../api/views";
import { SnapshotBar } from "./SnapshotBar";
import { tablizerActions } from "./tablizerActions";
import { useArticleInsights } from "./useArticleInsights";
import { buildTablizerContext, compareSnapshots, dateInputValue, type ArticleSort, type CompareGroup, type Snapshot } from "./tablizerContext";

const DEFAULT_HIDDEN = defaultHidden(ARTICLE_COLUMNS);
const pmidOf = (a: Article) => a.pmid;
const str = (v: unknown) => (typeof v === "string" ? v : "");
/** Whether the page opened on a URL that names another search than the saved view's (a pasted link): it wins. */
const urlWins = (saved: ViewStateJson) => {
  const url = decodeTablizer(new URLSearchParams(window.location.search));
  const search = (saved.search ?? {}) as Record<string, unknown>;
  return Boolean(url.query.trim()) && [url.query, url.dateStart, url.dateEnd].join("|") !== [str(search.query), str(search.dateStart), str(search.dateEnd)].join("|");
};

const ARTICLES: RowSource<Article> = {
  fetch: (pmid) => api.getArticle(pmid),
  notFound: (pmid) => `PMID ${pmid} was not found.`,
  rowDomId: articleRowId,
};

export function TablizerPage() {
  const [form, setForm] = useState({ query: "", dateStart: "", dateEnd: "" });
  const [sort, setSort] = useState<ArticleSort>("relevance");
  const [pageSize, setPageSize] = useState(PAGE_SIZES[0]);
  const [search, setSearch] = useState<TablizerSearch | null>(null);
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
  const urlSearch = useRef<Promise<number | null> | null>(null); // the search the URL asked for, while the saved view loads

  /** Runs a search; resolves to its result count (null when it did not run or failed). */
  const runSearch = useCallback(async (req: TablizerSearch): Promise<number | null> => {
    if (!req.query.trim()) {
      setError("Enter a query to search PubMed.");
      return null;
    }
    if (req.dateStart && req.dateEnd && req.dateStart > req.dateEnd) {
      setError("The start date is after the end date.");
      return null;
    }
    let count: number | null = null;
    setSearch(req);
    setSelectedSnapshotId(null);
    setCompare(null);
    await run(async (signal) => {
      const response = await api.searchArticles(
        { q: req.query, date_start: req.dateStart, date_end: req.dateEnd, sort: req.sort, page: req.page, page_size: req.pageSize },
        signal,
      );
      const articles = Array.isArray(response.articles) ? response.articles : [];
      setResults({ ...response, articles });
      setSelected(new Set());
      count = response.total_count ?? articles.length;
    });
    return count;
  }, [run, setError]);

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    undo.forget();
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
  const [gridSort, setGridSort] = useState<GridSort>(NO_SORT);
  const grid = useGridState(DEFAULT_HIDDEN);
  const columns = withAIColumns(ARTICLE_COLUMNS, ai, pmidOf);
  const rows = insights.narrow(applyAIFilters(sortRows(baseRows, columns, gridSort), ai.columns, pmidOf));
  const askAbout = useAskAbout("tablizer");
  const openRow = useCallback((pmid: string) => void openArticle(pmid), [openArticle]);

  // The working state is saved as it changes and restored on mount (another device too) unless the URL names a search.
  const viewState = (): ViewStateJson => ({
    search: { query: search?.query ?? form.query, dateStart: search?.dateStart ?? form.dateStart, dateEnd: search?.dateEnd ?? form.dateEnd, sort, pageSize },
    ...gridViewOf({ sort: gridSort, hidden: grid.hidden, ai, charts: insights.charts, filters: insights.filters, selected, collapsed: grid.collapsed }),
  });
  const openView = async (json: ViewStateJson) => {
    const v = decodeGridView(json);
    const saved = (json.search ?? {}) as Record<string, unknown>;
    const next = { query: str(saved.query), dateStart: str(saved.dateStart), dateEnd: str(saved.dateEnd) };
    const savedSort: ArticleSort = saved.sort === "date" ? "date" : "relevance";
    const savedSize = PAGE_SIZES.includes(Number(saved.pageSize)) ? Number(saved.pageSize) : PAGE_SIZES[0];
    applyGridView(v, { setSort: setGridSort, grid, ai, insights });
    // A reload's URL names this same search at its own page, already loading: the selection waits for it.
    if (urlSearch.current) await urlSearch.current;
    else {
      setForm(next);
      setSort(savedSort);
      setPageSize(savedSize);
      if (next.query.trim()) await runSearch({ ...next, sort: savedSort, page: 1, pageSize: savedSize });
    }
    setSelected(new Set(v.selected));
  };
  // A restore that arrives after the user started typing a query leaves their search alone.
  const [openedOn] = useState(() => decodeTablizer(new URLSearchParams(window.location.search)).query);
  const typedRef = useRef(form.query);
  typedRef.current = form.query;
  const typed = () => typedRef.current.trim() !== openedOn.trim();
  const saveStatus = useSavedView("tablizer", search ? viewState() : null, openView, (saved) => typed() || urlWins(saved));
  const totalMatched = comparison ? baseRows.length : viewedSnapshot ? viewedSnapshot.totalCount : results?.total_count ?? 0;
  const live = !comparison && !viewedSnapshot;

  // Accepting a card snapshots what the page shows, so Undo can put it back.
  const undo = useResultsUndo(
    ai,
    () => ({ form, sort, pageSize, search, results, selected, selectedSnapshotId, compare }),
    (s) => {
      setForm(s.form);
      setSort(s.sort);
      setPageSize(s.pageSize);
      setSearch(s.search);
      setResults(s.results);
      setSelected(s.selected);
      setSelectedSnapshotId(s.selectedSnapshotId);
      setCompare(s.compare);
    },
  );

  const context = buildTablizerContext({
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
    screen: insights.screen(baseRows.length, rows.length),
    openItem: viewer ? openItemFields(["pmid", viewer.id], viewer.item, ARTICLE_OPEN_FIELDS) : null,
  });

  const formRef = useRef(form);
  formRef.current = form;
  const binding = usePageChat({ app: "tablizer", context, undo, ai, insights: insights.payloadHandlers, handlers: {
      pubmed_query_suggestion: async (data) => {
        const query = typeof data.query === "string" ? data.query.trim() : "";
        if (!query) throw new Error("The suggestion has no query.");
        // Dates the suggestion names replace the form's; dates it leaves out stay as they are.
        const next = {
          query,
          dateStart: data.date_start ? dateInputValue(data.date_start, false) : formRef.current.dateStart,
          dateEnd: data.date_end ? dateInputValue(data.date_end, true) : formRef.current.dateEnd,
        };
        const previous = search && results ? { query: search.query, count: results.total_count ?? results.articles.length } : null;
        return undo.accept(async () => {
          setForm(next);
          const count = await runSearch({ ...next, sort, page: 1, pageSize });
          return searchAccepted("pubmed_query_suggestion", query, count, previous);
        });
      },
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
  });

  // The search, its page and the open article live in the URL (reload, Back/Forward, a pasted link).
  useUrlSync<TablizerUrl>({
    encode: encodeTablizer,
    decode: decodeTablizer,
    current:
      search || viewer
        ? {
            query: search?.query ?? "",
            dateStart: search?.dateStart ?? "",
            dateEnd: search?.dateEnd ?? "",
            sort: search?.sort ?? "relevance",
            page: search?.page ?? 1,
            pageSize: search?.pageSize ?? pageSize,
            open: viewer?.id ?? null,
          }
        : null,
    entry: (v) => JSON.stringify([v.query, v.dateStart, v.dateEnd, v.sort, v.page, v.pageSize]),
    apply: (v) => {
      const same =
        search && search.query === v.query && search.dateStart === v.dateStart && search.dateEnd === v.dateEnd &&
        search.sort === v.sort && search.page === v.page && search.pageSize === v.pageSize;
      if (!same) {
        setForm({ query: v.query, dateStart: v.dateStart, dateEnd: v.dateEnd });
        setSort(v.sort);
        setPageSize(v.pageSize);
        if (v.query.trim()) urlSearch.current = runSearch({ query: v.query, dateStart: v.dateStart, dateEnd: v.dateEnd, sort: v.sort, page: v.page, pageSize: v.pageSize });
        else {
          setSearch(null);
          setResults(null);
        }
      }
      if (v.open && v.open !== viewer?.id) void openArticle(v.open);
      else if (!v.open && viewer) close();
    },
  });

  const total = results?.total_count ?? 0;
  const page = search?.page ?? 1;
  const size = search?.pageSize ?? pageSize;
  const first = total ? (page - 1) * size + 1 : 0;

  return (
    <ResultsLayout testId="tablizer-page" title="Tablizer" source="articles" scope={insights.scope} binding={binding} count={results ? rows.length : null}
      streams={{
        selection: streams,
        loadLabel: "Use its PubMed query",
        canLoad: (s) => Boolean(s.settings?.pubmed_query),
        onLoad: (s) => setForm((f) => ({ ...f, query: s.settings.pubmed_query ?? f.query })),
      }}
      detail={
        viewer && (
          <DetailPanel title={`PMID ${viewer.id}`} onClose={close}>
            <ArticleDetail article={viewer.item} loading={viewer.loading} error={viewer.error} />
          </DetailPanel>
        )
      }
    >
      <ViewsMenu app="tablizer" current={() => (search ? viewState() : null)} onOpen={(v) => void openView(v)} status={saveStatus} />
      <CollapsibleSearch summary={[search?.query ?? form.query, search?.dateStart && `from ${search.dateStart}`, search?.dateEnd && `to ${search.dateEnd}`].filter(Boolean).join(" · ")}
                         collapsed={grid.collapsed && Boolean(search)} onToggle={grid.setCollapsed}>
        <TablizerSearchForm form={form} sort={sort} pageSize={pageSize} loading={loading} onForm={setForm} onSort={setSort} onPageSize={setPageSize} onSubmit={submit} />
      </CollapsibleSearch>
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
        <ExportMenu app="tablizer" rows={rows} rowId={(a) => a.pmid} columns={ARTICLE_EXPORT} ai={ai} selected={selected} query={viewedSnapshot?.query ?? form.query} charts={insights.chartFigures} facets={ARTICLE_FACETS} pinned={insights.charts.map((c) => c.facet)} one="article" />
      )}
      <p className="results-summary" data-testid="results-summary" aria-live="polite">
        {comparison
          ? `Comparing snapshots: ${plural(rows.length, "article")} in this group`
          : viewedSnapshot
            ? `Snapshot “${viewedSnapshot.label}”: ${plural(viewedSnapshot.articles.length, "article")} (query: ${viewedSnapshot.query})`
            : results
              ? resultsSummary({
                  total,
                  first,
                  loaded: results.articles.length,
                  visible: rows.length,
                  filtering: ai.columns.some((c) => c.filter),
                  one: "result",
                })
              : "Search PubMed to fill the table."}
      </p>
      <AcceptedChange undo={undo} />
      <FilterNotice ai={ai} visible={rows.length} loaded={baseRows.length} one="article" />
      {live && results?.query_translation && (
        <details className="small">
          <summary>How PubMed read the query</summary>
          <code>{results.query_translation}</code>
        </details>
      )}
      {results && insights.panel}
      {live && search && results?.total_count === 0 && !loading && (
        <ArticleZeroResults search={search} onRun={(next) => {
          undo.forget();
          setForm({ query: next.query, dateStart: next.dateStart, dateEnd: next.dateEnd });
          void runSearch(next);
        }} />
      )}
      <ResultsGrid rows={rows} columns={columns} ai={ai} rowId={pmidOf} rowDomId={articleRowId} rowHref={articleHref}
                   selectLabel={(pmid) => `Select PMID ${pmid}`} hidden={grid.hidden} onHide={grid.setHidden} sort={gridSort}
                   onSort={(field) => setGridSort((s) => nextSort(s, field))} selected={selected} highlighted={highlighted}
                   onSelect={setSelected} onOpen={openRow} one="article" onAsk={() => askAbout([...selected], "article")} />
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
    </ResultsLayout>
  );
}
