"""The CLI, and the GPT-4 baseline recomputed independently from the raw annotation file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backend.demo.transport import DEMO_MODEL_ID
from backend.eval import cli
from backend.eval.dataset import ANNOTATIONS_PATH
from backend.eval.harness import gpt4_baseline

ROOT = Path(__file__).resolve().parents[2]


def independent_baseline() -> dict[str, float]:
    """Straight from the JSONL, sharing no code with the harness."""
    rows = [json.loads(line) for line in ANNOTATIONS_PATH.read_text().splitlines() if line.strip()]
    three = {"included": "M", "not excluded": "M", "excluded": "N", "not included": "N",
             "not enough information": "U", "not applicable": "U"}
    raw = sum(r["expert_eligibility"] == r["gpt4_eligibility"] for r in rows)
    mapped = sum(three[r["expert_eligibility"]] == three[r["gpt4_eligibility"]] for r in rows)
    return {"n": len(rows), "raw": raw / len(rows), "mapped": mapped / len(rows)}


def test_gpt4_baseline_matches_an_independent_count(annotations):
    ind = independent_baseline()
    assert ind["n"] == 1015
    assert ind["raw"] == pytest.approx(886 / 1015)  # 87.3 %, the agreement the TrialGPT paper reports
    assert ind["raw"] == pytest.approx(0.873, abs=0.001)
    harness = gpt4_baseline(annotations)
    assert harness["n"] == 1015
    assert harness["raw_label_agreement"] == pytest.approx(ind["raw"])
    assert harness["accuracy"] == pytest.approx(ind["mapped"])  # after the 6 -> 3 mapping: 903 / 1015


def test_baseline_only_prints_without_model_calls(capsys, monkeypatch):
    monkeypatch.setattr(cli, "build_client", None)  # any attempt to build a client would fail
    assert cli.main(["criteria", "--baseline-only"]) == 0
    out = capsys.readouterr().out
    assert "GPT-4 baseline over the full annotation file (1015 rows, no model calls)" in out
    assert "raw 6-label agreement" in out and "87.3%" in out and "89.0%" in out


def test_python_dash_m_entry_point():
    done = subprocess.run([sys.executable, "-m", "backend.eval", "criteria", "--baseline-only"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "87.3%" in done.stdout


def test_a_demo_run_prints_baseline_and_model_side_by_side(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-never-used")  # --model demo must not reach the API
    code = cli.main(["criteria", "--sample", "9", "--seed", "3", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "GPT-4 baseline over the full annotation file" in out
    assert "model (n=9)" in out and "GPT-4 same pairs (n=9)" in out and "GPT-4 full file (n=1015)" in out
    [run_dir] = list(tmp_path.iterdir())
    cfg = json.loads((run_dir / "config.json").read_text())
    assert cfg["command"] == ["eval", "criteria", "--sample", "9", "--seed", "3", "--out", str(tmp_path),
                              "--no-progress"]
    assert cfg["model"] == {"kind": "demo", "name": DEMO_MODEL_ID, "backend": "app demo model (backend.demo)",
                            "max_output_tokens": 1024}
    assert cfg["sample"]["drawn"] == 9
    results = json.loads((run_dir / "results.json").read_text())
    assert all(r["status"] == "evaluated" and r["parse_error"] is None for r in results)


def test_claude_without_a_key_says_so(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert cli.main(["criteria", "--model", "claude", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--model claude needs ANTHROPIC_API_KEY" in err
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments_are_rejected(capsys):
    with pytest.raises(SystemExit):
        cli.main(["criteria", "--sample", "0"])
    with pytest.raises(SystemExit):
        cli.main(["criteria", "--model", "gpt"])
    assert "invalid" in capsys.readouterr().err
