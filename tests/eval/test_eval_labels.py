import pytest

from backend.criteria.labels import Verdict
from backend.eval.label_map import LABEL_MAP, RAW_LABELS, map_label


def test_mapping_is_exactly_the_spec_table():
    assert dict(LABEL_MAP) == {
        "included": Verdict.MET,
        "not excluded": Verdict.MET,
        "excluded": Verdict.NOT_MET,
        "not included": Verdict.NOT_MET,
        "not enough information": Verdict.UNKNOWN,
        "not applicable": Verdict.UNKNOWN,
    }
    assert RAW_LABELS == ("included", "not excluded", "excluded", "not included",
                          "not enough information", "not applicable")


@pytest.mark.parametrize("raw", ["Included", " not  excluded ", "NOT ENOUGH INFORMATION"])
def test_case_and_spacing_are_normalised(raw):
    assert map_label(raw) == LABEL_MAP[" ".join(raw.lower().split())]


def test_an_unknown_label_is_an_error_not_a_silent_unknown():
    with pytest.raises(ValueError, match="unknown TrialGPT eligibility label"):
        map_label("eligible")


def test_the_mapping_is_immutable():
    with pytest.raises(TypeError):
        LABEL_MAP["eligible"] = Verdict.MET  # type: ignore[index]


def test_every_label_in_the_dataset_maps(annotations):
    raw = {a.expert_label_raw for a in annotations} | {a.gpt4_label_raw for a in annotations}
    assert raw == set(RAW_LABELS)
