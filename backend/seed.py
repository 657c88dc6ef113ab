"""Demo data for the embedded default (COLLEAGUE_DEMO=1): two accounts and a few research streams.

Each stream carries the defaults its pages can start from (`settings.pubmed_query` for Tablizer,
`settings.trial_search` for TrialScout, in the fields of GET /api/trials/search) and an instruction history
(one stream has two versions, so history and diff have something to show; one is archived, so the chat's
"archived stream" notice can be seen). Streams are seeded once, into a database that has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import false, select, text, update
from sqlalchemy.orm import Session

from backend.auth.service import ensure_user
from backend.db.models import InstructionVersion, ResearchStream, User
from backend.db.session import Database
from backend.streams.schemas import StreamSettings


@dataclass(frozen=True)
class DemoStream:
    name: str
    description: str
    versions: list[tuple[str, str]]  # (chat_instructions, note), oldest first; the last one is current
    settings: dict[str, Any] = field(default_factory=dict)
    archived: bool = False


DEMO_STREAMS = [
    DemoStream(
        "EGFR-resistant NSCLC",
        "Mechanisms of resistance to EGFR tyrosine kinase inhibitors in non-small cell lung cancer, and the "
        "trials testing ways around them.",
        [("When discussing articles or trials in this stream:\n"
          "- Name the EGFR mutation and the TKI generation involved.\n"
          "- For trials, point out whether prior osimertinib is required or excluded.",
          "First draft"),
         ("When discussing articles or trials in this stream:\n"
          "- Name the EGFR mutation (exon 19 deletion, L858R, T790M, C797S) and the TKI generation involved.\n"
          "- Separate on-target resistance (secondary EGFR mutations) from bypass tracks (MET amplification, "
          "HER2, histologic transformation).\n"
          "- For trials, point out whether prior osimertinib is required or excluded.",
          "Name the mutations; split on-target resistance from bypass tracks")],
        {"pubmed_query": '"EGFR"[tiab] AND (osimertinib OR "tyrosine kinase inhibitor") AND resistance[tiab] '
                         'AND "non-small cell lung"[tiab]',
         "trial_search": {"condition": "non-small cell lung cancer", "intervention": "osimertinib",
                          "status": ["RECRUITING", "NOT_YET_RECRUITING"]}},
    ),
    DemoStream(
        "Immunotherapy in melanoma",
        "Checkpoint inhibitors (anti-PD-1, anti-CTLA-4, anti-LAG-3) in advanced and adjuvant melanoma.",
        [("When discussing this stream:\n"
          "- State the line of therapy and whether patients were checkpoint-naive.\n"
          "- Report overall survival and relapse-free survival separately, with follow-up time.\n"
          "- Flag immune-related adverse events of grade 3 or higher.",
          "Seeded for the demo")],
        {"pubmed_query": "melanoma[tiab] AND (nivolumab OR pembrolizumab OR ipilimumab OR relatlimab)",
         "trial_search": {"condition": "melanoma", "intervention": "pembrolizumab OR nivolumab",
                          "phase": ["PHASE2", "PHASE3"]}},
    ),
    DemoStream(
        "Degenerative disc disease",
        "Interventions for lumbar degenerative disc disease, from injections to disc replacement.",
        [("Prefer randomized trials over case series; note the comparator and the pain/function scales used "
          "(VAS, ODI).", "Seeded for the demo")],
        {"pubmed_query": '"intervertebral disc degeneration"[mh] AND lumbar[tiab] AND randomized[tiab]',
         "trial_search": {"condition": "degenerative disc disease", "location": "United States"}},
    ),
    DemoStream(
        "Statins for primary prevention (2019 review)",
        "A finished review of statin trials in people without cardiovascular disease; kept for reference.",
        [("Report absolute risk reductions and numbers needed to treat, not only relative risks.",
          "Seeded for the demo")],
        {"pubmed_query": "statins[tiab] AND \"primary prevention\"[tiab]"},
        archived=True,
    ),
]


# Any fixed number: the key of the PostgreSQL advisory lock that lets one seeder in at a time.
SEED_LOCK = 0x5EED_C011


def _one_seeder_at_a_time(s: Session) -> None:
    """Every worker of `serve --workers N` seeds at start-up; without this, two of them both see an empty
    table and both insert (a UNIQUE violation on users, duplicated streams). The lock is held until the
    seeding transaction ends, and the next seeder then finds the rows and adds nothing. PostgreSQL: a
    transaction-level advisory lock. SQLite: a write that matches no row takes the database's single
    write lock at once (the busy timeout makes the other seeders wait), before anything is read."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SEED_LOCK})
    else:
        s.execute(update(User).where(false()).values(role=User.role))


def seed_demo(db: Database) -> None:
    """Idempotent, and safe to run from several processes at once."""
    with db.session() as s:
        _one_seeder_at_a_time(s)
        ensure_user(s, "demo", "demo", "user")
        ensure_user(s, "admin", "admin", "admin")
        if s.scalar(select(ResearchStream).limit(1)) is not None:
            return
        admin_id = s.scalar(select(User.id).where(User.username == "admin"))
        for demo in DEMO_STREAMS:
            current = demo.versions[-1][0]
            stream = ResearchStream(name=demo.name, description=demo.description, chat_instructions=current,
                                    settings=StreamSettings.model_validate(demo.settings).stored(),
                                    archived=demo.archived, updated_by=admin_id)
            s.add(stream)
            s.flush()
            for number, (text, note) in enumerate(demo.versions, start=1):
                s.add(InstructionVersion(stream_id=stream.id, number=number, chat_instructions=text, note=note,
                                         created_by=admin_id))
                s.flush()  # one insert at a time: ids follow the order, and history is ordered by id
