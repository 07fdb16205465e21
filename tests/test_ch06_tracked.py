"""Chapter 6 reads the verdict of Hanin & Rolnick's training result from tracked paper evidence
(dashboard.tracked_record): a fake evidence folder in a temporary root."""

import json

import pytest

from layerwise import dashboard


def _evidence(root, name, date, scale, claims):
    folder = root / "evidence" / name
    folder.mkdir(parents=True)
    (folder / "META.json").write_text(json.dumps({"scale": scale, "date": date}))
    (folder / "06_linear_regions.json").write_text(json.dumps({"claims": claims}))


def _record(status, measured, interval, se=0.1, dof=23):
    return {"id": "train_grows_large_data", "status": status, "measured": measured, "se": se,
            "dof": dof, "interval": interval,
            "conditions": {"data": ["28×28 digits ×25 shifted, 44925 images", "MNIST"]}}


def test_no_evidence_no_record(tmp_path):
    assert dashboard.tracked_record(tmp_path, "06_linear_regions", "train_grows_large_data") is None
    # evidence at another scale, or a skipped claim, does not count
    _evidence(tmp_path, "default-x", "2026-11-28", "default", [_record("fail", -1.0, [-2, -0.5])])
    _evidence(tmp_path, "paper-y", "2026-11-28", "paper",
              [{**_record("skipped", 0.1, [-1, 1])}])
    assert dashboard.tracked_record(tmp_path, "06_linear_regions", "train_grows_large_data") is None


def test_the_newest_paper_evidence_gives_the_outcome_and_its_interval(tmp_path):
    _evidence(tmp_path, "paper-old", "2026-11-20T10:00", "paper",
              [_record("inconclusive", 0.05, [-0.2, 0.3])])
    _evidence(tmp_path, "paper-ch06-ladder-new", "2026-11-28T20:00", "paper",
              [_record("pass", 0.31, [0.12, 0.5], se=0.07)])
    rec = dashboard.tracked_record(tmp_path, "06_linear_regions", "train_grows_large_data")
    assert rec["folder"] == "paper-ch06-ladder-new" and rec["status"] == "pass"
    e = rec["estimate"]
    assert (e.mean, e.se, e.dof, e.n) == (0.31, 0.07, 23, 24) and e.bounds() == (0.12, 0.5)
    assert e.sign() == 1  # the recorded interval decides the direction, not a recomputed one
    assert rec["conditions"]["data"][0].startswith("28×28")
    assert dashboard.tracked_record(tmp_path, "06_linear_regions", "no_such_claim") is None


@pytest.mark.parametrize("status, interval, sign", [("fail", (-0.6, -0.1), -1),
                                                    ("inconclusive", (-0.2, 0.3), 0)])
def test_each_outcome_is_returned_as_recorded(tmp_path, status, interval, sign):
    _evidence(tmp_path, "paper-z", "2026-11-28", "paper", [_record(status, -0.3, list(interval))])
    rec = dashboard.tracked_record(tmp_path, "06_linear_regions", "train_grows_large_data")
    assert rec["status"] == status and rec["estimate"].sign() == sign
