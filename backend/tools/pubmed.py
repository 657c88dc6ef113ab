"""PubMed tools: `search_pubmed` (everywhere) and `get_pubmed_article` (Tablizer)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import ValidationError

from backend.registry import ToolConfig, ToolContext, ToolProgress, ToolResult, register_tool
from backend.sources.models import Article, ArticleSearchParams, checked_pmid

TITLE_CHARS = 150
ABSTRACT_CHARS = 4000


def article_line(a: Article) -> str:
    title = a.title if len(a.title) <= TITLE_CHARS else a.title[:TITLE_CHARS - 1] + "…"
    return f"- PMID: {a.pmid} | {title} | {a.journal or '—'} ({a.year or 'n.d.'})"


async def search_pubmed(params: dict[str, Any], ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
    try:
        search = ArticleSearchParams(query=params["query"], page_size=params.get("max_results", 10),
                                     date_start=params.get("date_start"), date_end=params.get("date_end"),
                                     sort=params.get("sort", "relevance"))
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        yield ToolResult(text=f"Error: invalid search: {errors}", is_error=True)
        return
    yield ToolProgress(stage="searching", message="Searching PubMed…", progress=0.3)
    page = await ctx.services["sources"].pubmed.search_articles(search)
    lines = [f"PubMed search {search.query!r}: {page.total_count} articles match; showing {len(page.articles)}."]
    if page.query_translation:
        lines.append(f"Query as run: {page.query_translation}")
    lines += [article_line(a) for a in page.articles]
    yield ToolResult(text="\n".join(lines), payload={"type": "pubmed_search_results", "data": {
        "query": search.query, "total_count": page.total_count, "query_translation": page.query_translation,
        "articles": [a.model_dump(include={"pmid", "title", "journal", "year", "authors", "doi"})
                     for a in page.articles]}})


async def get_pubmed_article(params: dict[str, Any], ctx: ToolContext) -> str:
    article = await ctx.services["sources"].pubmed.get_article(checked_pmid(params["pmid"]))
    abstract = article.abstract or "(no abstract)"
    if len(abstract) > ABSTRACT_CHARS:
        abstract = abstract[:ABSTRACT_CHARS] + " [abstract truncated]"
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
    input_schema={"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "The PubMed query"},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        "date_start": {"type": "string", "description": "YYYY-MM-DD"},
        "date_end": {"type": "string", "description": "YYYY-MM-DD"},
        "sort": {"enum": ["relevance", "date"]}}},
    executor=search_pubmed,
    category="research",
    payload_type="pubmed_search_results",
    is_global=True,
))

register_tool(ToolConfig(
    name="get_pubmed_article",
    description="Get one PubMed article by PMID: title, authors, journal, MeSH terms, linked trials and abstract.",
    input_schema={"type": "object", "required": ["pmid"], "properties": {
        "pmid": {"type": "string", "description": "The PubMed id, digits only"}}},
    executor=get_pubmed_article,
    is_global=False,
    category="research",
))
