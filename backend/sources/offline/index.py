"""The offline corpus indexed in SQLite FTS5, built once and cached on disk.

Building takes tens of seconds (parsing 35,000 studies dominates), so the index is a file:
`<COLLEAGUE_OFFLINE_INDEX_DIR>/offline-index-<key>.sqlite`, where the key hashes every data file,
the code that turns records into rows, and `INDEX_VERSION`. A start with an unchanged corpus opens
the file; a changed corpus or parser gets a new key, a new build, and the stale file is removed.

Processes that start together (several workers, `make run` beside `make test`) must not build
over each other: a builder holds an exclusive `flock` on `offline-index.lock`, checks again that
nobody finished first, writes a temp file and `os.replace`s it into place, so a reader only ever
sees a complete index. Once open it is read-only (`immutable=1`), read through a pool of connections
(no lock between them; SQLite releases the GIL while it runs a statement), and a statement running
longer than `max_seconds` is interrupted (SQLite's progress handler) and answered as `SearchTooSlow`.
Async callers run their work through `off_loop`, in a few threads of the index's own, so a slow search
never holds the event loop nor the threads every other request shares. Rows hold what filters and
ranking need plus the parsed records as JSON, so memory stays small: records are read by id.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import queue
import sqlite3
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from pydantic import BaseModel
from tqdm import tqdm

from backend.errors import InvalidInput
from backend.sources import ctgov_records, models, pubmed_records
from backend.sources.ctgov_records import age_in_years
from backend.sources.models import Article, TrialDetail, TrialSummary
from backend.sources.offline import corpus, facets
from backend.sources.offline.corpus import DATA_DIR, data_files, expected_records, iter_articles, iter_trials
from backend.sources.offline.facets import article_facet_rows, trial_facet_rows

INDEX_VERSION = 1  # bump when the schema changes without any hashed source file changing
# Porter stemming lets "resistant" find "resistance"; diacritics folded so "Sjögren" = "Sjogren".
TOKENIZER = "porter unicode61 remove_diacritics 2"
TRIAL_COLUMNS = ("nct_id", "title", "conditions", "interventions", "summary", "eligibility", "sponsors",
                 "locations")
TRIAL_WEIGHTS = (5.0, 10.0, 6.0, 6.0, 2.0, 1.0, 1.0, 0.5)
ARTICLE_COLUMNS = ("ids", "title", "abstract", "mesh", "keywords", "authors", "journal", "pubtype", "year")
ARTICLE_WEIGHTS = (5.0, 10.0, 3.0, 4.0, 4.0, 2.0, 1.0, 1.0, 1.0)
# What a row is made of: a change here changes the key, so old caches are never read by new code.
_CODE = (Path(__file__), Path(corpus.__file__), Path(facets.__file__), Path(ctgov_records.__file__),
         Path(pubmed_records.__file__), Path(models.__file__))

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
QUERY_THREADS = 4  # offline queries at once per process (per event loop); more wait their turn
PROGRESS_STEPS = 2000  # SQLite VM steps between two looks at the clock (~0.1 ms each)


class SearchTooSlow(InvalidInput):
    """A statement over the index ran past its time cap: the search is too broad to answer offline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"This search took longer than {seconds:g} s to run and was stopped. Make it narrower: "
                         "fewer OR-ed words, and longer wildcard prefixes (resist*, not r*).")


