"""Offline PubMed source: the live interface answered from the embedded PubMed records.

Queries use PubMed syntax, parsed by `offline.query` and combined left to right as PubMed does.
Field tags map onto index columns; [MeSH] also searches author keywords, since the offline corpus
has no MeSH synonym table to stand in for PubMed's automatic term mapping. Unknown tags search
every field rather than fail.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from backend.errors import InvalidInput
from backend.sources.models import Article, ArticleSearchPage, ArticleSearchParams, ArticleSummary, checked_pmid
from backend.sources.offline.index import ARTICLE_WEIGHTS, OfflineIndex, off_loop
from backend.sources.offline.query import Columns, Node, QuerySyntaxError, parse_query, to_fts, to_text
from backend.sources.offline.source import OfflineSource
from backend.sources.pmc import FullText, FullTextMissing

_TIAB = ("title", "abstract")
_MESH = ("mesh", "keywords")
_TEXT_WORDS = ("title", "abstract", "mesh", "keywords")
ARTICLE_FIELDS: Mapping[str, Columns] = {
    **dict.fromkeys(("mesh", "mh", "mesh terms", "mesh term", "majr", "mesh major topic", "sh", "subheading",
                     "mesh subheading", "nm", "supplementary concept", "substance name"), _MESH),
    **dict.fromkeys(("tiab", "title/abstract"), _TIAB),
    **dict.fromkeys(("ti", "title"), ("title",)),
    **dict.fromkeys(("ab", "abstract"), ("abstract",)),
    **dict.fromkeys(("au", "author", "auth", "1au", "lastau", "fau", "full author name", "author - first",
                     "author - last", "cn", "corporate author"), ("authors",)),
    **dict.fromkeys(("ta", "journal", "jour", "jt", "so", "source"), ("journal",)),
    **dict.fromkeys(("pt", "publication type", "ptyp"), ("pubtype",)),
    **dict.fromkeys(("ot", "kw", "keyword", "other term", "other terms"), ("keywords",)),
    **dict.fromkeys(("dp", "pdat", "publication date", "date - publication"), ("year",)),
    **dict.fromkeys(("tw", "text word", "text words"), _TEXT_WORDS),
    **dict.fromkeys(("pmid", "uid", "aid", "lid", "si", "secondary source id", "doi"), ("ids",)),
    **dict.fromkeys(("all", "all fields"), None),
}


def _parse(query: str) -> Node:
    try:
        return parse_query(query, "pubmed")
    except QuerySyntaxError as exc:
        raise InvalidInput(f"Could not read the query {query!r}: {exc}") from exc


def build_article_filter(params: ArticleSearchParams) -> tuple[list[str], list[str]]:
    """SQL conditions on `a` joined to `articles_fts`, and their arguments (shared with statistics)."""
    match = to_fts(_parse(params.query), ARTICLE_FIELDS)
    if match is None:
        raise InvalidInput(f"The query {params.query!r} has no words to search for")
    where, args = ["articles_fts MATCH ?"], [match]
    # A partial publication date ("2019", "2019-03") covers a range: keep it if the ranges overlap.
    if params.date_start:
        where.append("a.date_hi >= ?")
        args.append(params.date_start.isoformat())
    if params.date_end:
        where.append("a.date_lo <= ?")
        args.append(params.date_end.isoformat())
    return where, args


class OfflinePubMedService(OfflineSource):
    """Same interface as `PubMedService`, over the embedded corpus."""

    async def get_full_text(self, pmid: str) -> FullText | FullTextMissing:
        """The embedded corpus has abstracts, not full texts: say so, once the PMID is known to be real."""
        article = await self.get_article(pmid)
        return FullTextMissing(pmid=article.pmid, reason=(
            f"Full text is not in the embedded corpus: offline, Colleague has PubMed records and abstracts "
            f"only. PMID {article.pmid}"
            + (f" has a PubMed Central version ({article.pmcid}); with live sources it could be read."
               if article.pmcid else " has no PubMed Central id on record.")))

    async def search_articles(self, params: ArticleSearchParams) -> ArticleSearchPage:
        return await off_loop(_search, await self._get_index(), params)

    async def get_article(self, pmid: str) -> Article:
        return await off_loop(_article, await self._get_index(), checked_pmid(pmid))

    async def get_articles(self, pmids: Sequence[str]) -> list[Article]:
        wanted = dict.fromkeys(checked_pmid(p) for p in pmids)
        return await off_loop(_articles, await self._get_index(), list(wanted))

    async def get_article_summaries(self, pmids: Sequence[str]) -> list[ArticleSummary]:
        return [
            ArticleSummary(pmid=a.pmid, title=a.title, authors=a.authors, journal=a.journal,
                           pub_date=a.pub_date, year=a.year, doi=a.doi, publication_types=a.publication_types)
            for a in await self.get_articles(pmids)
        ]


# Blocking: each runs in the index's threads (`off_loop`).
def _search(index: OfflineIndex, params: ArticleSearchParams) -> ArticleSearchPage:
    tree = _parse(params.query)
    where, args = build_article_filter(params)
    sql = f"FROM articles a JOIN articles_fts ON articles_fts.rowid = a.rowid WHERE {' AND '.join(where)}"
    order = (f"bm25(articles_fts, {', '.join(map(str, ARTICLE_WEIGHTS))}), a.pmid DESC"
             if params.sort == "relevance" else "a.date_lo IS NULL, a.date_lo DESC, a.pmid DESC")
    try:
        total = index.query(f"SELECT count(*) {sql}", args)[0][0]
        rows = index.query(f"SELECT a.pmid {sql} ORDER BY {order} LIMIT ? OFFSET ?",
                           [*args, params.page_size, (params.page - 1) * params.page_size])
    except sqlite3.OperationalError as exc:  # an FTS5 expression the parser let through
        raise InvalidInput(f"Could not run the query {params.query!r} offline: {exc}") from exc
    return ArticleSearchPage(
        articles=index.articles.many([pmid for (pmid,) in rows]),
        total_count=total,
        query_translation=to_text(tree, "All Fields"),
        page=params.page,
        page_size=params.page_size,
    )


def _article(index: OfflineIndex, key: str) -> Article:
    return OfflineSource._record(index.articles, key, f"No PubMed article with PMID {key} in the offline corpus "
                                                      f"({len(index.articles)} articles)")


def _articles(index: OfflineIndex, keys: list[str]) -> list[Article]:
    return index.articles.many(keys)
