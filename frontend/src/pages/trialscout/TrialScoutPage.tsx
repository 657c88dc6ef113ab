/** TrialScout: ClinicalTrials.gov search form, token-paged results with AI columns, trial details, and the chat tray. */
import { useCallback, useRef, useState } from "react";
import { api } from "../../api/client";
import type { TrialDetail, TrialSummary } from "../../api/types";
import { TrialDetailView } from "../../cards/TrialDetailView";
import { navigate } from "../../router";
import { AcceptedChange } from "../common/AcceptedChange";
import { resultsSummary } from "../common/counts";
import { FilterNotice } from "../common/FilterNotice";
import { applyAIFilters, useAIColumns } from "../common/aiColumns";
import { AIColumnsBar } from "../common/AIColumnsBar";
import { ExportMenu } from "../common/ExportMenu";
import { DetailPanel } from "../common/DetailPanel";
import { Pager } from "../common/Pager";
import { useDeepLink, useLatestSearch, useRowViewer, type RowSource } from "../common/resultsPage";
import { ResultsLayout } from "../common/ResultsLayout";
import { useStreamSelection } from "../common/streamSelection";
import { usePageChat, useResultsUndo } from "../common/usePageChat";
import { searchAccepted } from "../../state/undo";
import { describeTrialForm } from "./describeForm";
import { useUrlSync } from "../../state/urlState";
import { decodeTrialScout, encodeTrialScout, trialUrlHasSearch, type TrialScoutUrl } from "./trialscoutUrl";
import {
  buildTrialScoutContext,
  emptyTrialForm,
  formFromSuggestion,
  patientTrialForm,
  trialSearchParams,
  type TrialForm,
  type TrialSort,
} from "./trialscoutContext";
import { trialscoutActions } from "./trialscoutActions";
import { TrialSearchForm } from "./TrialSearchForm";
import { TrialZeroResults } from "./looserTrialSearches";
import { TRIAL_COLUMNS, TRIAL_EXPORT, TRIAL_FACETS, trialHref, trialRowId } from "./TrialTable";
import { withAIColumns } from "../common/DataGrid";
import { CollapsibleSearch } from "../common/GridControls";
import { ResultsGrid } from "../common/ResultsGrid";
import { defaultHidden, nextSort, sortRows } from "../common/gridModel";
import { applyGridView, decodeGridView, gridViewOf, useAskAbout, useGridState } from "../common/gridView";
import { ViewsMenu } from "../common/ViewsMenu";
import { useSavedView } from "../../state/savedView";
import type { ViewStateJson } from "../../api/views";
import { useTrialInsights } from "./useTrialInsights";
import { openItemFields, TRIAL_OPEN_FIELDS } from "../common/screenContext";
import { usePatientPage } from "./patient/usePatientPage";

const PAGE_SIZE = 25;
const NO_TRIALS: TrialSummary[] = [];
const DEFAULT_HIDDEN = defaultHidden(TRIAL_COLUMNS);
const trialId = (t: TrialSummary) => t.nct_id;
/** The form a saved view keeps, as URL parameters (one decoder for both). */
const encodeQuery = (form: unknown): Record<string, string> => {
  if (!form || typeof form !== "object") return {};
  const patch = encodeTrialScout({ form: { ...emptyTrialForm, ...(form as TrialForm) }, tokens: [], sort: { field: null, direction: "asc" }, open: null });
  return Object.fromEntries(Object.entries(patch).filter((e): e is [string, string] => typeof e[1] === "string"));
};
const formKey = (form: TrialForm) => JSON.stringify(encodeQuery(form));
/** Whether the page opened on a URL that names another search than the saved view's (a pasted link): it wins.
 * A reload names the same search, and the whole saved view (its columns, charts, selection) comes back. */
const urlWins = (saved: ViewStateJson) => {
  const url = decodeTrialScout(new URLSearchParams(window.location.search));
  return trialUrlHasSearch(url) && JSON.stringify(url.form) !== JSON.stringify(decodeTrialScout(new URLSearchParams(encodeQuery(saved.form))).form);
};

