"""INGEST: a structured `PatientProfile` from a free-text note.

With a client, one Messages API request (`prompts.INGEST_SYSTEM`); the demo model answers it with the
local rules below (`local_profile`), so both paths go through the SDK. Without a client the local rules
run in-process. A reply that cannot be read falls back to the local rules, and says so in the log
(never the note).
"""

from __future__ import annotations

import logging
import re
import time

import anthropic

from backend.criteria.evaluator import extract_json_object
from backend.diseases import ABBREVIATIONS
from backend.screening.models import KeyFacts, PatientProfile, Usage
from backend.screening.note_reader import NEGATION, RELATIVE, any_of, read_note, reword
from backend.screening.prompts import INGEST_SYSTEM, profile_from_json
from backend.screening.usage import usage_of
from backend.screening.whereabouts import LANGUAGE_NAMES, note_location

log = logging.getLogger(__name__)

# (not "diagnosis" or "organism": a disease's ending, no disease)
_DISEASE_WORD = (r"(?!(?:dia|pro)gnosis\b|(?:organ|mechan|metabol)isms?\b)"
                 r"\w*(?:itis|oma|omas|emia|aemia|osis|pathy|plasia|algia|cele|uria|ism|ectasis|iasis|trophy|megaly|"
                 r"sclerosis|penia|cytosis|rrhea|rrhoea|plegia|paresis|phagia|dipsia)")
_DISEASE_HEAD = any_of("""cancer carcinoma tumou?r disease syndrome disorder infection failure fracture injury
insufficiency deficiency stenosis obstruction hypertension diabetes(?:_mellitus)? asthma pneumonia stroke infarction
embolism thrombosis fibrillation arrest hemorrhage haemorrhage bleed(?:ing)? abscess ulcer lesion mass nodule
effusion aneurysm malformation palsy dementia depression schizophrenia autism anemia anaemia sepsis shock edema
oedema dyspnea pain fever cough rash seizures? epilepsy migraine headache obesity lymphoma leukemia leukaemia
melanoma sarcoma myeloma glioma glioblastoma hepatitis(?-i:_[A-E](?![A-Za-z0-9]))? cirrhosis copd hiv aids
tuberculosis malaria covid-19 influenza(?-i:_[AB](?![A-Za-z0-9]))? anorexia_nervosa bulimia_nervosa insomnia apnea
apnoea gout eczema acne infertility incontinence delirium pre-?eclampsia eclampsia hemophilia haemophilia
lupus(?:_erythematosus)? adhd degeneration hyperemesis_gravidarum ptsd hearing_loss symptoms""")
_CONDITION = re.compile(rf"\b((?:[a-z0-9'/-]+\s+){{0,3}}(?:{_DISEASE_HEAD}|{_DISEASE_WORD})\b)", re.I)
_STOP_LEAD = re.compile("^" + any_of(r"""a an the he she his her their of with and or no history h/o has had had_a known
presents? presented presenting complains? complaining_of diagnosed was is for to in on at from by recent new prior
previous severe mild moderate acute chronic significant worsening progressive who which that also patient pt denies
developed well-?controlled poorly-?controlled uncontrolled controlled stable
s/p status post newly due right left bilateral some any revealed reveals showing showed shows show confirmed confirms be
found mri ct x-ray cxr echo tte imaging exam symptoms?_of signs?_of sudden large small underlying spontaneous
possible probable suspected likely stopped discontinued treated started been experiencing experienced suffering
recently noted similar initial these those this same
(?:hours?|days?|weeks?|months?|years?)_(?:of|history_of) \d+""") + r"\s+", re.I)
# A verb inside what the pattern caught ends its subject: "the right flank causes pain", "he has chest pain"
_SUBJECT_VERB = re.compile(r"^.*\b(?:causes|caused|causing|became|becomes|started|starts|worsened|radiates|reports|"
                           r"reported|experienced|experiences|experiencing|suffers|suffered|suffering|complains|"
                           r"developed|develops|describes?|described|reveal(?:s|ed|ing)?|receive[sd]?|"
                           r"confirm(?:s|ed|ing)?|has|have|had|was|is|were|are)\s+", re.I)
_QUOTED = re.compile(r"['\"‘’“”](\w[\w\s-]*)['\"‘’“”]")
# Clinicians' abbreviations for conditions, as a registry names them: the chat's table, less the ones a note uses
# for other things ("RA" room air, "ALS" advanced life support) or reads as words of their own ("HIV", "COPD"), and
# the history lists'.
_ABBREVIATIONS = {
    **{k.upper(): v for k, v in ABBREVIATIONS.items() if k not in ("ra", "als", "hiv", "copd", "covid")},
    "HTN": "hypertension", "HLD": "hyperlipidemia", "T2DM": "type 2 diabetes", "DM2": "type 2 diabetes",
    "T1DM": "type 1 diabetes", "DM1": "type 1 diabetes", "DM": "diabetes", "CAD": "coronary artery disease",
    "CHF": "heart failure", "HFrEF": "heart failure", "HFpEF": "heart failure", "CKD": "chronic kidney disease",
    "ESRD": "end-stage renal disease", "AFib": "atrial fibrillation", "OSA": "obstructive sleep apnea",
    "GERD": "gastroesophageal reflux disease", "DVT": "deep vein thrombosis", "MI": "myocardial infarction",
    "CVA": "stroke", "TIA": "transient ischemic attack", "PAD": "peripheral artery disease",
    "BPH": "benign prostatic hyperplasia", "UTI": "urinary tract infection", "MDD": "major depressive disorder"}
