"""efetch XML parsing over every PubmedArticleSet file in the corpus (DTDs 2014-2025)."""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

import pytest
from lxml import etree

from backend.sources.models import Article
from backend.sources.offline.corpus import DATA_DIR
from backend.sources.pubmed_records import PubMedXMLError, parse_efetch, parse_esummary

from .fakes import recorded

EFETCH_FILES = sorted((DATA_DIR / "pubmed").glob("*.xml.gz"))


@cache
def parsed(name: str) -> dict[str, Article]:
    return {a.pmid: a for a in parse_efetch(gzip.decompress((DATA_DIR / "pubmed" / name).read_bytes()))}


def test_every_fixture_file_is_in_the_corpus() -> None:
    assert len(EFETCH_FILES) == 11


@pytest.mark.parametrize("path", EFETCH_FILES, ids=lambda p: p.name.removesuffix(".xml.gz"))
def test_every_record_of_every_file_parses(path: Path) -> None:
    raw = gzip.decompress(path.read_bytes())
    root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False))
    expected = [n.findtext("MedlineCitation/PMID") or n.findtext("BookDocument/PMID") for n in root]
    articles = parse_efetch(raw)
    assert [a.pmid for a in articles] == expected
    for article in articles:
        assert article.pmid.isdigit() and article.title
        assert article.year and 1900 < article.year < 2030
        assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", article.pub_date or "")
        assert article.authors
        for text in (article.title, article.abstract):
            assert not re.search(r"</?(i|b|sup|sub|u)>", text)  # inline markup is flattened
            assert "  " not in text and "\t" not in text
        if article.abstract_sections:
            assert article.abstract.startswith(article.abstract_sections[0].text) or \
                article.abstract.startswith(f"{article.abstract_sections[0].label}:")
        assert all(re.fullmatch(r"NCT\d{8}", n) for n in article.nct_ids)


def test_the_corpus_holds_340_unique_records() -> None:
    assert sum(len(parsed(p.name)) for p in EFETCH_FILES) == 340


def test_structured_abstract_keeps_labels_in_order() -> None:
    article = parsed("dbmspracticum_sample_19.xml.gz")["22024892"]
    assert [s.label for s in article.abstract_sections][:4] == [
        "STUDY DESIGN", "OBJECTIVE", "SUMMARY OF BACKGROUND DATA", "METHODS"]
    assert article.abstract.splitlines()[0].startswith("STUDY DESIGN: ")


def test_unlabelled_abstract_is_one_section_without_label() -> None:
    article = parsed("dbmspracticum_sample_19.xml.gz")["22677144"]
    assert len(article.abstract_sections) == 1 and article.abstract_sections[0].label is None
    assert article.abstract == article.abstract_sections[0].text


def test_inline_markup_in_title_and_abstract_is_flattened() -> None:
    article = parsed("biopython_pubmed4.xml.gz")["27797938"]
    assert article.title == "Leucocyte telomere length, genetic variants at the TERT gene region and risk of " \
                            "pancreatic cancer."
    assert "ptrend=0.048" in article.abstract  # p<sub>trend</sub>=0.048
    results = parsed("ncbiutils_pubmed_5.xml.gz")["30158200"].abstract
    assert "(eg, SOST, WNT16, and ESR1)" in results  # <i> over indented lines


def test_title_with_quotes_and_markup() -> None:
    assert parsed("biopython_pubmed6.xml.gz")["30108519"].title.startswith('A "Blood Relationship" Between')


def test_missing_abstract_is_empty() -> None:
    article = parsed("biopython_pubmed1.xml.gz")["12091962"]
    assert (article.abstract, article.abstract_sections) == ("", [])
    assert sum(1 for p in EFETCH_FILES for a in parsed(p.name).values() if not a.abstract) == 39


def test_legacy_dtd_and_medline_date() -> None:
    articles = parsed("dbmspracticum_sample_19.xml.gz")  # DTD 2014, with the old DateCreated element
    assert len(articles) == 19
    assert articles["23194934"].pub_date == "2013-03"  # <MedlineDate>2013 Mar-Apr</MedlineDate>
    assert parsed("ncbiutils_pubmed_5.xml.gz")["151222"].pub_date == "1978-07"  # "1978 Jul-Sep"


def test_medline_date_ranges_keep_first_month() -> None:
    raw = b"""<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><Journal>
      <JournalIssue><PubDate><MedlineDate>2017 Jan-Feb</MedlineDate></PubDate></JournalIssue>
      <Title>J</Title></Journal><ArticleTitle>T</ArticleTitle></Article></MedlineCitation>
      </PubmedArticle></PubmedArticleSet>"""
    (article,) = parse_efetch(raw)
    assert (article.pub_date, article.year) == ("2017-01", 2017)


def test_mesh_doi_and_databank_link() -> None:
    article = parsed("pubmr_cancer_biology_93.xml.gz")["29514256"]
    assert article.nct_ids == ["NCT01095302"]
    assert article.doi == "10.1093/jjco/hyy026"
    assert article.mesh_terms and "Clinical Trial, Phase I" in article.publication_types


def test_doi_falls_back_to_elocation_id() -> None:
    raw = b"""<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>2</PMID><Article>
      <ArticleTitle>T</ArticleTitle><ELocationID EIdType="pii">S1</ELocationID>
      <ELocationID EIdType="doi">10.1/x</ELocationID></Article></MedlineCitation>
      <PubmedData><ArticleIdList><ArticleId IdType="pubmed">2</ArticleId></ArticleIdList></PubmedData>
      </PubmedArticle></PubmedArticleSet>"""
    assert parse_efetch(raw)[0].doi == "10.1/x"


def test_nct_ids_in_abstract_text_are_linked() -> None:
    article = parsed("biomcp_efetch_22663011.xml.gz")["22663011"]
    assert article.nct_ids == ["NCT01245062"]  # DataBankList and the abstract agree: listed once


def test_in_process_record_has_no_mesh() -> None:
    assert parsed("biopython_pubmed5.xml.gz")["28775130"].mesh_terms == []


def test_book_article() -> None:
    book = parsed("solitude6060_headneck_cancer_208.xml.gz")["29337475"]
    assert book.title == "Childhood Nasopharyngeal Cancer Treatment (PDQ®): Patient Version"
    assert book.journal == "PDQ Cancer Information Summaries"
    assert book.authors == ["PDQ Pediatric Treatment Editorial Board"] and book.year == 2002
    assert book.abstract.startswith("This PDQ cancer information summary")


def test_group_author_and_initials() -> None:
    article = parsed("biomcp_efetch_22663011.xml.gz")["22663011"]
    assert article.authors[:2] == ["Flaherty KT", "Robert C"]
    assert "METRIC Study Group" in article.authors


@pytest.mark.parametrize("body", [b"<eFetchResult><ERROR>ID list is empty</ERROR></eFetchResult>", b"<Pubmed"])
def test_non_article_sets_raise(body: bytes) -> None:
    with pytest.raises(PubMedXMLError):
        parse_efetch(body)


def test_external_entities_are_not_resolved() -> None:
    raw = b"""<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>
      <PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>3</PMID><Article>
      <ArticleTitle>a&e;b</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"""
    assert "root:" not in parse_efetch(raw)[0].title


def test_esummary_skips_error_uids() -> None:
    body = recorded("pubmed/yeliztli_esummary_34313350_27078154.json")
    body["result"]["uids"].append("99")
    body["result"]["99"] = {"uid": "99", "error": "cannot get document summary"}
    assert [s.pmid for s in parse_esummary(body)] == ["34313350", "27078154"]
