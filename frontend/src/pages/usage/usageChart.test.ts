import { describe, expect, it } from "vitest";
import type { UsageReport } from "../../api/types";
import { formatUsd, tokensOf, usageSeries } from "./usageChart";

const zero = { turns: 0, input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cost_usd: 0 };
const row = (day: string, model: string, cost: number, input: number) => ({
  ...zero, day, model, user_id: 1, username: "alice", turns: 1, input_tokens: input, output_tokens: 10, cost_usd: cost,
});

const report: UsageReport = {
  start: "2026-11-01", end: "2026-11-03", total: zero, by_user: [], by_model: [],
  by_day: ["2026-11-01", "2026-11-02", "2026-11-03"].map((key) => ({ ...zero, key })),
  rows: [row("2026-11-01", "claude-sonnet-4-6", 0.5, 100), row("2026-11-03", "claude-sonnet-4-6", 0.25, 50),
    row("2026-11-03", "claude-haiku-4-5", 0.01, 1000), { ...row("2026-11-03", "claude-haiku-4-5", 0.02, 5), user_id: 2 }],
};

describe("usageSeries", () => {
  it("stacks each model per day, with the days the period has and nothing for a day without usage", () => {
    const cost = usageSeries(report, "cost");
    expect(cost.days).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
    expect(cost.series).toEqual([
      { model: "claude-haiku-4-5", values: [0, 0, 0.03] },
      { model: "claude-sonnet-4-6", values: [0.5, 0, 0.25] },
    ]);
    const tokens = usageSeries(report, "tokens");
    expect(tokens.series[0].values[2]).toBe(1010 + 15);
  });

  it("counts every kind of token and prints small costs with their cents' fractions", () => {
    expect(tokensOf({ input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 })).toBe(10);
    expect(formatUsd(0.0123)).toBe("$0.0123");
    expect(formatUsd(12.5)).toBe("$12.50");
    expect(formatUsd(0)).toBe("$0.00");
  });
});
