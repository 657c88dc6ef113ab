"""The demo model's criterion judgement from the note's text, and its agreement with the TrialGPT experts."""

from __future__ import annotations

import hashlib
import json

import pytest

from backend.criteria.prompts import verdict_from_answer
from backend.eval.dataset import ANNOTATIONS_PATH
from backend.eval.label_map import map_label
from backend.eval.metrics import cohens_kappa
from backend.screening.demo_judge import age_bounds, judge
from backend.screening.note_reader import read_note, split_sentences

NOTE = ("0. A 67-year-old man presents with crushing chest pain.\n"
        "1. He has a history of type 2 diabetes and hypertension.\n"
        "2. He denies shortness of breath and has no history of stroke.\n"
        "3. His mother had breast cancer.\n"
        "4. Troponin was elevated.")


@pytest.mark.parametrize(("criterion", "kind", "answer", "evidence"), [
    ("Age 18 to 75 years", "inclusion", "yes", [0]),
    ("Patients older than 75 years", "inclusion", "no", [0]),
    ("Aged 6 months to less than 13 years", "inclusion", "no", [0]),
    ("Male", "inclusion", "yes", [0]),
    ("Female patients only", "inclusion", "no", [0]),
    ("Type 2 diabetes mellitus", "inclusion", "yes", [1]),  # "DM", "diabetes", "diabetic" are one concept
    ("History of hypertension", "exclusion", "yes", [1]),
    ("Stroke within 6 months", "exclusion", "no", [2]),  # "no history of stroke"
    ("Dyspnea", "exclusion", "no", [2]),  # "denies shortness of breath"
    ("History of breast cancer", "exclusion", "no", []),  # his mother's, not his
    ("Chronic kidney disease", "exclusion", "no", []),  # not shown: an exclusion does not apply
    ("Chronic kidney disease", "inclusion", "unknown", []),  # not shown: an inclusion is unknown
    ("Pregnant or breastfeeding women", "exclusion", "not_applicable", [0]),
    ("Able to give written informed consent", "inclusion", "yes", []),
    ("Unable to give informed consent", "exclusion", "no", []),
    ("Hemoglobin above 10 g/dL", "inclusion", "unknown", []),  # a number the note does not give
])
def test_decides_from_the_note(criterion: str, kind: str, answer: str, evidence: list[int]) -> None:
    found = judge(NOTE, criterion, kind)
    assert (found.answer, found.evidence) == (answer, evidence), found.reasoning


def test_no_age_in_the_note_is_unknown() -> None:
    assert judge("0. The patient has asthma.", "Age 18 years or older", "inclusion").answer == "unknown"


def test_age_bounds() -> None:
    assert age_bounds("Age >= 18 years") == (18, None)
    assert age_bounds("aged between 18 and 65") == (18, 65)
    assert age_bounds("under 18 years of age") == (None, 18)
    assert age_bounds("Patients aged 6 months or older") == (0.5, None)
    assert age_bounds("Patients < 18 or > 90 years") is None  # outside a band: not a band
    assert age_bounds("Disease duration of at least 5 years") is None
    assert age_bounds("FVC > 80% predicted for age") is None


@pytest.mark.parametrize(("age", "criterion", "kind", "answer"), [
    (34, "Age less than 18 years or greater than 65 years.", "exclusion", "no"),  # outside a band, in words
    (70, "Age less than 18 years or greater than 65 years.", "exclusion", "yes"),
    (67, "Male and female adults, 18 to 60 years of age and over 60 years of age.", "inclusion", "yes"),
    (67, "Aged 25-40 years, or 65 years or older.", "inclusion", "yes"),  # alternatives: any fits
    (50, "Aged 25-40 years, or 65 years or older.", "inclusion", "no"),
    (57, "Progressive lymphocytosis with a doubling time of less than 6 months", "inclusion", "unknown"),  # a period
    (67, "Age 18 to 60", "inclusion", "no"),
])
def test_age_limits_read_as_a_screener_reads_them(age: int, criterion: str, kind: str, answer: str) -> None:
    assert judge(f"0. A {age}-year-old man with asthma.", criterion, kind).answer == answer


@pytest.mark.parametrize("criterion", [
    "Evidence of decompensated cirrhosis based on radiologic criteria or biopsy",
    "Evidence of acute or chronic intracranial hemorrhage by head CT or MRI",
])
def test_how_a_finding_is_shown_names_no_finding(criterion: str) -> None:
    note = "0. A 50-year-old man with headaches. 1. MRI of the head and a liver biopsy were unremarkable."
    assert judge(note, criterion, "exclusion").answer == "no"


def test_a_finding_shown_by_a_test_still_excludes() -> None:
    criterion = "Evidence of decompensated cirrhosis based on radiologic criteria or biopsy"
    assert judge("0. A 50-year-old man with decompensated cirrhosis.", criterion, "exclusion").answer == "yes"


def test_hepatitis_b_is_not_hepatitis_c() -> None:
    note = "0. A 55-year-old man. 1. The biopsy showed chronic inflammation from hepatitis C."
    assert judge(note, "Has Hepatitis B", "exclusion").answer == "no"
    assert judge(note, "Hepatitis C", "exclusion").answer == "yes"


def test_sentences_keep_the_notes_numbering_or_split_plain_text() -> None:
    assert split_sentences(NOTE)[2].startswith("He denies")
    assert split_sentences("A 45-year-old man, Dr. Lee's patient. He smokes. Fever!") == [
        "A 45-year-old man, Dr. Lee's patient.", "He smokes.", "Fever!"]
    assert read_note("48 M with a h/o HTN.").age == (48, 0) and read_note("48 M with a h/o HTN.").sex == ("male", 0)


def _split(patient_id: str) -> str:
    return "train" if int(hashlib.md5(patient_id.encode()).hexdigest(), 16) % 10 < 7 else "held-out"


def test_agreement_with_the_trialgpt_experts() -> None:
    """On the 1,014 labelled annotations the demo agrees with the experts ≥ 75% (κ ≥ 0.45); the split by
    patient is the one the rules were tuned on (train) and checked against (held-out): see
    benchmarks/README.md."""
    rows = [json.loads(line) for line in ANNOTATIONS_PATH.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["criterion_text"]]
    gold = [map_label(r["expert_eligibility"]) for r in rows]
    pred = [verdict_from_answer(judge(r["note"], r["criterion_text"], r["criterion_type"]).answer,
                                r["criterion_type"]) for r in rows]
    accuracy = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(rows)
    assert len(rows) == 1014
    assert accuracy >= 0.75 and cohens_kappa(gold, pred) >= 0.45
    held = [(g, p) for g, p, r in zip(gold, pred, rows, strict=True) if _split(r["patient_id"]) == "held-out"]
    assert sum(g == p for g, p in held) / len(held) >= 0.70
