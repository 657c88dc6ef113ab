"""Our own opaque page tokens.

Both backends hand out tokens of the same form: URL-safe base64 of a small JSON object. The live
backend wraps CT.gov's `nextPageToken` together with the first page's `totalCount` (CT.gov only
reports the total on the first page); the offline backend stores an offset and a fingerprint of
the search so a token cannot be replayed against a different search.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from backend.errors import InvalidInput


def encode_page_token(state: dict[str, Any]) -> str:
    raw = json.dumps(state, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_NOT_A_TOKEN = "page_token is not a token from a previous page; start again from page one"
# Our tokens are a few dozen characters of flat JSON; CT.gov's own token, wrapped, stays well under this.
MAX_TOKEN_CHARS = 2_000
_MAX_INT = 2**31 - 1  # offsets and totals; past this an offset would overflow the database, not page


def decode_page_token(token: str) -> dict[str, Any]:
    """The state a token carries, or a 422 for anything we did not hand out: a token too long (checked
    before decoding), not base64, not JSON, nested too deep for json.loads, or holding values our tokens
    never hold (ours are one flat object of strings, ints in range and nulls)."""
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidInput(_NOT_A_TOKEN)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError, RecursionError) as exc:  # RecursionError: deeply nested JSON
        raise InvalidInput(_NOT_A_TOKEN) from exc
    if not isinstance(state, dict) or not all(_flat(value) for value in state.values()):
        raise InvalidInput(_NOT_A_TOKEN)
    return state


def _flat(value: Any) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    return isinstance(value, int) and 0 <= value <= _MAX_INT
