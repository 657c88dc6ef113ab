import type { ReactNode } from "react";
import { phaseLabel, sexLabel, statusLabel } from "../api/trialVocabulary";
import { EntityLink, type OpenEntity } from "../entities/EntityLink";
import { asList, asText, displayValue, formatCount, snapshotLabel } from "./display";
import { FieldList } from "./FieldList";
import { StaleStatus } from "./StaleStatus";

const ages = (min: unknown, max: unknown): string =>
  min || max ? `${displayValue(min) || "any"} – ${displayValue(max) || "any"}` : "";

const pick = (data: Record<string, unknown>, ...keys: string[]): unknown =>
  keys.map((k) => data[k]).find((v) => v != null && v !== "");

/**
 * A trial detail object, tolerant of shape: used by TrialDetailsCard (compact)
 * and TrialScout's detail panel (full).
 */
export function TrialDetailView({
  data,
  compact = false,
  onEntity,
}: {
  data: Record<string, unknown>;
  compact?: boolean;
  onEntity?: OpenEntity;
}) {
  const nctId = asText(pick(data, "nct_id", "nctId"));
  const title = asText(pick(data, "title", "brief_title", "official_title"));
  const locations = asList(data.locations);
  const maxLocations = compact ? 5 : 50;
  // Under a card's title (h3) in the tray; under the detail panel's title (h2) on the page.
  const Heading = compact ? "h4" : "h3";
  const status = [statusLabel(pick(data, "status", "overall_status")), snapshotLabel(data) && `(${snapshotLabel(data)})`].filter(Boolean).join(" ");
  const facts: Array<[string, ReactNode]> = [
    ["Phase", phaseLabel(pick(data, "phase", "phases"))],
    ["Status", status && <>{status} <StaleStatus record={data} /></>],
    ["Sponsor", displayValue(pick(data, "sponsor", "lead_sponsor"))],
    ["Enrollment", formatCount(pick(data, "enrollment", "enrollment_count"))],
    ["Conditions", displayValue(data.conditions)],
    ["Interventions", displayValue(data.interventions)],
    ["Start", displayValue(data.start_date)],
    ["Completion", displayValue(data.completion_date)],
    ["Sex", sexLabel(data.sex)],
    ["Ages", ages(pick(data, "minimum_age", "min_age"), pick(data, "maximum_age", "max_age"))],
  ];
  const primary = asList(data.primary_outcomes);
  const secondary = asList(data.secondary_outcomes);
  const eligibility = asText(data.eligibility_criteria);
  const summary = asText(pick(data, "brief_summary", "summary"));

  return (
    <div className="trial-detail">
      <p className="trial-detail-title">
        {nctId && <EntityLink kind="nct" id={nctId} onEntity={onEntity} />} {title}
      </p>
      <FieldList rows={facts.filter(([, v]) => v)} />
      {!compact && summary && (
        <section>
          <Heading>Summary</Heading>
          <p className="prewrap">{summary}</p>
        </section>
      )}
      {eligibility && (
        <details open={!compact}>
          <summary>Eligibility criteria</summary>
          <div className="prewrap eligibility">{eligibility}</div>
        </details>
      )}
      {primary.length > 0 && (
        <section>
          <Heading>Primary outcomes</Heading>
          <ul>
            {primary.map((o, i) => (
              <li key={i}>{displayValue(o)}</li>
            ))}
          </ul>
        </section>
      )}
      {!compact && secondary.length > 0 && (
        <details>
          <summary>Secondary outcomes ({secondary.length})</summary>
          <ul>
            {secondary.map((o, i) => (
              <li key={i}>{displayValue(o)}</li>
            ))}
          </ul>
        </details>
      )}
      {locations.length > 0 && (
        <details open={!compact}>
          <summary>Locations ({locations.length})</summary>
          <ul>
            {locations.slice(0, maxLocations).map((l, i) => (
              <li key={i}>{displayValue(l)}</li>
            ))}
            {locations.length > maxLocations && <li className="muted">…and {locations.length - maxLocations} more</li>}
          </ul>
        </details>
      )}
    </div>
  );
}
