import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Article, TrialSummary } from "../../api/types";
import { TrialDetailView } from "../../cards/TrialDetailView";
import { TrialSearchResultsCard } from "../../cards/TrialSearchResultsCard";
import { ArticleDetail } from "../tablizer/ArticleDetail";
import { ARTICLE_COLUMNS, articleHref, articleRowId } from "../tablizer/ArticleTable";
import { TRIAL_COLUMNS, trialHref, trialRowId } from "../trialscout/TrialTable";
import type { AIColumns } from "./aiColumns";
import { DataGrid } from "./DataGrid";

// Offline records carry the date their copy was taken: a 2016 "Recruiting" must not read as today's.
const offlineTrial: TrialSummary = { nct_id: "NCT00000102", title: "CAH", status: "RECRUITING", snapshot_date: "2016-04-13" };
const liveTrial: TrialSummary = { nct_id: "NCT04613596", title: "Adagrasib", status: "RECRUITING", snapshot_date: null };
const offlineArticle: Article = { pmid: "1", title: "Formate assay", year: 1975, snapshot_date: "2023-01-09" };
const liveArticle: Article = { pmid: "2", title: "Backbone conformation", year: 1975 };

const table = { ai: { columns: [] } as unknown as AIColumns, selected: new Set<string>(), highlighted: null, onSelect: () => {}, onOpen: () => {},
                hidden: new Set<string>(), sort: { field: null, direction: "asc" as const }, onSort: () => {}, selectLabel: (id: string) => `Select ${id}` };

describe("snapshot dates of offline records", () => {
  it("TrialScout's table shows each status with its snapshot date, and none for live records", () => {
    render(<DataGrid {...table} rows={[offlineTrial, liveTrial]} columns={TRIAL_COLUMNS} rowId={(t) => t.nct_id} rowDomId={trialRowId} rowHref={trialHref} />);
    const offlineRow = document.getElementById("row-nct-NCT00000102")!;
    expect(within(offlineRow).getByText("snapshot of 2016-04-13")).toBeTruthy();
    const liveRow = document.getElementById("row-nct-NCT04613596")!;
    expect(liveRow.textContent).not.toContain("snapshot of");
  });

  it("Tablizer's table and article detail show the snapshot date", () => {
    render(<DataGrid {...table} rows={[offlineArticle, liveArticle]} columns={ARTICLE_COLUMNS} rowId={(a) => a.pmid} rowDomId={articleRowId} rowHref={articleHref} />);
    expect(within(document.getElementById("row-pmid-1")!).getByText("snapshot of 2023-01-09")).toBeTruthy();
    expect(document.getElementById("row-pmid-2")!.textContent).not.toContain("snapshot of");
    render(<ArticleDetail article={offlineArticle} loading={false} error={null} />);
    expect(screen.getByTestId("article-detail").textContent).toContain("PMID 1 · snapshot of 2023-01-09");
  });

  it("the trial detail view and the chat's result card put the date beside the status", () => {
    render(<TrialDetailView data={{ ...offlineTrial }} />);
    expect(screen.getByText("Recruiting (snapshot of 2016-04-13)")).toBeTruthy();
    render(
      <TrialSearchResultsCard
        payload={{ id: "b", type: "trial_search_results", data: { total_count: 2, trials: [offlineTrial, liveTrial] } }}
      />,
    );
    expect(screen.getByText(/Recruiting · snapshot of 2016-04-13/)).toBeTruthy();
    expect(screen.getAllByText(/snapshot of/)).toHaveLength(2); // the detail, and the offline row only
  });
});
