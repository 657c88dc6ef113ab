"""What the offline reader takes from a note: its conditions as a clinician names them, where the patient lives,
the note's language (flagged, not read as silence), treatment history, stages, performance status, unit-pinned
values, and negations read by what they follow."""

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


@pytest.mark.parametrize(("note", "condition"), [
    ("71-year-old woman with newly diagnosed acute myeloid leukemia, FLT3-ITD mutation.", "acute myeloid leukemia"),
    ("73-year-old man with chronic lymphocytic leukemia, 17p deletion.", "chronic lymphocytic leukemia"),
    ("52-year-old woman with chronic hepatitis C genotype 1a, never treated.", "chronic hepatitis c"),
    ("19-year-old woman with anorexia nervosa, BMI 15.8, amenorrhea for 8 months.", "anorexia nervosa"),
    ("62 year old woman with hormone receptor positive metastatic breast cancer to bone.", "breast cancer"),
    ("This is a 48 yo F with triple negative breast cancer, BRCA1 mutation carrier.", "triple negative breast cancer"),
    ("A 40-year-old man presents with 3 days of fever and a productive cough.", "fever"),
    ("An 80-year-old man with chronic pain and insomnia.", "pain"),  # "chronic" before one word is no name
])
def test_the_main_condition_is_named_as_a_clinician_names_it(note: str, condition: str) -> None:
    # The main condition is what the search looks for first and what the relevance weighs most: "acute"
    # and "chronic" belong to a disease's name, a letter to hepatitis', "triple negative" to a kind of cancer.
    assert local_profile(note).conditions[0] == condition


def test_a_cause_is_a_condition_of_its_own_and_a_denial_does_not_hide_it() -> None:
    profile = local_profile("71-year-old female with acute myeloid leukemia. Not a candidate for intensive "
                            "chemotherapy due to heart failure. Fingolimod was stopped due to lymphopenia.")
    assert "heart failure" in profile.conditions
    assert "lymphopenia" in profile.conditions
    assert not any("stopped" in c or "candidate" in c for c in profile.conditions)


@pytest.mark.parametrize(("note", "sex"), [
    ("58 yo M with stage IIIA squamous non-small cell lung cancer.", "male"),
    ("67 y/o F with diffuse large B-cell lymphoma.", "female"),
    ("38M with HIV, viral load undetectable.", "male"),
    ("A 45-year-old F, G2P2, with endometriosis.", "female"),
    ("Asthma flare. Temp 101 F, HR 110.", None),  # a temperature, not a sex
])
def test_sex_is_read_from_a_clinicians_shorthand(note: str, sex: str | None) -> None:
    assert local_profile(note).sex == sex


def test_treatments_are_read_by_their_drug_stems_with_when_they_were_given() -> None:
    facts = local_profile(
        "The patient is a 45-year-old man with multiple sclerosis, previously treated with interferon beta-1a and "
        "then fingolimod. A 66-year-old man with prostate cancer after docetaxel and enzalutamide. Currently on "
        "azathioprine and apixaban. He was never given rituximab.").key_facts
    assert {"interferon", "fingolimod", "docetaxel", "enzalutamide"} <= set(facts.prior_therapies)
    assert {"azathioprine", "apixaban"} <= set(facts.current_therapies)
    assert "rituximab" not in facts.prior_therapies + facts.current_therapies


def test_biomarker_statuses_are_kept_whole() -> None:
    facts = local_profile("62 year old woman with HER2-negative, hormone receptor positive breast cancer. "
                          "AML with FLT3-ITD mutation; EGFR wild type.").key_facts
    assert {"HER2-negative", "hormone receptor positive", "FLT3-ITD", "EGFR wild type"} <= set(facts.biomarkers)


@pytest.mark.parametrize(("note", "criterion", "kind", "answer"), [
    # a tumour marker's status names a kind of the disease: it denies nothing
    ("0. A 48-year-old woman with triple negative breast cancer.", "Histologically confirmed breast cancer",
     "inclusion", "yes"),
    ("0. A 48-year-old woman with triple negative breast cancer.", "Triple-negative breast cancer", "inclusion", "yes"),
    # an infection's or a test's result after its name denies it
    ("0. A 50-year-old man with lymphoma. HIV negative.", "HIV", "exclusion", "no"),
    ("0. A 50-year-old man with lymphoma, hepatitis B antigen negative.", "Hepatitis B", "exclusion", "no"),
    ("0. A 50-year-old man with lymphoma and HIV.", "HIV", "exclusion", "yes"),
])
def test_negative_after_a_name_is_read_by_what_it_follows(note: str, criterion: str, kind: str, answer: str) -> None:
    assert judge(note, criterion, kind).answer == answer


def test_a_clinicians_abbreviations_are_conditions_after_what_the_note_spells_out() -> None:
    profile = local_profile("HPI: 64M w/ PMH of HTN, HLD, T2DM, CAD s/p CABG presenting with worsening dyspnea. "
                            "No h/o CVA or DVT. His father had AML.")
    assert (profile.age, profile.sex) == (64, "male")
    assert profile.conditions[0] == "dyspnea"  # the presenting problem, not the history's first abbreviation
    assert {"hypertension", "hyperlipidemia", "type 2 diabetes", "coronary artery disease"} <= set(profile.conditions)
    assert not {"stroke", "deep vein thrombosis", "acute myeloid leukemia"} & set(profile.conditions)


