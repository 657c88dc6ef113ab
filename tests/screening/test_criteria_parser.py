"""The eligibility parser on real CT.gov records of the offline corpus: structural properties on 60, exact
splits on records checked by eye, and the layouts CT.gov texts use."""

from __future__ import annotations

import html
import re

from backend.screening.criteria_parser import parse_criteria
from backend.sources.offline import OfflineClinicalTrialsService

# 60 records with eligibility text, picked by a hash of their NCT id (old NCI layouts, numbered lists,
# nested bullets, German-English mixes).
SAMPLE = [
    "NCT00711997", "NCT00738673", "NCT01945554", "NCT01174173", "NCT00443755", "NCT00005082", "NCT00038610",
    "NCT01405027", "NCT00323037", "NCT01573260", "NCT00002065", "NCT00904995", "NCT00461448", "NCT00005055",
    "NCT00004914", "NCT01076504", "NCT01053494", "NCT00091572", "NCT00462865", "NCT00470834", "NCT00657033",
    "NCT00495274", "NCT00695786", "NCT00499343", "NCT01350947", "NCT00003391", "NCT00000985", "NCT00765362",
    "NCT00387790", "NCT00006276", "NCT00777075", "NCT00501072", "NCT00002664", "NCT01194479", "NCT01994382",
    "NCT01268488", "NCT00249730", "NCT00883103", "NCT01435720", "NCT00001032", "NCT01849848", "NCT00001597",
    "NCT01680328", "NCT00182767", "NCT00795002", "NCT01681576", "NCT02593396", "NCT00003015", "NCT00000132",
    "NCT00002273", "NCT00419003", "NCT00000415", "NCT00006106", "NCT00002849", "NCT01204294", "NCT00407563",
    "NCT00709098", "NCT00000980", "NCT00003437", "NCT06417814",
]
HEADING = re.compile(r"^\W*(?:key\s+)?(?:inclusion|exclusion)\s+criteria\W*$", re.I)
EXCLUSION_HEADING = re.compile(r"^\W*(?:key\s+)?exclusion\s+criteria\b", re.I | re.M)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{3,}", html.unescape(text.replace("\\", "")).lower()))


async def _records() -> dict[str, str]:
    found = await OfflineClinicalTrialsService().get_trials_by_nct_ids(SAMPLE)
    texts = {t.nct_id: t.eligibility_criteria for t in found if t.eligibility_criteria}
    assert len(texts) == 60
    return texts


async def test_structure_on_sixty_real_records() -> None:
    records = await _records()
    for nct_id, text in records.items():
        criteria = parse_criteria(text)
        assert criteria, nct_id
        for kind in ("inclusion", "exclusion"):
            assert [c.index for c in criteria if c.kind == kind] == list(range(sum(c.kind == kind for c in criteria)))
        source = _words(text)
        covered: set[str] = set()
        for c in criteria:
            assert re.search(r"[A-Za-z]{2}", c.text) and c.text == c.text.strip(), (nct_id, c.text)
            assert not re.match(r"^(?:[-*•]|\d{1,2}[.)])\s", c.text), (nct_id, c.text)  # bullets are stripped
            assert not HEADING.match(c.text), (nct_id, c.text)
            assert _words(c.text) <= source, (nct_id, c.text)  # nothing invented
            covered |= _words(c.text)
        headings = " ".join(line for line in text.splitlines()  # section and topic lines ("Hepatic:")
                            if re.fullmatch(r"[\W\d]*[A-Za-z][A-Za-z /&,()'-]{0,60}:?[\W]*", line.strip())
                            and (line.strip().endswith(":") or line.strip().isupper() or HEADING.match(line)))
        inline = r"(?im)^\W*(?:key\s+)?(?:in|ex)clusion\s+criteria[^:\n]{0,40}:"
        headings += " ".join(m.group(0) for m in re.finditer(inline, text))
        missing = source - covered - _words(headings)
        assert len(missing) <= 0.05 * len(source), (nct_id, sorted(missing)[:20])  # nothing lost
        if EXCLUSION_HEADING.search(text):
            assert any(c.kind == "exclusion" for c in criteria), nct_id


