"""Saved views: a page's working state (search, AI columns, filters, sort, visible columns, pinned charts,
selection) kept per user and page, so a reload or another device shows the same table.

The working state is the row with `name` "" (one per user and page, written as it changes); named views
are the user's saved copies of it, opened again by name (Airtable's and Notion's views). The state is the
page's own JSON: the server keeps it, bounded, and never reads into it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base, UTCDateTime, utcnow

WORKING = ""  # the name of a page's working state


class SavedView(Base):
    __tablename__ = "saved_views"
    __table_args__ = (UniqueConstraint("user_id", "app", "name", name="uq_saved_views_user_app_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    app: Mapped[str] = mapped_column(String(20))  # tablizer | trialscout
    name: Mapped[str] = mapped_column(String(120))
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
