"""Rebuild `data/corpus/` from the shared demo corpus: keep what the product reads, compress with xz.

    python -m backend.sources.offline.build_data /path/to/shared/fixtures/corpus

The input is the corpus described in its `MANIFEST.md` (copied next to the output, with
`stats.json`): `trials.jsonl.gz` (CT.gov API v2-shaped studies), `articles.jsonl.gz` (PubMed
citations as flat JSON) and `sources_index.tsv.gz` (each record's source and snapshot date).
Trials keep their v2 shape, so `ctgov_records.parse_study` reads them like any live response, but
only the keys it reads survive (contacts, officials, references, oversight, design details, IDs
other than the NCT id are dropped), and each study gains a top-level `snapshotDate` (not a v2 key):
the date its status was true. Articles lose `language`, `medline_status` and `pub_year` (derived
from `pub_date`) and gain `snapshot_date`, the commit date of the repository they were copied from.
Values are never rewritten. The output is deterministic: the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import lzma
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).with_name("data") / "corpus"

# protocolSection module -> the keys `parse_study` reads.
_KEEP: dict[str, tuple[str, ...]] = {
    "identificationModule": ("nctId", "briefTitle", "officialTitle", "acronym"),
    "statusModule": ("overallStatus", "startDateStruct", "primaryCompletionDateStruct", "completionDateStruct",
                     "lastUpdatePostDateStruct"),
    "sponsorCollaboratorsModule": ("leadSponsor", "collaborators"),
    "descriptionModule": ("briefSummary", "detailedDescription"),
    "conditionsModule": ("conditions", "keywords"),
    "designModule": ("studyType", "phases", "enrollmentInfo"),
    "armsInterventionsModule": ("armGroups", "interventions"),
    "eligibilityModule": ("eligibilityCriteria", "sex", "minimumAge", "maximumAge", "healthyVolunteers",
                          "stdAges"),
    "contactsLocationsModule": ("locations",),
    "outcomesModule": ("primaryOutcomes", "secondaryOutcomes"),
}
_LOCATION_KEYS = ("facility", "city", "state", "zip", "country", "status", "geoPoint")
_ARM_KEYS = ("label", "type", "description", "interventionNames")
_OUTCOME_KEYS = ("measure", "description", "timeFrame")
_DROPPED_ARTICLE_KEYS = ("language", "medline_status", "pub_year")


def _pick(raw: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: raw[k] for k in keys if isinstance(raw, dict) and k in raw}


def trim_study(study: dict[str, Any], snapshot_date: str | None) -> dict[str, Any]:
    proto = study.get("protocolSection") or {}
    section: dict[str, Any] = {}
    for module, keys in _KEEP.items():
        kept = _pick(proto.get(module), keys)
        if module == "sponsorCollaboratorsModule":
            kept = {k: ({"name": v.get("name")} if k == "leadSponsor" else [_pick(c, ("name",)) for c in v])
                    for k, v in kept.items()}
        elif module == "armsInterventionsModule":
            kept = {k: [_pick(x, _ARM_KEYS if k == "armGroups" else ("name",)) for x in v] for k, v in kept.items()}
        elif module == "contactsLocationsModule":
            kept = {"locations": [_pick(x, _LOCATION_KEYS) for x in kept["locations"]]} if kept else {}
        elif module == "outcomesModule":
            kept = {k: [_pick(x, _OUTCOME_KEYS) for x in v] for k, v in kept.items()}
        elif module == "designModule" and "enrollmentInfo" in kept:
            kept["enrollmentInfo"] = _pick(kept["enrollmentInfo"], ("count",))
        if kept:
            section[module] = kept
    trimmed: dict[str, Any] = {"protocolSection": section}
    derived = study.get("derivedSection") or {}
    browse = {m: {"meshes": [_pick(x, ("term",)) for x in derived[m].get("meshes", [])]}
              for m in ("conditionBrowseModule", "interventionBrowseModule") if m in derived}
    if browse:
        trimmed["derivedSection"] = browse
    if study.get("hasResults"):
        trimmed["hasResults"] = True
    trimmed["snapshotDate"] = snapshot_date
    return trimmed


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        yield from (json.loads(line) for line in fh if line.strip())


def _write_xz(path: Path, records: Iterator[dict[str, Any]]) -> int:
    count = 0
    with lzma.open(path.with_suffix(".tmp"), "wt", encoding="utf-8", preset=6) as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    path.with_suffix(".tmp").replace(path)
    return count


def build(source: Path, out_dir: Path = OUT_DIR) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = json.loads((source / "stats.json").read_text(encoding="utf-8"))
    commit_dates = {key: s["commit_date"] for key, s in stats["article_sources"].items()}
    trial_dates: dict[str, str] = {}
    article_dates: dict[str, str] = {}
    with gzip.open(source / "sources_index.tsv.gz", "rt", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["kind"] == "trial":
                trial_dates[row["id"]] = row["snapshot"]
            else:
                article_dates[row["id"]] = commit_dates[row["source"]]

    trials = _write_xz(out_dir / "trials.jsonl.xz", (
        trim_study(s, trial_dates[s["protocolSection"]["identificationModule"]["nctId"]])
        for s in _jsonl(source / "trials.jsonl.gz")))
    articles = _write_xz(out_dir / "articles.jsonl.xz", (
        {**{k: v for k, v in a.items() if k not in _DROPPED_ARTICLE_KEYS}, "snapshot_date": article_dates[a["pmid"]]}
        for a in _jsonl(source / "articles.jsonl.gz")))
    for name in ("MANIFEST.md", "stats.json"):
        shutil.copyfile(source / name, out_dir / name)
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in sorted(out_dir.glob("*.xz")))
    print(f"wrote {trials} trials and {articles} articles to {out_dir} ({sizes})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the shared corpus directory (holds MANIFEST.md)")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    if not (args.source / "MANIFEST.md").is_file():
        sys.exit(f"{args.source} does not look like the corpus directory (no MANIFEST.md)")
    build(args.source, args.out)
