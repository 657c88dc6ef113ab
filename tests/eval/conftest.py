"""Fixtures for the eval tests: the annotation file, and the real `anthropic` SDK over a fake Messages
API (`tests.fakes.mock_messages`), so every reply is parsed by the SDK itself."""

from __future__ import annotations

import pytest

from backend.eval.dataset import CriterionAnnotation, load_annotations
from tests.fakes.mock_messages import make_client  # noqa: F401  (a fixture)


@pytest.fixture(scope="session")
def annotations() -> list[CriterionAnnotation]:
    return load_annotations()
