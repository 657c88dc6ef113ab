"""The demo model searches for the subject of a question, not its frame: "How does radiotherapy work for
brain metastases? find trials" searches brain metastases and radiotherapy, and "How do I find papers on EGFR
resistance?" gives a PubMed query without `do[tiab]`. Wh-words, auxiliaries, pronouns and the verb a
question's auxiliary carries ("work", "used", "compare") are dropped; the same words stay where they are
the subject ("return to work", "opioid use disorder"), and requests without a question frame keep their
fields."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.demo.turn import demo_turn

# Words of a question's frame: none may reach a search field or a query term.
FRAME = {
    "how",
    "what",
    "which",
    "where",
    "when",
    "why",
    "who",
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "should",
    "would",
    "will",
    "i",
    "me",
    "my",
    "we",
    "you",
    "there",
    "find",
    "papers",
    "articles",
    "trials",
    "studies",
    "literature",
    "say",
    "known",
    "tell",
    "know",
    "evidence",
    "look",
    "looking",
    "search",
    "any",
    "anything",
    "whats",
    "im",
    "join",
    "out",
    "published",
    "been",
}

# (request, the words the search must keep)
TRIAL_QUESTIONS = [
    ("How does radiotherapy work for brain metastases? find trials", {"radiotherapy", "brain", "metastases"}),
    ("What trials are there for psoriasis?", {"psoriasis"}),
    ("Can you find trials on sickle cell anemia?", {"sickle", "cell", "anemia"}),
    ("are there any trials for pancreatic cancer?", {"pancreatic", "cancer"}),
    ("where can I find trials about asthma in children?", {"asthma"}),
    ("How do I search for trials in endometriosis?", {"endometriosis"}),
    ("What studies are recruiting for lupus nephritis?", {"lupus", "nephritis"}),
    ("Is there a trial I could join for narcolepsy?", {"narcolepsy"}),
    ("which trials do you know of for gout", {"gout"}),
    ("How is tirzepatide used in obesity? any trials?", {"tirzepatide", "obesity"}),
    ("Do you know any trials on osteoarthritis of the knee?", {"osteoarthritis", "knee"}),
    ("What's out there in trials for glioblastoma", {"glioblastoma"}),
    ("I'm looking for trials about migraine", {"migraine"}),
    ("how does surgery compare for colorectal cancer? show trials", {"colorectal", "cancer", "surgery"}),
    ("could you show me studies for cystic fibrosis", {"cystic", "fibrosis"}),
    ("Are there studies where semaglutide is tested in heart failure?", {"semaglutide", "heart", "failure"}),
]
ARTICLE_QUESTIONS = [
    ("How do I find papers on EGFR resistance?", {"egfr", "resistance"}),
    ("What does the literature say about vitamin D and fractures?", {"vitamin", "fractures"}),
    ("How is hydroxyurea used in sickle cell disease? find papers", {"hydroxyurea", "sickle cell disease"}),
    ("can you find me papers on ketamine for depression", {"ketamine", "depression"}),
    ("what is known about statins in sepsis? search pubmed", {"statin", "sepsis"}),
    ("How does metformin work in cancer? find articles", {"metformin", "cancer"}),
    ("Is there any evidence on melatonin for delirium? find papers", {"melatonin", "delirium"}),
    ("Where can I read papers about long covid fatigue?", {"long covid", "fatigue"}),
    ("What do we know about CAR-T neurotoxicity? articles please", {"car-t", "neurotoxicity"}),
    ("how does smoking affect wound healing? find studies", {"smoking", "wound", "healing"}),
    ("Could you find articles on probiotics in colitis", {"probiotics", "colitis"}),
    ("what are the papers on nivolumab in melanoma", {"nivolumab", "melanoma"}),
    ("How did aspirin do in preeclampsia trials? find papers", {"aspirin", "preeclampsia"}),
    ("What papers have been published on sotorasib for KRAS lung cancer?", {"sotorasib", "kras", "lung cancer"}),
    ("Why do gliomas recur after radiotherapy? find papers", {"gliomas", "recur", "radiotherapy"}),
    ("Which papers should I read on tinnitus?", {"tinnitus"}),
]
# Without a question frame, or where the frame's verb is the subject: the words stay.
KEEPS = [
    ("trials", "find trials on return to work after stroke", {"return", "work", "stroke"}),
    ("articles", "papers on opioid use disorder treatment", {"opioid", "use", "disorder"}),
    ("articles", "what's known about return to work after stroke? find papers", {"return", "work", "stroke"}),
    ("trials", "find phase 3 trials for type 2 diabetes", {"diabetes"}),
    ("trials", "trials testing nivolumab in melanoma", {"nivolumab", "melanoma"}),
    ("articles", "search pubmed for osimertinib resistance", {"osimertinib", "resistance"}),
    ("articles", "find randomized trials of exercise for depression", {"exercise", "depression"}),
]


def card(page: str, message: str) -> dict[str, Any]:
    context = {"current_page": "trialscout" if page == "trials" else "tablizer"}
    text, _ = demo_turn(context, message)
    marker = "TRIAL_SEARCH:" if page == "trials" else "PUBMED_QUERY:"
    line = next((x for x in text.splitlines() if x.startswith(marker)), None)
    assert line is not None, text[:300]
    found: dict[str, Any] = json.loads(line.removeprefix(marker))
    return found


def searched(page: str, found: dict[str, Any]) -> str:
    """What the card searches for, lower-cased: the subject fields, or the query's own terms."""
    if page == "trials":
        return " ".join(str(found.get(k, "")) for k in ("condition", "intervention")).lower()
    return str(found["query"]).lower()


def words(page: str, found: dict[str, Any]) -> set[str]:
    if page == "trials":
        return set(re.findall(r"[a-z0-9']+", searched(page, found).replace("'", "")))
    return {m.replace("'", "") for m in re.findall(r"([a-z0-9'-]+)\[tiab\]", searched(page, found))}


def test_the_evaluation_list_is_varied() -> None:
    assert len(TRIAL_QUESTIONS) + len(ARTICLE_QUESTIONS) >= 30 and len(KEEPS) >= 5


@pytest.mark.parametrize(("message", "subject"), TRIAL_QUESTIONS, ids=[m for m, _ in TRIAL_QUESTIONS])
def test_a_trial_search_keeps_the_subject_not_the_question(message: str, subject: set[str]) -> None:
    found = card("trials", message)
    assert not words("trials", found) & FRAME, found
    assert all(w in searched("trials", found) for w in subject), found


@pytest.mark.parametrize(("message", "subject"), ARTICLE_QUESTIONS, ids=[m for m, _ in ARTICLE_QUESTIONS])
def test_a_pubmed_query_keeps_the_subject_not_the_question(message: str, subject: set[str]) -> None:
    found = card("articles", message)
    assert not words("articles", found) & FRAME, found
    assert all(w in searched("articles", found) for w in subject), found


@pytest.mark.parametrize(("page", "message", "subject"), KEEPS, ids=[m for _, m, _ in KEEPS])
def test_words_that_are_the_subject_stay(page: str, message: str, subject: set[str]) -> None:
    found = card(page, message)
    assert all(w in searched(page, found) for w in subject), found
