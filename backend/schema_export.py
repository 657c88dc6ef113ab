"""The committed OpenAPI document: built from the app (`python -m backend schema`), rendered stably.

Sits on top of `backend.main` (it builds the app), so the routers' helpers in `backend.openapi` never
import back up.
"""

from __future__ import annotations

import json
from typing import Any

from backend.config import PROJECT_ROOT, Settings
from backend.main import create_app
from backend.pages.router import page_registry

COMMITTED = PROJECT_ROOT / "frontend" / "src" / "api" / "openapi.json"


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document, built without side effects: an in-memory database that is never
    connected to, the demo model, offline sources, and no lifespan (so no seeding). It carries the page
    registry (`GET /api/pages`) as `x-page-registry`: the frontend's tests check every payload type has a
    card and every page implements exactly its declared client actions against it."""
    settings = Settings(database_url="sqlite://", anthropic_api_key=None, colleague_sources="offline",
                        colleague_demo=False)
    app = create_app(settings)
    try:
        return {**app.openapi(), "x-page-registry": page_registry().model_dump(mode="json", by_alias=True)}
    finally:
        app.state.db.dispose()


def render(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, a final newline (so the committed file diffs cleanly)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

