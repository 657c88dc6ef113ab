"""PubMed tools: `search_pubmed` (everywhere), `get_pubmed_article` and `get_full_text` (Tablizer)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel, Field

from backend.payloads.research import ArticleBrief, PubMedSearchResults
from backend.registry import ToolContext, ToolProgress, ToolResult, card_of, tool
from backend.sources.models import Article, ArticleSearchParams, checked_pmid
from backend.sources.pmc import FullTextMissing, Section
from backend.text import clip

TITLE_CHARS = 150
ABSTRACT_CHARS = 4000
FULL_TEXT_CHARS = 20_000  # the sections' share of a tool result (the loop cuts any result at 24,000)
PROGRESS_CHARS = 10_000  # a text longer than this reports its progress every this many characters


def article_line(a: Article) -> str:
    title = clip(a.title, TITLE_CHARS)
    return f"- PMID: {a.pmid} | {title} | {a.journal or '—'} ({a.year or 'n.d.'})"


class SearchPubMedInput(ArticleSearchParams):
    """The tool's view of a PubMed search: the model asks for `max_results` (at most 50) per page."""

    page_size: int = Field(10, ge=1, le=50, alias="max_results")


class PmidInput(BaseModel):
    pmid: str = Field(max_length=20, description="The PubMed id, digits only")


class FullTextInput(PmidInput):
    sections: list[str] | None = Field(
        None, max_length=20, description="Only the sections whose title contains one of these words "
                                         "(case-insensitive), e.g. ['methods', 'results']; all by default")


@tool(payload=PubMedSearchResults)
async def search_pubmed(search: SearchPubMedInput, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
    """Search PubMed for research articles. Supports PubMed syntax (MeSH tags, AND/OR/NOT, quotes)."""
    yield ToolProgress(stage="searching", message="Searching PubMed…", progress=0.3)
    page = await ctx.require_sources().pubmed.search_articles(search)
    lines = [f"PubMed search {search.query!r}: {page.total_count} articles match; showing {len(page.articles)}."]
    if page.query_translation:
        lines.append(f"Query as run: {page.query_translation}")
    lines += [article_line(a) for a in page.articles]
    yield ToolResult(text="\n".join(lines), payload=card_of(PubMedSearchResults(
        query=search.query, total_count=page.total_count, query_translation=page.query_translation,
        articles=[ArticleBrief.model_validate(a, from_attributes=True) for a in page.articles])))


@tool(is_global=False)
async def get_pubmed_article(params: PmidInput, ctx: ToolContext) -> str:
    """Get one PubMed article by PMID: title, authors, journal, MeSH terms, linked trials and abstract."""
    article = await ctx.require_sources().pubmed.get_article(checked_pmid(params.pmid))
    abstract = clip(article.abstract or "(no abstract)", ABSTRACT_CHARS, note=" [abstract truncated]")
    authors = ", ".join(article.authors[:6]) + (" et al." if len(article.authors) > 6 else "")
    return "\n".join([
        f"PMID: {article.pmid}", f"Title: {article.title}", f"Authors: {authors or '—'}",
        f"Journal: {article.journal or '—'} ({article.pub_date or article.year or 'n.d.'})",
        f"DOI: {article.doi or '—'}", f"Publication types: {', '.join(article.publication_types) or '—'}",
        f"MeSH: {', '.join(article.mesh_terms[:25]) or '—'}",
        f"Linked trials: {', '.join(article.nct_ids) or 'none'}", "", "Abstract:", abstract,
    ])


def fit_sections(sections: list[Section], budget: int) -> list[int]:
    """How many characters of each section fit: short sections whole, the rest an equal share of what
    is left, so one long Results section cannot crowd out the Methods."""
    allowed = [0] * len(sections)
    left, pending = budget, sorted(range(len(sections)), key=lambda i: len(sections[i].text))
    while pending:
        share = left // len(pending)
        i = pending.pop(0)
        allowed[i] = min(len(sections[i].text), share)
        left -= allowed[i]
    return allowed


@tool(is_global=False)
async def get_full_text(params: FullTextInput, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
    """Read the full text of a PubMed article that has an open-access PubMed Central version, section by
    section (long sections are trimmed; ask for `sections` to read one whole). Articles without one have
    only their abstract (get_pubmed_article)."""
    pmid = checked_pmid(params.pmid)
    yield ToolProgress(stage="linking", message="Looking for a PubMed Central version…", progress=0.1)
    found = await ctx.require_sources().pubmed.get_full_text(pmid)
    if isinstance(found, FullTextMissing):
        yield ToolResult(text=found.reason)
        return
    sections = found.sections
    if params.sections:
        words = [w.lower() for w in params.sections]
        sections = [s for s in sections if any(w in s.title.lower() for w in words)]
        if not sections:
            titles = ", ".join(s.title for s in found.sections)
            yield ToolResult(text=f"No section of PMID {pmid} matches {params.sections}. Its sections: {titles}.")
            return
    allowed = fit_sections(sections, FULL_TEXT_CHARS)
    total = sum(len(s.text) for s in sections)
    lines = [f"Full text of PMID {pmid} ({found.pmcid}, PubMed Central): {found.title}",
             f"License: {found.license or 'not stated'}",
             f"Sections ({len(sections)} of {len(found.sections)}, {total:,} characters): "
             + ", ".join(s.title for s in sections)]
    done = 0
    for section, keep in zip(sections, allowed, strict=True):
        if total > PROGRESS_CHARS and done // PROGRESS_CHARS != (done + len(section.text)) // PROGRESS_CHARS:
            yield ToolProgress(stage="reading", message=f"Reading {section.title} ({done:,} of {total:,} characters)…",
                               progress=round(0.2 + 0.7 * done / total, 2))
        done += len(section.text)
        asked = repr([section.title]).replace("{", "{{").replace("}", "}}")  # the note is a format string
        lines += ["", f"## {section.title}", clip(section.text, keep, note=(
            f" [trimmed: {{rest:,}} more characters; call get_full_text with sections={asked} "
            "to read this section alone]"))]
    yield ToolResult(text="\n".join(lines))

