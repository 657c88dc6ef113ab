"""The demo model's heuristics: decide only what the document shows, otherwise UNKNOWN."""

import json

import pytest

from backend.criteria.labels import Verdict
from backend.criteria.prompts import (
    CRITERION_SYSTEM_PROMPT,
    TEXT_SYSTEM_PROMPT,
    CriterionType,
    criterion_user_message,
    text_user_message,
    verdict_from_answer,
)
from backend.demo.verdict import (
    assess_criterion,
    demo_reply_text,
    demo_text_answer,
    patient_age,
    split_sentences,
)
from backend.eval.dataset import load_annotations

NOTE = ("0. A 58-year-old African-American woman presents to the ER with chest pain.\n"
        "1. She is known to have hypertension and obesity.\n"
        "2. She denies smoking, diabetes, hypercholesterolemia, or a family history of heart disease.\n"
        "3. Her mother had breast cancer.\n"
        "4. The patient will provide informed consent, and will comply with the trial protocol without any "
        "practical issues.")


def demo_verdict(criterion: str, criterion_type: CriterionType, document: str) -> Verdict:
    """The demo model's answer read as the evaluator reads it: a patient-side verdict."""
    return verdict_from_answer(assess_criterion(criterion, document).answer, criterion_type)


BOY = "0. A 4 year old boy presents to the emergency room with wheezing.\n1. He has asthma."


@pytest.mark.parametrize(("criterion", "document", "answer"), [
    ("Age >= 18 years", NOTE, "yes"),
    ("Patients aged 18 to 65 years", NOTE, "yes"),
    ("Age between 65 and 80 years", NOTE, "no"),
    ("Children younger than 12 years", NOTE, "no"),
    ("Children younger than 12 years", BOY, "yes"),
    ("over 58 years of age", NOTE, "unknown"),  # exactly on a strict bound: cannot tell
    ("Age >= 18 years", "0. The patient has a cough.", "unknown"),
    ("FVC > 80 % of predicted", BOY, "unknown"),  # not an age
    ("Gestational age < 23 weeks", NOTE, "unknown"),
])
def test_age(criterion, document, answer):
    assert assess_criterion(criterion, document).answer == answer


@pytest.mark.parametrize(("criterion", "document", "answer"), [
    ("Male and female", NOTE, "yes"),
    ("Female", NOTE, "yes"),
    ("Women", BOY, "no"),
    ("Pregnant or breastfeeding women", BOY, "not_applicable"),
])
def test_sex(criterion, document, answer):
    assert assess_criterion(criterion, document).answer == answer


@pytest.mark.parametrize(("criterion", "answer"), [
    ("Hypertension", "yes"),
    ("Diabetes", "no"),  # "She denies smoking, diabetes, …"
    ("Smokers", "no"),
    ("No history of diabetes", "yes"),  # a negated criterion holds when the note negates it
    ("Diabetes or hypertension", "yes"),
    ("Able to give written informed consent", "yes"),
    ("Heart disease", "unknown"),  # only a family history of it: says nothing about the patient
    ("Breast cancer", "unknown"),  # her mother's
    ("Chronic kidney disease", "unknown"),  # not mentioned: the demo does not assume
    ("HbA1c > 7%", "unknown"),
    ("Patients with stable angina who have failed at least two antianginal drugs and are scheduled "
     "for revascularisation", "unknown"),
])
def test_mentions_and_negations(criterion, answer):
    assert assess_criterion(criterion, NOTE).answer == answer


def test_verdicts_are_read_from_the_patients_side():
    # the patient denies diabetes: an inclusion "Diabetes" is NOT_MET, an exclusion "Diabetes" is MET
    assert demo_verdict("Diabetes", "inclusion", NOTE) == Verdict.NOT_MET
    assert demo_verdict("Diabetes", "exclusion", NOTE) == Verdict.MET
    assert demo_verdict("Hypertension", "exclusion", NOTE) == Verdict.NOT_MET
    assert assess_criterion("Hypertension", NOTE).evidence == [NOTE.splitlines()[1]]
    assert demo_verdict("Pregnancy", "exclusion", BOY) == Verdict.UNKNOWN
    assert demo_verdict("", "inclusion", NOTE) == Verdict.UNKNOWN


def test_deterministic():
    first = [assess_criterion(c, NOTE) for c in ("Hypertension", "Age >= 18", "x y z")]
    assert first == [assess_criterion(c, NOTE) for c in ("Hypertension", "Age >= 18", "x y z")]


def test_sentences_and_age_of_unnumbered_text():
    text = "Background: a 72 yo man was seen. He had a stroke in 2019! Follow-up was normal."
    assert split_sentences(text) == ["Background: a 72 yo man was seen.", "He had a stroke in 2019!",
                                     "Follow-up was normal."]
    assert patient_age(split_sentences(text))[0] == 72
    assert patient_age(["A 6-month-old infant."])[0] == pytest.approx(0.5)


def test_text_answers():
    assert demo_text_answer("How old is the patient?", NOTE).answer == "58 years"
    hit = demo_text_answer("Does she have hypertension?", NOTE)
    assert hit.answer == "She is known to have hypertension and obesity." and hit.evidence == [NOTE.splitlines()[1]]
    assert demo_text_answer("Which kinase inhibitor was used?", NOTE).answer is None


def test_reply_text_is_the_evaluators_json():
    reply = demo_reply_text(CRITERION_SYSTEM_PROMPT, criterion_user_message("Diabetes", "exclusion", NOTE))
    assert json.loads(reply)["answer"] == "no"  # the criterion is false of the patient (not her verdict)
    reply = demo_reply_text(TEXT_SYSTEM_PROMPT, text_user_message("How old is she?", NOTE))
    assert json.loads(reply)["answer"] == "58 years"
    assert demo_reply_text("You are Colleague, a helpful assistant.", "hello") is None
    assert demo_reply_text(CRITERION_SYSTEM_PROMPT, "no tags here") is None


def test_demo_decisions_agree_with_experts_where_it_decides():
    """Honesty check over the whole file: the demo abstains on most rows, and where it does decide it
    agrees with the experts far more often than not (59 of 63 when this test was written)."""
    decided = correct = 0
    for a in load_annotations():
        if not a.evaluable:
            continue
        label = demo_verdict(a.criterion_text or "", a.criterion_type, a.note)
        if label != Verdict.UNKNOWN:
            decided += 1
            correct += label == a.expert_label
    assert 30 <= decided <= 200
    assert correct / decided >= 0.85
