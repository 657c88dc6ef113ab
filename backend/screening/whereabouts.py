"""Where the patient lives and which language the note is written in, read without a model.

- `note_location(sentences)`: "lives in Boston", "resident of Cleveland, OH", "a 34-year-old woman from
  Jordan", "visiting from Ohio": the place as written, with the sentence it came from. A place after a
  weak cue ("from") counts only when it names a US state or a country (so "from ED" or "from Dr. Smith"
  are no place); after a strong cue ("lives in", "resides in", "resident of") any capitalised name does.
- `note_language(text)`: an ISO 639-1 code from the share of each language's commonest words (or the
  script, for text that is not in Latin letters). The offline rules read English only; INGEST flags any
  other language instead of returning an empty profile as if the note said nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_STATES = """Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii Idaho
Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi
Missouri Montana Nebraska Nevada New_Hampshire New_Jersey New_Mexico New_York North_Carolina North_Dakota Ohio
Oklahoma Oregon Pennsylvania Rhode_Island South_Carolina South_Dakota Tennessee Texas Utah Vermont Virginia
Washington West_Virginia Wisconsin Wyoming Puerto_Rico""".split()
_COUNTRIES = """Afghanistan Algeria Argentina Australia Austria Bangladesh Belgium Bolivia Brazil Canada Chile China
Colombia Cuba Denmark Ecuador Egypt Ethiopia Finland France Germany Ghana Greece Guatemala Haiti Honduras India
Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan Jordan Kenya Korea Lebanon Mexico Morocco Nepal Netherlands
Nigeria Norway Pakistan Peru Philippines Poland Portugal Romania Russia Saudi_Arabia Somalia South_Africa Spain
Sudan Sweden Switzerland Syria Taiwan Thailand Turkey Uganda Ukraine United_Kingdom England Scotland Wales
United_States USA Venezuela Vietnam Yemen Zimbabwe""".split()
_KNOWN = frozenset(p.replace("_", " ").lower() for p in (*_STATES, *_COUNTRIES))
_NAME = r"([A-Z][A-Za-z.'-]+(?:(?:\s+|,\s*)[A-Z][A-Za-z.'-]+){0,3})"
_STRONG = re.compile(rf"\b(?:lives|living|resides|residing|resident of|moved to|relocated to|native of|"
                     rf"born in|works in|home in)\s+(?:in\s+)?(?:the\s+)?{_NAME}")
_WEAK = re.compile(rf"\b(?:from|in|to|of|visiting)\s+(?:the\s+)?{_NAME}")
_CITY_STATE = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?,\s*[A-Z]{2})\b")
_NOT_A_PLACE = re.compile(r"^(?:ED|ER|ICU|OR|PCP|Dr|Mr|Mrs|Ms|The|His|Her|He|She|This|It|Patient)\b")


def _place(name: str) -> str | None:
    words = [w.strip(".,") for w in re.split(r"\s+|,\s*", name)]
    for n in range(len(words), 0, -1):  # the longest known name: "New York", "South Carolina"
        for start in range(len(words) - n + 1):
            if " ".join(words[start:start + n]).lower() in _KNOWN:
                return " ".join(words[: start + n])
    return None


def note_location(sentences: list[str]) -> tuple[str, int] | None:
    for i, sentence in enumerate(sentences):
        strong = _STRONG.search(sentence)
        if strong and not _NOT_A_PLACE.match(strong.group(1)):
            return strong.group(1).rstrip(".,"), i
        city = _CITY_STATE.search(sentence)
        if city:
            return city.group(1), i
        for weak in _WEAK.finditer(sentence):
            place = _place(weak.group(1))
            if place:
                return place, i
    return None


_COMMON = {
    "en": "the and of to in is was with for on that has her his he she patient history no not at by an",
    "es": "el la los las de del y en que con por para una un es se su sus al paciente años no presenta dolor",
    "fr": "le la les des du de et en une un est avec pour dans au aux sur patient ans pas il elle qui",
    "de": "der die das und ist mit von den dem ein eine nicht zu im auf für bei patient jahre sich er sie",
    "it": "il lo la gli le di del della e con per una un è che non si al paziente anni presenta",
    "pt": "o a os as de do da dos das e em com por para uma um é que não se ao paciente anos",
    "nl": "de het een en van in is met op voor niet zijn bij patiënt jaar die er ze hij",
}
_WORDS = {code: frozenset(words.split()) for code, words in _COMMON.items()}
_SCRIPTS = {"CYRILLIC": "ru", "ARABIC": "ar", "HEBREW": "he", "GREEK": "el", "DEVANAGARI": "hi", "HANGUL": "ko",
            "HIRAGANA": "ja", "KATAKANA": "ja", "CJK": "zh", "THAI": "th"}


def note_language(text: str) -> str | None:
    """'en', another code, or None when the text is too short to tell."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 20:
        return None
    scripts = Counter(unicodedata.name(c, "?").split(" ")[0] for c in letters)
    script, count = scripts.most_common(1)[0]
    if script != "LATIN" and count > len(letters) / 2:
        return _SCRIPTS.get(script, "und")
    words = re.findall(r"[^\W\d_]+", text.lower())
    if len(words) < 5:
        return None
    hits = {code: sum(w in common for w in words) for code, common in _WORDS.items()}
    best = max(hits, key=lambda c: hits[c])
    return "en" if hits["en"] >= hits[best] * 0.8 or hits[best] < 3 else best


LANGUAGE_NAMES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese",
                  "nl": "Dutch", "ru": "Russian", "ar": "Arabic", "he": "Hebrew", "el": "Greek", "hi": "Hindi",
                  "ko": "Korean", "ja": "Japanese", "zh": "Chinese", "th": "Thai", "und": "another language"}
