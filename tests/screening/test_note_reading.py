"""What the offline reader takes from a note beyond conditions: where the patient lives, the note's language
(flagged, not read as silence), treatment history, stages, performance status and unit-pinned values."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from backend.demo.transport import DEMO_MODEL_ID, DemoTransport
from backend.screening import extract_profile
from backend.screening.demo_judge import judge
from backend.screening.ingest import local_profile
from backend.screening.whereabouts import note_language

# Real sentences in other languages (a Spanish and a German case summary, a French discharge line).
SPANISH = ("Paciente de 45 años con antecedentes de diabetes mellitus tipo 2 e hipertensión arterial, que acude "
           "a urgencias por dolor torácico opresivo de dos horas de evolución. No refiere tabaquismo.")
GERMAN = ("Die 62-jährige Patientin mit metastasiertem Mammakarzinom wurde mit Trastuzumab behandelt und stellt "
          "sich jetzt mit zunehmender Atemnot vor. Keine Herzinsuffizienz in der Vorgeschichte.")
FRENCH = ("Patiente de 70 ans, hospitalisée pour une pneumonie communautaire, sans antécédent de cancer; elle "
          "vit seule à domicile et reste autonome.")


@pytest.mark.parametrize(("note", "place"), [
    ("A 62-year-old woman who lives in Boston with metastatic breast cancer.", "Boston"),
    ("Patient is a 34-year-old woman from Jordan with joint pain.", "Jordan"),
    ("55 yo man from Ohio with COPD, transferred from the ED.", "Ohio"),
    ("Mr. Smith, 70, with type 2 diabetes; he resides in Cleveland, OH.", "Cleveland, OH"),
    ("48 M with chest pain, sent from ED by his PCP.", None),  # a department is no place
])
def test_the_profile_carries_where_the_patient_lives(note: str, place: str | None) -> None:
    assert local_profile(note).key_facts.location == place


@pytest.mark.parametrize(("note", "code"), [(SPANISH, "es"), (GERMAN, "de"), (FRENCH, "fr"),
                                            ("Пациентка 62 лет с метастатическим раком молочной железы.", "ru")])
def test_a_note_in_another_language_is_flagged_not_read_as_silence(note: str, code: str) -> None:
    profile = local_profile(note)
    assert profile.language == code and profile.warnings and "English only" in profile.warnings[0]
    # Without the flag the rules would call every exclusion "not shown, so it does not apply".
    found = judge(note, "History of diabetes mellitus", "exclusion")
    assert found.answer == "unknown" and "not in English" in found.reasoning


def test_an_english_note_has_no_language_warning() -> None:
    profile = local_profile("A 67-year-old man with a history of type 2 diabetes and hypertension presents "
                            "with chest pain. He denies shortness of breath.")
    assert profile.language == "en" and profile.warnings == []
    assert note_language("Hi") is None


async def test_the_flag_survives_the_demo_models_sdk_path() -> None:
    client: Any = anthropic.AsyncAnthropic(api_key="demo", max_retries=0,
                                           http_client=httpx2.AsyncClient(transport=DemoTransport(delay=0)))
    try:
        profile, _ = await extract_profile(SPANISH, client, DEMO_MODEL_ID)
    finally:
        await client.close()
    assert profile.language == "es" and profile.warnings


MYELOMA = ("0. 64yo woman with multiple myeloma, s/p allogeneic transplant, now with recurrent disease.\n"
           "1. ECOG performance status of 2.\n"
           "2. Echo showed an EF of 25%.")
CERVIX = ("0. A 37-year-old woman had a routine Pap smear.\n"
          "1. Biopsy revealed stage 1B cervical cancer.\n"
          "2. She was offered a radical hysterectomy and chemotherapy.")


@pytest.mark.parametrize(("note", "criterion", "kind", "answer"), [
    (MYELOMA, "Newly diagnosed multiple myeloma", "inclusion", "no"),  # treated before
    (MYELOMA, "Prior or current systemic therapy for multiple myeloma", "exclusion", "yes"),
    (MYELOMA, "Prior systemic therapy within 4 weeks", "exclusion", "no"),  # a window the note does not date
    (CERVIX, "Previously untreated cervical cancer", "inclusion", "yes"),  # a planned therapy is not a prior one
    (CERVIX, "Histologically confirmed stage IIB-IVA carcinoma of the cervix", "inclusion", "no"),
    (CERVIX, "FIGO stage I or II disease", "inclusion", "yes"),
    (CERVIX, "Stage IV disease", "exclusion", "no"),
    (MYELOMA, "ECOG performance status 0-1", "inclusion", "no"),
    (MYELOMA, "ECOG performance status <= 2", "inclusion", "yes"),
    (MYELOMA, "Left ventricular ejection fraction < 40%", "exclusion", "yes"),
    (MYELOMA, "LVEF >= 50%", "inclusion", "no"),
    ("0. A 60-year-old man on anti-depressants for 6 months.", "Current antidepressant therapy", "exclusion", "yes"),
    ("0. A 60-year-old man with small cell lung cancer.", "Non-small cell lung cancer", "inclusion", "unknown"),
])
def test_treatment_history_stage_and_values_are_read_against_the_criterion(note: str, criterion: str, kind: str,
                                                                           answer: str) -> None:
    assert judge(note, criterion, kind).answer == answer


@pytest.mark.parametrize("note", [
    "A 58-year-old man with asthma. His wife was recently diagnosed with breast cancer and started chemotherapy.",
    "A 58-year-old man with asthma whose mother died with breast cancer.",
    "A 58-year-old man with asthma; father with breast cancer at 60.",
])
def test_a_relatives_diagnosis_after_with_is_not_the_patients_condition(note: str) -> None:
    # The relevance's profile query weighs the first condition most: a relative's disease there ranks
    # trials for the relative.
    conditions = local_profile(note).conditions
    assert conditions and conditions[0] == "asthma"
    assert not any("breast" in c for c in conditions)


def test_the_patients_own_condition_after_with_is_still_read() -> None:
    assert "breast cancer" in local_profile("A 58-year-old woman with breast cancer and asthma.").conditions


@pytest.mark.parametrize(("note", "condition"), [
    ("A 58-year-old woman with stage IV non-small cell lung cancer, EGFR exon 19 deletion.",
     "non-small cell lung cancer"),
    ("54 yo man with relapsed non-Hodgkin lymphoma after R-CHOP.", "non-hodgkin lymphoma"),
    ("She has non-alcoholic steatohepatitis and obesity.", "non-alcoholic steatohepatitis"),
    ("Patient is a 70 year old male with metastatic castration-resistant prostate cancer.",
     "castration-resistant prostate cancer"),
    ("A 50-year-old woman with erosive esophagitis.", "erosive esophagitis"),
    ("Alkaline phosphatase 300; a 66-year-old man with alcoholic cirrhosis.", "alcoholic cirrhosis"),
])
def test_a_disease_named_with_non_or_a_biomarker_s_letters_is_kept_whole(note: str, condition: str) -> None:
    # "non-" opening a disease's name is no negation; "PR" and "ER" are biomarkers only as words of their own.
    assert local_profile(note).conditions[0] == condition


@pytest.mark.parametrize(("criterion", "kind", "answer"), [
    ("Histologically confirmed non-small cell lung cancer", "inclusion", "yes"),
    ("Stage IIIB or IV non-small cell lung cancer", "inclusion", "yes"),
    ("Current smoker", "exclusion", "no"),  # "non-smoker" still denies smoking
    ("Non-alcoholic fatty liver disease", "exclusion", "no"),  # not shown: it is a disease of its own
])
def test_non_names_a_disease_but_denies_a_habit(criterion: str, kind: str, answer: str) -> None:
    note = ("0. A 61-year-old non-smoker with stage IV non-small cell lung cancer.\n"
            "1. EGFR exon 19 deletion; progressed after osimertinib.")
    assert judge(note, criterion, kind).answer == answer
