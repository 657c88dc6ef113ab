/**
 * Where a results page's rows come from, above them: "Offline sample of 35,602 trials, records as of
 * 2016-04-13 to 2026-08-11" (figures from GET /api/sources) or "Live: ClinicalTrials.gov". Users took the
 * offline sample for the registry itself. Hidden for the rest of the session once dismissed; it sits in the
 * page's flow, so it never covers the results.
 */
import { useEffect, useState } from "react";
import { api } from "../../api/client";
import type { SourcesInfo } from "../../api/types";
import { plural } from "./counts";

export type SourceKind = "trials" | "articles";

const HIDDEN_KEY = (kind: SourceKind) => `colleague.sourceBanner.hidden.${kind}`;

function readHidden(kind: SourceKind): boolean {
  try {
    return window.sessionStorage.getItem(HIDDEN_KEY(kind)) === "1";
  } catch {
    return false; // storage refused (private mode): the banner shows
  }
}

/** The banner's headline for this page. */
export function sourceText(info: SourcesInfo, kind: SourceKind): string {
  const registry = kind === "trials" ? info.trials_source : info.articles_source;
  if (info.mode === "live") return `Live: ${registry}`;
  const coverage = info[kind];
  const noun = kind === "trials" ? "trial" : "article";
  if (!coverage) return `Offline sample of ${registry} ${noun}s`;
  const dates = coverage.snapshot_from && coverage.snapshot_to
    ? `, records as of ${coverage.snapshot_from === coverage.snapshot_to ? coverage.snapshot_from : `${coverage.snapshot_from} to ${coverage.snapshot_to}`}`
    : "";
  return `Offline sample of ${plural(coverage.records, noun)}${dates}`;
}

export function SourceBanner({ kind }: { kind: SourceKind }) {
  const [info, setInfo] = useState<SourcesInfo | null>(null);
  const [hidden, setHidden] = useState(() => readHidden(kind));

  useEffect(() => {
    if (hidden) return;
    let current = true;
    api.sources().then(
      (found) => current && setInfo(found),
      () => undefined, // no banner rather than an error about the banner
    );
    return () => {
      current = false;
    };
  }, [hidden, kind]);

  if (hidden || !info) return null;
  const registry = kind === "trials" ? info.trials_source : info.articles_source;
  const hide = () => {
    setHidden(true);
    try {
      window.sessionStorage.setItem(HIDDEN_KEY(kind), "1");
    } catch {
      // storage refused: hidden until the page is left
    }
  };
  return (
    <div className={`source-banner source-${info.mode}`} role="note" aria-label="Data source" data-testid="source-banner">
      <p>
        <strong>{sourceText(info, kind)}</strong>
        {info.mode === "offline" && (
          <span className="small">
            {" "}
            Searches run on this sample, not on {registry}; {kind === "trials" ? "a trial's status is as of the date its record was copied" : "each record is as of the date it was copied"}.
          </span>
        )}
      </p>
      <button type="button" className="link-button small" data-testid="source-banner-hide" onClick={hide} aria-label="Hide the data source note">
        Hide
      </button>
    </div>
  );
}
