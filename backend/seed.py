"""Demo data for the embedded default (COLLEAGUE_DEMO=1): two accounts and a few research streams."""

from __future__ import annotations

from sqlalchemy import select

from backend.auth.service import ensure_user
from backend.db.models import InstructionVersion, ResearchStream
from backend.db.session import Database

DEMO_STREAMS = [
    ("EGFR-resistant NSCLC",
     "Mechanisms of resistance to EGFR tyrosine kinase inhibitors in non-small cell lung cancer, and the "
     "trials testing ways around them.",
     "When discussing articles or trials in this stream:\n"
     "- Name the EGFR mutation (exon 19 deletion, L858R, T790M, C797S) and the TKI generation involved.\n"
     "- Separate on-target resistance (secondary EGFR mutations) from bypass tracks (MET amplification, "
     "HER2, histologic transformation).\n"
     "- For trials, point out whether prior osimertinib is required or excluded."),
    ("Immunotherapy in melanoma",
     "Checkpoint inhibitors (anti-PD-1, anti-CTLA-4, anti-LAG-3) in advanced and adjuvant melanoma.",
     "When discussing this stream:\n"
     "- State the line of therapy and whether patients were checkpoint-naive.\n"
     "- Report overall survival and relapse-free survival separately, with follow-up time.\n"
     "- Flag immune-related adverse events of grade 3 or higher."),
    ("Degenerative disc disease",
     "Interventions for lumbar degenerative disc disease, from injections to disc replacement.",
     "Prefer randomized trials over case series; note the comparator and the pain/function scales used."),
]


def seed_demo(db: Database) -> None:
    with db.session() as s:
        ensure_user(s, "demo", "demo", "user")
        ensure_user(s, "admin", "admin", "admin")
        if s.scalar(select(ResearchStream).limit(1)) is None:
            for name, description, instructions in DEMO_STREAMS:
                stream = ResearchStream(name=name, description=description, chat_instructions=instructions,
                                        archived=False)
                s.add(stream)
                s.flush()
                s.add(InstructionVersion(stream_id=stream.id, chat_instructions=instructions,
                                         note="Seeded for the demo"))
