"""The claims ledger: grading rules, skips below the claim's scale, the JSON record."""

import json

import pytest

from layerwise.chapter import Chapter
from layerwise.claims import Ledger
from layerwise.params import ParameterError


@pytest.mark.parametrize(
    "kw, passed",
    [
        (dict(measured=1.05, reference=1.0, tol=0.1, comparison="abs"), True),
        (dict(measured=1.2, reference=1.0, tol=0.1, comparison="abs"), False),
        (dict(measured=105.0, reference=100.0, tol=0.06, comparison="rel"), True),
        (dict(measured=107.0, reference=100.0, tol=0.06, comparison="rel"), False),
        (dict(measured=3.0, reference=3.5, comparison="le"), True),
        (dict(measured=3.6, reference=3.5, comparison="le"), False),
        (dict(measured=3.6, reference=3.5, tol=0.2, comparison="le"), True),
        (dict(measured=0.9, reference=1.0, tol=0.05, comparison="ge"), False),
        (dict(measured=2.0, reference=(1.0, 3.0), comparison="between"), True),
        (dict(measured=4.0, reference=(1.0, 3.0), comparison="between"), False),
        (dict(measured=True, comparison="true"), True),
        (dict(measured=False, comparison="true"), False),
        (dict(measured=float("nan"), reference=1.0, tol=10.0, comparison="abs"), False),
    ],
)
def test_grading_rules(kw, passed):
    c = Ledger("ci").claim("c", "s", why="because", source="src", **kw)
    assert c.passed is passed and c.status == ("pass" if passed else "fail")


def test_claims_above_the_scale_are_skipped_visibly():
    led = Ledger("default")
    a = led.claim("a", "s", measured=1.0, reference=9.0, tol=0.1, why="w", source="s", min_scale="paper")
    b = led.claim("b", "s", measured=1.0, reference=9.0, tol=0.1, why="w", source="s", min_scale="default")
    assert a.status == "skipped" and a.passed is None
    assert b.status == "fail" and led.failed == [b]
    assert led.counts() == {"pass": 0, "fail": 1, "skipped": 1}
    assert "skipped" in led.to_html() and "FAIL" in led.to_html()


@pytest.mark.parametrize(
    "kw",
    [
        dict(measured=1.0, reference=1.0, comparison="abs"),  # no tolerance
        dict(measured=1.0, reference=1.0, tol=-1.0),
        dict(measured=1.0, reference=1.0, comparison="between"),
        dict(measured=1.0, reference=1.0, tol=0.1, comparison="roughly"),
        dict(measured=1.0, reference=1.0, tol=0.1, min_scale="huge"),
        dict(measured=1.0, reference=1.0, tol=0.1, why="  "),
    ],
)
def test_malformed_claims_are_refused(kw):
    kw.setdefault("why", "w")
    with pytest.raises(ParameterError):
        Ledger("ci").claim("c", "s", source="src", **kw)


def test_duplicate_ids_are_refused():
    led = Ledger("ci")
    led.claim("c", "s", measured=1.0, reference=1.0, tol=0.0, why="w", source="s")
    with pytest.raises(ParameterError, match="twice"):
        led.claim("c", "s", measured=1.0, reference=1.0, tol=0.0, why="w", source="s")


def test_chapter_writes_the_results_schema(tmp_path):
    import matplotlib.pyplot as plt
    import numpy as np

    ch = Chapter("42_demo", scale="ci", seed=3, device="cpu", params={"width": 10}, results=tmp_path)
    ch.claim("c", "s", measured=np.float64(1.0), reference=1.0, tol=np.float64(0.5), why="w", source="Eq. 1")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    ch.figure(fig, "demo", "A caption.", arrays={"y": [1, 0]})
    ch.finish()
    data = json.loads(ch.results_path.read_text())
    assert {"chapter", "scale", "seed", "device", "wall_time_s", "versions", "claims", "figures"} <= set(data)
    assert data["chapter"] == "42_demo" and data["scale"] == "ci" and data["seed"] == 3
    assert set(data["claims"][0]) >= {"id", "statement", "measured", "reference", "tolerance", "passed", "source", "min_scale"}
    assert data["claims"][0]["passed"] is True
    stem = tmp_path / data["figures"][0]
    assert stem.exists() and stem.with_suffix(".svg").exists() and stem.with_suffix(".npz").exists()


def test_chapter_validates_its_inputs(tmp_path):
    for kw in (dict(scale="huge", seed=0), dict(scale="ci", seed=-1), dict(scale="ci", seed=0, device="tpu")):
        with pytest.raises(ParameterError):
            Chapter("42_demo", results=tmp_path, **kw)
    with pytest.raises(ParameterError):
        Chapter("demo", scale="ci", seed=0, results=tmp_path)
