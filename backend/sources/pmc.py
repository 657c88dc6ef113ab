"""PubMed Central full text: which PMC record a PubMed article has (E-utilities `elink`, JSON) and its
JATS XML (`efetch db=pmc`) as titled sections.

Only the open-access subset comes back whole: for other articles PMC's efetch answers with the front
matter and a comment that the publisher does not allow the full text in XML, so "no <body>" means
"no full text here", not an error. The parser never loads the DTD or the network (the XML is
untrusted text), flattens inline markup to text, and leaves out figures' images, tables' cells and the
reference list, which the model cannot use and which would crowd out the prose.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree
from pydantic import BaseModel, Field

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True,
                          remove_comments=True)
_SPACE = re.compile(r"\s+")
_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:)])")  # left where a citation was taken out
_SKIPPED = {"ref-list", "table-wrap", "fig", "graphic", "media", "supplementary-material", "inline-formula",
            "disp-formula", "xref"}


class Section(BaseModel):
    title: str
    text: str


class FullText(BaseModel):
    """An article's full text from PubMed Central, section by section (`Abstract` first when present)."""

    pmid: str
    pmcid: str
    title: str = ""
    license: str | None = None
    sections: list[Section] = Field(default_factory=list)

    @property
    def chars(self) -> int:
        return sum(len(s.text) for s in self.sections)


class FullTextMissing(BaseModel):
    """Why there is no full text to read: said to the model as it is, not as an error."""

    pmid: str
    reason: str


class PMCFormatError(ValueError):
    """The body is neither an elink answer nor a PMC article set."""


def parse_elink(body: Any) -> list[str]:
    """The PMC ids (digits, as elink gives them) linked to the article by `pubmed_pmc`; [] for none."""
    if isinstance(body, dict) and body.get("ERROR"):
        raise PMCFormatError(str(body["ERROR"])[:300])
    if not isinstance(body, dict) or not isinstance(body.get("linksets"), list):
        raise PMCFormatError("elink answered without linksets")
    ids: list[str] = []
    for linkset in body["linksets"]:
        for linksetdb in linkset.get("linksetdbs") or [] if isinstance(linkset, dict) else []:
            if isinstance(linksetdb, dict) and linksetdb.get("linkname") == "pubmed_pmc":
                ids += [str(i) for i in linksetdb.get("links") or []]
    return ids


def _text(element: etree._Element) -> str:
    """The element's prose: inline markup flattened, skipped elements (tables, figures, citations) left
    out but their tails kept."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if isinstance(node.tag, str) and etree.QName(node).localname in _SKIPPED:
            return
        if node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return _BEFORE_PUNCTUATION.sub(r"\1", _SPACE.sub(" ", "".join(parts))).strip()


def _section(sec: etree._Element, fallback: str) -> Section | None:
    """A body section: its paragraphs, and its subsections' under their own titles."""
    title = _text(sec.find("title")) if sec.find("title") is not None else fallback
    paragraphs: list[str] = []
    for child in sec:
        name = etree.QName(child).localname if isinstance(child.tag, str) else ""
        if name == "p":
            paragraphs.append(_text(child))
        elif name == "sec":
            sub = _section(child, "")
            if sub is not None:
                paragraphs.append(f"{sub.title}: {sub.text}" if sub.title else sub.text)
        elif name == "list":
            paragraphs += [f"- {_text(item)}" for item in child.iter("list-item")]
    text = "\n".join(p for p in paragraphs if p)
    return Section(title=title or fallback, text=text) if text else None


def parse_pmc_article(xml: bytes, pmid: str) -> FullText | None:
    """The first article of an efetch db=pmc answer; None when it carries no body (not open access)."""
    try:
        root = etree.fromstring(xml, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise PMCFormatError(f"not XML: {exc}") from exc
    article = root if etree.QName(root).localname == "article" else root.find("article")
    if article is None:
        error = root.findtext("error") or root.findtext("ERROR")
        raise PMCFormatError(error or f"no <article> in <{etree.QName(root).localname}>")
    meta = article.find("front/article-meta")
    pmcid = ""
    title = ""
    license_text = None
    sections: list[Section] = []
    if meta is not None:
        for node in meta.findall("article-id"):
            if node.get("pub-id-type") in ("pmc", "pmcid") and node.text:
                pmcid = node.text.strip() if node.text.strip().startswith("PMC") else f"PMC{node.text.strip()}"
        title_node = meta.find("title-group/article-title")
        title = _text(title_node) if title_node is not None else ""
        licence = meta.find("permissions/license")
        if licence is not None:
            href = licence.get("{http://www.w3.org/1999/xlink}href")
            license_text = href or _text(licence)[:200] or None
        abstract = meta.find("abstract")
        if abstract is not None:
            found = _section(abstract, "Abstract")
            if found is not None:
                sections.append(found.model_copy(update={"title": "Abstract"}))
    body = article.find("body")
    if body is None:
        return None
    loose = [_text(p) for p in body.findall("p")]
    if any(loose):
        sections.append(Section(title="Main text", text="\n".join(p for p in loose if p)))
    for i, sec in enumerate(body.findall("sec"), start=1):
        found = _section(sec, f"Section {i}")
        if found is not None:
            sections.append(found)
    return FullText(pmid=pmid, pmcid=pmcid, title=title, license=license_text, sections=sections)
