"""axe-core in the journeys: the npm package's script injected into the page (never a CDN), run on the page
as it is, and its serious and critical violations reported with the elements they concern."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_JS = Path(__file__).resolve().parents[2] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
# WCAG 2.1 A/AA and axe's best practices (heading order among them).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Every violation axe finds on the page now (the page's context must bypass CSP for the script tag)."""
    assert AXE_JS.is_file(), f"{AXE_JS} is missing: run `npm ci` in frontend/ (axe-core is a devDependency)"
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    result = page.evaluate("(tags) => axe.run(document, { runOnly: { type: 'tag', values: tags } })", TAGS)
    return list(result["violations"])


def describe(violations: list[dict[str, Any]]) -> str:
    return "\n".join(f"{v['impact']}: {v['id']} ({v['help']}) at "
                     + "; ".join(" ".join(n["target"]) for n in v["nodes"][:4]) for v in violations)


def assert_accessible(page: Page, state: str) -> None:
    """No serious or critical violation, and headings that never skip a level (axe's heading-order)."""
    violations = axe_violations(page)
    bad = [v for v in violations if v["impact"] in BLOCKING or v["id"] == "heading-order"]
    assert not bad, f"axe on {state}:\n{describe(bad)}"
