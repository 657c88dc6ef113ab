"""The one type for a row id arriving from outside (a path, a query, a body, a page's context).

Every table's primary key is a 32-bit INTEGER on PostgreSQL, and SQLite refuses integers past 2^63: an id
outside 1..2^31-1 names no row, so it is refused where it enters (a 422 from pydantic) instead of reaching
the database as an overflow (a 500). Context values the model's page sends are not validated by a schema;
`as_db_id` turns them into an id or None.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

MAX_DB_ID = 2**31 - 1

DbId = Annotated[int, Field(ge=1, le=MAX_DB_ID, description="A row id (1 to 2^31-1)")]


def as_db_id(value: Any) -> int | None:
    """An int, or a string of digits, within the id range; anything else (bools too) is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 10:
        value = int(value.strip())
    if isinstance(value, int) and 1 <= value <= MAX_DB_ID:
        return value
    return None
