import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../../api/client";
import type { ArticleSearchResponse, SourcesInfo, TrialSearchResponse, TrialSummary } from "../../api/types";
import { TrialDetailView } from "../../cards/TrialDetailView";
import { ArticleZeroResults } from "../tablizer/looserArticleSearches";
import type { TablizerSearch } from "../tablizer/tablizerUrl";
import { TrialZeroResults } from "../trialscout/looserTrialSearches";
import { emptyTrialForm } from "../trialscout/trialscoutContext";
import { TRIAL_COLUMNS, trialHref, trialRowId } from "../trialscout/TrialTable";
import type { AIColumns } from "./aiColumns";
import { DataGrid } from "./DataGrid";
import { queryTerms } from "./queryTerms";
import { SourceBanner } from "./SourceBanner";

afterEach(() => {
  vi.restoreAllMocks();
  sessionStorage.clear();
});

const OFFLINE: SourcesInfo = {
  mode: "offline", trials_source: "ClinicalTrials.gov", articles_source: "PubMed",
  trials: { records: 35602, snapshot_from: "2016-04-13", snapshot_to: "2026-08-11", undated: 372 },
  articles: { records: 15624, snapshot_from: "2012-11-23", snapshot_to: "2026-03-21", undated: 340 },
};

describe("the data source banner", () => {
  it("names the offline sample, its size and its records' dates, per page", async () => {
    vi.spyOn(api, "sources").mockResolvedValue(OFFLINE);
    render(<SourceBanner kind="trials" />);
    const banner = await screen.findByRole("note", { name: "Data source" });
    expect(banner.textContent).toContain("Offline sample of 35,602 trials, records as of 2016-04-13 to 2026-08-11");
    expect(banner.textContent).toContain("not on ClinicalTrials.gov; a trial's status is as of the date its record was copied");
    render(<SourceBanner kind="articles" />);
    await waitFor(() => expect(screen.getAllByTestId("source-banner")[1].textContent).toContain(
      "Offline sample of 15,624 articles, records as of 2012-11-23 to 2026-03-21"));
  });

  it("says Live and the registry when the server searches the live APIs", async () => {
    vi.spyOn(api, "sources").mockResolvedValue({ mode: "live", trials_source: "ClinicalTrials.gov", articles_source: "PubMed" });
    render(<SourceBanner kind="articles" />);
    const banner = await screen.findByTestId("source-banner");
    expect(banner.textContent).toContain("Live: PubMed");
    expect(banner.textContent).not.toContain("sample");
  });

  it("stays hidden for the session once dismissed, and shows nothing when the figures cannot be read", async () => {
    const sources = vi.spyOn(api, "sources").mockResolvedValue(OFFLINE);
    const first = render(<SourceBanner kind="trials" />);
    fireEvent.click(await screen.findByRole("button", { name: /hide/i }));
    expect(screen.queryByTestId("source-banner")).toBeNull();
    first.unmount();
    render(<SourceBanner kind="trials" />); // another visit to the page in this session
    expect(screen.queryByTestId("source-banner")).toBeNull();
    expect(sources).toHaveBeenCalledTimes(1);
    sources.mockRejectedValue(new Error("offline"));
    render(<SourceBanner kind="articles" />); // the other page's banner is not hidden, but fails quietly
    await waitFor(() => expect(sources).toHaveBeenCalledTimes(2));
    expect(screen.queryByTestId("source-banner")).toBeNull();
  });
});

const table = { ai: { columns: [] } as unknown as AIColumns, selected: new Set<string>(), highlighted: null, onSelect: () => {}, onOpen: () => {},
                hidden: new Set<string>(), sort: { field: null, direction: "asc" as const }, onSort: () => {}, selectLabel: (id: string) => `Select ${id}` };
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const trial = (nct_id: string, status: string, snapshot_date: string | null): TrialSummary => ({ nct_id, title: nct_id, status, snapshot_date });

describe("statuses from old snapshots", () => {
  const rows = [
    trial("NCT00000001", "RECRUITING", "2016-04-13"), // an active status copied years ago
    trial("NCT00000002", "COMPLETED", "2016-04-13"), // a final status stays true
    trial("NCT00000003", "NOT_YET_RECRUITING", daysAgo(30)), // copied recently
    trial("NCT00000004", "RECRUITING", null), // live
    trial("NCT00000005", "ACTIVE_NOT_RECRUITING", daysAgo(400)),
  ];

  it("the grid marks an active status copied over a year ago, and no other", () => {
    render(<DataGrid {...table} rows={rows} columns={TRIAL_COLUMNS} rowId={(t) => t.nct_id} rowDomId={trialRowId} rowHref={trialHref} />);
    const marked = (id: string) => within(document.getElementById(trialRowId(id))!).queryByTestId("stale-status")?.textContent ?? null;
    // Under the row's "snapshot of <date>", so the mark says when the status was true.
    const row = (id: string) => document.getElementById(trialRowId(id))!.textContent;
    expect(marked("NCT00000001")).toBe("status may be out of date");
    expect(row("NCT00000001")).toContain("Recruitingsnapshot of 2016-04-13status may be out of date");
    expect(row("NCT00000005")).toContain(`Active, not recruitingsnapshot of ${daysAgo(400)}status may be out of date`);
    expect([marked("NCT00000002"), marked("NCT00000003"), marked("NCT00000004")]).toEqual([null, null, null]);
  });

  it("the detail panel marks it beside the status", () => {
    render(<TrialDetailView data={{ ...rows[0] }} />);
    const status = screen.getByText("Recruiting (snapshot of 2016-04-13)");
    expect(within(status).getByTestId("stale-status").textContent).toContain("status may be out of date");
    render(<TrialDetailView data={{ ...rows[2] }} />);
    expect(screen.getAllByTestId("stale-status")).toHaveLength(1);
  });
});

