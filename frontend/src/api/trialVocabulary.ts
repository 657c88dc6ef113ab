/** ClinicalTrials.gov v2 enumerations used by TrialScout's form and the trial cards. */

export const PHASES = ["EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA"] as const;
export const STATUSES = [
  "RECRUITING",
  "ACTIVE_NOT_RECRUITING",
  "COMPLETED",
  "NOT_YET_RECRUITING",
  "TERMINATED",
  "WITHDRAWN",
  "SUSPENDED",
] as const;
export const SEXES = ["ALL", "FEMALE", "MALE"] as const;
/** ClinicalTrials.gov's study types a search can narrow to (live: `AREA[StudyType]`). */
export const STUDY_TYPES = ["INTERVENTIONAL", "OBSERVATIONAL"] as const;

const PHASE_LABELS: Record<string, string> = {
  EARLY_PHASE1: "Early Phase 1",
  PHASE1: "Phase 1",
  PHASE2: "Phase 2",
  PHASE3: "Phase 3",
  PHASE4: "Phase 4",
  NA: "N/A",
};

const STATUS_LABELS: Record<string, string> = {
  RECRUITING: "Recruiting",
  ACTIVE_NOT_RECRUITING: "Active, not recruiting",
  COMPLETED: "Completed",
  NOT_YET_RECRUITING: "Not yet recruiting",
  TERMINATED: "Terminated",
  WITHDRAWN: "Withdrawn",
  SUSPENDED: "Suspended",
  ENROLLING_BY_INVITATION: "Enrolling by invitation",
  UNKNOWN: "Unknown status",
  AVAILABLE: "Available",
  NO_LONGER_AVAILABLE: "No longer available",
  TEMPORARILY_NOT_AVAILABLE: "Temporarily not available",
  APPROVED_FOR_MARKETING: "Approved for marketing",
  WITHHELD: "Withheld",
};

/** "PHASE3" → "Phase 3"; arrays and "PHASE2/PHASE3"-style values too; unknown values pass through. */
export function phaseLabel(value: unknown): string {
  if (Array.isArray(value)) return value.map(phaseLabel).join(", ");
  if (value == null || value === "") return "";
  return String(value)
    .split(/\s*[,/|]\s*/)
    .map((p) => PHASE_LABELS[p.toUpperCase().replace(/\s+/g, "")] ?? p)
    .join("/");
}

export function statusLabel(value: unknown): string {
  if (Array.isArray(value)) return value.map(statusLabel).join(", ");
  if (value == null || value === "") return "";
  return STATUS_LABELS[String(value).toUpperCase()] ?? String(value);
}

const SEX_LABELS: Record<string, string> = { ALL: "All", FEMALE: "Female", MALE: "Male" };

const STUDY_TYPE_LABELS: Record<string, string> = {
  INTERVENTIONAL: "Interventional",
  OBSERVATIONAL: "Observational",
  EXPANDED_ACCESS: "Expanded access",
};

const SPONSOR_CLASS_LABELS: Record<string, string> = {
  INDUSTRY: "Industry",
  NIH: "NIH",
  FED: "U.S. federal (non-NIH)",
  OTHER_GOV: "Other government",
  INDIV: "Individual",
  NETWORK: "Network",
  AMBIG: "Ambiguous",
  OTHER: "Other (university, hospital…)",
  UNKNOWN: "Unknown",
};

const INTERVENTION_TYPE_LABELS: Record<string, string> = {
  DRUG: "Drug",
  DEVICE: "Device",
  BIOLOGICAL: "Biological",
  PROCEDURE: "Procedure",
  RADIATION: "Radiation",
  BEHAVIORAL: "Behavioral",
  GENETIC: "Genetic",
  DIETARY_SUPPLEMENT: "Dietary supplement",
  COMBINATION_PRODUCT: "Combination product",
  DIAGNOSTIC_TEST: "Diagnostic test",
  OTHER: "Other",
};

function lookup(labels: Record<string, string>, value: unknown): string {
  if (value == null || value === "") return "";
  return labels[String(value).toUpperCase()] ?? String(value);
}

export const studyTypeLabel = (value: unknown) => lookup(STUDY_TYPE_LABELS, value);
export const sponsorClassLabel = (value: unknown) => lookup(SPONSOR_CLASS_LABELS, value);
export const interventionTypeLabel = (value: unknown) => lookup(INTERVENTION_TYPE_LABELS, value);
export const sexLabel = (value: unknown) => lookup(SEX_LABELS, value);

/** Every enum value the vocabulary knows, by its raw spelling (PHASE2, RECRUITING, …): sex values are
 * left out, since "ALL" and "MALE" are ordinary words in prose. */
const ENUM_LABELS: Record<string, string> = { ...PHASE_LABELS, ...STATUS_LABELS, ...STUDY_TYPE_LABELS };
delete ENUM_LABELS.NA;
const ENUM_WORD = new RegExp(`\\b(${Object.keys(ENUM_LABELS).sort((a, b) => b.length - a.length).join("|")})\\b`, "g");

/** Prose with raw CT.gov enums ("PHASE2, RECRUITING") in human words ("Phase 2, Recruiting"). */
export function humanizeEnums(text: string): string {
  return text.replace(ENUM_WORD, (word) => ENUM_LABELS[word] ?? word);
}
