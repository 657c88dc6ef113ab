/** Turning loosely-typed payload fields into text, without throwing on odd shapes. */
import { humanizeEnums } from "../api/trialVocabulary";

const PREFERRED_KEYS = ["name", "measure", "facility", "title", "label", "type", "city", "state", "country", "time_frame", "description", "status"];

export function displayValue(value: unknown): string {
  if (value == null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(displayValue).filter(Boolean).join("; ");
  if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const parts = PREFERRED_KEYS.filter((k) => record[k] != null && record[k] !== "").map((k) => displayValue(record[k]));
    return parts.length ? parts.join(", ") : JSON.stringify(value);
  }
  return String(value);
}

export function asList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return value == null || value === "" ? [] : [value];
}

export function asText(value: unknown): string {
  return typeof value === "string" ? value : displayValue(value);
}

/** A card's explanation as the user reads it: raw trial enums ("PHASE2") in words ("Phase 2"). */
export function explanationText(value: unknown): string {
  return humanizeEnums(asText(value));
}

/**
 * "snapshot of 2016-04-13" for a record of the offline corpus (its status is as of that date), "" for a live one.
 */
export function snapshotLabel(record: Record<string, unknown>): string {
  const date = record.snapshot_date;
  return typeof date === "string" && date ? `snapshot of ${date}` : "";
}

/** Statuses a trial moves on from (it starts, stops recruiting, ends): copied long ago, they may no longer hold. */
const CHANGING_STATUSES = new Set([
  "RECRUITING", "NOT_YET_RECRUITING", "ACTIVE_NOT_RECRUITING", "ENROLLING_BY_INVITATION", "SUSPENDED", "AVAILABLE",
  "TEMPORARILY_NOT_AVAILABLE",
]);
/** A copy older than this is stale: CT.gov asks sponsors to confirm a study's status at least once a year. */
export const STALE_AFTER_DAYS = 365;

/** The snapshot date of a trial whose status may be out of date (one that changes, copied over a year ago), else "". */
export function staleStatusDate(record: Record<string, unknown>, now: Date = new Date()): string {
  const date = record.snapshot_date;
  const status = record.status ?? record.overall_status;
  if (typeof date !== "string" || typeof status !== "string" || !CHANGING_STATUSES.has(status)) return "";
  const copied = Date.parse(date);
  return Number.isFinite(copied) && now.getTime() - copied > STALE_AFTER_DAYS * 86_400_000 ? date : "";
}

export function formatCount(n: unknown): string {
  return typeof n === "number" ? n.toLocaleString("en-US") : displayValue(n);
}
