"""The robustness table (layerwise.robustness): outcome counts, flags and crashes from run
folders."""

import json
from pathlib import Path

import pytest

from layerwise import robustness as rb
from layerwise.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]


def _run(root, label, ledgers, crashes=None, scale="ci"):
    d = root / label / scale
    d.mkdir(parents=True)
    for chapter, statuses in ledgers.items():
        claims = [{"id": cid, "kind": "reproduces", "status": st} for cid, st in statuses.items()]
        (d / f"{chapter}.json").write_text(json.dumps({"claims": claims}))
    (root / label / "crashes.json").write_text(json.dumps(crashes or {}))
    (root / label / "commits.txt").write_text(
        "3088755 01 02\nabc1234 07\n"
    )  # a hash may be all digits


def test_table_counts_outcomes_and_flags_failures_flips_crashes_and_missing_claims(tmp_path):
    _run(
        tmp_path,
        "native-s0",
        {"07_x": {"a": "pass", "b": "pass", "c": "inconclusive"}, "06_y": {"d": "pass"}},
    )
    _run(
        tmp_path,
        "native-s1",
        {"07_x": {"a": "fail", "b": "pass", "c": "pass"}, "06_y": {"d": "pass"}},
    )
    _run(
        tmp_path,
        "avx2-s0",
        {"07_x": {"a": "pass", "c": "pass"}, "06_y": {}},
        crashes={"06_y": "boom"},
    )
    t = rb.tabulate(rb.load_runs(tmp_path, "ci"))
    assert t["claims"]["07_x/a"]["counts"] == {"pass": 2, "fail": 1}
    assert t["claims"]["07_x/a"]["failed_in"] == ["native-s1"]
    assert t["flips"] == ["07_x/a"]
    # b vanished from a run whose chapter did not crash: flagged; d's chapter crashed there:
    # not missing
    assert (
        t["claims"]["07_x/b"]["missing_in"] == ["avx2-s0"]
        and t["claims"]["06_y/d"]["missing_in"] == []
    )
    assert t["flagged"] == ["07_x/a", "07_x/b"]
    assert t["varying"] == ["07_x/a", "07_x/c"]
    assert t["crashes"] == {"06_y": ["avx2-s0"]} and t["commits"] == ["3088755", "abc1234"]
    text = rb.table_markdown(t)
    assert "3 runs, 4 claims: 2 failed in some run, 1 flipped between pass and fail" in text
    assert (
        "| 07_x/a | reproduces | 2 | 1 | 0 | 0 | native-s1 | flip |" in text
        and "- 06_y: avx2-s0" in text
    )
    # one row per claim that varied or failed, a pipe table readable as printed
    assert "| claim | kind | pass | fail | inconclusive | skipped | failed in | flag |" in text
    assert text.count("\n| ") == 2 + 3 and "<" not in text


def test_a_clean_sweep_reports_nothing_to_fix(tmp_path):
    for label in ("native-s0", "avx2-s0"):
        _run(tmp_path, label, {"01_z": {"a": "pass", "b": "skipped"}})
    t = rb.tabulate(rb.load_runs(tmp_path, "ci"))
    assert t["flagged"] == t["flips"] == t["varying"] == [] and t["crashes"] == {}
    assert "| (none) | | | | | | | |" in rb.table_markdown(t)


def test_the_tracked_tables_are_what_their_json_renders_to():
    """The evidence's table.md files were written from their table.json by an earlier version;
    the table renders them again byte for byte."""
    folders = sorted((ROOT / "evidence").glob("robustness-*"))
    assert folders
    for d in folders:
        table = json.loads((d / "table.json").read_text())
        assert rb.table_markdown(table) == (d / "table.md").read_text(), d.name


@pytest.mark.parametrize(
    "text, seeds", [("0-3", [0, 1, 2, 3]), ("5", [5]), ("0,4,7-8", [0, 4, 7, 8])]
)
def test_seed_lists(text, seeds):
    assert rb.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["x", "3-1", "-2", "", "1,a"])
def test_bad_seed_lists_are_refused_naming_the_parameter(text):
    with pytest.raises(ParameterError, match="seeds="):
        rb.parse_seeds(text)


def test_unknown_kernel_set_is_refused_before_any_run(tmp_path):
    with pytest.raises(ParameterError, match="kernel='avx512'"):
        rb.run_all([0], ["avx512"], out=tmp_path)
    assert not any(tmp_path.iterdir())


def test_the_environment_of_a_run_is_restored_afterwards(monkeypatch):
    import os

    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    monkeypatch.delenv("LAYERWISE_RESULTS", raising=False)
    with rb._environment(ATEN_CPU_CAPABILITY=None, LAYERWISE_RESULTS="/tmp/x"):
        assert (
            "ATEN_CPU_CAPABILITY" not in os.environ and os.environ["LAYERWISE_RESULTS"] == "/tmp/x"
        )
    assert os.environ["ATEN_CPU_CAPABILITY"] == "default" and "LAYERWISE_RESULTS" not in os.environ
