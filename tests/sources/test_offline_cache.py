"""The offline index file: built once, reused by the next start, rebuilt when the data changes, never torn."""

from __future__ import annotations

import gzip
import json
import shutil
import threading
from pathlib import Path

import pytest

from backend.sources.ctgov_records import study_nct_id
from backend.sources.models import TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, open_index
from backend.sources.offline.corpus import DATA_DIR, iter_study_records


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A small corpus (a few of the fixture files) that builds in well under a second."""
    target = tmp_path / "data"
    for pattern in ("ctgov/dgg32_*", "ctgov/biomcp_*", "pubmed/biopython_*", "manifest.json"):
        for source in DATA_DIR.glob(pattern):
            (target / source.parent.relative_to(DATA_DIR)).mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target / source.relative_to(DATA_DIR))
    return target


def study_count(data_dir: Path) -> int:
    return len({study_nct_id(s) for s in iter_study_records(data_dir)})


def index_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("offline-index-*.sqlite"))


def test_a_second_start_opens_the_cached_index_without_building(data_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = open_index(data_dir, cache, progress=False)
    assert first.build_seconds > 0 and index_files(cache) == [first.path]
    mtime = first.path.stat().st_mtime_ns

    second = open_index(data_dir, cache, progress=False)
    assert second.build_seconds == 0.0  # opened, not built
    assert second.path == first.path and first.path.stat().st_mtime_ns == mtime
    assert len(second.trials) == len(first.trials) == study_count(data_dir) == 54
    assert not list(cache.glob("*.tmp"))


async def test_changed_data_is_rebuilt_and_the_stale_index_removed(data_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    before = open_index(data_dir, cache, progress=False)
    count = len(before.trials)
    # A new study arrives in one of the data files.
    added = {"protocolSection": {"identificationModule": {"nctId": "NCT09999990", "briefTitle": "Xyzzy melanoma"},
                                 "statusModule": {"overallStatus": "RECRUITING"}}, "snapshotDate": "2026-11-01"}
    path = data_dir / "ctgov" / "dgg32_breast_cancer_1.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress("\n".join([*lines, json.dumps(added)]).encode()))

    after = open_index(data_dir, cache, progress=False)
    assert after.build_seconds > 0 and after.path != before.path
    assert index_files(cache) == [after.path]
    assert len(after.trials) == count + 1
    page = await OfflineClinicalTrialsService(after).search_trials(TrialSearchParams(condition="xyzzy"))
    assert [(t.nct_id, t.snapshot_date) for t in page.trials] == [("NCT09999990", "2026-11-01")]


def test_processes_starting_together_build_once_and_share_the_file(data_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    barrier = threading.Barrier(3)
    opened = []

    def start() -> None:
        barrier.wait()
        opened.append(open_index(data_dir, cache, progress=False))

    workers = [threading.Thread(target=start) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(opened) == 3 and len({i.path for i in opened}) == 1
    assert sum(i.build_seconds > 0 for i in opened) == 1
    assert all(len(i.trials) == study_count(data_dir) for i in opened)
    assert index_files(cache) == [opened[0].path] and not list(cache.glob("*.tmp"))