@pytest.mark.parametrize(("note", "condition"), [
    ("74 yo man w/ Parkinson's disease x 8 yrs, on carbidopa-levodopa.", "parkinson's disease"),
    ("Pt is a 27 y/o female with systemic lupus erythematosus and lupus nephritis class IV.",
     "systemic lupus erythematosus"),
    ("A 59-year-old woman with newly diagnosed glioblastoma, IDH-wildtype, MGMT unmethylated.", "glioblastoma"),
])
def test_shorthand_and_course_words_do_not_hide_the_name(note: str, condition: str) -> None:
    assert local_profile(note).conditions[0] == condition


def test_the_nearest_cue_says_whether_a_treatment_is_past_or_current() -> None:
    facts = local_profile(
        "A 60-year-old woman with psoriasis; previously on methotrexate, now on secukinumab with partial response. "
        "She is currently in a maintenance phase of her chemotherapy, with low-dose mercaptopurine. "
        "Meds: lisinopril, metoprolol. He failed sertraline and escitalopram; prior etanercept.").key_facts
    assert {"secukinumab", "mercaptopurine", "lisinopril", "metoprolol"} <= set(facts.current_therapies)
    assert {"sertraline", "escitalopram", "etanercept"} <= set(facts.prior_therapies)
    assert "secukinumab" not in facts.prior_therapies


def test_a_relatives_treatment_is_not_the_patients() -> None:
    facts = local_profile("A 60-year-old woman with atrial fibrillation; her husband takes warfarin. She is on "
                          "apixaban. Her daughter is on chemotherapy. She received radiation, and her brother had "
                          "surgery.").key_facts
    assert facts.current_therapies == ["apixaban"]
    assert facts.prior_therapies == ["radiation"]


@pytest.mark.parametrize(("note", "condition"), [
    ("A 61-year-old man, 3 years after a kidney transplant for IgA nephropathy, now with BK viremia.",
     "iga nephropathy"),
    ("A 70-year-old woman with wet age-related macular degeneration in the left eye.",
     "wet age-related macular degeneration"),
    ("A 35-year-old woman at 10 weeks of pregnancy with hyperemesis gravidarum.", "hyperemesis gravidarum"),
])
def test_what_a_treatment_was_for_is_the_condition(note: str, condition: str) -> None:
    assert local_profile(note).conditions[0] == condition


def test_variants_regimens_and_what_a_patient_takes() -> None:
    profile = local_profile("67M with metastatic colorectal cancer, KRAS G12D mutated, MSI-stable, BRAF V600E, after "
                            "FOLFOX and bevacizumab. Takes warfarin for atrial fibrillation. On hydroxyurea.")
    facts = profile.key_facts
    assert {"KRAS G12D mutated", "MSI-stable", "BRAF V600E"} <= set(facts.biomarkers)
    assert {"folfox", "bevacizumab"} <= set(facts.prior_therapies)
    assert {"warfarin", "hydroxyurea"} <= set(facts.current_therapies)
    assert "atrial fibrillation" in profile.conditions


def test_what_was_looked_for_or_ruled_out_is_no_condition() -> None:
    conditions = local_profile("A 50-year-old man with asthma. Chest X-ray negative for pneumonia. HIV negative. "
                               "He was screened for tuberculosis and tested for hepatitis C.").conditions
    assert conditions == ["asthma"]


def test_how_well_a_condition_is_controlled_is_not_its_name_and_an_exon_is_part_of_the_variant() -> None:
    profile = local_profile("A 64-year-old woman with stage IV non-small cell lung cancer, EGFR exon 19 deletion. "
                            "She has well-controlled hypertension on amlodipine, moderate COPD and poorly controlled "
                            "type 2 diabetes.")
    assert profile.conditions[:4] == ["non-small cell lung cancer", "hypertension", "copd", "type 2 diabetes"]
    assert "EGFR exon 19 deletion" in profile.key_facts.biomarkers


@pytest.mark.parametrize(("note", "wanted", "unwanted"), [
    # the verb and what comes before it are not the condition's name
    ("A 39-year-old woman with flank pain. Pressure over the right flank causes pain in her back.", "flank pain",
     "flank causes pain"),
    ("A 70-year-old man who has been experiencing lower back pain for 2 weeks.", "lower back pain",
     "been experiencing lower back pain"),
    ("A 50-year-old woman with recently noted thyroid nodule and weight loss.", "thyroid nodule",
     "recently noted thyroid nodule"),
    ("A 33-year-old man. At the time of his initial diagnosis he was suffering from polydipsia.", "polydipsia",
     "initial diagnosis"),
    ("A 28-year-old woman with a sudden 'thunderclap' headache.", "thunderclap headache", "'thunderclap' headache"),
    ("A 61-year-old man with a productive cough. Sputum culture revealed an organism, as well as pleural effusion.",
     "pleural effusion", "organism"),
    ("An 83-year-old woman who describes progressive dysphagia to solids.", "dysphagia",
     "describes progressive dysphagia"),
    # symptoms of a named kind are a condition ("lower urinary tract symptoms"); "his symptoms" is not
    ("A 66-year-old man with lower urinary tract symptoms for a year. His symptoms are worse at night.",
     "lower urinary tract symptoms", "symptoms"),
])
def test_a_condition_is_named_without_the_words_around_it(note: str, wanted: str, unwanted: str) -> None:
    conditions = local_profile(note).conditions
    assert wanted in conditions and unwanted not in conditions, conditions


def test_a_word_the_main_condition_already_holds_is_no_second_condition() -> None:
    note = "A 44-year-old woman with chest pain since the morning. The pain radiates to her left arm."
    assert local_profile(note).conditions == ["chest pain"]
