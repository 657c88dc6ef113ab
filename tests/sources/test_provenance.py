"""GET /api/sources: the banner's figures, counted from the offline index and checked against the data files."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from backend.main import create_app
from backend.sources.offline import get_index, open_index
from backend.sources.offline.corpus import DATA_DIR
from backend.sources.offline.coverage import coverage
from tests.conftest import make_settings, signed_in_for_test
from tests.sources.raw_corpus import RawCorpus


def test_offline_answers_the_sample_size_and_date_range_of_the_index(alice: Any, raw: RawCorpus) -> None:
    r = alice.get("/api/sources")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mode"] == "offline"
    assert (body["trials_source"], body["articles_source"]) == ("ClinicalTrials.gov", "PubMed")
    index = get_index()
    assert body["trials"]["records"] == len(index.trials) == len(raw.trials)
    assert body["articles"]["records"] == len(index.articles) == len(raw.pmids)
    # The corpus files date every record they hold; the oldest is the oldest date there.
    corpus_dates = [t.snapshot for t in raw.trials.values() if t.snapshot]
    assert body["trials"]["snapshot_from"] == min(corpus_dates)
    assert body["trials"]["snapshot_to"] >= max(corpus_dates)
    # Only fixture records can lack a date, and only those whose file's capture date is unknown.
    assert 0 < body["trials"]["undated"] <= sum(1 for t in raw.trials.values() if not t.snapshot) < 1000


def test_live_names_the_registries_and_no_sample(db_url: str, db: Any) -> None:
    app = create_app(make_settings(db_url, COLLEAGUE_SOURCES="live"))
    for client in signed_in_for_test(app, db, "carol"):
        body = client.get("/api/sources").json()
        assert body == {"mode": "live", "trials_source": "ClinicalTrials.gov", "articles_source": "PubMed",
                        "trials": None, "articles": None}


def test_signed_out_is_refused(app: Any) -> None:
    with TestClient(app) as client:
        assert client.get("/api/sources").status_code == 401


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    for pattern in ("ctgov/dgg32_*", "pubmed/biopython_*", "manifest.json"):
        for source in DATA_DIR.glob(pattern):
            (target / source.parent.relative_to(DATA_DIR)).mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target / source.relative_to(DATA_DIR))
    return target


def _add_studies(data_dir: Path, *studies: dict[str, Any]) -> None:
    path = next((data_dir / "ctgov").glob("dgg32_*.jsonl.gz"))
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress("\n".join([*lines, *map(json.dumps, studies)]).encode()))


def _study(nct_id: str, snapshot: str) -> dict[str, Any]:
    return {"protocolSection": {"identificationModule": {"nctId": nct_id, "briefTitle": "Dated"},
                                "statusModule": {"overallStatus": "RECRUITING"}}, "snapshotDate": snapshot}


def test_the_range_spans_the_oldest_and_newest_copy_and_counts_the_undated(small_data: Path, tmp_path: Path) -> None:
    _add_studies(small_data, _study("NCT09999991", "2011-02-03"), _study("NCT09999992", "2030-12-31"))
    index = open_index(small_data, tmp_path / "cache", progress=False)
    trials, articles = coverage(index)
    assert trials.records == len(index.trials)
    assert (trials.snapshot_from, trials.snapshot_to) == (date(2011, 2, 3), date(2030, 12, 31))
    assert trials.undated == len(index.trials) - 2  # the dgg32 export has no capture date
    assert articles.records == len(index.articles) and articles.snapshot_from is None
    assert articles.undated == articles.records
