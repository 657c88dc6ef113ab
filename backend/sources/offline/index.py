"""The offline corpus: real CT.gov v2 studies and PubMed records, indexed in SQLite FTS5.

Built once per process, lazily on first use (about a second: parsing dominates), then shared by
every request and user. The database lives in memory and is read-only after the build; a lock
serialises access because one sqlite3 connection is shared across threads. Rows keep only what
filters and ranking need; the parsed records themselves stay in dicts keyed by id.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.sources.ctgov_records import age_in_years, parse_study, study_nct_id
from backend.sources.models import Article, TrialDetail
from backend.sources.pubmed_records import parse_efetch

DATA_DIR = Path(__file__).with_name("data")
# Porter stemming lets "resistant" find "resistance"; diacritics folded so "Sjögren" = "Sjogren".
TOKENIZER = "porter unicode61 remove_diacritics 2"
TRIAL_COLUMNS = ("nct_id", "title", "conditions", "interventions", "summary", "eligibility", "sponsors",
                 "locations")
TRIAL_WEIGHTS = (5.0, 10.0, 6.0, 6.0, 2.0, 1.0, 1.0, 0.5)
ARTICLE_COLUMNS = ("ids", "title", "abstract", "mesh", "keywords", "authors", "journal", "pubtype", "year")
ARTICLE_WEIGHTS = (5.0, 10.0, 3.0, 4.0, 4.0, 2.0, 1.0, 1.0, 1.0)


def iter_study_records(data_dir: Path = DATA_DIR) -> Iterator[dict[str, Any]]:
    """Every v2 Study object in the corpus files, duplicates included."""
    for path in sorted((data_dir / "ctgov").glob("*.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            if path.name.endswith(".jsonl.gz"):
                yield from (json.loads(line) for line in fh if line.strip())
            else:
                body = json.load(fh)
                yield from body.get("studies", [body])


def load_trials(data_dir: Path = DATA_DIR) -> dict[str, TrialDetail]:
    best: dict[str, dict[str, Any]] = {}
    for study in iter_study_records(data_dir):
        nct_id = study_nct_id(study)
        # Prefer the fuller record when a study appears both projected and complete.
        if nct_id and (nct_id not in best or _richness(study) > _richness(best[nct_id])):
            best[nct_id] = study
    return {nct_id: parse_study(study) for nct_id, study in sorted(best.items())}


def _richness(study: dict[str, Any]) -> int:
    return len(study.get("protocolSection") or {}) + len(study) * 10


def load_articles(data_dir: Path = DATA_DIR) -> dict[str, Article]:
    articles: dict[str, Article] = {}
    for path in sorted((data_dir / "pubmed").glob("*.xml.gz")):
        for article in parse_efetch(gzip.decompress(path.read_bytes())):
            articles.setdefault(article.pmid, article)
    return articles


def _date_bounds(partial: str | None) -> tuple[str | None, str | None]:
    """'2019' -> ('2019-01-01', '2019-12-31'): a partial date covers a range, filters test overlap."""
    if not partial:
        return None, None
    pad_lo, pad_hi = {4: ("-01-01", "-12-31"), 7: ("-01", "-31")}.get(len(partial), ("", ""))
    return partial + pad_lo, partial + pad_hi


@dataclass
class OfflineIndex:
    trials: dict[str, TrialDetail]
    articles: dict[str, Article]
    build_seconds: float = 0.0
    conn: sqlite3.Connection = field(init=False, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._build_trials()
        self._build_articles()

    def _build_trials(self) -> None:
        cols = ", ".join(TRIAL_COLUMNS)
        self.conn.executescript(f"""
            CREATE TABLE trials (rowid INTEGER PRIMARY KEY, nct_id TEXT UNIQUE NOT NULL, phases TEXT NOT NULL,
                status TEXT, sex TEXT, min_age REAL, max_age REAL, start_date TEXT);
            CREATE VIRTUAL TABLE trials_fts USING fts5({cols}, tokenize='{TOKENIZER}');
        """)
        for rowid, t in enumerate(self.trials.values(), start=1):
            self.conn.execute(
                "INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (rowid, t.nct_id, "|" + "|".join(t.phase) + "|", t.status, t.sex,
                 age_in_years(t.minimum_age), age_in_years(t.maximum_age), t.start_date),
            )
            self.conn.execute(
                f"INSERT INTO trials_fts (rowid, {cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rowid, t.nct_id, _join(t.title, t.official_title, t.acronym),
                 _join(*t.conditions, *t.keywords, *t.condition_mesh_terms),
                 _join(*t.interventions, *t.intervention_mesh_terms, *(a.label for a in t.arms)),
                 _join(t.brief_summary, t.detailed_description), t.eligibility_criteria or "",
                 _join(t.sponsor, *t.collaborators),
                 _join(*(_join(loc.facility, loc.city, loc.state, loc.country, loc.zip, sep=", ")
                         for loc in t.locations))),
            )

    def _build_articles(self) -> None:
        cols = ", ".join(ARTICLE_COLUMNS)
        self.conn.executescript(f"""
            CREATE TABLE articles (rowid INTEGER PRIMARY KEY, pmid TEXT UNIQUE NOT NULL, date_lo TEXT,
                date_hi TEXT);
            CREATE VIRTUAL TABLE articles_fts USING fts5({cols}, tokenize='{TOKENIZER}');
        """)
        for rowid, a in enumerate(self.articles.values(), start=1):
            self.conn.execute("INSERT INTO articles VALUES (?, ?, ?, ?)",
                              (rowid, a.pmid, *_date_bounds(a.pub_date)))
            self.conn.execute(
                f"INSERT INTO articles_fts (rowid, {cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rowid, _join(a.pmid, a.doi, a.pmcid, *a.nct_ids), a.title, a.abstract, _join(*a.mesh_terms),
                 _join(*a.keywords), _join(*a.authors), _join(a.journal, a.journal_abbrev),
                 _join(*a.publication_types), str(a.year or "")),
            )

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, args).fetchall()


def _join(*parts: str | None, sep: str = "\n") -> str:
    return sep.join(p for p in parts if p)


def build_index(data_dir: Path = DATA_DIR) -> OfflineIndex:
    started = time.perf_counter()
    index = OfflineIndex(load_trials(data_dir), load_articles(data_dir))
    index.build_seconds = time.perf_counter() - started
    return index


_shared: OfflineIndex | None = None
_build_lock = threading.Lock()


def get_index() -> OfflineIndex:
    """The process-wide index, built on first call (thread-safe; later calls are free)."""
    global _shared
    if _shared is None:
        with _build_lock:
            if _shared is None:
                _shared = build_index()
    return _shared


async def aget_index() -> OfflineIndex:
    """Like `get_index`, but the first build runs in a worker thread, off the event loop."""
    return _shared if _shared is not None else await asyncio.to_thread(get_index)