const TRIALS: RowSource<TrialDetail> = {
  fetch: (nctId) => api.getTrial(nctId),
  notFound: (nctId) => `${nctId} was not found.`,
  rowDomId: trialRowId,
};

interface Paging {
  form: TrialForm;
  /** tokens[i] is the page token of page i (null for the first page): Prev walks back down the stack. */
  tokens: Array<string | null>;
  index: number;
}

interface Results {
  trials: TrialSummary[];
  total: number | null;
  nextToken: string | null;
}

export function TrialScoutPage() {
  const [form, setForm] = useState<TrialForm>(emptyTrialForm);
  const [paging, setPaging] = useState<Paging | null>(null);
  const [results, setResults] = useState<Results | null>(null);
  const { loading, error, run } = useLatestSearch();
  const [sort, setSort] = useState<TrialSort>({ field: null, direction: "asc" });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const { viewer, highlighted, open, close } = useRowViewer(TRIALS);
  const ai = useAIColumns("trialscout", results?.trials ?? NO_TRIALS);
  const streams = useStreamSelection("trialscout");

  /** Runs a search; resolves to its total (null when unknown or when it failed). */
  const urlSearch = useRef<Promise<number | null> | null>(null); // the search the URL asked for, while the saved view loads
  const runSearch = useCallback(
    async (next: Paging): Promise<number | null> => {
      let count: number | null = null;
      await run(async (signal) => {
        const response = await api.searchTrials(trialSearchParams(next.form, PAGE_SIZE, next.tokens[next.index] ?? null), signal);
        count = typeof response.total_count === "number" ? response.total_count : null;
        setPaging(next);
        setResults((prev) => ({
          trials: Array.isArray(response.trials) ? response.trials : [],
          // CT.gov reports the total on the first page only: keep it while paging.
          total: typeof response.total_count === "number" ? response.total_count : next.index > 0 ? prev?.total ?? null : null,
          nextToken: response.next_page_token ?? null,
        }));
        setSelected(new Set());
      });
      return count;
    },
    [run],
  );

  const search = useCallback((f: TrialForm) => runSearch({ form: f, tokens: [null], index: 0 }), [runSearch]);
  const nextPage = () =>
    paging && results?.nextToken &&
    void runSearch({ ...paging, tokens: [...paging.tokens.slice(0, paging.index + 1), results.nextToken], index: paging.index + 1 });
  const prevPage = () => paging && paging.index > 0 && void runSearch({ ...paging, index: paging.index - 1 });

  const openTrial = useCallback(
    (nctId: string) => {
      const id = nctId.toUpperCase();
      return open(id, results?.trials.find((t) => t.nct_id === id) ?? null);
    },
    [open, results],
  );
  useDeepLink("nct", "/trialscout", openTrial);

  const grid = useGridState(DEFAULT_HIDDEN);
  const [openedOn] = useState(() => decodeTrialScout(new URLSearchParams(window.location.search)));
  const loadedTrials = results?.trials ?? NO_TRIALS;
  const patient = usePatientPage({
    loaded: loadedTrials,
    viewerId: viewer?.id ?? null,
    // "Find trials for this patient": the search form from the profile (main condition, sex, age), run.
    onFindTrials: (p) => {
      const next = patientTrialForm(p);
      setForm(next);
      void search(next);
    },
  });
  const insights = useTrialInsights({ submitted: paging?.form ?? null, currentForm: () => formRef.current, setForm, search,
                                     local: patient.chartCounts });
  const columns = withAIColumns([...TRIAL_COLUMNS, ...patient.columns], ai, trialId);
  const rows = patient.filterRows(insights.narrow(applyAIFilters(sortRows(loadedTrials, columns, sort), ai.columns, trialId)));
  const askAbout = useAskAbout("trialscout");

  // The working state is saved as it changes and restored on mount (another device too) unless the URL names a search.
  const viewState = (): ViewStateJson => ({
    form: paging?.form ?? form,
    ...gridViewOf({ sort, hidden: grid.hidden, ai, charts: insights.charts, filters: insights.filters, selected, collapsed: grid.collapsed }),
    patientCollapsed: patient.collapsed,
  });
  const openView = async (json: ViewStateJson) => {
    const v = decodeGridView(json);
    const saved = decodeTrialScout(new URLSearchParams(encodeQuery(json.form)));
    applyGridView(v, { setSort: setSort, grid, ai, insights });
    patient.setCollapsed(json.patientCollapsed !== false);
    // A reload's URL names this same search at its own page, already loading: the selection waits for it.
    if (urlSearch.current) await urlSearch.current;
    else {
      setForm(saved.form);
      if (trialUrlHasSearch(saved)) await search(saved.form);
    }
    setSelected(new Set(v.selected));
  };
  // A restore that arrives after the user started typing a search leaves their search alone.
  const typed = () => formKey(formRef.current) !== formKey(openedOn.form);
  const saveStatus = useSavedView("trialscout", paging ? viewState() : null, openView, (saved) => typed() || urlWins(saved));

  // Accepting a card snapshots what the page shows, so Undo can put it back.
  const undo = useResultsUndo(
    ai,
    () => ({ form, paging, results, sort, selected }),
    (s) => {
      setForm(s.form);
      setPaging(s.paging);
      setResults(s.results);
      setSort(s.sort);
      setSelected(s.selected);
    },
  );

  const context = buildTrialScoutContext({
    form,
    totalMatched: results ? results.total : null,
    rows,
    aiColumns: ai.columns,
    selectedNctIds: [...selected],
    sort,
    page: (paging?.index ?? 0) + 1,
    pageSize: PAGE_SIZE,
    viewerNctId: viewer?.id ?? null,
    streamId: streams.selectedId,
    screen: insights.screen(loadedTrials.length, rows.length),
    openItem: viewer ? openItemFields(["nct_id", viewer.id], viewer.item, TRIAL_OPEN_FIELDS) : null,
  });
  if (patient.context) context.screening = patient.context;

  const formRef = useRef(form);
  formRef.current = form;
  const binding = usePageChat({ app: "trialscout", context, undo, ai, insights: insights.payloadHandlers, handlers: {
      ...patient.handlers,
      trial_search_suggestion: async (data) => {
        const next = formFromSuggestion(data);
        const previous = paging && results ? { query: describeTrialForm(paging.form), count: results.total } : null;
        return undo.accept(async () => {
          setForm(next);
          const count = await search(next);
          return searchAccepted("trial_search_suggestion", describeTrialForm(next), count, previous);
        });
      },
    },
    clientActions: trialscoutActions({
      runSearch: () => search(formRef.current),
      openTrial,
      clearForm: () => setForm(emptyTrialForm),
      nextPage: results?.nextToken ? nextPage : undefined,
      previousPage: paging && paging.index > 0 ? prevPage : undefined,
    }),
    onEntity: (kind, id) => (kind === "nct" ? void openTrial(id) : navigate(`/tablizer?pmid=${encodeURIComponent(id)}`)),
  });

  // The search, its page, the sort and the open trial live in the URL (reload, Back/Forward, a pasted link).
  useUrlSync<TrialScoutUrl>({
    encode: encodeTrialScout,
    decode: decodeTrialScout,
    current:
      paging || viewer
        ? {
            form: paging?.form ?? form,
            tokens: (paging?.tokens.slice(1, paging.index + 1) ?? []).filter((t): t is string => typeof t === "string"),
            sort,
            open: viewer?.id ?? null,
          }
        : null,
    entry: (v) => JSON.stringify([v.form, v.tokens]),
    apply: (v) => {
      setSort(v.sort);
      const tokens = [null, ...v.tokens];
      const same =
        paging && JSON.stringify(paging.form) === JSON.stringify(v.form) && JSON.stringify(paging.tokens.slice(0, paging.index + 1)) === JSON.stringify(tokens);
      if (!same) {
        setForm(v.form);
        if (trialUrlHasSearch(v) || v.tokens.length) urlSearch.current = runSearch({ form: v.form, tokens, index: tokens.length - 1 });
        else {
          setPaging(null);
          setResults(null);
        }
      }
      if (v.open && v.open !== viewer?.id) void openTrial(v.open);
      else if (!v.open && viewer) close();
    },
  });

  const onSort = (field: string) => setSort((s) => nextSort(s, field));
  const openRow = useCallback((id: string) => void openTrial(id), [openTrial]);

  const pageNumber = (paging?.index ?? 0) + 1;
  const first = (pageNumber - 1) * PAGE_SIZE + 1;

  return (
    <ResultsLayout testId="trialscout-page" title="TrialScout" source="trials" scope={insights.scope} binding={binding} count={results ? rows.length : null}
      streams={{
        selection: streams,
        loadLabel: "Use its trial search",
        canLoad: (s) => Boolean(s.settings?.trial_search),
        onLoad: (s) => setForm(formFromSuggestion(s.settings.trial_search ?? {})),
      }}
      detail={
        viewer && (
          <DetailPanel title={viewer.id} onClose={close}>
            {patient.criteria}
            {viewer.item ? (
              <TrialDetailView data={viewer.item} onEntity={binding.onEntity} />
            ) : (
              <p className="muted">{viewer.loading ? "Loading…" : null}</p>
            )}
            {viewer.item && viewer.loading && <p className="muted small">Loading full record…</p>}
            {viewer.error && (
              <p className="error-text" role="alert">
                {viewer.error}
              </p>
            )}
          </DetailPanel>
        )
      }
    >
      <ViewsMenu app="trialscout" current={() => (paging ? viewState() : null)} onOpen={(v) => void openView(v)} status={saveStatus} />
      <CollapsibleSearch summary={describeTrialForm(paging?.form ?? form)} collapsed={grid.collapsed && Boolean(paging)} onToggle={grid.setCollapsed}>
        <TrialSearchForm
          form={form}
          loading={loading}
          onChange={setForm}
          onSubmit={() => {
            undo.forget();
            void search(form);
          }}
          onClear={() => setForm(emptyTrialForm)}
        />
      </CollapsibleSearch>
      {patient.panel}
      {error && (
        <p className="error-text" role="alert" data-testid="search-error">
          {error}
        </p>
      )}
      <AIColumnsBar ai={ai} visible={rows.length} loaded={results?.trials.length ?? 0} />
      {rows.length > 0 && (
        <ExportMenu app="trialscout" rows={rows} rowId={(t) => t.nct_id} columns={TRIAL_EXPORT} ai={ai} selected={selected} query={describeTrialForm(form)} charts={insights.chartFigures} facets={TRIAL_FACETS} pinned={insights.charts.map((c) => c.facet)} one="trial" />
      )}
      <p className="results-summary" data-testid="results-summary" aria-live="polite">
        {results
          ? resultsSummary({
              total: results.total,
              first,
              loaded: results.trials.length,
              visible: rows.length,
              filtering: ai.columns.some((c) => c.filter) || patient.filtering,
              filters: !patient.filtering ? undefined : ai.columns.some((c) => c.filter) ? "the filters" : "the verdict filter",
              one: "trial",
            })
          : "Search ClinicalTrials.gov to fill the table."}
      </p>
      <AcceptedChange undo={undo} />
      <FilterNotice ai={ai} visible={rows.length} loaded={results?.trials.length ?? 0} one="trial" />
      {results && insights.panel}
      {paging && results?.total === 0 && !loading && (
        <TrialZeroResults form={paging.form} onRun={(next) => { undo.forget(); setForm(next); void search(next); }} />
      )}
      <ResultsGrid rows={rows} columns={columns} ai={ai} rowId={trialId} rowDomId={trialRowId} rowHref={trialHref}
                   selectLabel={(id) => `Select ${id}`} hidden={grid.hidden} onHide={grid.setHidden} sort={sort} onSort={onSort}
                   selected={selected} highlighted={highlighted} onSelect={setSelected} onOpen={openRow}
                   one="trial" onAsk={() => askAbout([...selected], "trial")} />
      {results && (pageNumber > 1 || results.nextToken) && (
        <Pager
          page={pageNumber}
          total={results.total}
          pageSize={PAGE_SIZE}
          hasNext={Boolean(results.nextToken)}
          loading={loading}
          onPrev={prevPage}
          onNext={nextPage}
        />
      )}
    </ResultsLayout>
  );
}
