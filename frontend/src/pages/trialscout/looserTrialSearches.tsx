/** TrialScout's looser searches when a search finds nothing: a filter dropped (status, phase, location, age…) or a
 * term of the condition or intervention. */
import { api } from "../../api/client";
import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import { LooserSearches, type LooserSearch } from "../common/LooserSearches";
import { queryTerms } from "../common/queryTerms";
import { describeTrialForm } from "./describeForm";
import { emptyTrialForm, trialSearchParams, type TrialForm } from "./trialscoutContext";

type Offer = LooserSearch<TrialForm>;

const isEmpty = (form: TrialForm) => JSON.stringify(form) === JSON.stringify(emptyTrialForm);

function termDrops(form: TrialForm, field: "condition" | "intervention"): Offer[] {
  const terms = queryTerms(form[field]) ?? [];
  if (terms.length < 2) return [];
  return terms.map((term, i) => {
    const search = { ...form, [field]: terms.filter((_, j) => j !== i).join(" ") };
    return { label: `Drop “${term}”`, detail: describeTrialForm(search), search };
  });
}

export function looserTrialSearches(form: TrialForm): Offer[] {
  const offer = (label: string, patch: Partial<TrialForm>): Offer[] => {
    const search = { ...form, ...patch };
    return isEmpty(search) ? [] : [{ label, detail: describeTrialForm(search), search }];
  };
  return [
    ...(form.status.length ? offer(`Any status, not ${statusLabel(form.status)}`, { status: [] }) : []),
    ...(form.phase.length ? offer(`Any phase, not ${phaseLabel(form.phase)}`, { phase: [] }) : []),
    ...(form.location.trim() ? offer(`Anywhere, not “${form.location.trim()}”`, { location: "" }) : []),
    ...(form.min_age || form.max_age ? offer("Any age", { min_age: "", max_age: "" }) : []),
    ...(form.sex !== "ALL" ? offer("Any sex", { sex: "ALL" }) : []),
    ...(form.study_type ? offer("Any study type", { study_type: "" }) : []),
    ...(form.sponsor.trim() ? offer(`Any sponsor, not “${form.sponsor.trim()}”`, { sponsor: "" }) : []),
    ...(form.eligibility_keywords.trim() ? offer("Without the eligibility keywords", { eligibility_keywords: "" }) : []),
    ...termDrops(form, "condition"),
    ...termDrops(form, "intervention"),
    ...(form.intervention.trim() && form.condition.trim() ? offer(`Any intervention, not “${form.intervention.trim()}”`, { intervention: "" }) : []),
  ];
}

const countTrials = (form: TrialForm, signal: AbortSignal) =>
  api.searchTrials(trialSearchParams(form, 1, null), signal).then((r) => (typeof r.total_count === "number" ? r.total_count : null));

export function TrialZeroResults({ form, onRun }: { form: TrialForm; onRun: (next: TrialForm) => void }) {
  return (
    <LooserSearches searchKey={JSON.stringify(form)} offers={looserTrialSearches(form)} count={countTrials} onRun={onRun}
                    one="trial" hint="Try a broader condition, or intervention synonyms." />
  );
}