def cache_key(data_dir: Path = DATA_DIR) -> str:
    digest = hashlib.sha256(f"offline-index v{INDEX_VERSION}".encode())
    for path in [*data_files(data_dir), *_CODE]:
        digest.update(f"\0{path.name}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _date_bounds(partial: str | None) -> tuple[str | None, str | None]:
    """'2019' -> ('2019-01-01', '2019-12-31'): a partial date covers a range, filters test overlap."""
    if not partial:
        return None, None
    pad_lo, pad_hi = {4: ("-01-01", "-12-31"), 7: ("-01", "-31")}.get(len(partial), ("", ""))
    return partial + pad_lo, partial + pad_hi


def _join(*parts: str | None, sep: str = "\n") -> str:
    return sep.join(p for p in parts if p)


def _pack(record: BaseModel) -> bytes:
    return zlib.compress(record.model_dump_json(exclude_defaults=True).encode(), 6)


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(f"""
        CREATE TABLE trials (rowid INTEGER PRIMARY KEY, nct_id TEXT UNIQUE NOT NULL, phases TEXT NOT NULL,
            status TEXT, sex TEXT, min_age REAL, max_age REAL, start_date TEXT, study_type TEXT);
        CREATE INDEX trials_newest ON trials (start_date IS NULL, start_date DESC, nct_id);
        -- Records apart from the filter columns, so scanning filters reads a few pages, not the records.
        CREATE TABLE trials_docs (rowid INTEGER PRIMARY KEY, summary BLOB NOT NULL, detail BLOB NOT NULL);
        CREATE VIRTUAL TABLE trials_fts USING fts5({", ".join(TRIAL_COLUMNS)}, tokenize='{TOKENIZER}');
        CREATE TABLE articles (rowid INTEGER PRIMARY KEY, pmid TEXT UNIQUE NOT NULL, date_lo TEXT,
            date_hi TEXT);
        CREATE INDEX articles_newest ON articles (date_lo IS NULL, date_lo DESC, pmid DESC);
        CREATE TABLE articles_docs (rowid INTEGER PRIMARY KEY, detail BLOB NOT NULL);
        CREATE VIRTUAL TABLE articles_fts USING fts5({", ".join(ARTICLE_COLUMNS)}, tokenize='{TOKENIZER}');
        -- Statistics (backend/stats): each record's facet values, keyed for "these rows' values of a facet".
        CREATE TABLE trial_facets (facet TEXT NOT NULL, rowid INTEGER NOT NULL, value TEXT NOT NULL,
            PRIMARY KEY (facet, rowid, value)) WITHOUT ROWID;
        CREATE TABLE trial_numbers (rowid INTEGER PRIMARY KEY, enrollment INTEGER);
        CREATE TABLE article_facets (facet TEXT NOT NULL, rowid INTEGER NOT NULL, value TEXT NOT NULL,
            PRIMARY KEY (facet, rowid, value)) WITHOUT ROWID;
    """)


def _index_facets(conn: sqlite3.Connection) -> None:
    """Counting by value walks these in order instead of sorting every row (after the rows are in: faster)."""
    conn.executescript("""
        CREATE INDEX trial_facets_by_value ON trial_facets (facet, value);
        CREATE INDEX article_facets_by_value ON article_facets (facet, value);
    """)


def _insert_trial(conn: sqlite3.Connection, rowid: int, t: TrialDetail) -> None:
    conn.execute(
        "INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, t.nct_id, "|" + "|".join(t.phase) + "|", t.status, t.sex, age_in_years(t.minimum_age),
         age_in_years(t.maximum_age), t.start_date, t.study_type),
    )
    conn.execute("INSERT INTO trials_docs VALUES (?, ?, ?)", (rowid, _pack(t.to_summary()), _pack(t)))
    conn.execute(
        f"INSERT INTO trials_fts (rowid, {', '.join(TRIAL_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, t.nct_id, _join(t.title, t.official_title, t.acronym),
         _join(*t.conditions, *t.keywords, *t.condition_mesh_terms),
         _join(*t.interventions, *t.intervention_mesh_terms, *(a.label for a in t.arms)),
         _join(t.brief_summary, t.detailed_description), t.eligibility_criteria or "",
         _join(t.sponsor, *t.collaborators),
         _join(*(_join(loc.facility, loc.city, loc.state, loc.country, loc.zip, sep=", ") for loc in t.locations))),
    )
    conn.executemany("INSERT INTO trial_facets VALUES (?, ?, ?)",
                     [(facet, rowid, value) for facet, value in trial_facet_rows(t)])
    conn.execute("INSERT INTO trial_numbers VALUES (?, ?)", (rowid, t.enrollment))


def _insert_article(conn: sqlite3.Connection, rowid: int, a: Article) -> None:
    conn.execute("INSERT INTO articles VALUES (?, ?, ?, ?)", (rowid, a.pmid, *_date_bounds(a.pub_date)))
    conn.execute("INSERT INTO articles_docs VALUES (?, ?)", (rowid, _pack(a)))
    conn.execute(
        f"INSERT INTO articles_fts (rowid, {', '.join(ARTICLE_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, _join(a.pmid, a.doi, a.pmcid, *a.nct_ids), a.title, a.abstract, _join(*a.mesh_terms),
         _join(*a.keywords), _join(*a.authors), _join(a.journal, a.journal_abbrev), _join(*a.publication_types),
         str(a.year or "")),
    )
    conn.executemany("INSERT INTO article_facets VALUES (?, ?, ?)",
                     [(facet, rowid, value) for facet, value in article_facet_rows(a)])


def write_index(data_dir: Path, target: Path, *, progress: bool = True) -> None:
    """Build the whole index into `target` (a new file), with a progress bar on stderr."""
    conn = sqlite3.connect(target)
    try:
        conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=8192;")
        _create_schema(conn)
        with tqdm(desc="Indexing the offline corpus", unit=" records", disable=not progress, mininterval=1,
                  total=expected_records(data_dir) if progress else None) as bar:
            for rowid, trial in enumerate(iter_trials(data_dir), start=1):
                _insert_trial(conn, rowid, trial)
                bar.update()
            for rowid, article in enumerate(iter_articles(data_dir), start=1):
                _insert_article(conn, rowid, article)
                bar.update()
        _index_facets(conn)
        conn.execute("INSERT INTO trials_fts(trials_fts) VALUES ('optimize')")
        conn.execute("INSERT INTO articles_fts(articles_fts) VALUES ('optimize')")
        conn.commit()
    finally:
        conn.close()


