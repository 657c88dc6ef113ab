"""The evaluator through the real SDK against scripted fake Messages API replies."""

import json

import anthropic
import httpx2
import pytest

from backend.criteria.evaluator import (
    CriterionVerdict,
    estimate_cost_usd,
    evaluate_criterion,
    evaluate_text,
    extract_json_object,
)
from backend.criteria.labels import Verdict
from backend.criteria.prompts import CRITERION_TAG, TEXT_TAG, parse_request
from tests.fakes.mock_messages import scripted

NOTE = "0. A 58-year-old woman has chest pain.\n1. She denies smoking."
GOOD = json.dumps({"answer": "yes", "reasoning": "She is 58.", "evidence": ["0. A 58-year-old woman"]})


async def test_one_request_with_the_tagged_system_prompt(make_client):
    seen = []
    client = make_client(scripted(GOOD, seen))
    verdict, usage = await evaluate_criterion(client, "claude-sonnet-4-6", "Age >= 18", "inclusion", NOTE)
    assert len(seen) == 1
    body = seen[0]
    system, criterion, document = body["system"][0], *body["messages"][0]["content"]
    assert system["text"].split("\n", 1)[0] == CRITERION_TAG
    # The instructions and the criterion repeat for every row of a column: both end in a cache breakpoint.
    assert system["cache_control"] == criterion["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in document and document["text"].startswith("<document>")
    assert body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 1024
    assert "temperature" not in body and "stream" not in body
    assert [m["role"] for m in body["messages"]] == ["user"]
    request = parse_request(system["text"], criterion["text"] + document["text"])
    assert (request.kind, request.text, request.criterion_type, request.document) == (
        "criterion", "Age >= 18", "inclusion", NOTE)
    assert verdict == CriterionVerdict(label=Verdict.MET, reasoning="She is 58.",
                                       evidence=["0. A 58-year-old woman"])
    assert (usage.input_tokens, usage.output_tokens, usage.stop_reason) == (100, 20, "end_turn")
    assert usage.estimated_cost_usd == pytest.approx((100 * 3 + 20 * 15) / 1e6)
    assert usage.parse_error is None and usage.raw_text == GOOD


@pytest.mark.parametrize(("answer", "ctype", "label"), [
    ("yes", "inclusion", Verdict.MET), ("no", "inclusion", Verdict.NOT_MET),
    ("yes", "exclusion", Verdict.NOT_MET), ("no", "exclusion", Verdict.MET),  # the exclusion applies → NOT_MET
    ("yes", None, Verdict.MET), ("no", None, Verdict.NOT_MET),
    ("unknown", "exclusion", Verdict.UNKNOWN), ("not applicable", "inclusion", Verdict.UNKNOWN),
])
async def test_answers_map_to_patient_side_verdicts(make_client, answer, ctype, label):
    client = make_client(scripted(json.dumps({"answer": answer, "reasoning": "r", "evidence": []})))
    verdict, _ = await evaluate_criterion(client, "m", "criterion", ctype, NOTE)
    assert verdict.label == label and verdict.parse_error is None


@pytest.mark.parametrize("text", [
    f"```json\n{GOOD}\n```",
    f"Here is my assessment:\n```\n{GOOD}\n```\nHope that helps.",
    f'Note {{"label": "x"}} first. Then the answer: {GOOD} -- done.',
])
async def test_fenced_or_embedded_json_is_found(make_client, text):
    verdict, usage = await evaluate_criterion(make_client(scripted(text)), "m", "c", "inclusion", NOTE)
    assert verdict.label == Verdict.MET and verdict.reasoning == "She is 58." and usage.parse_error is None


@pytest.mark.parametrize(("text", "why"), [
    ('{"answer": "yes", "reasoning": ', "no JSON object with an 'answer' field"),
    ("The patient is eligible.", "no JSON object"),
    ('{"label": "MET", "reasoning": "x"}', "no JSON object with an 'answer' field"),
    ('{"answer": "probably", "reasoning": "x"}', "no usable 'answer'"),
    ("", "empty reply"),
])
async def test_unusable_replies_become_unknown_with_the_reason(make_client, text, why):
    verdict, usage = await evaluate_criterion(make_client(scripted(text)), "m", "c", "exclusion", NOTE)
    assert verdict.label == Verdict.UNKNOWN
    assert why in verdict.parse_error and verdict.parse_error == usage.parse_error
    assert verdict.reasoning.startswith("No verdict:") and verdict.evidence == []
    assert usage.raw_text == text  # the reply is kept for the audit


async def test_refusal_and_truncation_are_recorded(make_client):
    client = make_client(scripted(GOOD, stop_reason="refusal"))
    verdict, _ = await evaluate_criterion(client, "m", "c", "inclusion", NOTE)
    assert verdict.label == Verdict.UNKNOWN and verdict.parse_error == "the model refused to answer"
    client = make_client(scripted('{"answer": "yes", "reas', stop_reason="max_tokens"))
    verdict, _ = await evaluate_criterion(client, "m", "c", "inclusion", NOTE)
    assert verdict.label == Verdict.UNKNOWN and verdict.parse_error.startswith("the reply was cut off (max_tokens)")


async def test_evidence_and_reasoning_are_coerced_not_trusted(make_client):
    text = json.dumps({"answer": "NO", "reasoning": 42, "evidence": "1. She denies smoking."})
    verdict, _ = await evaluate_criterion(make_client(scripted(text)), "m", "Smoker", None, NOTE)
    assert verdict == CriterionVerdict(label=Verdict.NOT_MET, reasoning="", evidence=["1. She denies smoking."])


async def test_api_errors_propagate_to_the_caller(make_client):
    def fail(request):
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}})

    with pytest.raises(anthropic.InternalServerError):
        await evaluate_criterion(make_client(fail), "m", "c", "inclusion", NOTE)


