/** A trial search form in a few words, for "Replaced 'melanoma · Phase 2' (24) → …" and the assistant's `last_accepted`. */
import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialForm } from "./trialscoutContext";

export function describeTrialForm(form: TrialForm): string {
  const parts = [
    form.condition,
    form.intervention,
    form.sponsor,
    form.phase.length ? phaseLabel(form.phase) : "",
    form.status.length ? statusLabel(form.status) : "",
    form.location,
    form.eligibility_keywords,
  ].map((p) => p.trim());
  return parts.filter(Boolean).join(" · ") || "all trials";
}
