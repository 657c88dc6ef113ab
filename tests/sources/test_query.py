"""The offline query parser: PubMed and Essie strings to FTS5 expressions."""

from __future__ import annotations

import sqlite3

import pytest

from backend.sources.offline.query import DROPPED, QuerySyntaxError, Term, parse_query, to_fts, to_text

FIELDS = {"mesh": ("mesh", "keywords"), "tiab": ("title", "abstract"), "au": ("authors",), "ti": ("title",),
          "eligibilitycriteria": ("eligibility",)}


def fts(text: str, syntax: str = "pubmed", default: tuple[str, ...] | None = None) -> str | None:
    return to_fts(parse_query(text, syntax), FIELDS, default)  # type: ignore[arg-type]


@pytest.mark.parametrize(("query", "expected"), [
    ("melanoma", '"melanoma"'),
    ("lung cancer", '("lung" AND "cancer")'),
    ('"lung cancer"', '"lung cancer"'),
    ("non-small cell", '("non-small" AND "cell")'),
    ("canc*", '"canc"*'),
    ('"lung canc"*', '"lung canc"*'),
    ("EGFR[MeSH]", '{mesh keywords} : "EGFR"'),
    ("lung cancer[tiab]", '{title abstract} : "lung cancer"'),  # a tag covers the words before it
    ("(a OR b)[ti]", '({title} : "a" OR {title} : "b")'),
    ("x[unknowntag]", '"x"'),  # unknown tags search everywhere
    ("a NOT b", '("a" NOT "b")'),
    ('say "hi"', '("say" AND "hi")'),
    ("a and b or c", '(("a" AND "b") OR "c")'),  # operators in any case
])
def test_pubmed_syntax(query: str, expected: str) -> None:
    assert fts(query) == expected


def test_the_users_example() -> None:
    query = '(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR resistant)'
    assert fts(query) == ('(({mesh keywords} : "EGFR" OR "epidermal growth factor receptor") AND '
                          '("resistance" OR "resistant"))')


def test_pubmed_combines_left_to_right_but_essie_by_precedence() -> None:
    assert fts("a OR b AND c") == '(("a" OR "b") AND "c")'
    assert fts("a OR b AND c", "essie") == '("a" OR ("b" AND "c"))'
    assert fts("a AND b NOT c OR d", "essie") == '(("a" AND ("b" NOT "c")) OR "d")'


def test_default_columns_apply_to_untagged_terms_only() -> None:
    assert fts("melanoma OR x[au]", default=("conditions",)) == '({conditions} : "melanoma" OR {authors} : "x")'


def test_essie_area_range_and_missing() -> None:
    assert fts('AREA[EligibilityCriteria]("EGFR L858R")', "essie") == '{eligibility} : "EGFR L858R"'
    assert fts("AREA[MinimumAge]RANGE[MIN, 18 years] AND cancer", "essie") == '"cancer"'
    assert fts("AREA[MaximumAge]MISSING OR cancer", "essie") is None  # cannot narrow: no constraint
    assert fts("EXPANSION[None]melanoma", "essie") == '"melanoma"'


def test_punctuation_only_terms_are_dropped() -> None:
    assert fts("x - y") == '("x" AND "y")'
    assert parse_query("  ") is DROPPED and fts("* -") is None


def test_quotes_inside_terms_are_escaped_for_fts() -> None:
    assert to_fts(Term('5"-nucleotidase', "ti"), FIELDS) == '{title} : "5""-nucleotidase"'


@pytest.mark.parametrize(("query", "message"), [
    ("(a OR b", "the ( at position 1 is never closed"),
    ("a OR b)", "unexpected ')' at position 7"),
    ("a OR", "OR at position 3 needs a term after it"),
    ("a AND OR b", "AND at position 3 needs a term after it"),
    ("NOT a", "NOT at position 1 needs a term before it"),
    ('"abc', "unterminated quote at position 1"),
    ("()", "empty parentheses"),
    ("x[tiab", "unclosed ["),
    ("[ti] x", "must follow a term"),
    ("a]", "unexpected ]"),
])
def test_errors_say_where_and_what(query: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_query(query)


def test_translation_reads_like_pubmed() -> None:
    tree = parse_query('(EGFR[MeSH] OR "epidermal growth factor receptor") AND resist*')
    assert to_text(tree, "All Fields") == (
        '(EGFR[MeSH] OR "epidermal growth factor receptor"[All Fields]) AND resist*[All Fields]')
    assert to_text(parse_query('AREA[BriefTitle]"EGFR L858R"', "essie")) == 'AREA[BriefTitle]"EGFR L858R"'


@pytest.mark.parametrize("query", [
    '(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR resistant)',
    'a OR "b cel"* NOT d[ti] AND (e OR f g)[tiab]', "x - (y OR -)", "AREA[Phase](NA OR PHASE2) AND z",
    "she said \"it's\" [au]", "α-synuclein AND ß-catenin",
])
def test_generated_expressions_are_valid_fts5(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, abstract, mesh, keywords, authors, eligibility)")
    conn.execute("INSERT INTO t VALUES ('a b', 'c', 'd', 'e', 'f', 'g')")
    expression = to_fts(parse_query(query, "essie"), FIELDS)
    if expression:
        conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchall()