_ABBREVIATION = re.compile(r"(?<![\w-])(" + "|".join(sorted(_ABBREVIATIONS, key=len, reverse=True)) + r")(?![\w-])")
# "acute myeloid leukemia", "chronic kidney disease": before a name of two words or more, the word is the name's
_NAMED_COURSE = re.compile(r"^(?:acute|chronic)\s+\S+\s+\S+", re.I)
# A clause ends where a cause or a new subject begins: "stopped due to lymphopenia", "… which worsened"
_CONDITION_CLAUSES = re.compile(r"\b(?:and|but|as well as|with|who|which|due to|secondary to|because of|caused by)\b",
                                re.I)
# Looked for, not found: "screened for tuberculosis", "tested for hepatitis C"
_SOUGHT = re.compile(r"\b(?:screen(?:ed|ing)?|test(?:ed|ing)?|evaluat(?:ed|ion)|work(?:ed)?[- ]up|checked|"
                     r"assess(?:ed|ment)|rule[ds]?[- ]out)\s+for\b", re.I)
_STAGE = re.compile(r"\b(stage\s+[0-4IV]+[A-C]?|metastatic|locally advanced|advanced|recurrent|relapsed|"
                    r"refractory|early[- ]stage)\b", re.I)
_STATUS_WORD = (r"(?:positive|negative|mutant|mutation|mutated|amplified|amplification|fusion|rearrangement|ITD|TKD|"
                r"wild[- ]?type|(?:un)?methylated|high|low)\b|[+-](?!\w)")
_BIOMARKER = re.compile(r"\b((?:HER2|ER|PR|EGFR|ALK|ROS1|BRAF|KRAS|NRAS|PD-?L1|BRCA[12]?|HLA-B27|JAK2|BCR-ABL|FLT3|"
                        r"IDH[12]?|MGMT|CD20|CD19|PSA)\b"
                        # a status, or a variant ("V600E", "G12D") and its status
                        rf"(?:[\s-]*(?:(?-i:[A-Z]\d{{1,4}}[A-Z])\b(?:\s+{_STATUS_WORD})?|exon\s+\d+\s+(?:deletion|insertion|"
                        rf"mutation|skipping)\b|{_STATUS_WORD}))?"
                        r"|(?:hormone[- ])?receptor[- ](?:positive|negative)\b|HR[+-](?!\w)|HR-(?:positive|negative)\b|"
                        r"MSI-(?:H|high|L|low|stable)\b|MSS\b)", re.I)
_ECOG = re.compile(r"\b((?:ECOG|Karnofsky|KPS|WHO)\s*(?:performance status|PS)?\s*(?:of\s*)?[:=]?\s*\d{1,3}%?)", re.I)
_LAB = re.compile(r"\b((?:hemoglobin|hgb|hb|wbc|platelets?|creatinine|bilirubin|ast|alt|inr|glucose|hba1c|"
                  r"sodium|potassium|troponin|bnp|albumin|egfr|gfr|psa|ldl|crp|esr|ef|ejection fraction|"
                  r"temperature|temp|bp|blood pressure|heart rate|hr|o2 sat\w*|spo2)\s*(?:of|was|is|:|=)?\s*"
                  r"[<>]?\s*\d[\d.,/]*\s*(?:%|mg/dl|g/dl|mmol/l|u/l|k|mmhg|bpm|°?[cf])?)", re.I)


def _dedupe(items: list[str], limit: int = 8) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.lower()
        if key not in seen and len(item) > 2:
            seen.add(key)
            out.append(item)
    return out[:limit]