async def test_evaluate_text(make_client):
    seen = []
    text = json.dumps({"answer": "58 years", "reasoning": "Stated.", "evidence": ["0. A 58-year-old woman"]})
    answer, reasoning, evidence, usage = await evaluate_text(make_client(scripted(text, seen)), "m",
                                                             "How old is the patient?", NOTE)
    assert (answer, reasoning, evidence) == ("58 years", "Stated.", ["0. A 58-year-old woman"])
    assert seen[0]["system"][0]["text"].split("\n", 1)[0] == TEXT_TAG and usage.parse_error is None
    request = parse_request(seen[0]["system"][0]["text"],
                            "".join(b["text"] for b in seen[0]["messages"][0]["content"]))
    assert (request.kind, request.text) == ("text", "How old is the patient?")


async def test_evaluate_text_distinguishes_not_stated_from_unusable(make_client):
    not_stated = json.dumps({"answer": None, "reasoning": "The note has no age.", "evidence": []})
    result = await evaluate_text(make_client(scripted(not_stated)), "m", "Age?", NOTE)
    assert result.answer is None and result.usage.parse_error is None
    result = await evaluate_text(make_client(scripted("58, I think")), "m", "Age?", NOTE)
    assert result.answer is None and "no JSON object" in result.usage.parse_error
    assert result.reasoning.startswith("No answer:")


def test_extract_json_object_prefers_the_object_with_the_key():
    assert extract_json_object('{"a": 1} and {"answer": "no"}') == ({"answer": "no"}, None)
    obj, why = extract_json_object('{"a": 1}')
    assert obj is None and "'answer'" in why


def test_cost_estimate_uses_the_longest_prefix_and_admits_ignorance():
    assert estimate_cost_usd("claude-opus-4-5-20251101", 1_000_000, 0) == 5.0
    assert estimate_cost_usd("claude-opus-4-1", 1_000_000, 0) == 15.0
    assert estimate_cost_usd("claude-haiku-4-5", 0, 1_000_000) == 5.0
    assert estimate_cost_usd("colleague-demo", 10, 10) is None
