/** The extracted profile as a form: every field editable before anything runs; lists are one item a line. */
import { useId } from "react";
import type { PatientProfile } from "../../../api/screening";

type ListKey = "biomarkers" | "prior_therapies" | "current_therapies" | "comorbidities" | "labs";
const FACT_LISTS: Array<[ListKey, string]> = [
  ["biomarkers", "Biomarkers"],
  ["prior_therapies", "Prior therapies"],
  ["current_therapies", "Current therapies"],
  ["comorbidities", "Comorbidities"],
  ["labs", "Labs"],
];
type TextKey = "stage" | "performance_status" | "location";
const FACT_TEXT: Array<[TextKey, string]> = [
  ["stage", "Stage"],
  ["performance_status", "Performance status"],
  ["location", "Location"],
];

const lines = (v: string) => v.split("\n").map((x) => x.trim()).filter(Boolean);

export function ProfileEditor({ profile, onChange, disabled }: { profile: PatientProfile; onChange: (p: PatientProfile) => void; disabled?: boolean }) {
  const id = useId();
  const facts = profile.key_facts ?? {};
  const setFacts = (patch: Partial<NonNullable<PatientProfile["key_facts"]>>) => onChange({ ...profile, key_facts: { ...facts, ...patch } });
  const list = (key: string, label: string, value: string[] | undefined, set: (v: string[]) => void) => (
    <label className="profile-field profile-list" key={key} htmlFor={`${id}-${key}`}>
      <span>{label}</span>
      <textarea id={`${id}-${key}`} rows={Math.min(4, Math.max(1, value?.length ?? 1))} value={(value ?? []).join("\n")} disabled={disabled}
        data-testid={`profile-${key}`} aria-describedby={`${id}-lines`} onChange={(e) => set(e.target.value.split("\n"))}
        onBlur={(e) => set(lines(e.target.value))} />
    </label>
  );
  return (
    <fieldset className="profile-editor" data-testid="profile-editor" disabled={disabled}>
      <legend>Profile (edit before screening)</legend>
      <p id={`${id}-lines`} className="muted small">Lists take one item a line.</p>
      <div className="profile-row">
        <label className="profile-field" htmlFor={`${id}-age`}>
          <span>Age (years)</span>
          <input id={`${id}-age`} type="number" min={0} max={130} step="any" data-testid="profile-age" value={profile.age ?? ""}
            onChange={(e) => onChange({ ...profile, age: e.target.value === "" ? null : Number(e.target.value) })} />
        </label>
        <label className="profile-field" htmlFor={`${id}-sex`}>
          <span>Sex</span>
          <select id={`${id}-sex`} data-testid="profile-sex" value={profile.sex ?? ""}
            onChange={(e) => onChange({ ...profile, sex: e.target.value === "female" || e.target.value === "male" ? e.target.value : null })}>
            <option value="">Not stated</option>
            <option value="female">Female</option>
            <option value="male">Male</option>
          </select>
        </label>
      </div>
      {list("conditions", "Conditions (main first)", profile.conditions, (v) => onChange({ ...profile, conditions: v }))}
      {list("keywords", "Keywords", profile.keywords, (v) => onChange({ ...profile, keywords: v }))}
      <details className="profile-facts">
        <summary>Key facts</summary>
        {FACT_TEXT.map(([key, label]) => (
          <label className="profile-field" key={key} htmlFor={`${id}-${key}`}>
            <span>{label}</span>
            <input id={`${id}-${key}`} data-testid={`profile-${key}`} value={facts[key] ?? ""}
              onChange={(e) => setFacts({ [key]: e.target.value || null })} />
          </label>
        ))}
        {FACT_LISTS.map(([key, label]) => list(key, label, facts[key], (v) => setFacts({ [key]: v })))}
      </details>
    </fieldset>
  );
}

/** The profile as saved: blank list lines dropped (the textareas keep them while typing). */
export function cleanProfile(p: PatientProfile): PatientProfile {
  const facts = p.key_facts ?? {};
  const clean = (v: string[] | undefined) => (v ?? []).map((x) => x.trim()).filter(Boolean);
  return {
    ...p,
    conditions: clean(p.conditions),
    keywords: clean(p.keywords),
    key_facts: {
      ...facts,
      biomarkers: clean(facts.biomarkers),
      prior_therapies: clean(facts.prior_therapies),
      current_therapies: clean(facts.current_therapies),
      comorbidities: clean(facts.comorbidities),
      labs: clean(facts.labs),
    },
  };
}
