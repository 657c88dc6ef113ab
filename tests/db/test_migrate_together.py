"""N instances starting together against one empty database each run the migrations: they take turns
under a lock, so the schema is built once and every instance starts."""

from __future__ import annotations

import subprocess
import sys

import sqlalchemy as sa
from alembic.script import ScriptDirectory

from backend.db.migrate import alembic_config

MIGRATE = "import sys; from backend.db.migrate import upgrade; upgrade(sys.argv[1])"


def test_instances_starting_together_migrate_once(empty_db: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", MIGRATE, empty_db], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    for proc, output in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, output[-2000:]
    # (a migration run twice would fail: its tables exist)
    head = ScriptDirectory.from_config(alembic_config(empty_db)).get_current_head()
    engine = sa.create_engine(empty_db)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all() == [head]
    finally:
        engine.dispose()
