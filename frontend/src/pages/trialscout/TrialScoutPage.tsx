/** TrialScout: ClinicalTrials.gov search form, token-paged results with AI columns, trial details, and the chat tray. */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, api } from "../../api/client";
import type { TrialDetail, TrialSummary } from "../../api/types";
import { TrialDetailView } from "../../cards/TrialDetailView";
import type { PageChatBinding } from "../../chat/ChatTray";
import { WithChat } from "../../chat/WithChat";
import { navigate, useLocation } from "../../router";
import { applyAIFilters, columnFromPayload, useAIColumns } from "../common/aiColumns";
import { AIColumnsBar } from "../common/AIColumnsBar";
import { DetailPanel } from "../common/DetailPanel";
import { Pager } from "../common/Pager";
import { StreamSelector, useStreamSelection } from "../common/streamSelection";
import {
  buildTrialScoutContext,
  emptyTrialForm,
  formFromSuggestion,
  sortTrials,
  trialSearchParams,
  type TrialForm,
  type TrialSort,
  type TrialSortField,
} from "./trialscoutContext";
import { TrialSearchForm } from "./TrialSearchForm";
import { TrialTable } from "./TrialTable";

const PAGE_SIZE = 25;
const NO_TRIALS: TrialSummary[] = [];
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

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

interface Viewer {
  nctId: string;
  trial: TrialDetail | null;
  loading: boolean;
  error: string | null;
}

