"""PubMed efetch XML and esummary JSON -> `Article` / `ArticleSummary`.

Shared by the live service (E-utilities responses) and the offline corpus (exported
PubmedArticleSet files from DTD 2014 to 2025). The parser never loads the DTD or the network,
flattens inline markup (<i>, <sup>, MathML) to text, and accepts PubmedBookArticle records.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from backend.sources.models import AbstractSection, Article, ArticleSummary

# resolve_entities=False + no_network: efetch output is untrusted text from the network.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True,
                          remove_comments=True)
_NCT = re.compile(r"\bNCT\s?(\d{8})\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


class PubMedXMLError(ValueError):
    """The body is not a PubmedArticleSet (an efetch error page, truncated XML...)."""


def _text(element: etree._Element | None) -> str:
    if element is None:
        return ""
    return _SPACE.sub(" ", "".join(element.itertext())).strip()


def _month(value: str | None) -> int | None:
    if not value:
        return None
    value = value.strip().lower()
    if value.isdigit():
        return int(value) if 1 <= int(value) <= 12 else None
    return _MONTHS.get(value[:3]) or _SEASONS.get(value)


def _partial_date(year: str | None, month: str | None = None, day: str | None = None) -> str | None:
    if not year or not year.strip()[:4].isdigit():
        return None
    result = year.strip()[:4]
    if (m := _month(month)) is not None:
        result += f"-{m:02d}"
        if day and day.strip().isdigit() and 1 <= int(day) <= 31:
            result += f"-{int(day):02d}"
    return result


def text_date(value: str | None) -> str | None:
    """A date as PubMed prints it ("2017 Jan-Feb", "1975 Oct 27", "2001 Spring") -> "2017-01", "1975-10-27".

    Ranges keep their first year and month; a day is kept only when it follows the first month.
    """
    parts = (value or "").replace("-", " ").split()
    day = parts[2] if len(parts) > 2 and parts[2].isdigit() else None
    return _partial_date(parts[0] if parts else None, parts[1] if len(parts) > 1 else None, day)


def _pub_date(pub_date: etree._Element | None) -> str | None:
    if pub_date is None:
        return None
    if (medline := pub_date.findtext("MedlineDate")) is not None:
        return text_date(medline)
    month = pub_date.findtext("Month") or pub_date.findtext("Season")
    return _partial_date(pub_date.findtext("Year"), month, pub_date.findtext("Day"))


def _authors(author_list: etree._Element | None) -> list[str]:
    names: list[str] = []
    for author in author_list.findall("Author") if author_list is not None else []:
        if author.get("ValidYN") == "N":
            continue
        if (group := _text(author.find("CollectiveName"))):
            names.append(group)
            continue
        last = _text(author.find("LastName"))
        initials = _text(author.find("Initials"))
        if not initials:
            initials = "".join(part[0] for part in _text(author.find("ForeName")).split())
        if last:
            names.append(f"{last} {initials}".strip())
    return names


def _abstract(abstract: etree._Element | None) -> tuple[str, list[AbstractSection]]:
    if abstract is None:
        return "", []
    sections = [
        AbstractSection(label=(part.get("Label") or "").strip() or None, text=text)
        for part in abstract.findall("AbstractText")
        if (text := _text(part))
    ]
    plain = "\n".join(f"{s.label}: {s.text}" if s.label else s.text for s in sections)
    return plain, sections


def _nct_ids(record: etree._Element, *texts: str) -> list[str]:
    ids: list[str] = []
    for bank in record.iter("DataBank"):
        if (bank.findtext("DataBankName") or "").strip().lower() == "clinicaltrials.gov":
            ids += [_text(acc).upper() for acc in bank.iter("AccessionNumber")]
    return list(dict.fromkeys(i for i in [*ids, *nct_ids_in(*texts)] if re.fullmatch(r"NCT\d{8}", i)))


def nct_ids_in(*texts: str) -> list[str]:
    """Trial registry numbers mentioned in free text, in order, without repeats."""
    return list(dict.fromkeys(f"NCT{m}" for text in texts for m in _NCT.findall(text)))


def _article_ids(id_list: etree._Element | None) -> dict[str, str]:
    ids: dict[str, str] = {}
    for item in id_list.findall("ArticleId") if id_list is not None else []:
        kind, value = item.get("IdType", ""), _text(item)
        if value and kind not in ids:
            ids[kind] = value
    return ids


def _record(node: etree._Element, meta: etree._Element, part: etree._Element, title: str, pub_date: str | None,
            **fields: Any) -> Article:
    """What every PubMed record gives, a journal article or a book: `meta` holds the PMID and keywords,
    `part` the abstract and authors; the year comes from the date, the NCT ids from the record's text."""
    abstract, sections = _abstract(part.find("Abstract"))
    return Article(
        pmid=_text(meta.find("PMID")),
        title=title,
        abstract=abstract,
        abstract_sections=sections,
        authors=_authors(part.find("AuthorList")),
        year=int(pub_date[:4]) if pub_date else None,
        pub_date=pub_date,
        keywords=[k for k in (_text(k) for k in meta.findall("KeywordList/Keyword")) if k],
        nct_ids=_nct_ids(node, title, abstract),
        **fields,
    )


