"""The records of the offline corpus, read from `data/`: what gets indexed, one record at a time.

Two generations of data live side by side. The fixture files (`ctgov/`, `pubmed/`: 375 studies and
340 PubMed records, byte-for-byte copies, provenance in `manifest.json`) and the real-sized corpus
(`corpus/`: 35,227 studies and 15,284 citations, trimmed by `build_data.py`, provenance in
`corpus/MANIFEST.md`). The two were chosen not to overlap; where a study is in both anyway, the
fuller record wins. Every corpus record carries the date its copy was taken (`snapshot_date`):
a status is only true as of that date.
"""

from __future__ import annotations

import gzip
import json
import lzma
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from backend.sources.ctgov_records import parse_study, study_nct_id
from backend.sources.models import AbstractSection, Article, TrialDetail
from backend.sources.pubmed_records import nct_ids_in, parse_efetch, text_date

DATA_DIR = Path(__file__).with_name("data")
# "BACKGROUND: ..." lines of a structured abstract flattened to text.
_SECTION = re.compile(r"^([A-Z][A-Z0-9 ,&/()-]{1,60}):\s+(.*)$")
# The Cohen review sets write "NA" where a record has no abstract.
_NO_ABSTRACT = {"", "NA", "N/A"}


def data_files(data_dir: Path = DATA_DIR) -> list[Path]:
    """Every file the index is built from, in a stable order (the cache key hashes them)."""
    patterns = ("ctgov/*.gz", "pubmed/*.xml.gz", "corpus/*.jsonl.xz", "manifest.json")
    return sorted(p for pattern in patterns for p in data_dir.glob(pattern))


def iter_study_records(data_dir: Path = DATA_DIR) -> Iterator[dict[str, Any]]:
    """Every v2 Study object in the fixture files (`ctgov/`), duplicates included."""
    for path in sorted((data_dir / "ctgov").glob("*.gz")):
        yield from iter_study_records_in(path)


def iter_study_records_in(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        if path.name.endswith(".jsonl.gz"):
            yield from (json.loads(line) for line in fh if line.strip())
        else:
            body = json.load(fh)
            yield from body.get("studies", [body])


def _captured_dates(data_dir: Path) -> dict[str, str]:
    """Fixture file -> capture date, for the files whose provenance records one."""
    manifest = data_dir / "manifest.json"
    entries = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else []
    return {e["copied_as"]: e["source"]["captured_at"][:10] for e in entries
            if e.get("source", {}).get("captured_at")}


def _jsonl_xz(path: Path) -> Iterator[dict[str, Any]]:
    if path.is_file():
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            yield from (json.loads(line) for line in fh if line.strip())


def _richness(study: dict[str, Any]) -> int:
    return len(study.get("protocolSection") or {}) + len(study) * 10


def _fixture_studies(data_dir: Path) -> dict[str, dict[str, Any]]:
    captured = _captured_dates(data_dir)
    best: dict[str, dict[str, Any]] = {}
    for path in sorted((data_dir / "ctgov").glob("*.gz")):
        for study in iter_study_records_in(path):
            nct_id = study_nct_id(study)
            if date := captured.get(f"ctgov/{path.name}"):
                study = {**study, "snapshotDate": date}
            # Prefer the fuller record when a study appears both projected and complete.
            if nct_id and (nct_id not in best or _richness(study) > _richness(best[nct_id])):
                best[nct_id] = study
    return best


def iter_trials(data_dir: Path = DATA_DIR) -> Iterator[TrialDetail]:
    """Each study once: the corpus streamed (it does not fit comfortably in memory as dicts)."""
    fixtures = _fixture_studies(data_dir)
    for study in _jsonl_xz(data_dir / "corpus" / "trials.jsonl.xz"):
        nct_id = study_nct_id(study)
        if nct_id in fixtures:
            if _richness(fixtures[nct_id]) >= _richness(study):
                continue
            del fixtures[nct_id]
        yield parse_study(study)
    for study in fixtures.values():
        yield parse_study(study)


def _fixture_articles(data_dir: Path) -> dict[str, Article]:
    captured = _captured_dates(data_dir)
    articles: dict[str, Article] = {}
    for path in sorted((data_dir / "pubmed").glob("*.xml.gz")):
        date = captured.get(f"pubmed/{path.name}")
        for article in parse_efetch(gzip.decompress(path.read_bytes())):
            if article.pmid not in articles:
                articles[article.pmid] = article.model_copy(update={"snapshot_date": date})
    return articles


def iter_articles(data_dir: Path = DATA_DIR) -> Iterator[Article]:
    """Each PubMed record once: the efetch XML fixtures first, then the corpus citations."""
    fixtures = _fixture_articles(data_dir)
    yield from fixtures.values()
    for record in _jsonl_xz(data_dir / "corpus" / "articles.jsonl.xz"):
        if str(record["pmid"]) not in fixtures:
            yield corpus_article(record)


def expected_records(data_dir: Path = DATA_DIR) -> int:
    """How many records `iter_trials` and `iter_articles` will yield (for a progress bar), about 1 s."""
    stats = data_dir / "corpus" / "stats.json"
    totals = json.loads(stats.read_text(encoding="utf-8"))["totals"] if stats.is_file() else {}
    return len(_fixture_studies(data_dir)) + len(_fixture_articles(data_dir)) + sum(totals.values())


def _author(name: str) -> str:
    """PubMed's "Lastname Initials": the Cohen sets write "Smith, J A" or "Laine, Loren"."""
    last, comma, given = name.partition(",")
    if not comma:
        return name.strip()
    initials = "".join(part[0].upper() for part in re.split(r"[\s.-]+", given) if part)
    return f"{last.strip()} {initials}".strip()


def _sections(abstract: str) -> list[AbstractSection]:
    lines = [line.strip() for line in abstract.splitlines() if line.strip()]
    matches = [_SECTION.match(line) for line in lines]
    if len(lines) > 1 and all(matches):
        return [AbstractSection(label=m.group(1), text=m.group(2)) for m in matches if m]
    return [AbstractSection(text=" ".join(lines))] if lines else []


def corpus_article(record: dict[str, Any]) -> Article:
    """One flat citation of `corpus/articles.jsonl.xz` (see its MANIFEST.md) as an `Article`."""
    abstract = (record.get("abstract") or "").strip()
    abstract = "" if abstract in _NO_ABSTRACT else abstract
    pub_date = text_date(record.get("pub_date"))
    return Article(
        pmid=str(record["pmid"]),
        title=record.get("title") or "",
        abstract=abstract,
        abstract_sections=_sections(abstract),
        authors=[_author(a) for a in record.get("authors") or [] if a.strip()],
        journal=record.get("journal"),
        journal_abbrev=record.get("journal_iso"),
        volume=record.get("volume"),
        issue=record.get("issue"),
        pages=record.get("pages"),
        year=int(pub_date[:4]) if pub_date else None,
        pub_date=pub_date,
        mesh_terms=record.get("mesh_terms") or [],
        keywords=record.get("keywords") or [],
        doi=record.get("doi"),
        pmcid=record.get("pmcid"),
        nct_ids=nct_ids_in(record.get("title") or "", abstract),
        publication_types=record.get("publication_types") or [],
        snapshot_date=record.get("snapshot_date"),
    )
