"""How well the demo model understands page requests: accuracy on a set of realistic paraphrases.

Each case of `benchmarks/data/demo_paraphrases.json` is a page state and a request; the script builds the
request exactly as a chat turn does (the page's context builder, the holding pen, the system prompt and the
page's tools), asks the demo model, runs `get_staged_items` locally when it reads the loaded rows, and checks
the card or tool it chose and their fields (or what the final answer says). Prints accuracy overall, on the
held-out cases (never looked at while tuning) and per intent.

    .venv/bin/python benchmarks/demo_paraphrases.py [-v]
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from backend.chat.markers import SUGGESTED_VALUES
from backend.chat.prompt import build_system_prompt, stage_items
from backend.demo.brain import answer
from backend.registry import REGISTRY, ToolContext
from backend.registry.builtins import load_builtins
from backend.registry.store import resolve

DATA = Path(__file__).with_name("data") / "demo_paraphrases.json"
MAX_STEPS = 6


def request_body(context: dict[str, Any], message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    resolved = resolve(context.get("current_page"))
    keys = resolved.page.staged_keys if resolved.page else ()
    shown, staged = stage_items(context, keys)
    system = build_system_prompt(resolved, shown)
    body = {"model": "demo", "max_tokens": 4096, "system": system.blocks(),
            "tools": [t.to_anthropic() for t in resolved.tools],
            "messages": [{"role": "user", "content": [{"type": "text", "text": system.page_context},
                                                      {"type": "text", "text": message}]}]}
    return body, staged


def run_turn(context: dict[str, Any], message: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """(the answer's text, the tool calls made), running `get_staged_items` as the chat loop would."""
    body, staged = request_body(context, message)
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(MAX_STEPS):
        reply = answer(body)
        uses = [b for b in reply.blocks if b["type"] == "tool_use"]
        calls += [(u["name"], u["input"]) for u in uses]
        if not uses or any(u["name"] != "get_staged_items" for u in uses):
            break
        tool = REGISTRY.tools["get_staged_items"]
        results = [{"type": "tool_result", "tool_use_id": u["id"],
                    "content": asyncio.run(_run(tool, u["input"], staged))} for u in uses]
        body["messages"] += [{"role": "assistant", "content": reply.blocks}, {"role": "user", "content": results}]
    text = "\n".join(b["text"] for b in reply.blocks if b["type"] == "text")
    return text, calls


async def _run(tool: Any, tool_input: dict[str, Any], staged: dict[str, Any]) -> str:
    result = await tool.executor(tool.input_model(**tool_input), ToolContext(staged=staged))
    return result if isinstance(result, str) else result.text


def cards(text: str) -> dict[str, dict[str, Any]]:
    markers = {p.parse_marker: p.name for p in REGISTRY.payloads.values() if p.parse_marker}
    found: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        for marker, name in markers.items():
            if line.startswith(marker):
                value, _ = json.JSONDecoder().raw_decode(line[len(marker):].strip())
                found[name] = value
    return found


def _empty(value: Any) -> bool:
    return value in (None, "", [], "ALL")


def _contains(value: Any, needle: str) -> bool:
    return needle.lower() in json.dumps(value, ensure_ascii=False).lower() if value is not None else False


def field_problems(data: dict[str, Any], fields: dict[str, Any]) -> list[str]:
    problems = []
    for spec, want in fields.items():
        key = spec.rstrip("~!")
        got = data.get(key)
        if spec.endswith("!~"):
            ok = not _contains(got, want)
        elif spec.endswith("~"):
            ok = all(_contains(got, w) for w in (want if isinstance(want, list) else [want]))
        elif want is None:
            ok = _empty(got)
        elif isinstance(want, list):
            ok = isinstance(got, list) and sorted(got) == sorted(want)
        else:
            ok = got == want
        if not ok:
            problems.append(f"{spec}={json.dumps(want)} but got {json.dumps(got)}")
    return problems


def check(case: dict[str, Any], context: dict[str, Any]) -> list[str]:
    text, calls = run_turn(context, case["message"])
    expect = case["expect"]
    kind = expect["kind"]
    problems: list[str] = []
    found = cards(text)
    if kind.startswith("tool:"):
        chosen = [c for c in calls if c[0] == kind[5:]]
        if not chosen:
            return [f"expected tool {kind[5:]}, got calls {[c[0] for c in calls]}; text {text[:120]!r}"]
        problems += field_problems(chosen[0][1], expect.get("fields", {}))
    elif kind == "text":
        unwanted = [c for c in found if c != "suggested_values"]
        if unwanted:
            problems.append(f"expected a text answer, got cards {unwanted}")
    elif kind not in found:
        return [f"expected card {kind}, got cards {list(found)} and calls {[c[0] for c in calls]}; "
                f"text {text[:160]!r}"]
    else:
        problems += field_problems(found[kind], expect.get("fields", {}))
    prose = re.sub(r"^[A-Z_]+: .*$", "", text, flags=re.M).lower()
    for want in expect.get("says", []):
        options = want if isinstance(want, list) else [want]
        if not any(o.lower() in prose for o in options):
            problems.append(f"answer does not say {options}: {prose[:200]!r}")
    problems += [f"answer says {w!r}" for w in expect.get("says_not", []) if w.lower() in prose]
    if expect.get("chips") and SUGGESTED_VALUES not in text:
        problems.append("no follow-up chips")
    return problems


def main() -> None:
    verbose = "-v" in sys.argv
    load_builtins()
    data = json.loads(DATA.read_text())
    by_intent: dict[str, list[bool]] = defaultdict(list)
    held: list[bool] = []
    tuned: list[bool] = []
    for case in data["cases"]:
        problems = check(case, data["contexts"][case["context"]])
        ok = not problems
        by_intent[case["intent"]].append(ok)
        (held if case.get("held_out") else tuned).append(ok)
        if verbose and not ok:
            print(f"MISS {case['id']}{' (held out)' if case.get('held_out') else ''}: {case['message']!r}\n    "
                  + "\n    ".join(problems))
    every = held + tuned

    def rate(results: list[bool]) -> str:
        return f"{sum(results)}/{len(results)} = {sum(results) / len(results):.0%}" if results else "n/a"

    print(f"demo model on {len(every)} page requests: {rate(every)}")
    print(f"  held out ({len(held)}, never tuned on): {rate(held)}")
    print(f"  tuning set ({len(tuned)}): {rate(tuned)}")
    for name, results in sorted(by_intent.items()):
        print(f"  {name:<24} {rate(results)}")


if __name__ == "__main__":
    main()