def _conditions(sentences: list[str]) -> list[str]:
    """The conditions the note affirms for the patient, in the order it names them; those it names only by an
    abbreviation ("PMH: HTN, CAD") after the others: a note spells out what it is about, and lists the rest."""
    found: list[str] = []
    abbreviated: list[str] = []
    for sentence in sentences:
        clean = re.sub(r"\[\*\*[^\]]*\*\*\]", " ", sentence)
        clean = re.sub(r"\bw/o\b", "without ", re.sub(r"\bw/(?!o\b)", "with ", clean, flags=re.I), flags=re.I)
        for piece in re.split(r"[,;:.()]", clean):
            # "Her husband was diagnosed with colon cancer": what follows a relative is the relative's
            piece = piece[:relative.start()] if (relative := RELATIVE.search(piece)) else piece
            for clause in _CONDITION_CLAUSES.split(piece):
                if NEGATION.search(reword(clause)):
                    continue
                abbreviated.extend(_ABBREVIATIONS[m.group(1)] for m in _ABBREVIATION.finditer(clause))
                for m in _CONDITION.finditer(clause):
                    phrase = m.group(1).strip()
                    if _SOUGHT.search(phrase):
                        continue
                    # what a lead-in was for or of: "transplant for IgA nephropathy", "complaining of myalgia"
                    phrase = re.sub(r"^.*\b(?:for|of|to|by)\s+", "", phrase, flags=re.I)
                    phrase = _SUBJECT_VERB.sub("", _QUOTED.sub(r"\1", phrase))
                    while not _NAMED_COURSE.match(phrase):
                        stripped = _STOP_LEAD.sub("", phrase)
                        if stripped == phrase:
                            break
                        phrase = stripped
                    if phrase and phrase.lower() != "symptoms":
                        found.append(phrase.lower())
    # "The pain radiates to her arm" after "chest pain": a word the note's condition already holds is no other one
    kept: list[str] = []
    for condition in _dedupe([*found, *abbreviated], 20):
        if not any(set(condition.split()) <= set(earlier.split()) for earlier in kept):
            kept.append(condition)
    return kept[:10]


def _core(condition: str) -> str:
    """The condition without its stage and biomarker words: 'her2-positive metastatic breast cancer' →
    'breast cancer' (stage and biomarkers are key facts of their own)."""
    core = " ".join(_BIOMARKER.sub(" ", _STAGE.sub(" ", condition)).split()).strip(" -,")
    return re.sub(r"^(?:positive|negative)\s+", "", core, flags=re.I)  # what "ER/PR positive" leaves


def local_profile(note: str) -> PatientProfile:
    """The profile the note's text alone supports: no model, no guessing."""
    read = read_note(note)
    sentences = read.sentences
    text = " ".join(sentences)
    prior = [t.name for t in read.therapies if t.when == "prior"]
    current = [t.name for t in read.therapies if t.when == "current"]
    stage = _STAGE.search(text)
    biomarkers = _dedupe([m.group(1).strip() for m in _BIOMARKER.finditer(text)])
    conditions = _dedupe([c for c in (_core(c) for c in _conditions(sentences)) if c], 10)
    facts = KeyFacts(stage=stage.group(1).lower() if stage else None, biomarkers=biomarkers,
                     prior_therapies=_dedupe(prior), current_therapies=_dedupe([c for c in current if c not in prior]),
                     comorbidities=conditions[1:6],
                     performance_status=(ecog.group(1) if (ecog := _ECOG.search(text)) else None),
                     labs=_dedupe([m.group(1).strip() for m in _LAB.finditer(text)], 10),
                     location=(place[0] if (place := note_location(sentences)) else None))
    keywords = _dedupe([*conditions[:4], *([f"{facts.stage} {conditions[0]}"] if facts.stage and conditions else []),
                        *biomarkers[:2]])
    age = read.age[0] if read.age else None
    sex = read.sex[0] if read.sex else None
    who = " ".join(p for p in (f"{age:g}-year-old" if age is not None else "", {"female": "woman", "male": "man"}.get(
        sex or "", "patient")) if p)
    summary = f"{who} with {conditions[0]}" if conditions else who
    language = read.language
    warnings = [] if language in ("en", None) else [
        f"The note seems to be in {LANGUAGE_NAMES.get(language, language)}: the offline rules read English only, "
        "so this profile and the demo judgements miss what the note says. Screen it with a model, or paste an "
        "English note."]
    return PatientProfile(age=age, sex=sex, conditions=conditions, key_facts=facts, keywords=keywords,
                          summary=summary[:200], language=language, warnings=warnings)


async def extract_profile(note: str, client: anthropic.AsyncAnthropic | None = None,
                          model: str | None = None, *, max_tokens: int = 1024) -> tuple[PatientProfile, Usage]:
    """The note's profile. With a client: one model call (a reply that cannot be read falls back to the
    local rules); without one: the local rules alone. API errors propagate (the caller reports them)."""
    if client is None or model is None:
        return local_profile(note), Usage(model="local rules")
    started = time.perf_counter()
    message = await client.messages.create(
        model=model, max_tokens=max_tokens,
        system=[{"type": "text", "text": INGEST_SYSTEM, "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": f"<patient_note>\n{note.strip()}\n</patient_note>"}])
    text = "".join(b.text for b in message.content if b.type == "text")
    obj, _ = extract_json_object(text, required_key="conditions")
    usage = usage_of(message, model)
    if obj is None:
        log.warning("INGEST reply unusable (%d chars, no profile object); the local rules read the note "
                    "instead (%.0f ms)", len(text), (time.perf_counter() - started) * 1000)
        return local_profile(note), usage
    try:
        return profile_from_json(obj), usage
    except ValueError:
        log.warning("INGEST reply off-schema; the local rules read the note instead")
        return local_profile(note), usage
