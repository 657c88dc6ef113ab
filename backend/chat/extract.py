"""The finished answer's cards: each marker's JSON, found by `MarkerFilter`, is bounded, parsed and
validated against its payload schema; the marker text is removed from the message whether or not the
payload was valid, and what was wrong goes to `errors`."""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter
from backend.payloads.suggestions import ACTIONS_SCHEMA, VALUES_SCHEMA

MAX_MESSAGE_MARKER_BYTES = 128 * 1024  # all the cards of one answer together
DEFAULT_MAX_STRING = 4000  # characters, for a string field whose schema sets no maxLength
MAX_ERROR_CHARS = 200
_SURROGATE = re.compile("[\ud800-\udfff]")

SUGGESTION_SCHEMAS: dict[str, dict[str, Any]] = {SUGGESTED_VALUES: VALUES_SCHEMA, SUGGESTED_ACTIONS: ACTIONS_SCHEMA}


@dataclass
class Extraction:
    message: str
    payloads: list[dict[str, Any]] = field(default_factory=list)  # [{type, data}]
    suggested_values: list[dict[str, Any]] = field(default_factory=list)
    suggested_actions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 1] + "…"


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"{_short(literal)} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(raw: str) -> Any:
    """json.loads, refusing what could not be stored and sent back as JSON (NaN, ±Infinity, 1e400,
    unpaired surrogates). The caller has bounded depth and size, so nothing here can recurse deeply."""
    data = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise ValueError("a string holds an unpaired surrogate")
    return data


def _bounded(schema: Any) -> Any:
    """The schema with a default maxLength on every string it declares without one."""
    if isinstance(schema, list):
        return [_bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bounded(v) for k, v in schema.items()}
    types = schema.get("type")
    if (types == "string" or (isinstance(types, list) and "string" in types)) and "maxLength" not in schema:
        out["maxLength"] = DEFAULT_MAX_STRING
    return out


def extract(text: str, payload_types: Iterable[Any]) -> Extraction:
    """Parse the finished text. `payload_types` are the resolved LLM PayloadTypes (parse_marker, schema)."""
    by_marker = {p.parse_marker: p for p in payload_types if p.parse_marker}
    scanner = MarkerFilter([*by_marker, SUGGESTED_VALUES, SUGGESTED_ACTIONS])
    visible = scanner.feed(text) + scanner.finish()
    out = Extraction(message=re.sub(r"\n{3,}", "\n\n", visible).strip())
    budget = MAX_MESSAGE_MARKER_BYTES
    for span in scanner.spans:
        name = by_marker[span.marker].name if span.marker in by_marker else span.marker.rstrip(":").lower()
        if span.problem or span.raw_json is None:
            out.errors.append(f"{name}: {span.problem or 'the marker was not followed by complete JSON'}")
            continue
        size = len(span.raw_json.encode("utf-8", "surrogatepass"))
        if size > budget:
            out.errors.append(f"{name}: the answer's cards are larger than "
                              f"{MAX_MESSAGE_MARKER_BYTES // 1024} KB together")
            continue
        try:
            data = _loads(span.raw_json)
        except json.JSONDecodeError as err:
            out.errors.append(f"{name}: invalid JSON ({err.msg} at position {err.pos})")
            continue
        except ValueError as err:  # NaN, 1e400, a 5,000-digit integer, an unpaired surrogate
            out.errors.append(_short(f"{name}: invalid JSON ({err})"))
            continue
        schema = by_marker[span.marker].schema if span.marker in by_marker else SUGGESTION_SCHEMAS[span.marker]
        try:
            jsonschema.validate(data, _bounded(schema))
        except jsonschema.ValidationError as err:
            where = "/".join(str(p) for p in err.absolute_path) or "payload"
            reason = err.message.replace(repr(err.instance), reprlib.repr(err.instance))  # not the whole value
            out.errors.append(_short(f"{name}: does not match its schema at {where}: {reason}"))
            continue
        if span.marker == SUGGESTED_VALUES:
            out.suggested_values.extend(data)
        elif span.marker == SUGGESTED_ACTIONS:
            out.suggested_actions.extend(data)
        else:
            out.payloads.append({"type": name, "data": data})
        budget -= size
    return out
