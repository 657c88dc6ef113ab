"""The screening report for the doctor and the patient (the Navigator's report): the profile, the ranked
shortlist with verdicts, the criteria that decided each with the note's sentences as evidence, the sites
and contacts the records have, a plain-language glossary of the terms used, questions to ask the doctor,
and the disclaimer. One `ScreeningReportView`, rendered as standalone HTML and as a PDF in the exports'
fonts and styles (`screening_reports.py` stores and serves it).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate

from backend.exports.render import templates
from backend.exports.report import _fonts, _styles
from backend.screening import explain
from backend.screening.models import PatientProfile, ScreenedTrial
from backend.screening.schemas import ScreeningDetail
from backend.sources.models import TrialDetail

DISCLAIMER = ("This report supports, and never replaces, a clinician's judgement. It was made by software from "
              "the notes given to it and from trial records that may be out of date; only the trial's team can "
              "confirm whether a person can join. Talk to your doctor before acting on it.")
SITES_SHOWN = 8


@dataclass
class CriterionLine:
    kind: str
    text: str
    state: str
    reasoning: str
    evidence: list[str]


@dataclass
class TrialSection:
    rank: int
    trial: ScreenedTrial
    verdict_words: str
    deciding: list[CriterionLine]
    status: str | None = None
    phase: str = ""
    sites: list[str] = field(default_factory=list)
    more_sites: int = 0
    url: str = ""

    @property
    def nct_id(self) -> str:
        return self.trial.nct_id


@dataclass
class ScreeningReportView:
    title: str
    patient: str
    created_at: str
    profile: list[tuple[str, str]]
    trials: list[TrialSection]
    glossary: list[tuple[str, str]]
    questions: list[str]
    disclaimer: str = DISCLAIMER


def profile_rows(p: PatientProfile) -> list[tuple[str, str]]:
    facts = p.key_facts
    rows = [("Summary", p.summary), ("Age", f"{p.age:g}" if p.age is not None else ""), ("Sex", p.sex or ""),
            ("Conditions", ", ".join(p.conditions)), ("Stage", facts.stage or ""),
            ("Biomarkers", ", ".join(facts.biomarkers)), ("Prior treatments", ", ".join(facts.prior_therapies)),
            ("Current treatments", ", ".join(facts.current_therapies)),
            ("Other conditions", ", ".join(facts.comorbidities)),
            ("Performance status", facts.performance_status or ""), ("Tests", ", ".join(facts.labs)),
            ("Location", facts.location or "")]
    return [(k, v) for k, v in rows if v]


def view(title: str, patient: str, detail: ScreeningDetail, trials: Sequence[ScreenedTrial],
         records: Sequence[TrialDetail]) -> ScreeningReportView:
    sentences = explain.sentence_map(detail.sentences)
    by_id = {r.nct_id: r for r in records}
    sections = []
    for rank, trial in enumerate(trials, 1):
        lines = [CriterionLine(c.criterion.kind, c.criterion.text, explain.criterion_state(c), c.reasoning,
                               explain.evidence(c, sentences)) for c in explain.deciding(trial)]
        section = TrialSection(rank, trial, explain.VERDICT_WORDS[trial.verdict], lines,
                               url=f"https://clinicaltrials.gov/study/{trial.nct_id}")
        record = by_id.get(trial.nct_id)
        if record is not None:
            section.status = record.status
            section.phase = "/".join(record.phase)
            sites = [explain.Site(trial.nct_id, loc, None).label for loc in record.locations]
            section.sites, section.more_sites = sites[:SITES_SHOWN], max(0, len(sites) - SITES_SHOWN)
        sections.append(section)
    profile = detail.profile or PatientProfile()
    words = [v for _, v in profile_rows(profile)] + [
        " ".join([s.trial.title, s.verdict_words, s.status or "", f"phase {s.phase}".replace("PHASE", "")]
                 + [c.text for c in s.deciding]) for s in sections] + ["inclusion criteria exclusion criteria"]
    built = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return ScreeningReportView(title=title, patient=patient, created_at=built, profile=profile_rows(profile),
                               trials=sections, glossary=explain.glossary(words), questions=explain.questions(trials))


def to_html(report: ScreeningReportView) -> str:
    return templates().get_template("screening_report.html.j2").render(r=report)


def to_pdf(report: ScreeningReportView) -> bytes:
    _fonts()
    st = _styles()
    out = io.BytesIO()
    doc = SimpleDocTemplate(out, pagesize=A4, leftMargin=16 * mm, rightMargin=16 * mm, topMargin=14 * mm,
                            bottomMargin=14 * mm, title=report.title, author="Colleague")

    def p(text: str, style: str = "body", bullet: str | None = None) -> Paragraph:
        return Paragraph(escape(text), st["bullet"] if bullet else st[style], bulletText=bullet)

    flow: list[Flowable] = [p(report.title, "title"),
                            p(f"Patient: {report.patient} · built {report.created_at}", "meta"),
                            p(report.disclaimer, "small"), p("Profile", "h2")]
    flow += [p(f"{k}: {v}", bullet="•") for k, v in report.profile]
    flow.append(p("Ranked shortlist", "h2"))
    flow += [p(f"{s.rank}. {s.nct_id} — {s.trial.verdict.value} (score {s.trial.score:.2f}; "
               f"{explain.counts(s.trial)}) — {s.trial.title}", bullet="•") for s in report.trials]
    for s in report.trials:
        flow.append(p(f"{s.rank}. {s.nct_id}: {s.trial.title}", "h3"))
        meta = [f"Verdict: {s.verdict_words}"] + ([f"status {s.status}"] if s.status else []) + (
            [f"record of {s.trial.snapshot_date}"] if s.trial.snapshot_date else [])
        flow.append(p(" · ".join(meta), "small"))
        if s.trial.reason:
            flow.append(p(s.trial.reason, "small"))
        for c in s.deciding:
            flow.append(p(f"{c.kind.capitalize()}: {c.text} — {c.state}." + (f" {c.reasoning}" if c.reasoning else ""),
                          bullet="•"))
            flow += [p(f"Evidence from the notes: “{e}”", "small") for e in c.evidence]
        flow.append(p("Sites: " + ("; ".join(s.sites) + (f" and {s.more_sites} more" if s.more_sites else "")
                                   if s.sites else "none listed in the record"), "small"))
        flow.append(p(f"Contacts: see the trial's page, {s.url}", "small"))
    flow.append(p("Words used in this report", "h2"))
    flow += [p(f"{term}: {meaning}", bullet="•") for term, meaning in report.glossary]
    flow.append(p("Questions to ask your doctor", "h2"))
    flow += [p(q, bullet="•") for q in report.questions]
    flow += [p("Important", "h2"), p(report.disclaimer)]
    doc.build(flow)
    return out.getvalue()
