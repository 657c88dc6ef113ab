/**
 * Tool calls drawn where they happened in an answer: the answer's text is cut at each call's `at` (the
 * text length when it began) and the step sits between the pieces, as a collapsible line with a readable
 * label and its result ("Searched PubMed for 'lung cancer' · 24 results"), its progress inline while it runs.
 */
import type { ToolActivity } from "./chatMessage";

const QUOTE_MAX = 60;

function quoted(value: unknown): string {
  const text = typeof value === "string" ? value.replace(/\s+/g, " ").trim() : "";
  if (!text) return "";
  return `'${text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX - 1)}…` : text}'`;
}

function field(input: unknown, key: string): unknown {
  return input && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
}

/** What a trial search asked for, in a few words ("melanoma, pembrolizumab"). */
function trialTerms(input: unknown): string {
  const parts = ["condition", "intervention", "sponsor", "eligibility_keywords"]
    .map((k) => field(input, k))
    .filter((v): v is string => typeof v === "string" && v.trim() !== "");
  return parts.join(", ");
}

const human = (tool: string) => tool.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

/** "Searched PubMed for 'lung cancer'" (done), "Searching PubMed for 'lung cancer'" (running). */
export function toolLabel(tool: string, input: unknown, running: boolean): string {
  const [doing, done] = (() => {
    switch (tool) {
      case "search_pubmed": {
        const q = quoted(field(input, "query"));
        return [`Searching PubMed${q ? ` for ${q}` : ""}`, `Searched PubMed${q ? ` for ${q}` : ""}`];
      }
      case "search_trials": {
        const q = quoted(trialTerms(input));
        return [`Searching ClinicalTrials.gov${q ? ` for ${q}` : ""}`, `Searched ClinicalTrials.gov${q ? ` for ${q}` : ""}`];
      }
      case "get_trial": {
        const id = String(field(input, "nct_id") ?? "").toUpperCase();
        return [`Reading trial ${id}`, `Read trial ${id}`];
      }
      case "get_pubmed_article": {
        const id = String(field(input, "pmid") ?? "");
        return [`Reading PMID ${id}`, `Read PMID ${id}`];
      }
      case "get_staged_items": {
        const kind = String(field(input, "kind") ?? "items");
        return [`Reading the loaded ${kind}`, `Read the loaded ${kind}`];
      }
      default:
        return [human(tool), human(tool)];
    }
  })();
  return running ? doing : done;
}

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** What the call found, in a few words: from the card it returned (live) or its output (stored). */
export function toolResult(step: ToolActivity): string {
  if (step.state === "error") return "failed";
  if (step.state === "stopped") return "stopped";
  if (step.state === "running") return step.message ?? "";
  const data = (step.card?.data ?? {}) as Record<string, unknown>;
  const total = typeof data.total_count === "number" ? data.total_count : null;
  const output = step.output ?? "";
  if (step.tool === "search_pubmed") {
    const n = total ?? numberBefore(output, /([\d,]+) articles match/);
    return n == null ? "" : count(n, "result");
  }
  if (step.tool === "search_trials") {
    const n = total ?? numberBefore(output, /([\d,]+) trials match/);
    return n == null ? "" : count(n, "trial");
  }
  if (step.tool === "get_trial") {
    const title = typeof data.title === "string" ? data.title : /^Title: (.+)$/m.exec(output)?.[1];
    return title ? quoted(title) : "";
  }
  return "";
}

function numberBefore(text: string, pattern: RegExp): number | null {
  const m = pattern.exec(text);
  return m ? Number(m[1].replace(/,/g, "")) : null;
}

const ICON: Record<ToolActivity["state"], string> = { running: "⋯", done: "✓", error: "⚠", stopped: "■" };

export function ToolStep({ step }: { step: ToolActivity }) {
  const running = step.state === "running";
  const label = toolLabel(step.tool, step.input, running);
  const result = toolResult(step);
  return (
    <details className={`tool-step tool-${step.state}`} data-testid="tool-activity" data-tool={step.tool}>
      <summary>
        <span className="tool-icon" aria-hidden="true">
          {ICON[step.state]}
        </span>{" "}
        <span className="tool-label" data-testid="tool-label">
          {label}
          {running ? "…" : ""}
        </span>
        {result && <span className="tool-result muted"> · {result}</span>}
        {running && (
          <progress
            className="tool-progress"
            data-testid="tool-progress"
            max={1}
            aria-label={`${label} progress`}
            {...(step.progress != null ? { value: step.progress } : {})}
          />
        )}
      </summary>
      <div className="tool-step-body small">
        {step.input != null && Object.keys(step.input as object).length > 0 && (
          <pre className="code-block">{JSON.stringify(step.input, null, 2)}</pre>
        )}
        {step.output && <pre className="code-block tool-output">{step.output}</pre>}
      </div>
    </details>
  );
}

export type Segment = { kind: "text"; text: string; key: string } | { kind: "tools"; steps: ToolActivity[]; key: string };

/**
 * The answer cut where its tool calls began: text, steps, text… Calls that began at the same place group
 * together; calls with no known place (older answers) come after the text. A call begins between two of the
 * model's text blocks, so each piece is whole Markdown.
 */
export function interleave(content: string, tools: ToolActivity[]): Segment[] {
  const placed = tools.filter((t) => t.at != null).sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || a.index - b.index);
  const unplaced = tools.filter((t) => t.at == null);
  const segments: Segment[] = [];
  let from = 0;
  let group: ToolActivity[] = [];
  let groupAt = -1;
  const flushGroup = () => {
    if (group.length) segments.push({ kind: "tools", steps: group, key: `tools-${group[0].index}` });
    group = [];
  };
  for (const step of placed) {
    const at = Math.min(Math.max(step.at ?? 0, from), content.length);
    if (at !== groupAt) {
      flushGroup();
      if (at > from) segments.push({ kind: "text", text: content.slice(from, at), key: `text-${from}` });
      from = at;
      groupAt = at;
    }
    group.push(step);
  }
  flushGroup();
  if (from < content.length || segments.length === 0) segments.push({ kind: "text", text: content.slice(from), key: `text-${from}` });
  if (unplaced.length) segments.push({ kind: "tools", steps: unplaced, key: `tools-${unplaced[0].index}` });
  return segments;
}
