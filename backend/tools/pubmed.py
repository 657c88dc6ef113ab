"""PubMed tools: `search_pubmed` (everywhere) and `get_pubmed_article` (Tablizer)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel, Field

from backend.registry import ToolConfig, ToolContext, ToolProgress, ToolResult, register_tool
from backend.sources.models import Article, ArticleSearchParams, checked_pmid
from backend.text import clip

TITLE_CHARS = 150
ABSTRACT_CHARS = 4000


def article_line(a: Article) -> str:
    title = clip(a.title, TITLE_CHARS)
    return f"- PMID: {a.pmid} | {title} | {a.journal or '—'} ({a.year or 'n.d.'})"


class SearchPubMedInput(ArticleSearchParams):
    """The tool's view of a PubMed search: the model asks for `max_results` (at most 50) per page."""

    page_size: int = Field(10, ge=1, le=50, alias="max_results")


class PmidInput(BaseModel):
    pmid: str = Field(max_length=20, description="The PubMed id, digits only")


async def search_pubmed(search: SearchPubMedInput, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
    yield ToolProgress(stage="searching", message="Searching PubMed…", progress=0.3)
    page = await ctx.require_sources().pubmed.search_articles(search)
    lines = [f"PubMed search {search.query!r}: {page.total_count} articles match; showing {len(page.articles)}."]
    if page.query_translation:
        lines.append(f"Query as run: {page.query_translation}")
    lines += [article_line(a) for a in page.articles]
    yield ToolResult(text="\n".join(lines), payload={"type": "pubmed_search_results", "data": {
        "query": search.query, "total_count": page.total_count, "query_translation": page.query_translation,
        "articles": [a.model_dump(include={"pmid", "title", "journal", "year", "authors", "doi"})
                     for a in page.articles]}})


async def get_pubmed_article(params: PmidInput, ctx: ToolContext) -> str:
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


register_tool(ToolConfig(
    name="search_pubmed",
    description="Search PubMed for research articles. Supports PubMed syntax (MeSH tags, AND/OR/NOT, quotes).",
    input_model=SearchPubMedInput,
    executor=search_pubmed,
    payload_type="pubmed_search_results",
    is_global=True,
))

register_tool(ToolConfig(
    name="get_pubmed_article",
    description="Get one PubMed article by PMID: title, authors, journal, MeSH terms, linked trials and abstract.",
    input_model=PmidInput,
    executor=get_pubmed_article,
    is_global=False,
))
