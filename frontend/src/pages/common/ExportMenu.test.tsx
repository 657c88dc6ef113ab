import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AIColumns } from "./aiColumns";
import { ExportMenu, type ExportColumn } from "./ExportMenu";

interface Row {
  pmid: string;
  title: string;
  authors: string[];
}

const COLUMNS: ExportColumn<Row>[] = [
  { key: "title", label: "Title", text: (r) => r.title },
  { key: "authors", label: "Authors", text: (r) => r.authors },
];
const ROWS: Row[] = [
  { pmid: "3", title: "Third", authors: ["A"] },
  { pmid: "1", title: "First", authors: [] },
];
const AI = { columns: [{ id: "c1", name: "RCT?", criteria: "Is it an RCT?", type: "boolean" }] } as unknown as AIColumns;

function sse(...events: object[]): Response {
  const body = events.map((e, i) => `id: ${i + 1}\nevent: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

afterEach(() => vi.restoreAllMocks());

describe("ExportMenu", () => {
  it("sends the rows in the order shown, the id first, and the AI columns' definitions", async () => {
    const fetched = vi.spyOn(globalThis, "fetch").mockResolvedValue(
      new Response("x", { headers: { "content-disposition": 'attachment; filename="tablizer-results.csv"' } }),
    );
    URL.createObjectURL = vi.fn(() => "blob:x");
    URL.revokeObjectURL = vi.fn();
    render(<ExportMenu app="tablizer" rows={ROWS} rowId={(r) => r.pmid} columns={COLUMNS} ai={AI} selected={new Set()} query="egfr" />);
    fireEvent.click(screen.getByTestId("export-csv"));
    await waitFor(() => expect(screen.getByTestId("export-status").textContent).toContain("Downloaded 2 rows as CSV."));
    const [url, init] = fetched.mock.calls[0];
    expect(url).toBe("/api/exports/table?format=csv");
    expect(JSON.parse(String(init?.body))).toEqual({
      app: "tablizer",
      columns: [
        { key: "pmid", label: "PMID" },
        { key: "title", label: "Title" },
        { key: "authors", label: "Authors" },
      ],
      rows: [
        { pmid: "3", title: "Third", authors: ["A"] },
        { pmid: "1", title: "First", authors: [] },
      ],
      ai_columns: [{ name: "RCT?", criteria: "Is it an RCT?", type: "boolean" }],
    });
  });

  it("reports on the selected rows only, shows progress and links the result", async () => {
    const ready = { id: 7, app: "tablizer", title: "Shortlist: egfr", row_count: 1, html_url: "/api/reports/7/html", pdf_url: "/api/reports/7/pdf" };
    const fetched = vi
      .spyOn(globalThis, "fetch")
      .mockResolvedValue(sse({ type: "report_progress", step: "Drawing the PDF", done: 2, total: 4 }, { type: "report_ready", report: ready }));
    const facets = [{ label: "Title", values: (r: (typeof ROWS)[number]) => [r.title] }];
    render(<ExportMenu app="tablizer" rows={ROWS} rowId={(r) => r.pmid} columns={COLUMNS} ai={AI} selected={new Set(["1"])} query="egfr"
                       facets={facets} one="article" />);
    expect(screen.getByTestId("build-report").textContent).toContain("Report on 1 selected");
    fireEvent.click(screen.getByTestId("build-report"));
    await waitFor(() => expect(screen.getByTestId("report-html").getAttribute("href")).toBe("/api/reports/7/html"));
    expect(screen.getByTestId("report-pdf").getAttribute("href")).toBe("/api/reports/7/pdf?download=true");
    expect(screen.getByTestId("export-status").textContent).toContain("Report ready: 1 row.");
    const body = JSON.parse(String(fetched.mock.calls[0][1]?.body));
    expect(body.rows).toEqual([{ pmid: "1", title: "First", authors: [] }]);
    expect(body.title).toBe("Shortlist: 1 article · egfr");
    // The summary and charts are the selected row's own, never the chat's last answer.
    expect(body.include_answer).toBe(false);
    expect(body.summary).toContain("1 selected article.");
    expect(body.charts).toEqual([{ title: "Title (1 selected)", kind: "bar", points: [{ label: "First", value: 1 }] }]);
  });

  it("cannot report on nothing", () => {
    render(<ExportMenu app="tablizer" rows={ROWS} rowId={(r) => r.pmid} columns={COLUMNS} ai={AI} selected={new Set()} query="" />);
    expect((screen.getByTestId("build-report") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("build-report").textContent).toContain("Select rows for a report");
  });
});
