"""The offline data files read directly (JSON, XML), not through the index: the figures tests compare to.

Each study keeps only the fields the tests filter on, so 35,000 of them fit in a few seconds and MB.
"""

from __future__ import annotations

import gzip
import json
import lzma
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from backend.sources.offline.corpus import DATA_DIR


@dataclass(frozen=True)
class RawTrial:
    nct_id: str
    status: str | None
    phases: tuple[str, ...]
    snapshot: str | None
    sex: str | None
    minimum_age: str | None
    maximum_age: str | None
    sponsors: str  # lead sponsor and collaborators
    places: tuple[str, ...]  # city + facility of each location
    cond_text: str  # titles, acronym, conditions, keywords, condition MeSH: what query.cond searches
    intr_text: str  # interventions, their MeSH terms, arm labels: what query.intr searches
    study_type: str | None = None


@dataclass
class RawCorpus:
    trials: dict[str, RawTrial] = field(default_factory=dict)
    pmids: set[str] = field(default_factory=set)


def _terms(section: dict[str, Any], module: str) -> list[str]:
    return [m.get("term", "") for m in section.get(module, {}).get("meshes", [])]


def _raw_trial(study: dict[str, Any]) -> RawTrial:
    proto = study["protocolSection"]
    ident, derived = proto["identificationModule"], study.get("derivedSection", {})
    conds = proto.get("conditionsModule", {})
    arms = proto.get("armsInterventionsModule", {})
    cond = [ident.get("briefTitle"), ident.get("officialTitle"), ident.get("acronym"), *conds.get("conditions", []),
            *conds.get("keywords", []), *_terms(derived, "conditionBrowseModule")]
    intr = [*(i.get("name") for i in arms.get("interventions", [])), *_terms(derived, "interventionBrowseModule"),
            *(a.get("label") for a in arms.get("armGroups", []))]
    elig, sponsors = proto.get("eligibilityModule", {}), proto.get("sponsorCollaboratorsModule", {})
    locations = proto.get("contactsLocationsModule", {}).get("locations", [])
    return RawTrial(
        ident["nctId"], proto.get("statusModule", {}).get("overallStatus"),
        tuple(proto.get("designModule", {}).get("phases", [])), study.get("snapshotDate"), elig.get("sex"),
        elig.get("minimumAge"), elig.get("maximumAge"),
        " ".join([sponsors.get("leadSponsor", {}).get("name", ""),
                  *(c.get("name", "") for c in sponsors.get("collaborators", []))]),
        tuple(loc.get("city", "") + loc.get("facility", "") for loc in locations),
        " \n ".join(filter(None, cond)), " \n ".join(filter(None, intr)),
        proto.get("designModule", {}).get("studyType"))


def read_raw_corpus(data_dir: Path = DATA_DIR) -> RawCorpus:
    corpus = RawCorpus()
    with lzma.open(data_dir / "corpus" / "trials.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            trial = _raw_trial(json.loads(line))
            corpus.trials[trial.nct_id] = trial
    fixtures: dict[str, dict[str, Any]] = {}
    for path in sorted((data_dir / "ctgov").glob("*.gz")):
        body = json.loads(gzip.decompress(path.read_bytes())) if path.name.endswith(".json.gz") else None
        studies = body.get("studies", [body]) if body else [
            json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines() if line.strip()]
        for study in studies:  # a study captured both projected and in full counts as the full one
            nct_id = study["protocolSection"]["identificationModule"]["nctId"]
            if len(json.dumps(study)) > len(json.dumps(fixtures.get(nct_id, {}))):
                fixtures[nct_id] = study
    corpus.trials.update((nct_id, _raw_trial(study)) for nct_id, study in fixtures.items())
    with lzma.open(data_dir / "corpus" / "articles.jsonl.xz", "rt", encoding="utf-8") as fh:
        corpus.pmids.update(str(json.loads(line)["pmid"]) for line in fh if line.strip())
    for path in sorted((data_dir / "pubmed").glob("*.xml.gz")):
        root = etree.fromstring(gzip.decompress(path.read_bytes()))
        corpus.pmids.update(node.findtext("MedlineCitation/PMID") or node.findtext("BookDocument/PMID") or ""
                            for node in root)
    corpus.pmids.discard("")
    return corpus


def words(text: str) -> set[str]:
    """The text's tokens as FTS5's unicode61 tokenizer splits them (letters and digits), lowercased."""
    return set(re.findall(r"[^\W_]+", text.lower()))