async def test_exact_splits_checked_by_eye() -> None:
    found = {t.nct_id: t for t in await OfflineClinicalTrialsService().get_trials_by_nct_ids(
        ["NCT00084097", "NCT03256916", "NCT05231083"])}
    eos = parse_criteria(found["NCT00084097"].eligibility_criteria)
    assert [(c.kind, c.index) for c in eos][:3] == [("inclusion", 0), ("inclusion", 1), ("inclusion", 2)]
    assert [c.text for c in eos if c.kind == "inclusion"][3:6] == [
        "Baseline values within the following laboratory ranges: White blood cell count greater than or equal "
        "to 3,300 cells/uL",
        "Baseline values within the following laboratory ranges: Absolute neutrophil count greater than or "
        "equal to 1,000 cells/uL",
        "Baseline values within the following laboratory ranges: Hemoglobin greater than or equal to 10 g/dL"]
    assert [c.text for c in eos if c.kind == "exclusion"] == [
        "Pregnant or nursing women.", "HIV positive or other known immunodeficiency.",
        "Use of any other investigational agent within 30 days of the study.",
        "Presence of FIP1-PDGF-R fusion gene.",
        "Any condition that, in the investigator's opinion, places the patient at undue risk by participating in "
        "the study."]
    assert sum(c.kind == "inclusion" for c in eos) == 15

    cervix = parse_criteria(found["NCT03256916"].eligibility_criteria)
    assert sum(c.kind == "inclusion" for c in cervix) == 9 and sum(c.kind == "exclusion" for c in cervix) == 15
    exclusions = [c.text for c in cervix if c.kind == "exclusion"]
    assert exclusions[0].startswith("Patients with newly diagnosed diabetes") and "HbA1c of > 6.5%" in exclusions[0]
    assert exclusions[1] == ("Pts on any drugs which has pharmacological interaction with nelfinavir: Terfenadine, "
                             "cisapride, sildenafil, lovastatin or simvastatin and medication that are metabolized "
                             "by the CYP3A4 isoenzyme.")
    assert exclusions[9] == "Pregnant or lactating"

    # Bullets indented under an item that is no lead-in are criteria of their own, not its children.
    ed = parse_criteria(found["NCT05231083"].eligibility_criteria)
    assert [c.text for c in ed][:3] == ["Patients presenting characteristic symptoms of refractory ED",
                                        "Patients<18y and >90y", "Patients who have an implanted pacemaker"]
    assert [c.kind for c in ed].count("exclusion") == 6


def test_layouts() -> None:
    text = """Key Inclusion Criteria:
1. Adults with histologically confirmed
   adenocarcinoma of the lung
2. ECOG 0-1

Key exclusion criteria
- Prior treatment with:
  a) any EGFR inhibitor
  b) radiotherapy to the chest
- Active infection

PATIENT CHARACTERISTICS:

Hepatic:
  * Bilirubin normal
Renal:
  * Creatinine \\< 1.5 mg/dL
"""
    got = [(c.kind, c.index, c.text) for c in parse_criteria(text)]
    assert got == [
        ("inclusion", 0, "Adults with histologically confirmed adenocarcinoma of the lung"),  # continuation line
        ("inclusion", 1, "ECOG 0-1"),
        ("exclusion", 0, "Prior treatment with: any EGFR inhibitor"),
        ("exclusion", 1, "Prior treatment with: radiotherapy to the chest"),
        ("exclusion", 2, "Active infection"),
        ("inclusion", 2, "Hepatic: Bilirubin normal"),
        ("inclusion", 3, "Renal: Creatinine < 1.5 mg/dL"),
    ]
    assert parse_criteria(None) == [] and parse_criteria("  \n") == []
    assert [c.text for c in parse_criteria("Inclusion Criteria:\n\n-\n\nExclusion Criteria:\n\n* None")] == []
    assert [(c.kind, c.text) for c in parse_criteria("Men aged 40 or older\nNo prior prostate surgery")] == [
        ("inclusion", "Men aged 40 or older"), ("inclusion", "No prior prostate surgery")]
