"""The marker scanner on its own: streaming and extraction agree for any chunking, and streaming is linear.

What users see of cards (held back, dropped, bounded) is tested through the API in test_stream.py and
test_card_limits.py; here the properties that need many texts or many chunkings."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from backend.agent.schemas import TextDelta, UsageUpdated
from backend.chat.extract import extract
from backend.chat.markers import MarkerFilter
from backend.chat.visible import visible_events
from tests.fakes.fake_page import CARD

MARKERS = ["TEST_CARD:", "SUGGESTED_VALUES:", "SUGGESTED_ACTIONS:"]
DEEP = "[" * 1000 + "]" * 1000
FRAGMENTS = [
    "Hello world. ", "\n", "\n\n", " ", "\t", "\r\n", "é", "x", "not json", "``", "`", "```", "```json\n",
    "```\n", "\n```", "`` ", "TEST_CARD:", "TEST_CA", "xTEST_CARD:", "_TEST_CARD:", "TEST_CARD: ```json\n",
    '{"title": "a {b} [c]"}', '{"title": "q\\"}"}', 'TEST_CARD: {"title": "t"}', "[1, 2]", "{", "}", "[", "]",
    '"', "\\", "SUGGESTED_VALUES: ", '[{"label": "A", "value": "B"}]',
    # over the limits: each must lose its card, never the answer
    f'TEST_CARD: {{"title": "deep", "x": {DEEP}}}', f"SUGGESTED_VALUES: {DEEP}",
    'TEST_CARD: {"title": "' + "w" * 70_000 + '"}',
]


def chunked(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.choice([1, 2, 3, 5, 8, 40, 1000])
        out.append(text[i:i + n])
        i += n
    return out


def streamed(chunks: list[str]) -> str:
    text_filter = MarkerFilter(MARKERS)
    return "".join(text_filter.feed(c) for c in chunks) + text_filter.flush()


def test_streaming_shows_exactly_the_extracted_message_for_any_chunking() -> None:
    rng = random.Random(20261123)
    for _ in range(1500):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12)))
        message = extract(text, [CARD]).message
        shown = streamed(chunked(text, rng))
        assert re.sub(r"\n{3,}", "\n\n", shown).strip() == message, text[:300]


def test_hostile_cards_leave_the_prose_and_an_error() -> None:
    text = (f'Before.\nTEST_CARD: {{"title": "deep", "x": {DEEP}}}\nMiddle.\n'
            f'TEST_CARD: {{"title": "{"w" * 70_000}"}}\nAfter.\nTEST_CARD: {{"title": "fine"}}')
    result = extract(text, [CARD])
    assert result.message == "Before.\n\nMiddle.\n\nAfter."
    assert result.payloads == [{"type": "test_card", "data": {"title": "fine"}}]
    assert result.errors == ["test_card: the card is nested deeper than 32 levels",
                             "test_card: the card is larger than 64 KB"]
    assert streamed(chunked(text, random.Random(1))) == "Before.\n\nMiddle.\n\nAfter.\n"


def test_cards_of_one_answer_share_a_size_budget() -> None:
    card = json.dumps({"title": "t", "rows": ["r" * 3000] * 15})  # ~45 KB each, 128 KB for all of them
    result = extract("\n".join(f"Card {i}:\nTEST_CARD: {card}" for i in range(4)), [CARD])
    assert len(result.payloads) == 2
    assert result.errors == ["test_card: the answer's cards are larger than 128 KB together"] * 2


def stream_seconds(size: int) -> float:
    """CPU time (best of five) to stream an answer holding one card of about `size` characters, 4 at a time."""
    rows = [{"nct_id": f"NCT{i:08d}", "title": f"Trial {i} of something", "phase": ["PHASE2"]}
            for i in range(size // 70)]
    text = f'Here are the trials.\n\nTEST_CARD: {json.dumps({"title": "t", "rows": rows})}\n\nDone.'
    chunks = [text[i:i + 4] for i in range(0, len(text), 4)]
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        assert streamed(chunks) == "Here are the trials.\n\n\n\nDone."
        best = min(best, time.process_time() - start)
    return best


def test_marker_filter_is_linear() -> None:
    """8x the card, 8x the time (rescanning the whole text on every delta made it ~60x)."""
    small, large = stream_seconds(2_000), stream_seconds(16_000)
    assert large < 20 * small, (small, large)


def test_a_marker_split_across_deltas_never_shows_and_the_prose_around_it_does() -> None:
    """Through `visible_events` (the runner's per-delta path): the card split at every point, and one
    character per delta. No delta carries a piece of the marker or its JSON; the prose arrives whole."""
    text = 'Here is the card. TEST_CARD: {"title": "EGFR {T790M}"}\nAnd after it.'

    async def shown(chunks: list[str]) -> list[str]:
        async def source() -> AsyncIterator[Any]:
            for chunk in chunks:
                yield TextDelta(text=chunk)
            yield UsageUpdated(input_tokens=1, output_tokens=1, cache_read_input_tokens=0,
                               cache_creation_input_tokens=0, context_window=200_000)  # the call ends
        return [e.text async for e in visible_events(source(), MarkerFilter(MARKERS)) if isinstance(e, TextDelta)]

    splits = [[text[:i], text[i:]] for i in range(1, len(text))] + [list(text)]
    for chunks in splits:
        deltas = asyncio.run(shown(chunks))
        assert "".join(deltas) == "Here is the card. \nAnd after it.", chunks
        for delta in deltas:
            assert not any(piece in delta for piece in ("TEST", "CARD", "{", "title", ":")), (chunks, delta)
