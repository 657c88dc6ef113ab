/**
 * "Try it": the exact system prompt a turn on a chosen page would get inside this stream (with the
 * unsaved draft, or the saved instructions), and a sandbox chat that runs the draft for real.
 */
import { useState } from "react";
import { api } from "../../api/client";
import type { PromptPreview as Preview } from "../../api/types";
import { LabeledSelect } from "../common/LabeledSelect";
import { PREVIEW_PAGES } from "./streamsContext";

export interface TryTarget {
  page: string;
  tab?: string;
  subtab?: string;
}

interface Props {
  streamId: number;
  draft: string;
  /** The editor's text differs from the saved instructions. */
  dirty: boolean;
  onTryDraft: (target: TryTarget) => void;
}

const STREAM_HEADING = "## Instructions for the research stream";

/** The stream's section of a composed prompt: the last part of the stable prompt, up to the page context. */
export function streamSection(prompt: string): string | null {
  const start = prompt.indexOf(STREAM_HEADING);
  if (start < 0) return null;
  const rest = prompt.slice(start);
  const end = rest.indexOf("\n\n<page_context");
  return end < 0 ? rest : rest.slice(0, end);
}

export function PromptPreview({ streamId, draft, dirty, onTryDraft }: Props) {
  const [page, setPage] = useState(PREVIEW_PAGES[0].page);
  const [tab, setTab] = useState("");
  const [subtab, setSubtab] = useState("");
  const [useDraft, setUseDraft] = useState(true);
  const [result, setResult] = useState<Preview | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const tabs = PREVIEW_PAGES.find((p) => p.page === page)?.tabs ?? {};
  const subtabs = tab ? tabs[tab] ?? [] : [];

  const run = async () => {
    setLoading(true);
    setError(null);
    try {
      setResult(
        await api.promptPreview({
          page,
          tab: tab || undefined,
          subtab: subtab || undefined,
          stream_id: streamId,
          // Unchanged text is the saved version: preview that, so the prompt names its version.
          draft: useDraft && dirty ? draft : undefined,
        }),
      );
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  };

  return (
    <div className="prompt-preview" data-testid="prompt-preview">
      <form
        className="row-gap wrap"
        aria-label="Preview the prompt"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <LabeledSelect
          label="Page"
          testId="preview-page"
          value={page}
          choices={PREVIEW_PAGES.map((p) => ({ value: p.page, label: p.label }))}
          onChange={(value) => {
            setPage(value);
            setTab("");
            setSubtab("");
          }}
        />
        {Object.keys(tabs).length > 0 && (
          <LabeledSelect
            label="Tab"
            testId="preview-tab"
            value={tab}
            none="(none)"
            choices={Object.keys(tabs)}
            onChange={(value) => {
              setTab(value);
              setSubtab("");
            }}
          />
        )}
        {subtabs.length > 0 && (
          <LabeledSelect label="Subtab" testId="preview-subtab" value={subtab} none="(none)" choices={subtabs} onChange={setSubtab} />
        )}
        <label className="inline">
          <input type="checkbox" data-testid="preview-use-draft" checked={useDraft} onChange={(e) => setUseDraft(e.target.checked)} />
          Use the editor&apos;s unsaved text{dirty ? "" : " (none)"}
        </label>
        <button type="submit" data-testid="preview-run" disabled={loading}>
          {loading ? "Composing…" : "Preview prompt"}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="try-draft"
          title="Chat with the editor's text in effect, for this chat only; nothing is saved"
          onClick={() => onTryDraft({ page, tab: tab || undefined, subtab: subtab || undefined })}
        >
          Try draft in chat
        </button>
      </form>
      {error && (
        <p className="error-text" role="alert" data-testid="preview-error">
          {error}
        </p>
      )}
      {result && (
        <div className="preview-result" data-testid="preview-result">
          {result.notices.map((n, i) => (
            <p key={i} className="notice" data-testid="preview-notice">
              {n}
            </p>
          ))}
          <p className="small" data-testid="preview-stream">
            {result.stream
              ? `Stream “${result.stream.name}”: ${
                  result.stream.draft ? "the draft" : result.stream.version_number != null ? `saved instructions v${result.stream.version_number}` : "saved instructions"
                }${result.stream.applied ? " is in the prompt." : " adds nothing (no instructions)."}`
              : "No stream instructions are in this prompt."}
          </p>
          <dl className="fields small">
            <div className="field-row">
              <dt>Page</dt>
              <dd>{result.page ?? "(global only)"}</dd>
            </div>
            <div className="field-row">
              <dt>Tools</dt>
              <dd data-testid="preview-tools">{result.tools.join(", ") || "none"}</dd>
            </div>
            <div className="field-row">
              <dt>Cards</dt>
              <dd data-testid="preview-payloads">{result.payloads.join(", ") || "none"}</dd>
            </div>
          </dl>
          {streamSection(result.system_prompt) && (
            <pre className="code-block preview-stream-section" data-testid="preview-stream-section">
              {streamSection(result.system_prompt)}
            </pre>
          )}
          <details>
            <summary data-testid="preview-prompt-toggle">Whole system prompt ({result.system_prompt.length.toLocaleString("en-US")} characters)</summary>
            <pre className="code-block preview-prompt" data-testid="preview-prompt" tabIndex={0}>
              {result.system_prompt}
            </pre>
          </details>
        </div>
      )}
    </div>
  );
}
