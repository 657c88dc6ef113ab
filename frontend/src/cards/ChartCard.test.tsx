import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { phases, stats } from "../test/stats";
import { StatsScopeContext } from "../charts/statsScope";
import { ChartCard } from "./ChartCard";
import { cardFor } from "./registry";

describe("ChartCard", () => {
  it("a chart card is registered, draws inline from the scope and accepts", async () => {
    const { api } = await import("../api/client");
    vi.spyOn(api, "trialStats").mockResolvedValue(stats(phases));
    expect(cardFor("chart")).toBe(ChartCard);
    const onAccept = vi.fn();
    render(
      <StatsScopeContext.Provider value={{ app: "trialscout", search: { condition: "x" } }}>
        <ChartCard payload={{ id: "p", type: "chart", source: "llm", data: { kind: "bar", facet: "phase", title: "Trials by phase" } }}
                   onAccept={onAccept} onDismiss={vi.fn()} />
      </StatsScopeContext.Provider>,
    );
    await waitFor(() => expect(screen.getByTestId("chart-footnote")).toBeTruthy());
    expect(screen.getAllByText("Trials by phase").length).toBeGreaterThan(0);
    fireEvent.click(screen.getByTestId("card-accept"));
    await waitFor(() => expect(onAccept).toHaveBeenCalled());
  });
});
