from collections import Counter

import pytest

from backend.criteria.labels import Verdict
from backend.eval.dataset import (
    ANNOTATIONS_PATH,
    file_sha256,
    note_sentences,
    parse_sentence_indices,
    sentence_indices,
    stratified_sample,
)

SHARED_SHA256 = "47aac5300a19a220afce9dbd65cba93a9aca65b621fea3e1d8c89a8e67079503"


def test_the_copy_is_the_shared_fixture_unchanged():
    assert file_sha256(ANNOTATIONS_PATH) == SHARED_SHA256


def test_loaded_rows_match_the_fixture_readme(annotations):
    assert len(annotations) == 1015
    assert len({a.patient_id for a in annotations}) == 53
    assert Counter(a.criterion_type for a in annotations) == {"inclusion": 356, "exclusion": 659}
    raw = Counter((a.criterion_type, a.expert_label_raw) for a in annotations)
    assert raw == {("inclusion", "included"): 150, ("inclusion", "not included"): 23,
                   ("inclusion", "not enough information"): 174, ("inclusion", "not applicable"): 9,
                   ("exclusion", "excluded"): 10, ("exclusion", "not excluded"): 484,
                   ("exclusion", "not enough information"): 119, ("exclusion", "not applicable"): 46}
    assert Counter(a.expert_label for a in annotations) == {Verdict.MET: 634, Verdict.NOT_MET: 33,
                                                            Verdict.UNKNOWN: 348}


def test_the_row_without_criterion_text_is_kept_but_not_evaluable(annotations):
    missing = [a for a in annotations if not a.evaluable]
    assert [a.annotation_id for a in missing] == [883]
    assert missing[0].criterion_text is None


def test_sentence_fields_are_parsed(annotations):
    first = annotations[0]
    assert first.expert_sentences == [0, 1, 2]
    assert parse_sentence_indices("[]") == [] and parse_sentence_indices(None) == []
    assert parse_sentence_indices("[3, 10]") == [3, 10]


def test_sentence_indices_from_quotes_or_numbers():
    note = "0. A 58-year-old woman has chest pain.\n1. She denies smoking.\n2. The EKG is normal."
    assert note_sentences(note)[1] == "She denies smoking."
    assert sentence_indices(note, ["1. She denies smoking."]) == [1]
    assert sentence_indices(note, ["the EKG is normal", "nothing like this", "ok"]) == [2]
    assert sentence_indices(note, ["2"]) == [2]


def test_balanced_sample_gives_each_verdict_an_equal_share(annotations):
    sample = stratified_sample(annotations, 60, seed=42)
    assert len(sample.pairs) == 60
    assert Counter(a.expert_label for a in sample.pairs) == {Verdict.MET: 20, Verdict.NOT_MET: 20,
                                                             Verdict.UNKNOWN: 20}
    assert sample.strata["NOT_MET"] == {"population": 33, "sampled": 20}
    assert sample.strata["MET"]["population"] == 633  # row 883 (a MET) has no criterion text
    assert sample.not_evaluable_ids == [883]
    ids = [a.annotation_id for a in sample.pairs]
    assert ids == sorted(ids) and len(set(ids)) == 60 and 883 not in ids


def test_a_small_stratum_is_capped_and_the_rest_spread_over_the_others(annotations):
    # 120 / 3 = 40 each; NOT_MET has 33, so 7 are left for MET and UNKNOWN: 4 + 3
    sample = stratified_sample(annotations, 120, seed=1)
    assert Counter(a.expert_label for a in sample.pairs) == {Verdict.MET: 44, Verdict.NOT_MET: 33,
                                                             Verdict.UNKNOWN: 43}


def test_proportional_sample_keeps_the_label_mix(annotations):
    # shares of 1014 evaluable rows, of 100: MET 633 -> 62.43, NOT_MET 33 -> 3.25, UNKNOWN 348 -> 34.32;
    # floors 62 + 3 + 34 = 99, the last one goes to the largest remainder (MET, .43)
    sample = stratified_sample(annotations, 100, seed=3, allocation="proportional")
    assert Counter(a.expert_label for a in sample.pairs) == {Verdict.MET: 63, Verdict.NOT_MET: 3,
                                                             Verdict.UNKNOWN: 34}


def test_sampling_is_deterministic_for_a_seed(annotations):
    ids = lambda s: [a.annotation_id for a in s.pairs]  # noqa: E731
    assert ids(stratified_sample(annotations, 30, seed=7)) == ids(stratified_sample(annotations, 30, seed=7))
    assert ids(stratified_sample(annotations, 30, seed=7)) != ids(stratified_sample(annotations, 30, seed=8))
    # the input order does not matter either
    shuffled = list(reversed(annotations))
    assert ids(stratified_sample(shuffled, 30, seed=7)) == ids(stratified_sample(annotations, 30, seed=7))


def test_all_and_oversized_samples_take_every_evaluable_pair(annotations):
    assert len(stratified_sample(annotations, None, seed=0).pairs) == 1014
    assert len(stratified_sample(annotations, 5000, seed=0).pairs) == 1014
    assert stratified_sample(annotations, 0, seed=0).pairs == []
    with pytest.raises(ValueError):
        stratified_sample(annotations, -1, seed=0)
