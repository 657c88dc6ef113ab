"""The relevance's reading of a trial's topic against the note, and the word counts it weighs words by."""

from __future__ import annotations

import gzip
import json

from backend.screening.ingest import local_profile
from backend.screening.relevance import relevance_scores
from backend.screening.trial_words import TABLE, corpus_files, idf, terms
from tests.screening.trials import trial

NOTE = ("A 52-year-old woman with major depressive disorder for 3 months: low mood, poor sleep and no interest in "
        "her work. She lost her appetite, with 4 kg of weight loss.")


def test_a_candidate_set_about_the_patients_disease_does_not_make_that_disease_weigh_least() -> None:
    # Candidates are found for the patient, so most name her disease; a trial about a passing symptom must not
    # outrank them because, among the candidates, the symptom's words are the rare ones.
    depression = [trial(f"NCT0000{i:04d}", None, title=f"Compound {i} for treatment-resistant depression in adults",
                        conditions=["Depression", "Depressive Disorder, Major"]) for i in range(12)]
    weight = trial("NCT00009999", None, title="Appetite and weight loss in older adults", conditions=["Weight Loss"])
    scores = relevance_scores(NOTE, local_profile(NOTE), [*depression, weight])
    assert min(scores[:-1]) > scores[-1]


def test_rare_words_weigh_more_than_common_ones_across_the_registry() -> None:
    def weight(word: str) -> float:
        return idf(terms(word)[0])
    assert weight("pemphigus") > weight("cancer") > weight("disease") > 0
    assert weight("zzyzxqword") >= weight("pemphigus")


def test_the_word_counts_were_taken_from_the_corpus_the_product_ships() -> None:
    # After the corpus changes, `python -m backend trial-words` recounts (the files and their sizes differ).
    table = json.loads(gzip.decompress(TABLE.read_bytes()))
    assert table["trials"] > 35_000 and len(table["words"]) > 30_000
    assert table["corpus_files"] == corpus_files()
