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


def decode_page_token(token: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput(_NOT_A_TOKEN) from exc
    if not isinstance(state, dict):
        raise InvalidInput(_NOT_A_TOKEN)
    return state
