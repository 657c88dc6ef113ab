"""The offline judge against note–criterion sets written blind (benchmarks/data/criteria_sets/): not a test.

Each set was written by a session that read none of the rules or their tests; its first read is the held-out
figure (benchmarks/README.md), every later read is of rules tuned on it. A line is one note with its criteria:
`{"note_id", "note", "criteria": [{"id", "criterion", "kind", "expected", "why"}]}`. `expected` is what a
research coordinator decides from the note: for an inclusion yes / no / unknown; for an exclusion yes (it
applies) or no (it does not, or the note does not show it), so an exclusion the judge leaves unknown counts as
"no", as the verdict rule treats it.

    .venv/bin/python -m benchmarks.criteria_sets [--wrong]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from backend.screening.demo_judge import judge

SETS = Path(__file__).parent / "data" / "criteria_sets"


def _read(answer: str, kind: str) -> str:
    if kind == "exclusion":
        return "yes" if answer == "yes" else "no"
    return "unknown" if answer == "not_applicable" else answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wrong", action="store_true", help="list the pairs the judge gets wrong")
    args = parser.parse_args()
    for path in sorted(SETS.glob("*.jsonl")):
        right: collections.Counter[tuple[str, str]] = collections.Counter()
        total: collections.Counter[tuple[str, str]] = collections.Counter()
        wrong = []
        for line in path.read_text(encoding="utf-8").splitlines():
            note = json.loads(line)
            for c in note["criteria"]:
                got = _read(judge(note["note"], c["criterion"], c["kind"]).answer, c["kind"])
                key = (c["kind"], c["expected"])
                total[key] += 1
                right[key] += got == c["expected"]
                if got != c["expected"]:
                    wrong.append(f"  {c['id']} {c['kind']}: expected {c['expected']}, judged {got}: {c['criterion']}")
        n, ok = sum(total.values()), sum(right.values())
        parts = ", ".join(f"{kind} {expected} {right[(kind, expected)]}/{total[(kind, expected)]}"
                          for kind, expected in sorted(total))
        print(f"{path.stem}: {ok}/{n} = {ok / n:.1%} ({parts})")
        if args.wrong:
            print("\n".join(wrong))


if __name__ == "__main__":
    main()
