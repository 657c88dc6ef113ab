"""AI column tests use the scripted fake Messages API that also answers non-streaming requests: this
overrides `fake_server`, so the shared `fake_llm`, `settings`, `app` and `alice` fixtures use it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ai_columns.fake_server import ColumnFake, start_column_fake


@pytest.fixture(scope="session")
def fake_server() -> Iterator[ColumnFake]:
    fake, stop = start_column_fake()
    yield fake
    stop()
