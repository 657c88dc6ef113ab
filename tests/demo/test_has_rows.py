"""Whether the page holds rows is read from the LOADED section's own line: TrialScout's patient section says
"none loaded" when no patient is open, and that must not hide the loaded trials from the demo model."""

from backend.demo.general import has_rows

TRIALS = ("LOADED TRIALS (2):\n- NCT05000101 | A | Phase 3 | Recruiting | n=620\n"
          "- NCT05000102 | B | Phase 2 | Recruiting | n=1\n")


def test_rows_are_seen_beside_an_empty_patient_section():
    page = ("SEARCH STATE:\n- Results: 2 loaded of 2 total\n\n"
            "PATIENT: none loaded (the patient panel is empty)\n\n")
    assert has_rows(page + TRIALS)


def test_no_rows_when_the_loaded_section_says_none():
    assert not has_rows("PATIENT: none loaded\n\nLOADED TRIALS: none loaded\n")
    assert not has_rows("LOADED ARTICLES: none loaded")
    assert not has_rows("The user has not searched yet.")


def test_articles_count_too():
    assert has_rows("LOADED ARTICLES (1 of 40 listed):\n- 31000010 | Title | 2024")
