"""Follow-up chips that fit the conversation: the model (Claude or the demo) proposes them, and this filter
drops the ones a user would find absurd: the question that was just answered (or a duplicate chip), and a
chip about another disease than the one the user works on.

The topic is read from what the user set: their messages and the page's own fields (a search's condition,
a PubMed query), not the loaded rows, whose titles name every disease a basket trial touches. Only when the
user named none does the answer itself set it. Diseases are found by their shape (a tumour's -oma, "X cancer",
"X syndrome"…) and a short table of abbreviations, so no disease is special-cased. An -itis or -emia is
left alone: in a chat about a cancer it is mostly an adverse event (colitis, anaemia), on topic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from backend.agent.schemas import SuggestedValue
from backend.diseases import ABBREVIATIONS

_FENCED = re.compile(r"<page_context\b.*?</page_context>", re.S | re.I)
_WORD = re.compile(r"[^\w\s]+")
_CLAUSE = re.compile(r"[,;:.!?()\[\]/|]+")

_HEADS = (r"cancers?|carcinomas?|diseases?|syndromes?|disorders?|tumou?rs?|neoplasms?|leuka?emias?|lymphomas?|"
          r"failure|fibrosis|diabetes|sclerosis|dystroph(?:y|ies)")
_HEAD = re.compile(rf"\b(?:{_HEADS})\b")
_SHAPED = re.compile(r"\b(?:[a-z]{3,}omas?|leuka?emias?|diabetes)\b")
# Words of that shape that name no disease, and words that don't qualify one ("trials for lung cancer").
_NOT_DISEASE = {"diploma", "aroma", "stoma", "soma", "chroma"}
_CRITERIA = {"exclude", "excludes", "excluding", "excluded", "exclusion", "prior", "history", "without", "allow",
             "allows", "allowed", "allowing", "active", "concurrent", "comorbid", "underlying", "existing",
             "uncontrolled", "known", "except", "no"}
_STOP = _CRITERIA | {"a", "an", "the", "of", "for", "in", "with", "and", "or", "to", "on", "about", "trials", "trial",
         "studies", "study", "articles", "patients", "people", "find", "search", "show", "phase", "recruiting",
         "advanced", "metastatic", "early", "late", "stage", "my", "these", "those", "this", "that", "is", "are",
         "what", "which", "any", "other", "than", "vs", "versus", "new", "more", "less", "most", "all", "only",
         "her", "his", "their", "your", "our", "patient", "rare", "common"}


def normalise(text: str) -> str:
    """Case, punctuation and spacing do not make another question."""
    return " ".join(_WORD.sub(" ", text.lower()).split())


def _singular(head: str) -> str:
    return head if head in ("diabetes", "fibrosis", "sclerosis") else head.removesuffix("s").replace("ie", "y")


def _qualifier(words: str) -> str:
    """The words of "... lung cancer" that belong to the disease's name: the run after the last stop word."""
    kept: list[str] = []
    split = words.split()
    while split and split[-1] not in _STOP:
        word = split.pop()
        if word.isdigit():  # "type 2 diabetes" but not "phase 2 lung cancer"
            if split[-1:] != ["type"]:
                break
            word = f"{split.pop()} {word}"
        kept.append(word)
    return " ".join(reversed(kept))


def _criterion(before: list[str]) -> bool:
    """Whether the words before a disease make it a criterion ("excludes autoimmune disease", "history of
    hepatitis"), which a chip about melanoma trials may well ask about, not the topic of a chip."""
    return bool(_CRITERIA & set(before[-3:]))


def diseases(text: str) -> set[str]:
    """The diseases `text` is about, each as a lower-case phrase (abbreviations spelled out); a disease named
    as an eligibility criterion is not one of them."""
    found: set[str] = set()
    for clause in _CLAUSE.split(text):  # "Crohn's disease, heart failure": no name runs over a comma
        low = normalise(clause)
        words = low.split()
        found.update(normalise(ABBREVIATIONS[w]) for i, w in enumerate(words)
                     if w in ABBREVIATIONS and not _criterion(words[:i]))
        start = 0
        for head in _HEAD.finditer(low):
            # The words just before the head that qualify it ("lung cancer", "non small cell lung cancer"),
            # back to the previous head at most ("breast cancer and lung cancer").
            before = low[start:head.start()].split()
            qualifier = _qualifier(" ".join(before[-5:]))
            if qualifier and not _criterion(before[:len(before) - len(qualifier.split())]):
                found.add(f"{qualifier} {_singular(head.group())}")
            start = head.end()
        # "carcinoma" alone when the text says "hepatocellular carcinoma" would make every carcinoma the topic.
        heads = {phrase.rsplit(" ", 1)[-1] for phrase in found}
        for shaped in _SHAPED.finditer(low):
            name = _singular(shaped.group())
            if name not in _NOT_DISEASE and name not in heads and not _criterion(low[:shaped.start()].split()):
                found.add(name)
    return found


def _kind_of(specific: str, general: str) -> bool:
    """"uveal melanoma" is a melanoma and "non small cell lung cancer" a lung cancer, but "non small cell
    lung cancer" is no small cell lung cancer."""
    if specific == general:
        return True
    rest = specific.removesuffix(" " + general)
    return rest != specific and rest.rsplit(" ", 1)[-1] != "non"


def _covered(disease: str, topic: set[str]) -> bool:
    """The chip's disease is the topic's, a kind of it, or what it is a kind of."""
    return any(_kind_of(disease, t) or _kind_of(t, disease) for t in topic)


def topic(user_texts: Iterable[str], page_context: Mapping[str, Any], answer: str) -> set[str]:
    """The diseases the conversation is about: named by the user or the page's fields, else by the answer."""
    fields = [v for v in page_context.values() if isinstance(v, str)]
    fields += [x for v in page_context.values() if isinstance(v, list) for x in v if isinstance(x, str)]
    named = set().union(*(diseases(t) for t in [*user_texts, *fields]))
    return named or diseases(answer)


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    """What the user wrote in the history, without the page context that travels with it, nor tool results."""
    out = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        if text := _FENCED.sub(" ", text).strip():
            out.append(text)
    return out


def relevant(chips: list[SuggestedValue], messages: list[dict[str, Any]], page_context: Mapping[str, Any],
             answer: str) -> list[SuggestedValue]:
    """The chips worth offering after `answer` to the conversation `messages` (its last user text is the
    question just answered), in the model's order."""
    texts = user_texts(messages)
    asked = normalise(texts[-1]) if texts else ""
    about = topic(texts, page_context, answer)
    seen: set[str] = set()
    kept = []
    for chip in chips:
        value = normalise(chip.value)
        if not value or value == asked or normalise(chip.label) == asked or value in seen:
            continue
        if about and not all(_covered(d, about) for d in diseases(f"{chip.label} {chip.value}")):
            continue
        seen.add(value)
        kept.append(chip)
    return kept
