"""User search strings -> SQLite FTS5 MATCH expressions, for the offline backend.

Users and the model type PubMed syntax into Tablizer (`(EGFR[MeSH] OR "epidermal growth factor
receptor") AND resist*`) and Essie syntax into TrialScout (`AREA[EligibilityCriteria]"EGFR L858R"`).
Both are parsed here into a small tree: quoted phrases, bare words, `word*` prefixes, AND / OR / NOT
(any case), parentheses, `[tag]` field tags (a tag after several bare words tags them as one phrase,
as PubMed does), `AREA[Piece]` prefixes. Essie's `RANGE[...]` and `MISSING` cannot be expressed in
full-text search; they are dropped as non-constraining. Precedence differs: PubMed combines strictly
left to right, Essie binds NOT tighter than AND tighter than OR.

Malformed input (unbalanced parentheses or quotes, a dangling operator) raises `QuerySyntaxError`
with the position and a hint, which the services turn into a 422. So does a query that would cost more
than a search should: nested deeper than `MAX_DEPTH`, more than `MAX_TERMS` terms, more than
`MAX_PREFIXES` wildcard terms, or a wildcard on fewer than `MIN_PREFIX` characters (`a*` expands to
every word starting with a: thousands of terms, seconds of work for one query).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Columns = tuple[str, ...] | None  # None = every column of the table


MAX_DEPTH = 12  # parentheses and AREA[...] prefixes inside each other
MAX_TERMS = 40
MAX_PREFIXES = 6
MIN_PREFIX = 3


class QuerySyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Term:
    text: str
    tag: str | None = None  # field tag as typed, e.g. "MeSH" or "AREA[EligibilityCriteria]"
    prefix: bool = False
    quoted: bool = False


@dataclass(frozen=True)
class Bool:
    op: Literal["AND", "OR", "NOT"]  # NOT is binary: left AND NOT right
    items: tuple[Node, ...] = field(default_factory=tuple)


class Dropped:
    """A clause that cannot constrain a full-text search (RANGE[...], MISSING, punctuation)."""


DROPPED = Dropped()
Node = Term | Bool | Dropped

_OPERATORS = {"AND", "OR", "NOT"}
_CONTEXT_OPERATORS = re.compile(r"(EXPANSION|COVERAGE|TILT|SEARCH)\[[^\]]*\]")
_BARE = re.compile(r'[^\s()"\[\]]+')


@dataclass
class _Token:
    kind: Literal["(", ")", "op", "words", "phrase", "tag", "area", "drop"]
    value: str
    pos: int
    words: list[str] = field(default_factory=list)
    end: int = 0


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            tokens.append(_Token(ch, ch, i))  # type: ignore[arg-type]
            i += 1
        elif ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise QuerySyntaxError(f"unterminated quote at position {i + 1}: add the closing \"")
            tokens.append(_Token("phrase", text[i + 1:end], i))
            i = end + 1
        elif ch == "[":
            end = text.find("]", i + 1)
            if end < 0:
                raise QuerySyntaxError(f"unclosed [ at position {i + 1}: field tags look like [tiab]")
            tokens.append(_Token("tag", text[i + 1:end].strip(), i))
            i = end + 1
        elif ch == "]":
            raise QuerySyntaxError(f"unexpected ] at position {i + 1}")
        elif match := _CONTEXT_OPERATORS.match(text, i):
            i = match.end()  # ranking/expansion hints mean nothing to the offline index
        elif text.startswith(("AREA[", "RANGE["), i):
            end = text.find("]", i)
            if end < 0:
                raise QuerySyntaxError(f"unclosed [ at position {i + 1}")
            kind = "area" if text.startswith("AREA[", i) else "drop"
            tokens.append(_Token(kind, text[text.index("[", i) + 1:end].strip(), i))  # type: ignore[arg-type]
            i = end + 1
        else:
            match = _BARE.match(text, i)
            assert match is not None
            word = match.group(0)
            if word.upper() in _OPERATORS:
                tokens.append(_Token("op", word.upper(), i))
            elif word == "MISSING":
                tokens.append(_Token("drop", word, i))
            elif tokens and tokens[-1].kind == "words" and not text[tokens[-1].end:i].strip():
                tokens[-1].words.append(word)  # a run of words, so a following [tag] covers all of them
                tokens[-1].value = text[tokens[-1].pos:match.end()]
                tokens[-1].end = match.end()
            else:
                tokens.append(_Token("words", word, i, [word], match.end()))
            i = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, syntax: Literal["pubmed", "essie"]):
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.syntax = syntax
        self.depth = 0

    def _peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def parse(self) -> Node:
        node = self._expr()
        if (tok := self._peek()) is not None:
            raise QuerySyntaxError(f"unexpected {tok.value!r} at position {tok.pos + 1}: a ( is missing")
        return node

    def _expr(self) -> Node:
        operands: list[Node] = [self._operand()]
        ops: list[str] = []
        while (tok := self._peek()) is not None and tok.kind != ")":
            if tok.kind == "op":
                self.pos += 1
                if self._peek() is None or self._peek().kind in (")", "op"):  # type: ignore[union-attr]
                    raise QuerySyntaxError(f"{tok.value} at position {tok.pos + 1} needs a term after it")
                ops.append(tok.value)
            else:
                ops.append("AND")  # adjacency means AND in both PubMed and Essie
            operands.append(self._operand())
        return self._combine(operands, ops)

    def _combine(self, operands: list[Node], ops: list[str]) -> Node:
        if self.syntax == "pubmed":
            node = operands[0]
            for op, right in zip(ops, operands[1:], strict=True):
                node = _bool(op, node, right)  # type: ignore[arg-type]
            return node
        for level in ("NOT", "AND", "OR"):  # Essie: NOT binds tightest, OR loosest
            merged, merged_ops = [operands[0]], []
            for op, right in zip(ops, operands[1:], strict=True):
                if op == level:
                    merged[-1] = _bool(level, merged[-1], right)
                else:
                    merged.append(right)
                    merged_ops.append(op)
            operands, ops = merged, merged_ops
        return operands[0]

    def _operand(self) -> Node:
        tok = self._peek()
        if tok is None:
            raise QuerySyntaxError("the query ends where a search term was expected")
        self.pos += 1
        if tok.kind == "op":
            raise QuerySyntaxError(f"{tok.value} at position {tok.pos + 1} needs a term before it")
        if tok.kind == ")":
            raise QuerySyntaxError(f"unexpected ) at position {tok.pos + 1}")
        if tok.kind == "tag":
            raise QuerySyntaxError(f"field tag [{tok.value}] at position {tok.pos + 1} must follow a term")
        if tok.kind == "drop":
            return DROPPED
        if tok.kind in ("area", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise QuerySyntaxError(f"nested more than {MAX_DEPTH} levels deep at position {tok.pos + 1}")
            try:
                return self._nested(tok)
            finally:
                self.depth -= 1
        if tok.kind == "phrase":
            prefix = self._take_star()
            return _term(tok.value, self._take_tag(), quoted=True, prefix=prefix)
        tag = self._take_tag()
        if tag is not None:
            return _term(" ".join(tok.words), tag, quoted=len(tok.words) > 1)
        terms = [_term(w.rstrip("*"), None, prefix=w.endswith("*")) for w in tok.words]
        return terms[0] if len(terms) == 1 else Bool("AND", tuple(terms))

    def _nested(self, tok: _Token) -> Node:
        if tok.kind == "area":
            return _tag(self._operand(), f"AREA[{tok.value}]")
        if (nxt := self._peek()) is not None and nxt.kind == ")":
            raise QuerySyntaxError(f"empty parentheses at position {tok.pos + 1}")
        node = self._expr()
        close = self._peek()
        if close is None or close.kind != ")":
            raise QuerySyntaxError(f"the ( at position {tok.pos + 1} is never closed")
        self.pos += 1
        return _tag(node, self._take_tag())

    def _take_tag(self) -> str | None:
        if (tok := self._peek()) is not None and tok.kind == "tag":
            self.pos += 1
            return tok.value
        return None

    def _take_star(self) -> bool:
        tok = self._peek()
        if tok is not None and tok.kind == "words" and tok.words[0] == "*" and tok.pos > 0:
            tok.words.pop(0)
            if not tok.words:
                self.pos += 1
            return True
        return False


def _term(text: str, tag: str | None, *, quoted: bool = False, prefix: bool = False) -> Node:
    text = text.strip()
    if not any(ch.isalnum() for ch in text):
        return DROPPED  # "-", "*", "" tokenise to nothing
    return Term(text, tag, prefix=prefix, quoted=quoted)


def _tag(node: Node, tag: str | None) -> Node:
    if tag is None:
        return node
    if isinstance(node, Term):
        return node if node.tag else replace(node, tag=tag)
    if isinstance(node, Bool):
        return Bool(node.op, tuple(_tag(item, tag) for item in node.items))
    return node


def _bool(op: Literal["AND", "OR", "NOT"], left: Node, right: Node) -> Node:
    if op == "NOT":
        if isinstance(right, Dropped):
            return left
        return DROPPED if isinstance(left, Dropped) else Bool("NOT", (left, right))
    if isinstance(left, Dropped) or isinstance(right, Dropped):
        if op == "OR":
            return DROPPED  # "x OR <anything>" cannot be narrowed by x alone
        return right if isinstance(left, Dropped) else left
    items: list[Any] = []
    for side in (left, right):
        items += side.items if isinstance(side, Bool) and side.op == op else (side,)
    return Bool(op, tuple(items))


def parse_query(text: str, syntax: Literal["pubmed", "essie"] = "pubmed") -> Node:
    """Parse a search string; `DROPPED` means nothing searchable was left."""
    if not text.strip():
        return DROPPED
    node = _Parser(text, syntax).parse()
    check_cost([node])
    return node


def terms_of(node: Node) -> list[Term]:
    if isinstance(node, Term):
        return [node]
    return [t for item in node.items for t in terms_of(item)] if isinstance(node, Bool) else []


def check_cost(trees: list[Node]) -> None:
    """QuerySyntaxError when the queries together (a search's several fields) have too many terms or
    wildcards, or a wildcard too short to narrow anything."""
    terms = [t for tree in trees for t in terms_of(tree)]
    prefixes = [t for t in terms if t.prefix]
    if short := [t for t in prefixes if sum(ch.isalnum() for ch in t.text) < MIN_PREFIX]:
        raise QuerySyntaxError(f"the wildcard {short[0].text}* is too short: give at least {MIN_PREFIX} letters "
                               "before a *")
    if len(prefixes) > MAX_PREFIXES:
        raise QuerySyntaxError(f"{len(prefixes)} wildcard terms; at most {MAX_PREFIXES} are allowed in one search")
    if len(terms) > MAX_TERMS:
        raise QuerySyntaxError(f"{len(terms)} search terms; at most {MAX_TERMS} are allowed in one search")


def _columns(tag: str | None, fields: Mapping[str, Columns], default: Columns) -> Columns:
    if tag is None:
        return default
    key = tag.lower()
    if key.startswith("area[") and key.endswith("]"):
        key = key[5:-1]
    return fields.get(key.strip())  # unknown tags search everywhere rather than fail


def to_fts(node: Node, fields: Mapping[str, Columns], default: Columns = None) -> str | None:
    """FTS5 MATCH expression for the tree, or None when the tree does not constrain anything."""
    if isinstance(node, Dropped):
        return None
    if isinstance(node, Term):
        phrase = '"' + node.text.replace('"', '""') + '"' + ("*" if node.prefix else "")
        cols = _columns(node.tag, fields, default)
        return f"{{{' '.join(cols)}}} : {phrase}" if cols else phrase
    parts = [to_fts(item, fields, default) for item in node.items]
    if node.op == "NOT":
        left, right = parts
        return left if right is None or left is None else f"({left} NOT {right})"
    if node.op == "OR" and None in parts:
        return None
    present = [p for p in parts if p]
    if len(present) <= 1:
        return present[0] if present else None
    return "(" + f" {node.op} ".join(present) + ")"


def to_text(node: Node, default_label: str | None = None, *, top: bool = True) -> str:
    """The query as the offline backend understood it, in PubMed's notation."""
    if isinstance(node, Dropped):
        return ""
    if isinstance(node, Term):
        text = f'"{node.text}"' if node.quoted else node.text
        if node.tag and node.tag.startswith("AREA["):
            return node.tag + text + ("*" if node.prefix else "")
        label = node.tag or default_label
        return text + ("*" if node.prefix else "") + (f"[{label}]" if label else "")
    inner = f" {node.op} ".join(t for t in (to_text(i, default_label, top=False) for i in node.items) if t)
    return inner if top else f"({inner})"