class Records(Mapping[str, M], Generic[M]):
    """Id -> record, read from the index file on demand (nothing is held in memory)."""

    def __init__(self, index: OfflineIndex, table: str, key: str, model: type[M]) -> None:
        self._index, self._table, self._key, self._model = index, table, key, model
        self._docs = f"{table} JOIN {table}_docs USING (rowid)"

    def __getitem__(self, key: str) -> M:
        rows = self._index.query(f"SELECT detail FROM {self._docs} WHERE {self._key} = ?", (key,))
        if not rows:
            raise KeyError(key)
        return self._model.model_validate_json(zlib.decompress(rows[0][0]))

    def __contains__(self, key: object) -> bool:
        return bool(self._index.query(f"SELECT 1 FROM {self._table} WHERE {self._key} = ?", (key,)))

    def __iter__(self) -> Iterator[str]:
        return iter([k for (k,) in self._index.query(f"SELECT {self._key} FROM {self._table} ORDER BY rowid")])

    def __len__(self) -> int:
        return int(self._index.query(f"SELECT count(*) FROM {self._table}")[0][0])

    def all(self) -> Iterator[M]:
        """Every record, in index order (one query; for scans and benchmarks, not for requests)."""
        rows = self._index.query(f"SELECT detail FROM {self._table}_docs ORDER BY rowid")
        return (self._model.model_validate_json(zlib.decompress(blob)) for (blob,) in rows)

    def many(self, keys: Sequence[str], *, column: str | None = None, model: type[BaseModel] | None = None,
             ) -> list[Any]:
        """The records for `keys`, in that order; unknown keys are skipped. One query."""
        if not keys:
            return []
        marks = ", ".join("?" * len(keys))
        rows = dict(self._index.query(
            f"SELECT {self._key}, {column or 'detail'} FROM {self._docs} WHERE {self._key} IN ({marks})",
            list(keys)))
        parse = (model or self._model).model_validate_json
        return [parse(zlib.decompress(rows[k])) for k in keys if k in rows]


class _Connection:
    """One read-only connection with its statement's time cap (`deadline`, a time.monotonic())."""

    def __init__(self, uri: str, steps: int = PROGRESS_STEPS) -> None:
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self.deadline = 0.0
        self.conn.set_progress_handler(lambda: time.monotonic() > self.deadline, steps)


@dataclass
class OfflineIndex:
    path: Path
    build_seconds: float = 0.0  # 0.0: opened from the cache, not built by this call
    max_seconds: float = 5.0  # a statement's time cap (COLLEAGUE_OFFLINE_QUERY_SECONDS)
    connections: int = QUERY_THREADS + 2  # off_loop's threads, and a few blocking callers besides
    _pool: queue.SimpleQueue[_Connection] = field(default_factory=queue.SimpleQueue, repr=False)
    trials: Records[TrialDetail] = field(init=False, repr=False)
    articles: Records[Article] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.trials = Records(self, "trials", "nct_id", TrialDetail)
        self.articles = Records(self, "articles", "pmid", Article)
        # All opened now: an open connection keeps reading the file after a newer build replaced it (another
        # version of the code starting), where a connection opened later would find it gone.
        uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
        for _ in range(self.connections):
            self._pool.put(_Connection(uri))

    def trial_summaries(self, nct_ids: Sequence[str]) -> list[TrialSummary]:
        return self.trials.many(nct_ids, column="summary", model=TrialSummary)

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The statement's rows on a free connection of the pool, within `max_seconds` (else SearchTooSlow)."""
        connection = self._pool.get()
        try:
            connection.deadline = time.monotonic() + self.max_seconds
            return connection.conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise SearchTooSlow(self.max_seconds) from None
            raise
        finally:
            self._pool.put(connection)


_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in one of the offline index's threads (at most QUERY_THREADS at once per event loop), so a
    long query neither blocks the loop nor takes the threads that database work and other requests use."""
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(QUERY_THREADS)
    return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)


def open_index(data_dir: Path = DATA_DIR, cache_dir: Path | None = None, *, progress: bool = True) -> OfflineIndex:
    """The index of `data_dir`, from the cache when its key matches, else built (once, under a file lock)."""
    if cache_dir is None:
        from backend.config import get_settings
        cache_dir = get_settings().offline_index_dir
    path = cache_dir / f"offline-index-{cache_key(data_dir)}.sqlite"
    if path.is_file():
        return OfflineIndex(path)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / "offline-index.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)  # released when the file closes
        if path.is_file():  # another process built it while this one waited
            return OfflineIndex(path)
        started = time.perf_counter()
        temp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            write_index(data_dir, temp, progress=progress)
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        for stale in cache_dir.glob("offline-index-*.sqlite"):
            if stale != path:
                stale.unlink(missing_ok=True)  # processes that still have it open keep reading it
        return OfflineIndex(path, build_seconds=time.perf_counter() - started)


_shared: OfflineIndex | None = None
_shared_lock = threading.Lock()


def get_index() -> OfflineIndex:
    """The process-wide index, opened (or built) on first call; thread-safe, later calls are free."""
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                from backend.config import get_settings
                index = open_index()
                index.max_seconds = get_settings().offline_query_seconds
                _shared = index
    return _shared


async def aget_index() -> OfflineIndex:
    """Like `get_index`, but the first open runs in a worker thread, off the event loop."""
    return _shared if _shared is not None else await off_loop(get_index)