def _parse_citation(node: etree._Element) -> Article:
    citation = node.find("MedlineCitation")
    art = citation.find("Article") if citation is not None else None
    if citation is None or art is None:
        raise PubMedXMLError("PubmedArticle without MedlineCitation/Article")
    journal = art.find("Journal")
    title = _text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle"))
    ids = _article_ids(node.find("PubmedData/ArticleIdList"))
    doi = ids.get("doi") or next(
        (_text(e) for e in art.findall("ELocationID") if e.get("EIdType") == "doi" and _text(e)), None)
    pub_date = _pub_date(journal.find("JournalIssue/PubDate") if journal is not None else None)
    if pub_date is None and (article_date := art.find("ArticleDate")) is not None:
        pub_date = _partial_date(article_date.findtext("Year"), article_date.findtext("Month"),
                                 article_date.findtext("Day"))
    issue = journal.find("JournalIssue") if journal is not None else None
    return _record(
        node, citation, art, title, pub_date,
        journal=_text(journal.find("Title")) or None if journal is not None else None,
        journal_abbrev=_text(journal.find("ISOAbbreviation")) or None if journal is not None else None,
        volume=_text(issue.find("Volume")) or None if issue is not None else None,
        issue=_text(issue.find("Issue")) or None if issue is not None else None,
        pages=_text(art.find("Pagination/MedlinePgn")) or None,
        mesh_terms=[_text(d) for d in citation.findall("MeshHeadingList/MeshHeading/DescriptorName")],
        doi=doi,
        pmcid=ids.get("pmc"),
        publication_types=[_text(p) for p in art.findall("PublicationTypeList/PublicationType")],
    )


def _parse_book(node: etree._Element) -> Article:
    doc = node.find("BookDocument")
    if doc is None:
        raise PubMedXMLError("PubmedBookArticle without BookDocument")
    book = doc.find("Book")
    title = _text(doc.find("ArticleTitle")) or _text(doc.find("Book/BookTitle"))
    pub_date = _pub_date(book.find("PubDate") if book is not None else None)
    return _record(
        node, doc, doc, title, pub_date,
        journal=_text(doc.find("Book/BookTitle")) or None,
        doi=_article_ids(doc.find("ArticleIdList")).get("doi"),
        publication_types=[_text(p) for p in doc.findall("PublicationType")],
    )


def parse_efetch(body: bytes | str) -> list[Article]:
    """Parse a `PubmedArticleSet` (efetch retmode=xml) into articles, in document order."""
    data = body.encode() if isinstance(body, str) else body
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise PubMedXMLError(f"PubMed returned XML that does not parse: {exc}") from exc
    if root.tag != "PubmedArticleSet":
        message = _text(root.find(".//ERROR")) or f"unexpected root element <{root.tag}>"
        raise PubMedXMLError(message)
    articles = []
    for node in root:
        if node.tag == "PubmedArticle":
            articles.append(_parse_citation(node))
        elif node.tag == "PubmedBookArticle":
            articles.append(_parse_book(node))
    return articles


def parse_esummary(payload: dict[str, Any]) -> list[ArticleSummary]:
    """Parse esummary retmode=json (version 0.3); uids that came back with an error are skipped."""
    raw = payload.get("result")
    result: dict[str, Any] = raw if isinstance(raw, dict) else {}
    summaries = []
    for uid in result.get("uids", []):
        doc = result.get(str(uid))
        if not isinstance(doc, dict) or "error" in doc:
            continue
        pub_date = str(doc.get("pubdate") or "") or None
        year = pub_date[:4] if pub_date and pub_date[:4].isdigit() else None
        doi = next((a.get("value") for a in doc.get("articleids", [])
                    if isinstance(a, dict) and a.get("idtype") == "doi"), None)
        summaries.append(ArticleSummary(
            pmid=str(doc.get("uid") or uid),
            title=str(doc.get("title") or ""),
            authors=[a["name"] for a in doc.get("authors", []) if isinstance(a, dict) and a.get("name")],
            journal=doc.get("fulljournalname") or doc.get("source") or None,
            pub_date=pub_date,
            year=int(year) if year else None,
            doi=doi,
            publication_types=[str(p) for p in doc.get("pubtype", [])],
        ))
    return summaries
