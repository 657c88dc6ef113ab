"""Exported documents never load anything from outside: an answer's image reads as text, as in the tray.

A model's answer is Markdown, and `![](https://…/leak?conv=…)` rendered as an `<img>` in a downloaded page
sends a request the moment the file is opened. In HTML (`image_rule`) and in Markdown (`inert_markdown`)
an image becomes `[image: alt (domain)]`, and Markdown's raw HTML (which viewers render) is escaped. Links
stay links: following one is the reader's choice, not something opening the file does. The HTML documents
also carry `DOCUMENT_POLICY` as a `<meta>` Content-Security-Policy, for when they are opened from disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

# What the HTML files may use: their inline styles and `data:` images; no fetch, script, form or base.
DOCUMENT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

_IMAGE = re.compile(r"!\[((?:[^\[\]\\]|\\.)*)\]\(\s*<?([^\s)>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
_REF_IMAGE = re.compile(r"!\[((?:[^\[\]\\]|\\.)*)\](?:\[[^\]]*\])?")
_TAG = re.compile(r"<(?=[A-Za-z!/?])")


def image_text(alt: str, url: str) -> str:
    """`[image: alt (domain)]`, the tray's wording (frontend/src/chat/Markdown.tsx)."""
    alt = " ".join(alt.split())
    domain = urlsplit(url.strip()).hostname or "" if url else ""
    label = f"{alt} ({domain})" if alt and domain else alt or domain
    return f"[image: {label}]" if label else "[image]"


def image_rule(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """markdown-it's renderer for `image`: the text above, escaped, instead of an `<img>`."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    return escapeHtml(image_text(alt, str(token.attrGet("src") or "")))


def inert_markdown(text: str) -> str:
    """The Markdown with its images as text and its raw HTML escaped (`<` of a tag as `&lt;`)."""
    def text_of(alt: str, url: str) -> str:
        return image_text(alt, url).replace("[", "\\[").replace("]", "\\]")

    text = _IMAGE.sub(lambda m: text_of(m[1], m[2]), text)
    text = _REF_IMAGE.sub(lambda m: text_of(m[1], ""), text)
    return _TAG.sub("&lt;", text)
