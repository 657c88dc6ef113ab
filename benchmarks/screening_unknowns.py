"""Analysis (not a test): which criteria does the demo judge leave UNKNOWN where a decision was possible?

Two sources, both development data (TREC 2022 is never read):

- `--annotations`: the TrialGPT criterion annotations (SIGIR notes). A pair counts when the experts say
  MET or NOT_MET and the demo says UNKNOWN. Split by patient as the rules were tuned (md5 mod 10 < 7 is the
  tuning split, the rest held out); prints accuracy and κ per split too, so a change can be checked quickly.
- `--traces DIR --qrels R.tsv`: a `backend eval screening` run's traces. The trials judged excluded (label 1)
  that the demo left UNCERTAIN: their UNKNOWN inclusion criteria (the ones that could have failed) are
  counted, against the same count for the eligible (label 2) trials for contrast.

Each criterion falls in the first category whose pattern it matches (`CATEGORIES`, in order).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/screening_unknowns.py --annotations
    PYTHONPATH=$PWD .venv/bin/python benchmarks/screening_unknowns.py --traces runs/trec --qrels R.tsv
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
from pathlib import Path

from backend.criteria.labels import Verdict
from backend.criteria.prompts import verdict_from_answer
from backend.eval.dataset import ANNOTATIONS_PATH
from backend.eval.label_map import map_label
from backend.eval.metrics import cohens_kappa
from backend.screening.demo_judge import judge

CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        (
            "pregnancy/contraception",
            r"pregnan|lactat|breast[- ]?feed|nursing|contracep|childbearing|child-bearing|"
            r"birth control|menopaus",
        ),
        (
            "consent/ability",
            r"consent|willing|comply|complian|able to|ability to|unable|capable|cooperat|"
            r"life expectancy|expected survival",
        ),
        (
            "age/sex",
            r"\bage[sd]?\b|years? old|\byears? of age|\bmales?\b|\bfemales?\b|\bmen\b|\bwomen\b|\bsex\b|"
            r"gender|adults?\b|child",
        ),
        ("performance status", r"ecog|karnofsky|performance status|zubrod|\bkps\b|\bwho ps\b"),
        ("brain metastases", r"brain metast|cns metast|central nervous system metast|leptomening|brain lesion"),
        (
            "lab values",
            r"h[ae]moglobin|platelet|neutrophil|\banc\b|\bwbc\b|white blood|creatinine|bilirubin|\bast\b|"
            r"\balt\b|transaminase|\binr\b|glucose|potassium|sodium|albumin|x\s*10|/mm|mg/dl|g/dl|"
            r"µmol|umol|mmol|\buln\b|upper limit of normal|\bhba1c\b|cholesterol|ldl|troponin|titer|psa\b",
        ),
        (
            "organ function",
            r"(?:renal|hepatic|liver|kidney|bone marrow|marrow|cardiac|organ|pulmonary|lung) "
            r"(?:function|reserve|insufficiency|failure|impairment|dysfunction)|ejection fraction|"
            r"\blvef\b|nyha|clearance|\begfr\b|\bgfr\b",
        ),
        (
            "time windows",
            r"within (?:the )?(?:last |past |previous |preceding )?\d+|\d+\s*(?:days?|weeks?|months?|"
            r"years?)\s*(?:before|prior|of|after|since)|in the (?:last|past)",
        ),
        (
            "prior therapy/lines",
            r"prior|previous|previously|received|treated|therapy|therapies|treatment|chemo|"
            r"radiation|radiotherapy|surgery|resection|lines?\b|regimen|naive|na[iï]ve|"
            r"untreated|refractory|relapse",
        ),
        (
            "disease stage/histology",
            r"stage|histolog|cytolog|patholog|confirmed|diagnos|carcinoma|cancer|tumou?r|"
            r"metasta|grade|lymphoma|leukemia|myeloma|sarcoma|melanoma|malignan|neoplas|"
            r"measurable|recist|lesion",
        ),
    )
)


def category(criterion: str) -> str:
    return next((name for name, pattern in CATEGORIES if pattern.search(criterion)), "other")


def _split(patient_id: str) -> str:
    return "tuning" if int(hashlib.md5(patient_id.encode()).hexdigest(), 16) % 10 < 7 else "held-out"


def annotations(show: int) -> None:
    rows = [json.loads(line) for line in ANNOTATIONS_PATH.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["criterion_text"]]
    by_split: dict[str, list[tuple[Verdict, Verdict]]] = collections.defaultdict(list)
    missed: collections.Counter[tuple[str, str, str]] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for r in rows:
        gold = map_label(r["expert_eligibility"])
        pred = verdict_from_answer(
            judge(r["note"], r["criterion_text"], r["criterion_type"]).answer, r["criterion_type"]
        )
        split = _split(r["patient_id"])
        by_split[split].append((gold, pred))
        by_split["all"].append((gold, pred))
        if pred == Verdict.UNKNOWN and gold != Verdict.UNKNOWN:
            cat = category(r["criterion_text"])
            missed[(split, cat, f"{r['criterion_type']}→{gold.value}")] += 1
            if split == "tuning" and len(examples[cat]) < show:
                examples[cat].append(f"[{r['criterion_type']}→{gold.value}] {r['criterion_text'][:140]}")
    for split in ("tuning", "held-out", "all"):
        pairs = by_split[split]
        gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
        acc = sum(g == p for g, p in pairs) / len(pairs)
        print(
            f"{split:9} n={len(pairs):4}  accuracy {acc:.1%}  κ {cohens_kappa(gold, pred):.3f}  "
            f"demo UNKNOWN where experts decide: {sum(v for k, v in missed.items() if split in ('all', k[0]))}"
        )
    _table(missed)
    for cat, lines in examples.items():
        print(f"\n{cat}:\n  " + "\n  ".join(lines))


def traces(run: Path, qrels_path: Path) -> None:
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in qrels_path.read_text().splitlines()[1:]:
        qid, nct, label = line.split("\t")
        qrels[qid][nct] = int(label)
    counts: dict[int, collections.Counter[str]] = {1: collections.Counter(), 2: collections.Counter()}
    trials: dict[int, collections.Counter[str]] = {1: collections.Counter(), 2: collections.Counter()}
    verdicts: dict[int, collections.Counter[str]] = {1: collections.Counter(), 2: collections.Counter()}
    for path in sorted((run / "traces").glob("*.json")):
        trace = json.loads(path.read_text())
        for trial in trace["trials"]:
            label = qrels[trace["qid"]].get(trial["nct_id"])
            if label not in (1, 2):
                continue
            verdicts[label][trial["verdict"]] += 1
            if trial["verdict"] != "UNCERTAIN":
                continue
            seen = set()
            for c in trial["criteria"]:
                if c["label"] == "UNKNOWN" and c["criterion"]["kind"] == "inclusion":
                    cat = category(c["criterion"]["text"])
                    counts[label][cat] += 1
                    seen.add(cat)
            trials[label].update(seen)
    for label, name in ((1, "excluded (label 1)"), (2, "eligible (label 2)")):
        total = sum(verdicts[label].values())
        print(f"{name}: {total} trials, verdicts {dict(verdicts[label])}")
    print(
        f"\n{'UNKNOWN inclusions of UNCERTAIN trials':40} {'excl: criteria / trials':>24} "
        f"{'elig: criteria / trials':>24}"
    )
    for cat in [name for name, _ in CATEGORIES] + ["other"]:
        print(f"{cat:40} {counts[1][cat]:>12} / {trials[1][cat]:<9} {counts[2][cat]:>12} / {trials[2][cat]:<9}")


def _table(missed: collections.Counter[tuple[str, str, str]]) -> None:
    print(f"\n{'category':26} {'tuning':>7} {'held-out':>9}   by kind→gold (both splits)")
    cats = collections.Counter({c: 0 for c in [n for n, _ in CATEGORIES] + ["other"]})
    for (_, cat, _), n in missed.items():
        cats[cat] += n
    for cat, _ in cats.most_common():
        tuning = sum(n for (s, c, _), n in missed.items() if s == "tuning" and c == cat)
        held = sum(n for (s, c, _), n in missed.items() if s == "held-out" and c == cat)
        kinds = collections.Counter()
        for (_, c, k), n in missed.items():
            if c == cat:
                kinds[k] += n
        print(f"{cat:26} {tuning:>7} {held:>9}   {dict(kinds)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotations", action="store_true", help="the TrialGPT criterion annotations (SIGIR)")
    parser.add_argument(
        "--examples", type=int, default=0, help="with --annotations: examples per category (tuning split only)"
    )
    parser.add_argument("--traces", type=Path, help="a `backend eval screening` output directory")
    parser.add_argument("--qrels", type=Path, help="with --traces: the cohort's qrels")
    args = parser.parse_args()
    if args.annotations:
        annotations(args.examples)
    if args.traces:
        if not args.qrels:
            parser.error("--traces needs --qrels")
        traces(args.traces, args.qrels)


if __name__ == "__main__":
    main()