describe("a query's AND-ed terms", () => {
  it.each([
    ["melanoma pembrolizumab", ["melanoma", "pembrolizumab"]],
    ['"drug resistance"[tiab] AND EGFR', ['"drug resistance"[tiab]', "EGFR"]],
    ["breast cancer[tiab] (tamoxifen OR letrozole)", ["breast cancer[tiab]", "(tamoxifen OR letrozole)"]],
    ["EGFR[MeSH Terms] and resist*", ["EGFR[MeSH Terms]", "resist*"]],
  ])("%s", (query, terms) => expect(queryTerms(query)).toEqual(terms));

  it.each(["melanoma OR pembrolizumab", "a NOT b", '"unclosed', "(a b", "AREA[Condition]melanoma"])(
    "%s is not a plain AND: no terms to drop", (query) => expect(queryTerms(query)).toBeNull());
});

const articlesFound = (counts: Record<string, number>) =>
  vi.spyOn(api, "searchArticles").mockImplementation(async (params) => {
    const key = `${params.q}|${params.date_start ?? ""}`;
    expect(params.page_size).toBe(1); // counting, not loading
    return { articles: [], total_count: counts[key] ?? 0, page: 1, page_size: 1 } as ArticleSearchResponse;
  });

describe("the zero-results offers", () => {
  const search: TablizerSearch = { query: "melanoma pembrolizumab", dateStart: "2020-01-01", dateEnd: "", sort: "relevance", page: 1, pageSize: 20 };

  it("Tablizer offers only the looser searches that find articles, and runs the one clicked", async () => {
    const counted = articlesFound({ "pembrolizumab|2020-01-01": 12, "melanoma OR pembrolizumab|2020-01-01": 40, "melanoma pembrolizumab|": 0 });
    const onRun = vi.fn();
    render(<ArticleZeroResults search={search} onRun={onRun} />);
    const offers = await screen.findAllByTestId("looser-search");
    expect(offers.map((o) => o.textContent)).toEqual([
      "Drop “melanoma”pembrolizumab12 articles",
      "Any of the termsmelanoma OR pembrolizumab40 articles",
    ]);
    // Any date, drop "pembrolizumab", and OR were each counted once: 4 requests.
    expect(counted).toHaveBeenCalledTimes(4);
    fireEvent.click(offers[1]);
    expect(onRun).toHaveBeenCalledWith({ ...search, query: "melanoma OR pembrolizumab" });
  });

  it("says so when no looser search finds anything either", async () => {
    articlesFound({});
    render(<ArticleZeroResults search={{ ...search, dateStart: "" }} onRun={() => {}} />);
    await waitFor(() => expect(screen.getByRole("status").textContent).toContain("nor does any search with one thing less"));
    expect(screen.queryByTestId("looser-search")).toBeNull();
  });

  it("offers nothing, and asks nothing, for one term without dates", async () => {
    const counted = articlesFound({});
    render(<ArticleZeroResults search={{ ...search, query: "pembrolizumab", dateStart: "" }} onRun={() => {}} />);
    await waitFor(() => expect(screen.getByRole("status").textContent).toBe("No articles match. Try other words or synonyms, or a MeSH term."));
    expect(counted).not.toHaveBeenCalled();
  });

  it("TrialScout offers dropping a filter or a term, counted with the same search API", async () => {
    const form = { ...emptyTrialForm, condition: "melanoma pembrolizumab", status: ["RECRUITING"], phase: ["PHASE3"] };
    const counted = vi.spyOn(api, "searchTrials").mockImplementation(async (params) => {
      const found = params.condition === "melanoma" && (params.status as string[]).length === 1 ? 5
        : params.condition === "melanoma pembrolizumab" && (params.status as string[]).length === 0 ? 3 : 0;
      return { trials: [], total_count: found } as TrialSearchResponse;
    });
    const onRun = vi.fn();
    render(<TrialZeroResults form={form} onRun={onRun} />);
    const offers = await screen.findAllByTestId("looser-search");
    expect(offers.map((o) => within(o).getByText(/^(Any|Drop)/).textContent)).toEqual(["Any status, not Recruiting", "Drop “pembrolizumab”"]);
    expect(counted).toHaveBeenCalledTimes(4); // any status, any phase, and each of the two terms dropped
    fireEvent.click(offers[1]);
    expect(onRun).toHaveBeenCalledWith({ ...form, condition: "melanoma" });
  });
});
