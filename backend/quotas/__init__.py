"""Per-user cost bounds: concurrent streams, turns and AI column runs per minute, tokens per day.

Why `limits` with a storage of ours, rather than a counter written from scratch: the rate limits need
a counter that every worker shares, and the deployment has only its SQL database (SQLite or
PostgreSQL; no Redis). `limits` ships the strategies (windows, window stats for `Retry-After`, the
key scheme) and documents custom storages as an extension point, but has no SQL storage. The part
only we can write, an atomic counter with an expiry, is the same upsert either way; with it as a
`limits.storage.Storage` (`storage.py`, five small methods) the strategy code is the library's, and a
deployment that gains Redis can switch to `limits`' own storage without touching the callers. The
fixed window is the strategy whose only storage primitive is that one atomic `incr`; it allows up to
twice the rate across a window boundary, which is fine for bounding cost. The moving and
sliding-window strategies would need multi-row read-then-write sequences that are not atomic on
SQLite without a table lock, so they are not offered here.

The stream cap and the token budget are not rate limits: they count what the database already knows
(live turn leases, `streams.py`; the `daily_usage` row that saved turns and other model calls add to).
See `service.py`, which also says how a feature that calls the model counts against the budget.
"""

from backend.quotas.service import ColumnRunSlot, Quotas, record_usage

__all__ = ["ColumnRunSlot", "Quotas", "record_usage"]
