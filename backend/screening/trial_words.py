"""How many registered trials name each word: the relevance's document frequencies, from the offline corpus.

A screening's candidates were found for this patient, so most of them name the patient's main condition;
counted over the candidates, that condition is the commonest word and weighs least, and a trial about a
passing symptom ("weight loss", "pain") outranks the ones about the disease. Counted over the corpus's
35,602 trials, a word weighs what it says about a trial anywhere. The table is built from the offline
corpus once and kept as data (`data/trial_words.json.gz`), so live screenings use it too:

    python -m backend trial-words     # after the corpus changes; about 35 s

`corpus_files` in the table names the files it was counted from, with their sizes, so a changed corpus shows.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from backend.screening.note_reader import WORD, fold, norm
from backend.sources import TrialDetail
from backend.sources.offline.corpus import DATA_DIR, data_files, iter_trials

TABLE = Path(__file__).with_name("data") / "trial_words.json.gz"
_STOP = frozenset(norm(w) for w in "a an the of and or with in on for to by at from as is are was be not no "
                  "patient patients study trial phase versus vs".split())


def terms(text: str) -> list[str]:
    return [w for w in (norm(t) for t in WORD.findall(fold(text))) if w not in _STOP and len(w) > 1]


def trial_text(t: TrialDetail) -> str:
    """What a trial is about: its titles, conditions, keywords and MeSH condition terms."""
    return " ".join([t.title, t.official_title or "", *t.conditions, *t.keywords, *t.condition_mesh_terms])


def corpus_files() -> dict[str, int]:
    """The trial files of the offline corpus, with their sizes."""
    return {str(p.relative_to(DATA_DIR)): p.stat().st_size for p in data_files()
            if "pubmed" not in p.parts and "articles" not in p.name}


def build() -> dict[str, Any]:
    counts: Counter[str] = Counter()
    trials = 0
    for trial in iter_trials():
        counts.update(set(terms(trial_text(trial))))
        trials += 1
    return {"trials": trials, "corpus_files": corpus_files(), "words": dict(sorted(counts.items()))}


@cache
def _table() -> tuple[int, dict[str, int]]:
    table = json.loads(gzip.decompress(TABLE.read_bytes()))
    return table["trials"], table["words"]


def idf(word: str) -> float:
    """BM25's inverse document frequency of `word` over the corpus's trials (a word none names: the most)."""
    n, words = _table()
    df = words.get(word, 0)
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def write_table() -> str:
    table = build()
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_bytes(gzip.compress(json.dumps(table, separators=(",", ":")).encode(), mtime=0))
    return f"{table['trials']} trials, {len(table['words'])} words -> {TABLE}"
