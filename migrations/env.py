"""Alembic environment: the URL is the app's DATABASE_URL unless the caller passes a connection."""

from __future__ import annotations

from alembic import context

from backend.config import get_settings
from backend.db.base import Base
from backend.db.models import *  # noqa: F403  (fills Base.metadata)
from backend.db.session import make_engine

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    url = config.attributes.get("database_url") or get_settings().database_url
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.attributes.get("database_url") or get_settings().database_url
    engine = make_engine(url, foreign_keys=False)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