export function TrialScoutPage() {
  const { params } = useLocation();
  const [form, setForm] = useState<TrialForm>(emptyTrialForm);
  const [paging, setPaging] = useState<Paging | null>(null);
  const [results, setResults] = useState<Results | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sort, setSort] = useState<TrialSort>({ field: null, direction: "asc" });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [viewer, setViewer] = useState<Viewer | null>(null);
  const [highlighted, setHighlighted] = useState<string | null>(null);
  const ai = useAIColumns("trialscout", results?.trials ?? NO_TRIALS);
  const streams = useStreamSelection("trialscout");
  const abortRef = useRef<AbortController | null>(null);

  const runSearch = useCallback(async (next: Paging) => {
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    setLoading(true);
    setError(null);
    try {
      const response = await api.searchTrials(
        trialSearchParams(next.form, PAGE_SIZE, next.tokens[next.index] ?? null),
        controller.signal,
      );
      setPaging(next);
      setResults((prev) => ({
        trials: Array.isArray(response.trials) ? response.trials : [],
        // CT.gov reports the total on the first page only: keep it while paging.
        total: typeof response.total_count === "number" ? response.total_count : next.index > 0 ? prev?.total ?? null : null,
        nextToken: response.next_page_token ?? null,
      }));
      setSelected(new Set());
    } catch (err) {
      if (!controller.signal.aborted) setError(message(err));
    } finally {
      if (abortRef.current === controller) {
        abortRef.current = null;
        setLoading(false);
      }
    }
  }, []);

  useEffect(() => () => abortRef.current?.abort(), []);

  const search = useCallback((f: TrialForm) => runSearch({ form: f, tokens: [null], index: 0 }), [runSearch]);
  const nextPage = () =>
    paging && results?.nextToken &&
    void runSearch({ ...paging, tokens: [...paging.tokens.slice(0, paging.index + 1), results.nextToken], index: paging.index + 1 });
  const prevPage = () => paging && paging.index > 0 && void runSearch({ ...paging, index: paging.index - 1 });

  const openTrial = useCallback(async (nctId: string) => {
    const id = nctId.toUpperCase();
    const known = results?.trials.find((t) => t.nct_id === id) ?? null;
    setViewer({ nctId: id, trial: known, loading: true, error: null });
    setHighlighted(id);
    requestAnimationFrame(() => document.getElementById(`row-nct-${id}`)?.scrollIntoView?.({ block: "center", behavior: "smooth" }));
    try {
      const trial = await api.getTrial(id);
      setViewer((v) => (v?.nctId === id ? { ...v, trial: { ...known, ...trial }, loading: false } : v));
    } catch (err) {
      const text = err instanceof ApiError && err.status === 404 ? `${id} was not found.` : message(err);
      setViewer((v) => (v?.nctId === id ? { ...v, loading: false, error: text } : v));
    }
  }, [results]);

  // Deep link from an entity link opened in a new tab: /trialscout?nct=NCT01234567
  const linkedNct = params.get("nct");
  useEffect(() => {
    if (!linkedNct) return;
    void openTrial(linkedNct);
    navigate("/trialscout", { replace: true });
  }, [linkedNct, openTrial]);

  const rows = applyAIFilters(sortTrials(results?.trials ?? [], sort), ai.columns, (t) => t.nct_id);

  const contextRef = useRef<Record<string, unknown>>({});
  contextRef.current = buildTrialScoutContext({
    form,
    totalMatched: results ? results.total : null,
    rows,
    aiColumns: ai.columns,
    selectedNctIds: [...selected],
    sort,
    page: (paging?.index ?? 0) + 1,
    pageSize: PAGE_SIZE,
    viewerNctId: viewer?.nctId ?? null,
    streamId: streams.selectedId,
  });

  const formRef = useRef(form);
  formRef.current = form;
  const binding: PageChatBinding = {
    app: "trialscout",
    getContext: () => contextRef.current,
    payloadHandlers: {
      trial_search_suggestion: async (data) => {
        const next = formFromSuggestion(data);
        setForm(next);
        await search(next);
      },
      ai_column_suggestion: (data) => {
        const { name, criteria, type } = columnFromPayload(data);
        ai.add(name, criteria, type);
      },
    },
    clientActions: {
      run_search: () => void search(formRef.current),
      clear_form: () => setForm(emptyTrialForm),
      ...(results?.nextToken ? { next_page: nextPage } : {}),
      ...(paging && paging.index > 0 ? { previous_page: prevPage } : {}),
    },
    onEntity: (kind, id) => (kind === "nct" ? void openTrial(id) : navigate(`/tablizer?pmid=${encodeURIComponent(id)}`)),
  };

  const onSort = (field: TrialSortField) =>
    setSort((s) => (s.field === field ? { field, direction: s.direction === "asc" ? "desc" : "asc" } : { field, direction: "asc" }));

  const pageNumber = (paging?.index ?? 0) + 1;
  const first = (pageNumber - 1) * PAGE_SIZE + 1;

  return (
    <WithChat binding={binding}>
      <div className="page-columns">
        <div className="page-content" data-testid="trialscout-page">
          <h1 className="page-title">TrialScout</h1>
          <StreamSelector
            selection={streams}
            loadLabel="Use its trial search"
            canLoad={(s) => Boolean(s.settings?.trial_search)}
            onLoad={(s) => setForm(formFromSuggestion(s.settings.trial_search ?? {}))}
          />
          <TrialSearchForm
            form={form}
            loading={loading}
            onChange={setForm}
            onSubmit={() => void search(form)}
            onClear={() => setForm(emptyTrialForm)}
          />
          {error && (
            <p className="error-text" role="alert" data-testid="search-error">
              {error}
            </p>
          )}
          <AIColumnsBar ai={ai} visible={rows.length} loaded={results?.trials.length ?? 0} />
          <p className="results-summary" data-testid="results-summary" aria-live="polite">
            {results
              ? `${results.total != null ? `${results.total.toLocaleString("en-US")} trials` : "Trials"}${
                  results.trials.length ? ` · showing ${first}–${first + results.trials.length - 1}` : ""
                }`
              : "Search ClinicalTrials.gov to fill the table."}
          </p>
          {results && results.trials.length === 0 && (
            <p className="muted" data-testid="no-results-hint">
              No trials match every filter. Try fewer filters: any phase or status, a broader condition, or
              intervention synonyms.
            </p>
          )}
          {(results?.trials.length ?? 0) > 0 && (
            <TrialTable
              rows={rows}
              ai={ai}
              sort={sort}
              selected={selected}
              highlighted={highlighted}
              onSort={onSort}
              onToggle={(id) =>
                setSelected((s) => {
                  const next = new Set(s);
                  if (next.has(id)) next.delete(id);
                  else next.add(id);
                  return next;
                })
              }
              onToggleAll={(all) => setSelected(all ? new Set(rows.map((r) => r.nct_id)) : new Set())}
              onOpen={(id) => void openTrial(id)}
            />
          )}
          {results && (pageNumber > 1 || results.nextToken) && (
            <Pager
              label={`Page ${pageNumber}${results.total ? ` of ${Math.ceil(results.total / PAGE_SIZE).toLocaleString("en-US")}` : ""}`}
              canPrev={pageNumber > 1 && !loading}
              canNext={Boolean(results.nextToken) && !loading}
              onPrev={prevPage}
              onNext={nextPage}
            />
          )}
        </div>
        {viewer && (
          <DetailPanel title={viewer.nctId} onClose={() => setViewer(null)}>
            {viewer.trial ? (
              <TrialDetailView data={viewer.trial} onEntity={binding.onEntity} />
            ) : (
              <p className="muted">{viewer.loading ? "Loading…" : null}</p>
            )}
            {viewer.trial && viewer.loading && <p className="muted small">Loading full record…</p>}
            {viewer.error && (
              <p className="error-text" role="alert">
                {viewer.error}
              </p>
            )}
          </DetailPanel>
        )}
      </div>
    </WithChat>
  );
}
